// NVIDIA's C-level module of a library (spec [compat]): the text each
// function's capsule is named with, which a consumer compiled against NVIDIA's
// declarations compares, exactly, with the text its own Cython spelled.
#include <cctype>
#include <sstream>

#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

std::string cython_module_type(const std::string& module, const std::string& name) {
  // Cython's mangling of a type declared in a module: each dotted part as its
  // length and itself (cuda.bindings.cydriver: 4cuda_8bindings_8cydriver).
  std::string out = "__pyx_t_";
  std::stringstream parts(module);
  std::string part;
  bool first = true;
  while (std::getline(parts, part, '.')) {
    out += (first ? "" : "_") + std::to_string(part.size()) + part;
    first = false;
  }
  return out + "_" + name;
}

namespace {

// The words of a C type's spelling, with `*` (and an array's `[N]`, a pointer
// to a parameter) each a word of its own.
std::vector<std::string> type_words(const std::string& spelling) {
  std::vector<std::string> words;
  std::string word;
  auto flush = [&] {
    if (!word.empty()) words.push_back(word);
    word.clear();
  };
  for (size_t i = 0; i < spelling.size(); ++i) {
    const char ch = spelling[i];
    if (ch == '*' || ch == '[') {
      flush();
      words.push_back("*");
      if (ch == '[') i = spelling.find(']', i);
      if (i == std::string::npos) break;
    } else if (std::isspace(static_cast<unsigned char>(ch))) {
      flush();
    } else {
      word += ch;
    }
  }
  flush();
  return words;
}

}  // namespace

std::string compat_type_text(const Type& type, const std::string& written_name, const spec::Spec& spec) {
  const spec::Compat& compat = spec.compat;
  // A function pointer the header spells out (nvrtcSetFlowCallback's
  // `int (*callback)(void *, void *)`): NVIDIA declares it void*.
  if (type.kind == TypeKind::FunctionPointer && type.name.empty()) return "void *";
  int depth = 0;
  bool is_const = false;
  std::vector<std::string> base;
  for (const auto& word : type_words(type.spelling)) {
    if (word == "*")
      ++depth;
    else if (word == "const")
      is_const = true;
    else
      base.push_back(word);
  }
  if (base.empty()) return type.spelling;
  // A function type taken by pointer (VDPAU's `VdpGetProcAddress *`) is a
  // handle of the pointer (spec function_handles): the text has its "*".
  for (const auto& f : spec.function_handles)
    if (type.kind == TypeKind::Handle && base.back() == f && depth == 0) depth = 1;
  // The name the declaration wrote, alone, where a #define stood for clang's.
  if (!written_name.empty()) base = {written_name};
  std::string& name = base.back();
  if (auto it = compat.type_spellings.find(name); it != compat.type_spellings.end()) name = it->second;
  for (const auto& t : compat.module_types)
    if (t == name) name = cython_module_type(compat.serves, name);
  // Cython spells C's long long by CPython's macro.
  for (size_t i = 0; i + 1 < base.size(); ++i) {
    if (base[i] != "long" || base[i + 1] != "long") continue;
    base.erase(base.begin() + static_cast<long>(i));
    base[i] = "PY_LONG_LONG";
  }
  std::string out;
  for (const auto& word : base) out += (out.empty() ? "" : " ") + word;
  // NVIDIA's declarations put every const of the spelling on the pointee
  // (`const char *const *` is `char const **`); Cython writes it after it.
  if (is_const) out += " const";
  if (depth > 0) out += " " + std::string(static_cast<size_t>(depth), '*');
  return out;
}

std::string compat_signature(const Function& f, const spec::Spec& spec) {
  const std::string result = compat_type_text(f.result, "", spec);
  std::string args;
  for (const auto& p : f.params) args += (args.empty() ? "" : ", ") + compat_type_text(p.type, p.written_name, spec);
  // Cython's text: `CUresult (int *)`, `char const *(nvrtcResult)`, `(void)` for no parameter.
  return result + (result.back() == '*' ? "" : " ") + "(" + (args.empty() ? "void" : args) + ")";
}

std::string compat_exception(const Function& f, const spec::Compat& compat) {
  // A consumer compiled against NVIDIA's declaration looks for an exception
  // only where the result is NVIDIA's error value (every call, where NVIDIA
  // declares `except *`): the exported function must return that value.
  if (f.returns_status && f.status_field.empty() && !compat.error_value.empty()) return "except? " + compat.error_value;
  if (f.result.kind == TypeKind::Pointer) return "except? NULL";
  return "except *";
}

void spell_compat_signatures(Model& model, const spec::Spec& spec) {
  if (spec.compat.module.empty()) return;
  for (auto& f : model.functions) {
    if (!f.skip_reason.empty()) continue;
    f.compat_signature = compat_signature(f, spec);
    f.compat_exception = compat_exception(f, spec.compat);
    f.compat_names = {f.name};
    if (spec.compat.abi_names && !f.alias_of.empty() && f.alias_of != f.name) f.compat_names.push_back(f.alias_of);
    // The classic helpers NVIDIA's module exports beside the header's
    // functions (cyruntime's getLocalRuntimeVersion), with their function's text.
    for (const auto& h : model.helpers)
      if (h.target == f.name) f.compat_names.push_back(h.name);
  }
}

}  // namespace cubind::passes
