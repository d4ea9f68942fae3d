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
    case TypeKind::FunctionPointer: {
      if (!t.name.empty()) return named(t.name);
      // Unnamed (a struct field `const char *(*fs_type)(void *)`, cufile.h's
      // CUfileFSOps_t): spelled out, which a cast to it needs (noexcept, as C
      // declares it in the extern block).
      std::string args;
      for (size_t i = 1; i < t.inner.size(); ++i) args += (i > 1 ? ", " : "") + cython(t.inner[i]);
      return cython(t.inner.at(0)) + " (*)(" + args + ") noexcept";
    }
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

namespace {

// Whether record `holder` has `member` as an anonymous member (an unnamed field).
bool has_anonymous_member(const Model& m, const std::string& holder, const std::string& member) {
  const Record* h = m.record(holder);
  if (!h) return false;
  for (const auto& f : h->fields)
    if (f.name.empty() && f.type.kind == TypeKind::Record && f.type.canonical == member) return true;
  return false;
}

}  // namespace

std::string record_c_spelling(const Model& m, const Record& r) {
  if (!r.tag.empty()) return (r.is_union ? "union " : "struct ") + r.tag;
  if (r.parent.empty()) return r.name;
  const Record* parent = m.record(r.parent);
  if (!parent) throw std::runtime_error("record " + r.name + ": unknown parent " + r.parent);
  for (const auto& f : parent->fields) {
    const bool array = f.type.kind == TypeKind::Array;
    const Type& t = array ? f.type.pointee() : f.type;
    if (t.kind != TypeKind::Record || t.canonical != r.name || f.name.empty()) continue;
    // An anonymous member has no C name of its own: its fields are reached
    // through the record holding it (`((struct CUmemLocation_st*)0)->localized`
    // for a struct inside an unnamed union), so the path starts at the nearest
    // ancestor that is not one.
    const Record* base = parent;
    while (base->tag.empty() && !base->parent.empty() && has_anonymous_member(m, base->parent, base->name))
      base = m.record(base->parent);
    return "__typeof__(((" + record_c_spelling(m, *base) + "*)0)->" + f.name + (array ? "[0]" : "") + ")";
  }
  throw std::runtime_error("record " + r.name + " has no field in " + r.parent);
}

}  // namespace cubind::emit
