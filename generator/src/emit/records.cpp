#include "emit/records.hpp"

#include <functional>
#include <stdexcept>

#include "emit/docs.hpp"
#include "emit/names.hpp"

namespace cubind::emit {

using namespace cubind::model;
using kainjow::mustache::data;

namespace {

const Record* find_record(const Model& m, const std::string& name) {
  const Record* r = m.record(name);
  if (!r) throw std::runtime_error("unknown record " + name);
  return r;
}

// Fields as C sees them: an anonymous member's fields belong to its parent.
void visible_fields(const Model& m, const Record& r, const std::function<void(const Field&)>& fn) {
  for (const auto& f : r.fields) {
    if (f.name.empty() && f.type.kind == TypeKind::Record) {
      visible_fields(m, *find_record(m, f.type.canonical), fn);
    } else if (!f.name.empty()) {
      fn(f);
    }
  }
}

std::string field_declarator(const Field& f, const TypeNames& names) {
  const std::string safe = safe_name(f.name);
  const std::string name = safe == f.name ? safe : safe + " \"" + f.name + "\"";
  const Type& t = f.type;
  if (t.kind == TypeKind::Array) return names.cython(t.pointee()) + " " + name + "[" + std::to_string(t.count) + "]";
  if (t.kind == TypeKind::FunctionPointer && t.name.empty()) {
    std::string args;
    for (size_t i = 1; i < t.inner.size(); ++i) args += (i > 1 ? ", " : "") + names.cython(t.inner[i]);
    return names.cython(t.inner[0]) + " (*" + name + ")(" + args + ")";
  }
  return names.cython(t) + " " + name;
}

}  // namespace

bool is_anonymous_member(const Model& m, const Record& r) {
  if (r.parent.empty()) return false;
  const Record* parent = m.record(r.parent);
  if (!parent) return false;
  for (const auto& f : parent->fields)
    if (f.name.empty() && f.type.kind == TypeKind::Record && f.type.canonical == r.name) return true;
  return false;
}

std::string record_class(const Model& model, const std::string& record_name) {
  const Record* r = model.record(record_name);
  return r && !r->public_name.empty() ? r->public_name : record_name;
}

std::string record_c_spelling(const Model& m, const Record& r) {
  if (!r.tag.empty()) return (r.is_union ? "union " : "struct ") + r.tag;
  if (r.parent.empty()) return r.name;
  const Record* parent = find_record(m, r.parent);
  for (const auto& f : parent->fields) {
    const bool array = f.type.kind == TypeKind::Array;
    const Type& t = array ? f.type.pointee() : f.type;
    if (t.kind == TypeKind::Record && t.canonical == r.name && !f.name.empty())
      return "__typeof__(((" + record_c_spelling(m, *parent) + "*)0)->" + f.name + (array ? "[0]" : "") + ")";
  }
  throw std::runtime_error("record " + r.name + " has no field in " + r.parent);
}

Data c_record_view(const Record& r, const Context& ctx) {
  Data d;
  const std::string kind = r.is_union ? "union" : "struct";
  if (!r.tag.empty()) {
    d.set("open", "cdef " + kind + " " + r.tag);
    if (r.name != r.tag) d.set("typedef", "ctypedef " + r.tag + " " + r.name);
  } else if (r.parent.empty()) {
    d.set("open", "ctypedef " + kind + " " + r.name);
  } else {
    d.set("open", "ctypedef " + kind + " " + r.name + " \"" + record_c_spelling(ctx.model, r) + "\"");
  }
  Data fields(data::type::list);
  visible_fields(ctx.model, r, [&](const Field& f) { fields.push_back(Data(field_declarator(f, ctx.c_names))); });
  d.set("fields", fields);
  return d;
}

namespace {

// The template for one field and the values it needs.
std::string field_kind(const Field& f, const Context& ctx, Data& d) {
  const Type& t = f.type;
  switch (t.kind) {
    case TypeKind::Integer:
    case TypeKind::Bool: {
      const IntegerBounds b = integer_bounds(t);
      d.set("helper", b.helper);
      if (!b.low.empty()) d.set("low", b.low);
      d.set("high", b.high);
      return "scalar";
    }
    case TypeKind::Floating: return "float";
    case TypeKind::Enum: {
      const Enum* e = ctx.model.enumeration(t.canonical);
      Type as_int = t;
      as_int.is_signed = e ? e->is_signed : true;
      const IntegerBounds b = integer_bounds(as_int);
      d.set("helper", b.helper);
      if (!b.low.empty()) d.set("low", b.low);
      d.set("high", b.high);
      d.set("enum_of", enum_of_function(t.canonical));
      return "enum";
    }
    case TypeKind::Handle: d.set("handle", t.name); return "handle";
    case TypeKind::Record: d.set("rclass", record_class(ctx.model, t.canonical)); return "record";
    case TypeKind::Array: {
      const Type& e = t.pointee();
      d.set("count", std::to_string(t.count));
      if (e.kind == TypeKind::Integer && e.canonical == "char") return "chars";
      if (e.kind == TypeKind::Integer || e.kind == TypeKind::Bool) {
        const IntegerBounds b = integer_bounds(e);
        d.set("helper", b.helper);
        if (!b.low.empty()) d.set("low", b.low);
        d.set("high", b.high);
        d.set("ctype", ctx.py_names.cython(e));
        return "array";
      }
      if (e.kind == TypeKind::Record) {
        d.set("rclass", record_class(ctx.model, e.canonical));
        return "record_array";
      }
      return "";
    }
    case TypeKind::Pointer:
      if (t.pointee().kind == TypeKind::Record) {
        d.set("rclass", record_class(ctx.model, t.pointee().canonical));
        d.set("ctype", ctx.py_names.cython_mutable(t.pointee()));
        return "record_pointer";
      }
      return "address";
    case TypeKind::FunctionPointer: return "address";
    default: return "";
  }
}

}  // namespace

Data py_record_view(const Record& r, const Context& ctx, const Templates& templates) {
  const std::string cls = record_class(ctx.model, r.name);
  Data d;
  d.set("name", cls);
  d.set("ctype", "c." + r.name);
  Data fields(data::type::list);
  std::string unsupported;
  visible_fields(ctx.model, r, [&](const Field& f) {
    Data fd;
    fd.set("pyname", safe_name(f.name));
    fd.set("ctype", ctx.py_names.cython(f.type));
    fd.set("class", cls);
    fd.set("doc", python_string_body(plain_text(f.doc.brief.empty() ? f.doc.body : f.doc.brief)));
    const std::string kind = field_kind(f, ctx, fd);
    if (kind.empty()) {
      unsupported += (unsupported.empty() ? "" : ", ") + f.name;
      return;
    }
    fd.set("text", templates.render("fields/" + kind, fd));
    fields.push_back(fd);
  });
  std::string doc = entity_docstring(r.doc, (r.is_union ? "Union " : "Struct ") + cls + " of the C API.");
  if (!unsupported.empty()) doc += "\n\nFields without a Python property yet: " + unsupported + ".";
  d.set("doc", python_string_body(doc));
  d.set("fields", fields);
  return d;
}

}  // namespace cubind::emit
