#include "model/model.hpp"

#include <algorithm>

namespace cubind::model {

namespace {
template <typename T>
const T* find_named(const std::vector<T>& items, const std::string& name) {
  auto it = std::find_if(items.begin(), items.end(), [&](const T& item) { return item.name == name; });
  return it == items.end() ? nullptr : &*it;
}
}  // namespace

const DocParam* Doc::param(const std::string& name) const { return find_named(params, name); }
const Function* Model::function(const std::string& name) const { return find_named(functions, name); }
const Enum* Model::enumeration(const std::string& name) const { return find_named(enums, name); }
const Handle* Model::handle(const std::string& name) const { return find_named(handles, name); }
const Record* Model::record(const std::string& name) const { return find_named(records, name); }
const Callback* Model::callback(const std::string& name) const { return find_named(callbacks, name); }
const AttributeTable* Model::attribute_table(const std::string& enum_name) const {
  for (const auto& t : attribute_tables)
    if (t.enum_name == enum_name) return &t;
  return nullptr;
}

std::string handle_struct_name(const std::string& handle) { return "_" + handle + "_struct"; }

std::string version_text(int version) {
  if (version == 0) return "";
  return std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
}

const char* to_string(TypeKind kind) {
  switch (kind) {
    case TypeKind::Void: return "void";
    case TypeKind::Bool: return "bool";
    case TypeKind::Integer: return "integer";
    case TypeKind::Floating: return "floating";
    case TypeKind::Enum: return "enum";
    case TypeKind::Record: return "record";
    case TypeKind::Handle: return "handle";
    case TypeKind::Pointer: return "pointer";
    case TypeKind::Array: return "array";
    case TypeKind::FunctionPointer: return "function_pointer";
    case TypeKind::Unknown: return "unknown";
  }
  return "unknown";
}

const char* to_string(OptionKind kind) {
  switch (kind) {
    case OptionKind::Unsigned: return "unsigned";
    case OptionKind::Signed: return "signed";
    case OptionKind::Float: return "float";
    case OptionKind::Enum: return "enum";
    case OptionKind::Buffer: return "buffer";
    case OptionKind::None: return "none";
    case OptionKind::Address: return "address";
  }
  return "address";
}

const char* to_string(Direction direction) {
  switch (direction) {
    case Direction::In: return "in";
    case Direction::Out: return "out";
    case Direction::InOut: return "inout";
  }
  return "in";
}

const char* to_string(Role role) {
  switch (role) {
#define CUBIND_ROLE_TEXT(name, text) \
  case Role::name:                   \
    return text;
    CUBIND_ROLES(CUBIND_ROLE_TEXT)
#undef CUBIND_ROLE_TEXT
  }
  return "unresolved";
}

const char* to_string(Ownership ownership) {
  switch (ownership) {
    case Ownership::None: return "none";
    case Ownership::Call: return "call";
    case Ownership::Struct: return "struct";
    case Ownership::Registry: return "registry";
    case Ownership::Once: return "once";
    case Ownership::Returned: return "returned";
  }
  return "none";
}

}  // namespace cubind::model
