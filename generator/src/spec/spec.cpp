#include "spec/spec.hpp"

#include <toml++/toml.h>

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

namespace cubind::spec {

namespace {

struct Reader {
  const toml::table& root;
  std::string source;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw std::runtime_error(source + ": " + key + ": " + what);
  }

  std::string string(const toml::table& t, const std::string& key, bool required, const std::string& where) const {
    const toml::node* node = t.get(key);
    if (!node) {
      if (required) fail(where + key, "missing");
      return {};
    }
    if (auto v = node->value<std::string>()) return *v;
    fail(where + key, "expected a string");
  }

  std::vector<std::string> strings(const toml::table& t, const std::string& key, const std::string& where) const {
    std::vector<std::string> out;
    const toml::node* node = t.get(key);
    if (!node) return out;
    const toml::array* arr = node->as_array();
    if (!arr) fail(where + key, "expected an array of strings");
    for (const auto& item : *arr) {
      auto v = item.value<std::string>();
      if (!v) fail(where + key, "expected an array of strings");
      out.push_back(*v);
    }
    return out;
  }
};

std::optional<Rewrite> rewrite(const Reader& r, const toml::table& t, const std::string& key,
                               const std::string& where) {
  const toml::node* node = t.get(key);
  if (!node) return std::nullopt;
  const toml::table* rt = node->as_table();
  if (!rt) r.fail(where + key, "expected a table { match = \"...\", replace = \"...\" }");
  return Rewrite{r.string(*rt, "match", true, where + key + "."), r.string(*rt, "replace", true, where + key + ".")};
}

Conventions read_conventions(const Reader& r, const toml::table& t) {
  const std::string where = "conventions.";
  Conventions c;
  c.count_prefixes = r.strings(t, "count_prefixes", where);
  c.count_suffixes = r.strings(t, "count_suffixes", where);
  c.count_names = r.strings(t, "count_names", where);
  c.size_query = rewrite(r, t, "size_query", where);
  c.count_query = rewrite(r, t, "count_query", where);
  c.length_params = r.strings(t, "length_params", where);
  c.byte_count_params = r.strings(t, "byte_count_params", where);
  c.output_wording = r.strings(t, "output_wording", where);
  c.optional_wording = r.strings(t, "optional_wording", where);
  c.option_type_wording = r.string(t, "option_type_wording", false, where);
  if (auto a = r.string(t, "char_arrays", false, where); !a.empty()) {
    if (a != "bytes" && a != "string") r.fail(where + "char_arrays", "expected \"bytes\" or \"string\"");
    c.char_arrays = a;
  }
  c.abi_symbol = rewrite(r, t, "abi_symbol", where);
  c.struct_version = rewrite(r, t, "struct_version", where);
  c.struct_version_field = r.string(t, "struct_version_field", false, where);
  if (c.struct_version && c.struct_version_field.empty())
    r.fail(where + "struct_version_field", "missing: the field struct_version's constant goes in");
  if (auto p = r.string(t, "abi_prototype", false, where); !p.empty()) c.abi_prototype = p;
  if (auto s = r.string(t, "version_suffix", false, where); !s.empty()) c.version_suffix = s;
  c.success_member = r.string(t, "success_member", false, where);
  if (const toml::node* node = t.get("noexcept_void")) {
    if (!node->value<bool>()) r.fail(where + "noexcept_void", "expected true or false");
    c.noexcept_void = *node->value<bool>();
  }
  if (const toml::node* node = t.get("status_pointer")) {
    const toml::table* sp = node->as_table();
    if (!sp)
      r.fail(where + "status_pointer", "expected a table { type = \"...\", first_error = \"...\", pending = \"...\" }");
    const std::string in = where + "status_pointer.";
    c.status_pointer = StatusPointer{r.string(*sp, "type", true, in), r.string(*sp, "first_error", true, in),
                                     r.string(*sp, "pending", true, in)};
  }
  if (const toml::node* node = t.get("failure_members")) {
    const toml::table* members = node->as_table();
    if (!members) r.fail(where + "failure_members", "expected a table of enum = \"member\"");
    for (const auto& [e, m] : *members) {
      if (!m.value<std::string>()) r.fail(where + "failure_members." + std::string(e.str()), "expected a member name");
      c.failure_members[std::string(e.str())] = *m.value<std::string>();
    }
  }
  if (const toml::node* node = t.get("default_stream_flags")) {
    const toml::table* flags = node->as_table();
    if (!flags) r.fail(where + "default_stream_flags", "expected a table of mode = flag");
    for (const auto& [mode, flag] : *flags) {
      if (!flag.value<int64_t>())
        r.fail(where + "default_stream_flags." + std::string(mode.str()), "expected an integer");
      c.default_stream_flags[std::string(mode.str())] = *flag.value<int64_t>();
    }
  }
  if (const toml::node* node = t.get("also_accepts")) {
    const toml::table* handles = node->as_table();
    if (!handles) r.fail(where + "also_accepts", "expected a table of handle = { type, when_doc_matches }");
    for (const auto& [handle, rule] : *handles) {
      const std::string rwhere = where + "also_accepts." + std::string(handle.str()) + ".";
      const toml::table* rt = rule.as_table();
      if (!rt) r.fail(rwhere, "expected a table { type = \"...\", when_doc_matches = \"...\" }");
      c.also_accepts[std::string(handle.str())] =
          AlsoAccepts{r.string(*rt, "type", true, rwhere), r.string(*rt, "when_doc_matches", true, rwhere)};
    }
  }
  return c;
}

void read_overrides(const Reader& r, const toml::table& functions, Spec& spec) {
  for (const auto& [fname, fnode] : functions) {
    const std::string where = "functions." + std::string(fname.str()) + ".";
    const toml::table* ftable = fnode.as_table();
    if (!ftable) r.fail(where, "expected a table");
    // What the function returns: "value" alone, or the default, "status_and_value".
    const std::string result = r.string(*ftable, "result", false, where);
    if (result == "value") {
      spec.value_results.push_back(std::string(fname.str()));
    } else if (!result.empty() && result != "status_and_value") {
      r.fail(where + "result", "expected \"value\" or \"status_and_value\"");
    }
    const toml::node* params_node = ftable->get("params");
    if (!params_node && !result.empty()) continue;
    const toml::table* params = params_node ? params_node->as_table() : nullptr;
    if (!params) r.fail(where + "params", "expected a table of parameters");
    for (const auto& [pname, pnode] : *params) {
      const std::string pwhere = where + "params." + std::string(pname.str()) + ".";
      const toml::table* ptable = pnode.as_table();
      if (!ptable) r.fail(pwhere, "expected a table");
      ParamOverride o;
      o.function = std::string(fname.str());
      o.param = std::string(pname.str());
      if (auto d = r.string(*ptable, "direction", false, pwhere); !d.empty()) {
        o.direction = direction_from_string(d);
        if (!o.direction) r.fail(pwhere + "direction", "unknown direction '" + d + "'");
      }
      if (auto role = r.string(*ptable, "role", false, pwhere); !role.empty()) {
        o.role = role_from_string(role);
        if (!o.role) r.fail(pwhere + "role", "unknown role '" + role + "'");
      }
      o.count_param = r.string(*ptable, "count_param", false, pwhere);
      if (auto offset = (*ptable)["count_offset"].value<int64_t>()) o.count_offset = static_cast<int>(*offset);
      o.query_function = r.string(*ptable, "query_function", false, pwhere);
      o.userdata_param = r.string(*ptable, "userdata_param", false, pwhere);
      o.called_once = (*ptable)["called_once"].value_or(false);
      o.attribute_param = r.string(*ptable, "attribute", false, pwhere);
      o.kept_until = r.string(*ptable, "kept_until", false, pwhere);
      o.also_accepts = r.string(*ptable, "also_accepts", false, pwhere);
      o.written_param = r.string(*ptable, "written_param", false, pwhere);
      o.other_names = r.strings(*ptable, "other_names", pwhere);
      o.optional = (*ptable)["optional"].value_or(false);
      if (const toml::node* n = ptable->get("size")) {
        if (!n->value<int64_t>() || *n->value<int64_t>() < 1) r.fail(pwhere + "size", "expected a positive integer");
        o.size = *n->value<int64_t>();
      }
      if (const toml::node* e = ptable->get("on_error_return")) {
        if (!e->value<int64_t>()) r.fail(pwhere + "on_error_return", "expected an integer");
        o.on_error_return = *e->value<int64_t>();
      }
      spec.overrides.push_back(o);
    }
  }
}

void read_attribute_types(const Reader& r, const toml::table& tables, Spec& spec) {
  for (const auto& [ename, enode] : tables) {
    const std::string where = "attribute_types." + std::string(ename.str()) + ".";
    const toml::table* members = enode.as_table();
    if (!members) r.fail(where, "expected a table of member = \"C type\"");
    for (const auto& [member, type] : *members) {
      const std::string m(member.str());
      if (!type.value<std::string>()) r.fail(where + m, "expected a C type name");
      spec.attribute_types.push_back({std::string(ename.str()), m, *type.value<std::string>()});
    }
  }
}

// `[compat]`: the module serving NVIDIA's C level and the facts NVIDIA's
// declarations add to the header's (see Compat).
Compat read_compat(const Reader& r, const toml::table& t) {
  static const std::set<std::string> kKeys = {"module",         "serves",    "error_value", "module_types",
                                              "type_spellings", "abi_names", "cimports"};
  for (const auto& [key, node] : t)
    if (!kKeys.count(std::string(key.str()))) r.fail("compat." + std::string(key.str()), "not a compat key");
  Compat c;
  c.module = r.string(t, "module", true, "compat.");
  c.serves = r.string(t, "serves", true, "compat.");
  c.error_value = r.string(t, "error_value", false, "compat.");
  c.module_types = r.strings(t, "module_types", "compat.");
  if (const toml::node* node = t.get("type_spellings")) {
    const toml::table* spellings = node->as_table();
    if (!spellings) r.fail("compat.type_spellings", "expected a table of header type = \"NVIDIA's\"");
    for (const auto& [name, text] : *spellings) {
      if (!text.value<std::string>()) r.fail("compat.type_spellings." + std::string(name.str()), "expected a string");
      c.type_spellings[std::string(name.str())] = *text.value<std::string>();
    }
  }
  if (const toml::node* node = t.get("abi_names")) {
    if (!node->value<bool>()) r.fail("compat.abi_names", "expected true or false");
    c.abi_names = *node->value<bool>();
  }
  if (const toml::node* node = t.get("cimports")) {
    const toml::table* modules = node->as_table();
    if (!modules) r.fail("compat.cimports", "expected a table of module = [names]");
    for (const auto& [module, names] : *modules) {
      const std::string key = "compat.cimports." + std::string(module.str());
      const toml::array* list = names.as_array();
      if (!list) r.fail(key, "expected a list of names");
      auto& out = c.cimports[std::string(module.str())];
      for (const auto& name : *list) {
        if (!name.value<std::string>()) r.fail(key, "expected names as strings");
        out.push_back(*name.value<std::string>());
      }
    }
  }
  return c;
}

}  // namespace

bool ParamOverride::names(const std::string& name) const {
  return param == name || std::find(other_names.begin(), other_names.end(), name) != other_names.end();
}

const ParamOverride* Spec::override_for(const std::string& function, const std::string& param) const {
  for (const auto& o : overrides)
    if (o.function == function && o.names(param)) return &o;
  return nullptr;
}

std::optional<model::Role> role_from_string(const std::string& text) {
  using model::Role;
  // Unresolved is what a pass starts from, never what a spec asks for.
#define CUBIND_ROLE_PARSE(name, role_text) \
  if (Role::name != Role::Unresolved && text == role_text) return Role::name;
  CUBIND_ROLES(CUBIND_ROLE_PARSE)
#undef CUBIND_ROLE_PARSE
  return std::nullopt;
}

std::optional<model::Direction> direction_from_string(const std::string& text) {
  using model::Direction;
  for (Direction d : {Direction::In, Direction::Out, Direction::InOut})
    if (text == model::to_string(d)) return d;
  return std::nullopt;
}

Spec parse(const std::string& toml_text, const std::string& source_name) {
  toml::table root;
  try {
    root = toml::parse(toml_text, source_name);
  } catch (const toml::parse_error& e) {
    std::ostringstream msg;
    msg << source_name << ": " << e.description() << " at line " << e.source().begin.line;
    throw std::runtime_error(msg.str());
  }
  Reader r{root, source_name};
  const toml::table* lib = root["library"].as_table();
  if (!lib) r.fail("library", "missing table");
  Spec spec;
  spec.library = r.string(*lib, "name", true, "library.");
  spec.c_module = r.string(*lib, "c_module", true, "library.");
  spec.py_module = r.string(*lib, "py_module", true, "library.");
  if (auto stub = r.string(*lib, "stub", false, "library."); !stub.empty()) spec.stub = stub;
  spec.headers = r.strings(*lib, "headers", "library.");
  if (spec.headers.empty()) r.fail("library.headers", "needs at least one header");
  spec.internal_headers = r.strings(*lib, "internal_headers", "library.");
  spec.internal_macro = r.string(*lib, "internal_macro", !spec.internal_headers.empty(), "library.");
  for (const auto& h : spec.internal_headers)
    if (std::find(spec.headers.begin(), spec.headers.end(), h) == spec.headers.end())
      r.fail("library.internal_headers", h + " is not one of library.headers");
  spec.status_type = r.string(*lib, "status_type", true, "library.");
  spec.status_description = r.string(*lib, "status_description", false, "library.");
  spec.status_record = r.string(*lib, "status_record", false, "library.");
  spec.status_member = r.string(*lib, "status_member", !spec.status_record.empty(), "library.");
  if (spec.status_record.empty() && !spec.status_member.empty())
    r.fail("library.status_member", "is only read with library.status_record");
  spec.version_header = r.string(*lib, "version_header", false, "library.");
  spec.version_macro = r.string(*lib, "version_macro", false, "library.");
  spec.clang_args = r.strings(*lib, "clang_args", "library.");
  spec.integer_handles = r.strings(*lib, "integer_handles", "library.");
  spec.void_handles = r.strings(*lib, "void_handles", "library.");
  spec.foreign_typedefs = r.strings(*lib, "foreign_typedefs", "library.");
  spec.function_handles = r.strings(*lib, "function_handles", "library.");
  spec.foreign_records = r.strings(*lib, "foreign_records", "library.");
  if (const toml::node* node = lib->get("foreign_handles")) {
    const toml::table* handles = node->as_table();
    if (!handles) r.fail("library.foreign_handles", "expected a table of handle = \"struct tag\"");
    for (const auto& [name, tag] : *handles) {
      if (!tag.value<std::string>())
        r.fail("library.foreign_handles." + std::string(name.str()), "expected the struct's tag");
      spec.foreign_handles.emplace_back(std::string(name.str()), *tag.value<std::string>());
    }
  }
  spec.prelude_headers = r.strings(*lib, "prelude_headers", "library.");
  spec.twin_headers = r.strings(*lib, "twin_headers", "library.");

  if (const toml::table* loader = root["loader"].as_table()) {
    // A key of another name (a typo, a renamed key such as the singular
    // abi_typedefs_header) would otherwise be dropped without a word.
    static const std::set<std::string> kLoaderKeys = {
        "name", "sonames", "env_var", "wheel_subdirs", "toolkit_subdirs", "proc_address_function",
        "abi_typedefs_headers", "per_thread_suffixes", "missing_function_status"};
    for (const auto& [key, node] : *loader) {
      if (kLoaderKeys.count(std::string(key.str()))) continue;
      std::string known;
      for (const auto& k : kLoaderKeys) known += (known.empty() ? "" : ", ") + k;
      r.fail("loader." + std::string(key.str()), "not a loader key (those are: " + known + ")");
    }
    spec.loader_name = r.string(*loader, "name", false, "loader.");
    spec.sonames = r.strings(*loader, "sonames", "loader.");
    spec.env_var = r.string(*loader, "env_var", true, "loader.");
    spec.wheel_subdirs = r.strings(*loader, "wheel_subdirs", "loader.");
    spec.toolkit_subdirs = r.strings(*loader, "toolkit_subdirs", "loader.");
    spec.proc_address_function = r.string(*loader, "proc_address_function", false, "loader.");
    spec.abi_typedefs_headers = r.strings(*loader, "abi_typedefs_headers", "loader.");
    spec.per_thread_suffixes = r.strings(*loader, "per_thread_suffixes", "loader.");
    spec.missing_function_status = r.string(*loader, "missing_function_status", false, "loader.");
  }
  if (spec.loader_name.empty()) spec.loader_name = spec.library;
  if (const toml::table* conventions = root["conventions"].as_table())
    spec.conventions = read_conventions(r, *conventions);
  if (!spec.abi_typedefs_headers.empty() && spec.conventions.abi_prototype.empty())
    r.fail("conventions.abi_prototype", "needed with loader.abi_typedefs_headers");
  if (!spec.proc_address_function.empty() && spec.conventions.default_stream_flags.empty())
    r.fail("conventions.default_stream_flags", "needed with loader.proc_address_function");
  if (const toml::table* functions = root["functions"].as_table()) read_overrides(r, *functions, spec);
  if (const toml::table* types = root["attribute_types"].as_table()) read_attribute_types(r, *types, spec);
  if (const toml::table* types = root["option_types"].as_table()) {
    for (const auto& [ename, enode] : *types) {
      const std::string where = "option_types." + std::string(ename.str()) + ".";
      const toml::table* members = enode.as_table();
      if (!members) r.fail(where, "expected a table of member = \"option type\"");
      spec.option_types.push_back({std::string(ename.str()), "", ""});
      for (const auto& [member, type] : *members) {
        if (!type.value<std::string>()) r.fail(where + std::string(member.str()), "expected an option type");
        spec.option_types.push_back({std::string(ename.str()), std::string(member.str()), *type.value<std::string>()});
      }
    }
  }
  if (const toml::table* records = root["fields"].as_table()) {
    for (const auto& [rname, rnode] : *records) {
      const std::string where = "fields." + std::string(rname.str()) + ".";
      const toml::table* fields = rnode.as_table();
      if (!fields) r.fail(where, "expected a table of fields");
      for (const auto& [fname, fnode] : *fields) {
        const toml::table* t = fnode.as_table();
        if (!t) r.fail(where + std::string(fname.str()), "expected a table");
        const std::string fwhere = where + std::string(fname.str()) + ".";
        FieldCount fc{std::string(rname.str()), std::string(fname.str()), r.string(*t, "count_field", false, fwhere),
                      r.string(*t, "role", false, fwhere)};
        if (!fc.role.empty() && fc.role != "kernel_params" && fc.role != "string" && fc.role != "bytes")
          r.fail(fwhere + "role", "expected \"kernel_params\", \"string\" or \"bytes\"");
        if (fc.role.empty() && fc.count_field.empty()) r.fail(fwhere + "count_field", "missing");
        spec.field_counts.push_back(fc);
      }
    }
  }
  if (const toml::node* node = root.get("helpers")) {
    const toml::table* helpers = node->as_table();
    if (!helpers) r.fail("helpers", "expected a table of name = \"function\"");
    for (const auto& [name, function] : *helpers) {
      if (!function.value<std::string>()) r.fail("helpers." + std::string(name.str()), "expected a function name");
      spec.helpers.emplace_back(std::string(name.str()), *function.value<std::string>());
    }
  }
  if (const toml::array* skips = root["skip"].as_array()) {
    for (const auto& node : *skips) {
      const toml::table* t = node.as_table();
      if (!t) r.fail("skip", "expected an array of tables");
      spec.skips.push_back({r.string(*t, "pattern", true, "skip."), r.string(*t, "reason", true, "skip.")});
    }
  }
  if (const toml::table* gil = root["gil"].as_table()) spec.keep_gil = r.strings(*gil, "keep", "gil.");
  if (const toml::table* compat = root["compat"].as_table()) spec.compat = read_compat(r, *compat);
  spec.package = read_package(toml_text, source_name);
  return spec;
}

Spec load(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read spec " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse(buffer.str(), path);
}

}  // namespace cubind::spec
