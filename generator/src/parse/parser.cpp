#include "parse/parser.hpp"

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

#include "parse/declaration_names.hpp"
#include "parse/decls.hpp"
#include "parse/libclang.hpp"
#include "parse/macros.hpp"

namespace cubind::parse {

namespace {

constexpr const char* kUmbrella = "cubind_umbrella.c";

std::string locate(const std::string& header, const std::vector<std::string>& dirs) {
  for (const auto& dir : dirs) {
    const std::filesystem::path path = std::filesystem::path(dir) / header;
    if (std::filesystem::exists(path)) return std::filesystem::canonical(path).string();
  }
  std::string searched;
  for (const auto& dir : dirs) searched += " " + dir;
  throw std::runtime_error("header " + header + " not found in:" + searched);
}

std::vector<std::string> clang_args(const ParseOptions& options) {
  std::vector<std::string> args = {"-x", "c", "-std=gnu11"};
  for (const auto& dir : options.include_dirs) args.push_back("-I" + dir);
  args.insert(args.end(), options.clang_args.begin(), options.clang_args.end());
  return args;
}

std::string umbrella_source(const ParseOptions& options) {
  std::string source;
  for (const auto& h : options.prelude_headers) source += "#include <" + h + ">\n";
  for (const auto& h : options.headers) source += "#include <" + h + ">\n";
  if (!options.version_header.empty()) source += "#include <" + options.version_header + ">\n";
  for (const auto& h : options.abi_typedefs_headers) source += "#include <" + h + ">\n";
  return source;
}

std::vector<MacroDef> collect_macros(CXTranslationUnit unit, const std::map<std::string, std::string>& files) {
  std::vector<MacroDef> macros;
  visit_children(clang_getTranslationUnitCursor(unit), [&](CXCursor c) {
    if (clang_getCursorKind(c) != CXCursor_MacroDefinition) return;
    auto file = files.find(file_of(c));
    if (file == files.end()) return;
    MacroDef m;
    m.name = spelling(c);
    m.function_like = clang_Cursor_isMacroFunctionLike(c);
    m.header = file->second;
    CXToken* tokens = nullptr;
    unsigned n = 0;
    clang_tokenize(unit, clang_getCursorExtent(c), &tokens, &n);
    unsigned i = 1;  // token 0 is the name
    if (m.function_like) {
      for (++i; i < n; ++i) {
        const std::string t = take(clang_getTokenSpelling(unit, tokens[i]));
        if (t == ")") {
          ++i;
          break;
        }
        if (t != ",") m.params.push_back(t);
      }
    }
    for (; i < n; ++i) m.body.push_back(take(clang_getTokenSpelling(unit, tokens[i])));
    clang_disposeTokens(unit, tokens, n);
    macros.push_back(m);
  });
  return macros;
}

// Lets the compiler evaluate each candidate: `__auto_type v = (NAME);`.
// Pointer-valued macros (`((void*)0x01)`) come back as their address.
struct Evaluator {
  CXIndex index;
  std::vector<std::string> args;
  std::string prelude;

  std::map<std::string, model::Constant> run(const std::vector<std::string>& names, const char* cast) const {
    std::string source = prelude;
    for (size_t i = 0; i < names.size(); ++i)
      source += "__auto_type __cubind_eval_" + std::to_string(i) + " = " + cast + names[i] + ";\n";
    UnitPtr unit = parse_source(index, kUmbrella, source, args, CXTranslationUnit_SkipFunctionBodies, false);
    std::map<std::string, model::Constant> out;
    visit_children(clang_getTranslationUnitCursor(unit.get()), [&](CXCursor c) {
      if (clang_getCursorKind(c) != CXCursor_VarDecl) return;
      const std::string var = spelling(c);
      if (var.rfind("__cubind_eval_", 0) != 0) return;
      const std::string& name = names.at(std::stoul(var.substr(14)));
      CXEvalResult result = clang_Cursor_Evaluate(c);
      if (!result) return;
      model::Constant k;
      k.name = name;
      switch (clang_EvalResult_getKind(result)) {
        case CXEval_Int:
          k.kind = "int";
          k.is_unsigned = clang_EvalResult_isUnsignedInt(result);
          k.int_value = k.is_unsigned ? static_cast<int64_t>(clang_EvalResult_getAsUnsigned(result))
                                      : clang_EvalResult_getAsLongLong(result);
          out.emplace(name, k);
          break;
        case CXEval_Float:
          k.kind = "float";
          k.float_value = clang_EvalResult_getAsDouble(result);
          out.emplace(name, k);
          break;
        case CXEval_StrLiteral:
          k.kind = "string";
          k.string_value = clang_EvalResult_getAsStr(result);
          out.emplace(name, k);
          break;
        default:
          break;
      }
      clang_EvalResult_dispose(result);
    });
    return out;
  }
};

std::vector<model::Constant> evaluate_constants(const Evaluator& eval, const std::vector<const MacroDef*>& macros) {
  std::vector<std::string> names;
  for (const MacroDef* m : macros) names.push_back(m->name);
  auto values = eval.run(names, "");
  std::vector<std::string> rest;
  for (const auto& n : names)
    if (!values.count(n)) rest.push_back(n);
  if (!rest.empty())
    for (auto& [name, k] : eval.run(rest, "(unsigned long long)(__UINTPTR_TYPE__)")) values.emplace(name, k);
  std::vector<model::Constant> out;
  for (const MacroDef* m : macros) {
    auto it = values.find(m->name);
    if (it == values.end()) continue;
    it->second.header = m->header;
    out.push_back(it->second);
  }
  return out;
}

// The canonical parameter types of a prototype, as one comparable string.
std::string signature(CXType function) {
  std::string out = "(";
  const int n = clang_getNumArgTypes(function);
  for (int i = 0; i < n; ++i) out += spelling(clang_getCanonicalType(clang_getArgType(function, i))) + ";";
  return out + ")";
}

// The ABI typedefs (the spec's abi_prototype, `PFN_<name>_v<version>` for
// CUDA): the prototype of each name at each version.
std::vector<model::AbiPrototype> abi_prototypes(CXCursor root, const std::string& file, const std::string& pattern) {
  const std::regex pfn(pattern);
  std::vector<model::AbiPrototype> out;
  visit_children(root, [&](CXCursor c) {
    if (clang_getCursorKind(c) != CXCursor_TypedefDecl || file_of(c) != file) return;
    std::smatch m;
    const std::string name = spelling(c);
    if (!std::regex_match(name, m, pfn)) return;
    const CXType pointer = clang_getCanonicalType(clang_getTypedefDeclUnderlyingType(c));
    if (pointer.kind != CXType_Pointer) return;
    out.push_back({m[1], signature(clang_getPointeeType(pointer)), std::stoi(m[2])});
  });
  return out;
}

// Canonical parameter types of every function declared in the headers.
std::map<std::string, std::string> function_signatures(CXCursor root, const std::set<std::string>& files) {
  std::map<std::string, std::string> out;
  visit_children(root, [&](CXCursor c) {
    if (clang_getCursorKind(c) == CXCursor_FunctionDecl && files.count(file_of(c)))
      out.emplace(spelling(c), signature(clang_getCursorType(c)));
  });
  return out;
}

}  // namespace

model::Model parse_headers(const ParseOptions& options) {
  std::map<std::string, std::string> files;  // real path -> header as included
  std::set<std::string> paths;
  for (const auto& h : options.headers) {
    const std::string path = locate(h, options.include_dirs);
    files.emplace(path, h);
    paths.insert(path);
  }
  IndexPtr index(clang_createIndex(0, 0));
  const auto args = clang_args(options);
  const std::string source = umbrella_source(options);
  UnitPtr unit =
      parse_source(index.get(), kUmbrella, source, args,
                   CXTranslationUnit_DetailedPreprocessingRecord | CXTranslationUnit_SkipFunctionBodies, true);
  const CXCursor root = clang_getTranslationUnitCursor(unit.get());

  model::Model model;
  model.library = options.library;
  model.headers = options.headers;
  const NameTable names = declaration_names(root, paths);
  DeclCollector decls(model, names, files);
  decls.collect(root);

  std::set<std::string> functions;
  for (const auto& f : model.functions) functions.insert(f.name);
  const auto macros = collect_macros(unit.get(), files);
  std::set<std::string> types;
  for (const auto& e : model.enums) types.insert(e.name);
  for (const auto& r : model.records) types.insert(r.name);
  for (const auto& t : model.typedefs) types.insert(t.name);
  const MacroClasses classes = classify_macros(macros, functions, types);
  model.aliases = classes.aliases;
  model.type_aliases = classes.type_aliases;

  if (!options.abi_typedefs_headers.empty()) {
    for (const auto& h : options.abi_typedefs_headers) {
      auto found = abi_prototypes(root, locate(h, options.include_dirs), options.abi_prototype);
      model.abi_prototypes.insert(model.abi_prototypes.end(), found.begin(), found.end());
    }
    const auto signatures = function_signatures(root, paths);
    for (auto& f : model.functions) {
      auto it = signatures.find(f.name);
      if (it != signatures.end()) f.abi_signature = it->second;
    }
  }

  const Evaluator eval{index.get(), args, source};
  model.constants = evaluate_constants(eval, classes.constant_candidates);
  model.constants.insert(model.constants.begin(), decls.constants().begin(), decls.constants().end());
  if (!options.version_macro.empty()) {
    auto version = eval.run({options.version_macro}, "");
    if (!version.count(options.version_macro))
      throw std::runtime_error("cannot evaluate " + options.version_macro + " from " + options.version_header);
    model.cuda_version = static_cast<int>(version.at(options.version_macro).int_value);
  }
  return model;
}

}  // namespace cubind::parse
