// Naming, in one room. Where each naming decision lives:
// - parse/declaration_names.cpp: the declarations' own names, and the names
//   made up for nested records (`Outer_anon0`, `Outer_tag`); it needs
//   libclang's cursors, so it stays in parse.
// - here, the naming passes (model fields they fill in brackets):
//   - name_public_records: the class users see, a record's unversioned
//     typedef (`CUDA_MEMCPY2D`, not `CUDA_MEMCPY2D_v2` or `CUDA_MEMCPY2D_st`),
//     and its other names bound to the same class [Record::public_name,
//     aliases];
//   - find_twin_enums: the enums of the spec's twin_headers spelling the
//     same C enum (`CUdevice_attribute` for `cudaDeviceAttr`) [Enum::twins];
//   - name_type_aliases: other names of an enum, integer handle or record
//     class bound to the same class (`CUstreamAttrID`, `CUdevice_v1`)
//     [Model::type_aliases, Enum/Handle/Record::aliases];
//   - mark_integer_handles: the integer typedefs the spec declares handles
//     (`CUdeviceptr`, `CUdevice`) [Handle, Type::kind];
//   - mark_callback_classes: the function-pointer typedefs bound as classes
//     of their name (`CUoccupancyB2DSize`), where the name is free
//     [Callback::has_class, no_class_reason];
//   - name_tagged_handles: a pointer to a handle's struct, spelled by its
//     tag (`struct cudaGraphicsResource *`), is that handle
//     (`cudaGraphicsResource_t`) [Type::kind, Type::name];
//   - mark_void_handles: the void* typedefs the spec declares handles
//     (`EGLImageKHR`), at their uses [Handle, Type::kind];
//   - name_python: names Python and Cython can spell, `from` -> `from_`,
//     `bytes` -> `bytes_`, and the C name kept as a field's second property
//     where Python can spell it [Param::py_name, Field::py_name, py_alias].
// - the spec's [conventions] (bindings/*.toml) hold the library's naming
//   rules these passes and passes/aliases.cpp apply: the version suffix and
//   the ABI prototypes' and symbols' names.
// - emit only reads these names; the spellings it derives mechanically from
//   them for generated helpers (`_c_<param>` locals, `_<Enum>_of`,
//   `_trampoline_<function>_<param>`: emit/context.hpp; an attribute table's
//   function names: emit/attributes.hpp) decide nothing.
#include <algorithm>
#include <cctype>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

namespace {

bool is_version_of(const std::string& versioned, const std::string& base, const std::regex& suffix) {
  return versioned.size() > base.size() && versioned.compare(0, base.size(), base) == 0 &&
         std::regex_match(versioned.substr(base.size()), suffix);
}

// Every type the model's functions, struct fields and callbacks use, with the
// header declaring its user (records first, as the headers declare them
// before the functions taking them).
template <class Visit>
void for_each_type(Model& model, Visit visit) {
  for (auto& r : model.records)
    for (auto& field : r.fields) visit(field.type, r.header);
  for (auto& f : model.functions) {
    visit(f.result, f.header);
    for (auto& p : f.params) visit(p.type, f.header);
  }
  for (auto& c : model.callbacks) visit(c.type, c.header);
}

// The handle `name` where `was` (a pointer) stood, keeping its size and const.
Type handle_type(const std::string& name, const Type& was) {
  Type h;
  h.kind = TypeKind::Handle;
  h.name = name;
  h.size = was.size;
  h.is_const = was.is_const;
  h.spelling = (was.is_const ? "const " : "") + name;
  return h;
}

void retype(Type& t, const std::map<std::string, std::string>& handles) {
  for (auto& inner : t.inner) retype(inner, handles);
  if (t.kind != TypeKind::Integer) return;
  auto it = handles.find(t.name);
  if (it == handles.end()) return;
  t.kind = TypeKind::Handle;
  t.name = it->second;
}

// `struct tag *` -> the handle whose typedef names that pointer.
void retype_tagged(Type& t, const std::map<std::string, std::string>& by_tag) {
  for (auto& inner : t.inner) retype_tagged(inner, by_tag);
  if (t.kind != TypeKind::Pointer || t.inner.size() != 1 || t.inner[0].kind != TypeKind::Record) return;
  auto it = by_tag.find(t.inner[0].name);
  if (it == by_tag.end()) return;
  t = handle_type(it->second, t);
}

// `void *` spelled by a typedef of `names` -> that handle; the header of its
// first use in `first_use`.
void retype_void(Type& t, const std::set<std::string>& names, const std::string& header,
                 std::map<std::string, std::string>& first_use) {
  for (auto& inner : t.inner) retype_void(inner, names, header, first_use);
  if (t.kind != TypeKind::Pointer || !names.count(t.name) || t.inner.empty() || t.inner[0].kind != TypeKind::Void)
    return;
  first_use.emplace(t.name, header);
  t = handle_type(t.name, t);
}

// `F *` where F names a function type of `names` -> the handle F, standing
// for the pointer; the header of its first use in `first_use`.
void retype_function(Type& t, const std::set<std::string>& names, const std::string& header,
                     std::map<std::string, std::string>& first_use) {
  for (auto& inner : t.inner) retype_function(inner, names, header, first_use);
  if (t.kind != TypeKind::Pointer || t.inner.empty() || !names.count(t.inner[0].name)) return;
  const std::string name = t.inner[0].name;
  first_use.emplace(name, header);
  t = handle_type(name, t);
}

// Calls `visit` on `t` and every type it is made of.
template <typename Visit>
void visit_all(const Type& t, Visit visit) {
  visit(t);
  for (const auto& inner : t.inner) visit_all(inner, visit);
}

const std::set<std::string>& python_keywords() {
  static const std::set<std::string> keywords = {
      "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
      "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
      "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
      "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",
  };
  return keywords;
}

// Cython keywords and built-in type names: a name Python could spell, but
// not the Cython the generator writes.
const std::set<std::string>& cython_reserved() {
  static const std::set<std::string> reserved = {
      "cdef",   "cpdef",    "ctypedef", "cimport", "include", "struct",   "union", "enum",     "extern", "inline",
      "public", "readonly", "api",      "nogil",   "gil",     "noexcept", "const", "volatile", "signed", "unsigned",
      "sizeof", "NULL",     "bytes",    "str",     "unicode", "int",      "long",  "float",    "double", "char",
      "short",  "object",   "list",     "dict",    "tuple",   "set",      "bint",  "property",
  };
  return reserved;
}

}  // namespace

bool is_python_keyword(const std::string& name) { return python_keywords().count(name) > 0; }

std::string python_name(const std::string& c_name) {
  return is_python_keyword(c_name) || cython_reserved().count(c_name) ? c_name + "_" : c_name;
}

void name_python(Model& model) {
  for (auto& f : model.functions)
    for (auto& p : f.params) p.py_name = python_name(p.name);
  for (auto& r : model.records)
    for (auto& field : r.fields) {
      field.py_name = python_name(field.name);
      // A field renamed only for Cython (`bytes_`) is also reachable under
      // its C name, as users of the classic bindings spell it (`uuid.bytes`).
      field.py_alias = field.py_name != field.name && !is_python_keyword(field.name) ? field.name : "";
    }
}

namespace {

// What else of the module a Python name would denote, if anything.
std::string python_owner(const Model& model, const std::string& name) {
  for (const auto& r : model.records)
    if (r.public_name == name || std::find(r.aliases.begin(), r.aliases.end(), name) != r.aliases.end())
      return "struct " + r.public_name;
  if (model.handle(name)) return "handle " + name;
  if (model.enumeration(name)) return "enum " + name;
  if (model.function(name)) return "function " + name;
  for (const auto& k : model.constants)
    if (k.name == name) return "constant " + name;
  return "";
}

}  // namespace

void mark_callback_classes(Model& model) {
  for (auto& c : model.callbacks) {
    const std::string owner = python_owner(model, c.name);
    c.has_class = owner.empty();
    c.no_class_reason = owner.empty() ? "" : "the name is the module's " + owner;
  }
}

void name_public_records(Model& model, const spec::Spec& spec) {
  const std::regex suffix(spec.conventions.version_suffix);
  for (auto& r : model.records) r.public_name = r.name;
  for (const auto& t : model.typedefs) {
    if (t.type.kind != TypeKind::Record) continue;
    for (auto& r : model.records)
      if (r.name == t.type.canonical && is_version_of(r.name, t.name, suffix)) r.public_name = t.name;
  }
  // Every other name of the type, in the headers' order, each once.
  for (auto& r : model.records) {
    auto add = [&](const std::string& name) {
      if (!name.empty() && name != r.public_name &&
          std::find(r.aliases.begin(), r.aliases.end(), name) == r.aliases.end())
        r.aliases.push_back(name);
    };
    add(r.tag);
    if (r.parent.empty()) add(r.name);  // a nested record's name is made up
    for (const auto& t : model.typedefs)
      if (t.type.kind == TypeKind::Record && t.type.canonical == r.name) add(t.name);
  }
}

void mark_struct_versions(Model& model, const spec::Spec& spec) {
  const auto& rule = spec.conventions.struct_version;
  if (!rule) return;
  const std::regex match(rule->match);
  for (auto& r : model.records) {
    const bool has_field = std::any_of(r.fields.begin(), r.fields.end(), [&](const Field& f) {
      return f.name == spec.conventions.struct_version_field && f.type.kind == TypeKind::Integer;
    });
    if (!has_field) continue;
    std::vector<std::string> names = {r.name};
    names.insert(names.end(), r.aliases.begin(), r.aliases.end());
    for (const auto& name : names) {
      if (!std::regex_match(name, match)) continue;
      const std::string constant = std::regex_replace(name, match, rule->replace);
      const auto k = std::find_if(model.constants.begin(), model.constants.end(),
                                  [&](const Constant& c) { return c.name == constant && c.kind == "int"; });
      if (k == model.constants.end()) continue;
      r.version_field = spec.conventions.struct_version_field;
      r.version_constant = constant;
      r.version_value = k->int_value;
      break;
    }
  }
}

namespace {

// Each member's value and its name without the enum's common prefix,
// underscores and case: `CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK` and
// `cudaDevAttrMaxThreadsPerBlock` are both "maxthreadsperblock".
std::vector<std::pair<int64_t, std::string>> twin_keys(const Enum& e) {
  size_t prefix = e.values.empty() ? 0 : e.values.front().name.size();
  for (const auto& v : e.values) {
    const std::string& first = e.values.front().name;
    size_t i = 0;
    while (i < prefix && i < v.name.size() && v.name[i] == first[i]) ++i;
    prefix = i;
  }
  std::vector<std::pair<int64_t, std::string>> keys;
  for (const auto& v : e.values) {
    std::string key;
    for (size_t i = prefix; i < v.name.size(); ++i)
      if (v.name[i] != '_') key += static_cast<char>(std::tolower(static_cast<unsigned char>(v.name[i])));
    keys.emplace_back(v.value, key);
  }
  return keys;
}

bool are_twins(const Enum& a, const Enum& b) {
  // One member says nothing of a spelling: `X_NONE = 0` is in many enums.
  if (a.values.size() < 2 || b.values.size() < 2) return false;
  auto small = twin_keys(a), large = twin_keys(b);
  if (small.size() > large.size()) std::swap(small, large);
  std::set<int64_t> values;
  std::set<std::pair<int64_t, std::string>> members(large.begin(), large.end());
  for (const auto& [value, key] : large) values.insert(value);
  size_t named = 0;
  for (const auto& member : small) {
    if (!values.count(member.first)) return false;
    named += members.count(member);
  }
  return 2 * named > small.size();
}

}  // namespace

void find_twin_enums(Model& model) {
  for (auto& e : model.enums)
    for (const auto& other : model.twin_candidates)
      if (are_twins(e, other)) e.twins.push_back(other.name);
}

void name_type_aliases(Model& model, const spec::Spec& spec) {
  const std::regex suffix(spec.conventions.version_suffix);
  std::vector<Alias> candidates = model.type_aliases;  // the #define'd ones (parse)
  for (const auto& t : model.typedefs) {
    // `typedef CUlaunchAttributeID CUstreamAttrID;`: an enum under a second name.
    if (t.type.kind == TypeKind::Enum && t.type.name != t.name) candidates.push_back({t.name, t.type.name, t.header});
    // `CUdevice_v1`, the versioned typedef of the integer handle CUdevice.
    for (const auto& h : model.handles)
      if (h.is_integer && is_version_of(t.name, h.name, suffix)) candidates.push_back({t.name, h.name, t.header});
  }
  model.type_aliases.clear();
  for (auto& a : candidates) {
    std::vector<std::string>* aliases = nullptr;
    std::string target;
    for (auto& e : model.enums)
      if (e.name == a.target || (!e.tag.empty() && e.tag == a.target)) aliases = &e.aliases, target = e.name;
    for (auto& h : model.handles)
      if (h.name == a.target) aliases = &h.aliases, target = h.name;
    for (auto& r : model.records) {
      const bool named = r.public_name == a.target || r.name == a.target ||
                         std::find(r.aliases.begin(), r.aliases.end(), a.target) != r.aliases.end();
      if (named && r.parent.empty()) aliases = &r.aliases, target = r.public_name;
    }
    // A name of a type with no class of its own (an integer typedef), or one
    // that already names something of the module, stays unbound.
    if (!aliases || a.name == target || !python_owner(model, a.name).empty()) continue;
    if (std::find(aliases->begin(), aliases->end(), a.name) != aliases->end()) continue;
    aliases->push_back(a.name);
    model.type_aliases.push_back({a.name, target, a.header});
  }
}

void mark_failure_members(Model& model, const spec::Spec& spec) {
  for (auto& e : model.enums) {
    if (e.values.empty()) continue;
    auto named = spec.conventions.failure_members.find(e.name);
    if (named != spec.conventions.failure_members.end()) {
      const bool found =
          std::any_of(e.values.begin(), e.values.end(), [&](const EnumValue& v) { return v.name == named->second; });
      if (!found) throw std::runtime_error("conventions.failure_members." + e.name + ": no member " + named->second);
      e.failure_member = named->second;
      continue;
    }
    const EnumValue* largest = &e.values.front();
    for (const auto& v : e.values)
      if (v.value > largest->value) largest = &v;
    e.failure_member = largest->name;
  }
}

void apply_field_counts(Model& model, const spec::Spec& spec) {
  for (const auto& fc : spec.field_counts) {
    Field* target = nullptr;
    for (auto& r : model.records) {
      const bool named = r.name == fc.record || r.public_name == fc.record ||
                         std::find(r.aliases.begin(), r.aliases.end(), fc.record) != r.aliases.end();
      if (!named) continue;
      bool has_count = false;
      for (auto& f : r.fields) {
        if (f.name == fc.field) target = &f;
        has_count |= f.name == fc.count_field;
      }
      if (target && !has_count && !fc.count_field.empty())
        throw std::runtime_error("fields." + fc.record + ": no count field " + fc.count_field);
      if (target) break;
    }
    if (!target) throw std::runtime_error("fields." + fc.record + "." + fc.field + ": no such field");
    if (fc.role == "string" || fc.role == "bytes") {
      if (!is_char_array(target->type))
        throw std::runtime_error("fields." + fc.record + "." + fc.field + ": role \"" + fc.role +
                                 "\" is for a char array, not " + target->type.spelling);
      target->c_string = fc.role == "string";
      continue;
    }
    target->count_field = fc.count_field;
    target->kernel_params = fc.role == "kernel_params";
  }
}

bool is_char_array(const Type& t) {
  return t.kind == TypeKind::Array && t.pointee().kind == TypeKind::Integer && t.pointee().canonical == "char";
}

void mark_char_strings(Model& model, const spec::Spec& spec) {
  const bool strings = spec.conventions.char_arrays == "string";
  for (auto& r : model.records)
    for (auto& f : r.fields)
      if (is_char_array(f.type)) f.c_string = strings;
}

// An enum of a header outside the spec's (cuda.h's CUresult in cufile.h's
// CUfileError_t), which the spec lists with the foreign typedefs: its
// integer type under its name, as those are (its class is another module's).
static void retype_foreign_enums(Type& t, const std::set<std::string>& names) {
  for (auto& inner : t.inner) retype_foreign_enums(inner, names);
  if (t.kind != TypeKind::Enum || !names.count(t.name)) return;
  t.kind = TypeKind::Integer;
  t.canonical = t.is_signed ? "int" : "unsigned int";
}

// The structs of spec foreign_records that the model's types name: declared
// without fields, a tag where the header spells `struct timespec`, the
// typedef's name alone where it spells a typedef (sockaddr_t).
static void declare_foreign_records(Model& model, const spec::Spec& spec) {
  std::set<std::string> pending(spec.foreign_records.begin(), spec.foreign_records.end());
  for (const auto& r : model.records) pending.erase(r.name);  // a header of the spec's declares it after all
  std::vector<Record> found;
  for_each_type(model, [&](Type& t, const std::string& header) {
    visit_all(t, [&](const Type& u) {
      if (u.kind != TypeKind::Record || !pending.count(u.name)) return;
      pending.erase(u.name);
      Record r;
      r.order = -1;  // declared by a header outside the spec's: before everything that uses it
      r.name = u.name;
      std::string spelled = u.spelling;
      if (spelled.rfind("const ", 0) == 0) spelled = spelled.substr(6);
      if (spelled.rfind("struct ", 0) == 0) r.tag = u.name;
      r.is_complete = u.size > 0;
      r.size = u.size;
      r.doc.brief = u.name + ": a struct of a header outside the library's (first used by " + header +
                    "), its fields not bound: pass it by address.";
      r.header = header;
      found.push_back(r);
    });
  });
  for (const auto& name : spec.foreign_records)
    for (const auto& r : found)
      if (r.name == name) model.records.push_back(r);
}

void declare_foreign_typedefs(Model& model, const spec::Spec& spec) {
  declare_foreign_records(model, spec);
  std::set<std::string> pending(spec.foreign_typedefs.begin(), spec.foreign_typedefs.end());
  for (const auto& t : model.typedefs) pending.erase(t.name);  // a header of the spec's declares it after all
  std::set<std::string> enums;
  for (const auto& name : pending)
    if (!model.enumeration(name)) enums.insert(name);
  for_each_type(model, [&](Type& t, const std::string&) { retype_foreign_enums(t, enums); });
  std::vector<Typedef> found;
  for_each_type(model, [&](Type& t, const std::string& header) {
    visit_all(t, [&](const Type& u) {
      if (u.kind != TypeKind::Integer || !pending.count(u.name)) return;
      pending.erase(u.name);
      Typedef d;
      d.order = -1;  // declared by a header outside the spec's: before everything that uses it
      d.name = u.name;
      d.type = u;
      d.type.name.clear();
      d.type.spelling = u.canonical;
      d.type.is_const = false;
      d.doc.brief = u.name + ": an integer type of a header outside the library's (first used by " + header + ").";
      d.header = header;
      found.push_back(d);
    });
  });
  // In the spec's order, which is the order the C layer declares them in.
  for (const auto& name : spec.foreign_typedefs)
    for (const auto& d : found)
      if (d.name == name) model.typedefs.push_back(d);
}

void mark_integer_handles(Model& model, const spec::Spec& spec) {
  const std::regex suffix(spec.conventions.version_suffix);
  std::map<std::string, std::string> names;  // typedef (or its versions) -> handle
  for (const auto& wanted : spec.integer_handles) {
    names[wanted] = wanted;
    for (const auto& t : model.typedefs)
      if (is_version_of(t.name, wanted, suffix)) names[t.name] = wanted;
  }
  for (const auto& t : model.typedefs) {
    if (std::find(spec.integer_handles.begin(), spec.integer_handles.end(), t.name) == spec.integer_handles.end())
      continue;
    Handle h;
    h.order = t.order;
    h.name = t.name;
    h.is_integer = true;
    h.doc = t.doc;
    h.header = t.header;
    model.handles.push_back(h);
  }
  for_each_type(model, [&](Type& t, const std::string&) { retype(t, names); });
}

void name_tagged_handles(Model& model) {
  std::map<std::string, std::string> by_tag;
  for (const auto& h : model.handles)
    if (!h.is_integer && !h.record_tag.empty()) by_tag.emplace(h.record_tag, h.name);
  for_each_type(model, [&](Type& t, const std::string&) { retype_tagged(t, by_tag); });
}

void mark_void_handles(Model& model, const spec::Spec& spec) {
  const std::set<std::string> names(spec.void_handles.begin(), spec.void_handles.end());
  const std::set<std::string> functions(spec.function_handles.begin(), spec.function_handles.end());
  std::map<std::string, std::string> foreign(spec.foreign_handles.begin(), spec.foreign_handles.end());
  for (const auto& h : model.handles) foreign.erase(h.name);  // a header of the spec's declares it after all
  if (names.empty() && functions.empty() && foreign.empty()) return;
  std::map<std::string, std::string> first_use;  // handle -> header
  for_each_type(model, [&](Type& t, const std::string& header) {
    retype_void(t, names, header, first_use);
    retype_function(t, functions, header, first_use);
    visit_all(t, [&](const Type& u) {
      if (u.kind == TypeKind::Handle && foreign.count(u.name)) first_use.emplace(u.name, header);
    });
  });
  auto add = [&](const std::string& name, bool function) {
    auto use = first_use.find(name);
    if (use == first_use.end()) return;  // an older header without the functions taking it
    Handle h;
    h.order = -1;  // declared by a header outside the spec's: before everything that uses it
    h.name = name;
    // The typedef's name stands for the struct tag: the driver's and the
    // runtime's classes of one type take each other's objects.
    h.record_tag = name;
    h.is_function = function;
    h.doc.brief = function ? name + " (a function type a header outside the library's declares), passed by its address."
                           : name + " (a void* a header outside the library's declares), passed by its address.";
    h.header = use->second;
    model.handles.push_back(h);
  };
  for (const auto& name : spec.void_handles) add(name, false);
  for (const auto& name : spec.function_handles) add(name, true);
  // A void* typedef of the spec's own headers (cufile.h's CUfileHandle_t):
  // the handle is its declaration, in the typedef's place, not a second one.
  for (auto& h : model.handles) {
    auto own = std::find_if(model.typedefs.begin(), model.typedefs.end(),
                            [&](const Typedef& t) { return t.name == h.name && names.count(t.name); });
    if (own == model.typedefs.end()) continue;
    h.order = own->order;
    h.header = own->header;
    if (!own->doc.brief.empty()) h.doc = own->doc;
    model.typedefs.erase(own);
  }
  // cuda.h's CUstream in cufile.h: the tag the other modules' classes carry.
  for (const auto& [name, tag] : spec.foreign_handles) {
    if (!foreign.count(name)) continue;
    const std::size_t before = model.handles.size();
    add(name, false);
    if (model.handles.size() == before) continue;
    model.handles.back().record_tag = tag;
    model.handles.back().doc.brief = name + " (a handle a header outside the library's declares; the " +
                                     "other modules' handles of struct " + tag + " are taken too).";
  }
}

}  // namespace cubind::passes
