// Values typed by an attribute (`cuPointerGetAttribute(attribute, ptr)`):
// the spec's attribute_types resolved against the headers' types, and the
// parameters that carry such a value linked to their attribute.
#include <algorithm>
#include <map>
#include <regex>
#include <stdexcept>

#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

namespace {

Type scalar(TypeKind kind, const std::string& spelling, int64_t size, bool is_signed) {
  Type t;
  t.kind = kind;
  t.spelling = spelling;
  t.canonical = spelling;
  t.size = size;
  t.is_signed = is_signed;
  return t;
}

std::optional<Type> builtin(const std::string& name) {
  static const std::map<std::string, Type> builtins = {
      {"int", scalar(TypeKind::Integer, "int", 4, true)},
      {"unsigned int", scalar(TypeKind::Integer, "unsigned int", 4, false)},
      {"long long", scalar(TypeKind::Integer, "long long", 8, true)},
      {"unsigned long long", scalar(TypeKind::Integer, "unsigned long long", 8, false)},
      {"size_t", [] {
         Type t = scalar(TypeKind::Integer, "size_t", 8, false);
         t.name = "size_t";
         return t;
       }()},
      {"bool", scalar(TypeKind::Bool, "bool", 1, false)},
      {"char", scalar(TypeKind::Integer, "char", 1, true)},
  };
  if (auto it = builtins.find(name); it != builtins.end()) return it->second;
  if (name == "void*") {
    Type t = scalar(TypeKind::Pointer, "void *", 8, false);
    t.inner.push_back(scalar(TypeKind::Void, "void", -1, false));
    return t;
  }
  return std::nullopt;
}

}  // namespace

std::optional<Type> type_named(const Model& m, const std::string& name) {
  if (auto t = builtin(name)) return t;
  const Typedef* td = nullptr;
  for (const auto& t : m.typedefs)
    if (t.name == name) td = &t;
  if (const Handle* h = m.handle(name)) {
    Type t;
    t.kind = TypeKind::Handle;
    t.spelling = t.name = name;
    t.size = 8;
    if (h->is_integer && td) {
      t.canonical = td->type.canonical;
      t.size = td->type.size;
    }
    return t;
  }
  if (const Enum* e = m.enumeration(name)) {
    Type t;
    t.kind = TypeKind::Enum;
    t.spelling = t.name = name;
    t.canonical = e->name;
    t.size = 4;
    t.is_signed = e->is_signed;
    return t;
  }
  if (const Record* r = m.record(name)) {
    Type t;
    t.kind = TypeKind::Record;
    t.spelling = t.name = t.canonical = name;
    t.size = r->size;
    return t;
  }
  if (td) {
    Type t = td->type;
    t.spelling = t.name = name;
    return t;
  }
  return std::nullopt;
}

void resolve_attribute_types(Model& model, const spec::Spec& spec) {
  for (const auto& a : spec.attribute_types) {
    const std::string where = "attribute_types." + a.enum_name + "." + a.member + ": ";
    const Enum* e = model.enumeration(a.enum_name);
    if (!e) throw std::runtime_error(where + "no enum " + a.enum_name + " in the headers");
    const EnumValue* member = nullptr;
    for (const auto& v : e->values)
      if (v.name == a.member) member = &v;
    if (!member) throw std::runtime_error(where + a.enum_name + " has no member " + a.member);
    AttributeValue value;
    value.member = member->name;
    value.value = member->value;
    std::string type_name = a.type;
    // "char[1024]": a string the call writes NUL-terminated into that many bytes.
    static const std::regex fixed_string(R"(char\[([0-9]+)\])");
    std::smatch size;
    if (std::regex_match(type_name, size, fixed_string)) {
      value.string_size = std::stoll(size[1]);
      if (value.string_size < 2) throw std::runtime_error(where + "a string needs room for a character and its NUL");
      type_name = "char";
    }
    if (type_name.size() > 2 && type_name.compare(type_name.size() - 2, 2, "[]") == 0) {
      value.is_array = true;
      type_name.resize(type_name.size() - 2);
    }
    const auto type = type_named(model, type_name);
    if (!type) throw std::runtime_error(where + "unknown C type '" + a.type + "'");
    value.type = *type;
    AttributeTable* table = nullptr;
    for (auto& t : model.attribute_tables)
      if (t.enum_name == a.enum_name) table = &t;
    if (!table) {
      model.attribute_tables.push_back({a.enum_name, "", {}});
      table = &model.attribute_tables.back();
    }
    table->values.push_back(value);
  }
  // The header's order: the dispatch tests the common low members first.
  for (auto& t : model.attribute_tables)
    std::stable_sort(t.values.begin(), t.values.end(),
                     [](const AttributeValue& a, const AttributeValue& b) { return a.value < b.value; });
}

namespace {

// The kind of an option's value from its documented type.
OptionValue option_value(const Model& m, const EnumValue& member, const std::string& type, const std::string& where) {
  OptionValue v;
  v.member = member.name;
  v.value = member.value;
  static const std::regex enumerated(R"(unsigned int for enumerated type (?:::)?(\w+))");
  std::smatch e;
  if (type == "unsigned int") {
    v.kind = OptionKind::Unsigned;
  } else if (type == "int") {
    v.kind = OptionKind::Signed;
  } else if (type == "float") {
    v.kind = OptionKind::Float;
  } else if (type == "char *" || type == "char*") {
    v.kind = OptionKind::Buffer;
  } else if (type == "No option value needed") {
    v.kind = OptionKind::None;
  } else if (type == "const char **" || type == "void **") {
    v.kind = OptionKind::Address;
  } else if (std::regex_match(type, e, enumerated)) {
    v.kind = OptionKind::Enum;
    v.enum_name = e[1];
    if (v.enum_name.size() > 5 && v.enum_name.compare(v.enum_name.size() - 5, 5, "_enum") == 0) {
      // "::CUjit_cacheMode_enum": the tag; the class is its typedef.
      for (const auto& en : m.enums)
        if (en.tag == v.enum_name) v.enum_name = en.name;
    }
    if (!m.enumeration(v.enum_name)) throw std::runtime_error(where + "no enum " + v.enum_name + " in the headers");
  } else {
    throw std::runtime_error(where + "unknown option type '" + type + "' (give it in the spec's option_types)");
  }
  return v;
}

}  // namespace

// Option enums (spec option_types): each member's value type as its doc
// comment says ("Option type: unsigned int"), else as the spec gives it; a
// member documenting none and given none (CU_JIT_NUM_OPTIONS) has no entry.
void resolve_option_types(Model& model, const spec::Spec& spec) {
  std::vector<std::string> enums;
  for (const auto& o : spec.option_types)
    if (std::find(enums.begin(), enums.end(), o.enum_name) == enums.end()) enums.push_back(o.enum_name);
  const std::regex wording(spec.conventions.option_type_wording.empty() ? "$^" : spec.conventions.option_type_wording);
  for (const auto& name : enums) {
    const Enum* e = model.enumeration(name);
    if (!e) throw std::runtime_error("option_types." + name + ": no enum " + name + " in the headers");
    OptionTable table{name, {}};
    for (const auto& member : e->values) {
      const std::string where = "option_types." + name + "." + member.name + ": ";
      std::string type;
      for (const auto& o : spec.option_types)
        if (o.enum_name == name && o.member == member.name) type = o.type;
      std::smatch found;
      const std::string doc = member.doc.brief + "\n" + member.doc.body;
      if (type.empty() && std::regex_search(doc, found, wording)) type = found[1];
      while (!type.empty() && (type.back() == ' ' || type.back() == '\\')) type.pop_back();
      if (type.empty()) continue;
      table.values.push_back(option_value(model, member, type, where));
    }
    model.option_tables.push_back(table);
  }
  for (const auto& o : spec.option_types) {
    if (o.member.empty()) continue;
    const Enum* e = model.enumeration(o.enum_name);
    bool seen = false;
    for (const auto& v : e->values) seen = seen || v.name == o.member;
    if (!seen) throw std::runtime_error("option_types." + o.enum_name + "." + o.member + ": no such member");
  }
}

// A void* array beside an array of an option enum carries the options'
// values (`cuLinkCreate(numOptions, options, optionValues, ...)`).
void link_option_values(Model& model) {
  for (auto& f : model.functions) {
    for (auto& p : f.params) {
      if (p.role != Role::Array || p.type.kind != TypeKind::Pointer) continue;
      const Type& item = p.type.pointee();
      if (item.kind != TypeKind::Pointer || item.pointee().kind != TypeKind::Void) continue;
      for (const auto& o : f.params) {
        if (o.role != Role::Array || o.count_param != p.count_param || o.type.kind != TypeKind::Pointer) continue;
        const Type& option = o.type.pointee();
        if (option.kind != TypeKind::Enum) continue;
        for (const auto& t : model.option_tables)
          if (t.enum_name == option.canonical || t.enum_name == option.name) {
            p.role = Role::OptionValues;
            p.attribute_param = o.name;
          }
      }
    }
  }
}

const Param* attribute_param_of(const Function& f, const Param& p) {
  for (const auto& a : f.params)
    if (a.name == p.attribute_param) return &a;
  return nullptr;
}

// The attribute parameter holds one attribute, or an array of them
// (`cuPointerGetAttributes(numAttributes, attributes, data, ptr)`).
const AttributeTable* attribute_table_of(const Model& model, const Function& f, const Param& p) {
  const Param* a = attribute_param_of(f, p);
  if (!a) return nullptr;
  const Type& t = a->type.kind == TypeKind::Pointer ? a->type.pointee() : a->type;
  if (t.kind != TypeKind::Enum) return nullptr;
  for (const auto& table : model.attribute_tables)
    if (table.enum_name == t.canonical || table.enum_name == t.name) return &table;
  return nullptr;
}

// After the roles: the attribute parameter named by the spec must hold one
// of the resolved attribute enums.
void link_attributes(Model& model) {
  for (auto& f : model.functions) {
    for (auto& p : f.params) {
      if (p.role != Role::AttributeOut && p.role != Role::AttributeIn && p.role != Role::AttributeSize) continue;
      const AttributeTable* found = attribute_table_of(model, f, p);
      if (!found) {
        p.role = Role::Unresolved;
        p.skip_reason = "no attribute_types for the attribute parameter '" + p.attribute_param + "'";
        continue;
      }
      if (p.role == Role::AttributeSize) {
        p.direction = Direction::In;
        continue;
      }
      p.direction = p.role == Role::AttributeOut ? Direction::Out : Direction::In;
      if (p.role != Role::AttributeIn) continue;
      AttributeTable& table = model.attribute_tables[found - model.attribute_tables.data()];
      if (!table.value_param.empty() && table.value_param != p.name)
        throw std::runtime_error(f.name + "." + p.name + ": " + table.enum_name + " values are already taken as '" +
                                 table.value_param + "'");
      table.value_param = p.name;
    }
  }
}

}  // namespace cubind::passes
