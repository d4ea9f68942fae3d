// NVIDIA's C-level module of a library (spec [compat]): the text each
// function's capsule is named with, which a consumer compiled against NVIDIA's
// declarations compares, exactly, with the text its own Cython spelled.
#include <cctype>
#include <optional>
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

namespace {

// One parameter's or result's type as NVIDIA's declaration has it: the base
// words (a module type already renamed), the pointer depth and whether a
// const applies (NVIDIA puts every const on the pointee). `whole`: a type
// spelled alone (a function pointer the header spells out: void *).
struct CompatParts {
  std::vector<std::string> base;
  int depth = 0;
  bool is_const = false;
  std::string whole;
  std::string module_type;  // the spec's module type the base names, if any
  std::string clang_name;   // the base's last word as clang spells it
  bool function_handle = false;
};

CompatParts compat_parts(const Type& type, const std::string& written_name, const spec::Spec& spec) {
  const spec::Compat& compat = spec.compat;
  CompatParts parts;
  // A function pointer the header spells out (nvrtcSetFlowCallback's
  // `int (*callback)(void *, void *)`): NVIDIA declares it void*.
  if (type.kind == TypeKind::FunctionPointer && type.name.empty()) {
    parts.whole = "void *";
    return parts;
  }
  for (const auto& word : type_words(type.spelling)) {
    if (word == "*")
      ++parts.depth;
    else if (word == "const")
      parts.is_const = true;
    else
      parts.base.push_back(word);
  }
  if (parts.base.empty()) {
    parts.whole = type.spelling;
    return parts;
  }
  // A function type taken by pointer (VDPAU's `VdpGetProcAddress *`) is a
  // handle of the pointer (spec function_handles): the text has its "*".
  for (const auto& f : spec.function_handles)
    if (type.kind == TypeKind::Handle && parts.base.back() == f && parts.depth == 0)
      parts.depth = 1, parts.function_handle = true;
  parts.clang_name = parts.base.back();
  // The name the declaration wrote, alone, where a #define stood for clang's.
  if (!written_name.empty()) parts.base = {written_name};
  std::string& name = parts.base.back();
  if (auto it = compat.type_spellings.find(name); it != compat.type_spellings.end()) name = it->second;
  for (const auto& t : compat.module_types)
    if (t == name) parts.module_type = name;
  return parts;
}

std::string with_pointers(std::string out, const CompatParts& parts) {
  if (parts.depth > 0) out += " " + std::string(static_cast<size_t>(parts.depth), '*');
  return out;
}

}  // namespace

std::string compat_type_text(const Type& type, const std::string& written_name, const spec::Spec& spec) {
  CompatParts parts = compat_parts(type, written_name, spec);
  if (!parts.whole.empty()) return parts.whole;
  if (!parts.module_type.empty()) parts.base.back() = cython_module_type(spec.compat.serves, parts.module_type);
  // Cython spells C's long long by CPython's macro.
  auto& base = parts.base;
  for (size_t i = 0; i + 1 < base.size(); ++i) {
    if (base[i] != "long" || base[i + 1] != "long") continue;
    base.erase(base.begin() + static_cast<long>(i));
    base[i] = "PY_LONG_LONG";
  }
  std::string out;
  for (const auto& word : base) out += (out.empty() ? "" : " ") + word;
  // NVIDIA's declarations put every const of the spelling on the pointee
  // (`const char *const *` is `char const **`); Cython writes it after it.
  if (parts.is_const) out += " const";
  return with_pointers(out, parts);
}

namespace {

bool declares(const Model& model, const std::string& name) {
  for (const auto& t : model.typedefs)
    if (t.name == name) return true;
  for (const auto& h : model.handles)
    if (h.name == name) return true;
  for (const auto& e : model.enums)
    if (e.name == name || e.tag == name) return true;
  for (const auto& r : model.records)
    if (r.name == name || r.public_name == name) return true;
  return false;
}

// A private type of the .pxd (Model::CompatType), added on first use.
std::string private_type(Model& model, CompatType t) {
  for (const auto& known : model.compat_types)
    if (known.name == t.name) return t.name;
  model.compat_types.push_back(t);
  return t.name;
}

// A module type's use: its C name is Cython's of NVIDIA's declaration.
std::string module_private_type(Model& model, const CompatParts& parts, const spec::Spec& spec) {
  const std::string keyword = parts.base.size() > 1 ? parts.base.front() : "";
  CompatType t;
  t.name = "_nv_" + (keyword.empty() ? "" : keyword + "_") + parts.module_type;
  // cubind's own Cython type: the module type where its declarations have
  // it, else clang's name for it (a #define'd name: cudaStreamAttrID).
  t.of = declares(model, parts.module_type) ? parts.module_type : parts.clang_name;
  t.mangled = cython_module_type(spec.compat.serves, parts.module_type);
  t.cname = (keyword.empty() ? "" : keyword + " ") + t.mangled + (parts.function_handle ? " *" : "");
  t.c_type = parts.module_type;
  return private_type(model, t);
}

// Whether the C layer's declaration of `name` makes Cython spell it with its
// keyword (`cdef struct X`: "struct X"), or without (`ctypedef struct X`);
// nullopt: not a record or enum of the model.
std::optional<bool> spelled_with_keyword(const Model& model, const std::string& name) {
  for (const auto& r : model.records) {
    if (!r.tag.empty() && r.tag == name) return true;
    if (r.name == name) return false;
  }
  for (const auto& e : model.enums) {
    if (!e.tag.empty() && e.tag == name) return true;
    if (e.name == name) return false;
  }
  return std::nullopt;
}

}  // namespace

std::string compat_type_declaration(Model& model, const Type& type, const std::string& written_name,
                                    const spec::Spec& spec) {
  CompatParts parts = compat_parts(type, written_name, spec);
  if (!parts.whole.empty()) return parts.whole;
  const std::string keyword = parts.base.size() > 1 ? parts.base.front() : "";
  const std::string name = parts.base.back();
  if (!parts.module_type.empty()) {
    // The private type holds the keyword and a function handle's "*".
    parts.base = {module_private_type(model, parts, spec)};
    if (parts.function_handle) --parts.depth;
  } else if (keyword == "struct" && !declares(model, name)) {
    // `struct cudaGraphicsResource`, the tag of a handle's struct and no
    // record of the model: the struct the handle's declaration names.
    for (const auto& h : model.handles)
      if (!h.is_integer && h.record_tag == name) parts.base = {model::handle_struct_name(h.name)};
  } else if (auto with = spelled_with_keyword(model, name); with && *with != !keyword.empty()) {
    // NVIDIA's text has the keyword where cubind's declaration makes Cython
    // drop it, or the other way round (cuFile's `CUfileDescr_t`, declared
    // `cdef struct` by cubind): a private type whose C name is that text.
    CompatType t;
    t.name = "_nv_" + (keyword.empty() ? "" : keyword + "_") + name;
    t.of = name;
    t.cname = (keyword.empty() ? "" : keyword + " ") + name;
    parts.base = {private_type(model, t)};
  }
  // Elsewhere a `struct` or `enum` keyword is the declared type's own in Cython.
  std::string out = parts.is_const ? "const" : "";
  for (const auto& word : parts.base)
    if (word != "struct" && word != "enum" && word != "union") out += (out.empty() ? "" : " ") + word;
  return with_pointers(out, parts);
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
  model.compat_types.clear();
  for (auto& f : model.functions) {
    if (!f.skip_reason.empty()) continue;
    f.compat_signature = compat_signature(f, spec);
    f.compat_exception = compat_exception(f, spec.compat);
    f.compat_result_declaration = compat_type_declaration(model, f.result, "", spec);
    f.compat_param_declarations.clear();
    for (const auto& p : f.params)
      f.compat_param_declarations.push_back(compat_type_declaration(model, p.type, p.written_name, spec));
    f.compat_names = {f.name};
    if (spec.compat.abi_names && !f.alias_of.empty() && f.alias_of != f.name) f.compat_names.push_back(f.alias_of);
    // The classic helpers NVIDIA's module exports beside the header's
    // functions (cyruntime's getLocalRuntimeVersion), with their function's text.
    for (const auto& h : model.helpers)
      if (h.target == f.name) f.compat_names.push_back(h.name);
  }
}

}  // namespace cubind::passes
