#include "emit/cython_types.hpp"

#include <stdexcept>

namespace cubind::emit {

using namespace cubind::model;

TypeNames::TypeNames(const Model& model, std::string prefix) : prefix_(std::move(prefix)) {
  for (const auto& e : model.enums) declared_.insert(e.name);
  for (const auto& r : model.records) declared_.insert(r.name);
  for (const auto& h : model.handles) declared_.insert(h.name);
  for (const auto& c : model.callbacks) declared_.insert(c.name);
  for (const auto& t : model.typedefs) declared_.insert(t.name);
}

std::string TypeNames::cython(const Type& t) const {
  const std::string konst = t.is_const ? "const " : "";
  switch (t.kind) {
    case TypeKind::Void: return konst + "void";
    case TypeKind::Bool:
    case TypeKind::Integer:
    case TypeKind::Floating:
      if (declared(t.name)) return konst + named(t.name);
      if (t.name == "size_t") return konst + "size_t";
      return konst + (t.kind == TypeKind::Bool ? "bint" : t.canonical);
    case TypeKind::Enum:
    case TypeKind::Record:
    case TypeKind::Handle: return konst + named(declared(t.name) ? t.name : t.canonical);
    case TypeKind::FunctionPointer: return named(t.name);
    case TypeKind::Pointer: {
      std::string inner = cython(t.pointee());
      return inner + "*" + (t.is_const ? " const" : "");
    }
    case TypeKind::Array: return cython(t.pointee()) + "[" + (t.count >= 0 ? std::to_string(t.count) : "") + "]";
    case TypeKind::Unknown: return "void";
  }
  return "void";
}

IntegerBounds integer_bounds(const Type& t) {
  const std::string bits = std::to_string(t.size * 8);
  if (t.kind == TypeKind::Bool) return {"as_unsigned", "", "1"};
  if (t.is_signed) return {"as_signed", "INT" + bits + "_MIN", "INT" + bits + "_MAX"};
  return {"as_unsigned", "", "UINT" + bits + "_MAX"};
}

std::string record_c_spelling(const Model& m, const Record& r) {
  if (!r.tag.empty()) return (r.is_union ? "union " : "struct ") + r.tag;
  if (r.parent.empty()) return r.name;
  const Record* parent = m.record(r.parent);
  if (!parent) throw std::runtime_error("record " + r.name + ": unknown parent " + r.parent);
  for (const auto& f : parent->fields) {
    const bool array = f.type.kind == TypeKind::Array;
    const Type& t = array ? f.type.pointee() : f.type;
    if (t.kind == TypeKind::Record && t.canonical == r.name && !f.name.empty())
      return "__typeof__(((" + record_c_spelling(m, *parent) + "*)0)->" + f.name + (array ? "[0]" : "") + ")";
  }
  throw std::runtime_error("record " + r.name + " has no field in " + r.parent);
}

}  // namespace cubind::emit
