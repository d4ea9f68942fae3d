#include "emit/records.hpp"

#include <functional>
#include <sstream>
#include <stdexcept>

#include "emit/conversion_view.hpp"
#include "emit/docs.hpp"

namespace cubind::emit {

using namespace cubind::model;

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

View c_field_view(const Field& f, const TypeNames& names) {
  View d;
  d.set("name", f.py_name);
  if (f.py_name != f.name) d.set("c_name", f.name);
  const Type& t = f.type;
  if (t.kind == TypeKind::Array) {
    d.set("ctype", names.cython(t.pointee()));
    d.set("count", std::to_string(t.count));
  } else if (t.kind == TypeKind::FunctionPointer && t.name.empty()) {
    std::vector<View> args;
    for (size_t i = 1; i < t.inner.size(); ++i) args.push_back(View().set("ctype", names.cython(t.inner[i])));
    d.set("function_pointer", View().set("result", names.cython(t.inner[0])).set("args", list_of(args)));
  } else {
    d.set("ctype", names.cython(t));
  }
  return d;
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

View c_record_view(const Record& r, const Context& ctx) {
  View d;
  d.set("kind", r.is_union ? "union" : "struct");
  d.set("name", r.name);
  if (!r.tag.empty()) {
    d.set("tag", r.tag);
    // A record declared forward was typedef'd there (c_record_forward_view).
    if (r.name != r.tag && r.forward_order < 0) d.set("typedef", r.name);
  } else if (!r.parent.empty()) {
    d.set("c_spelling", record_c_spelling(ctx.model, r));
  }
  std::vector<View> fields;
  visible_fields(ctx.model, r, [&](const Field& f) { fields.push_back(c_field_view(f, ctx.c_names)); });
  d.set("fields", list_of(fields));
  return d;
}

View c_record_forward_view(const Record& r) {
  if (r.tag.empty()) throw std::runtime_error("record " + r.name + " is used before its definition but has no tag");
  View d;
  d.set("kind", r.is_union ? "union" : "struct");
  d.set("tag", r.tag);
  if (r.name != r.tag) d.set("typedef", r.name);
  return d;
}

View py_record_view(const Record& r, const Context& ctx) {
  const std::string cls = r.public_name.empty() ? r.name : r.public_name;
  View d;
  d.set("name", cls);
  d.set("cname", r.name);
  std::vector<View> fields, field_aliases, hex_fields;
  std::string unsupported;
  visible_fields(ctx.model, r, [&](const Field& f) {
    if (!f.conversion.bound()) {
      unsupported += (unsupported.empty() ? "" : ", ") + f.name;
      return;
    }
    const std::string& name = f.py_name;
    View fd = conversion_view(f.conversion, name, ctx);
    fd.set("doc", python_string_body(plain_text(f.doc.brief.empty() ? f.doc.body : f.doc.brief)));
    const std::string label = cls + "." + f.name;
    View field;
    field.set("name", name);
    field.set("code", slot(f.conversion, fd, "code", label, ctx));
    field.set("stub", slot(f.conversion, fd, "stub", label, ctx));
    field.set("stub_set", slot(f.conversion, fd, "stub_set", label, ctx));
    fields.push_back(field);
    if (f.prints_hex) hex_fields.push_back(View().set("name", name));
    if (!f.py_alias.empty()) field_aliases.push_back(View().set("alias", f.py_alias).set("field", name));
  });
  std::string doc = entity_docstring(r.doc, (r.is_union ? "Union " : "Struct ") + cls + " of the C API.");
  if (!unsupported.empty()) doc += "\n\nFields without a Python property yet: " + unsupported + ".";
  d.set("doc", docstring(doc, "    "));
  d.set("fields", list_of(fields));
  d.set("field_aliases", list_of(field_aliases));
  if (!hex_fields.empty()) d.set("hex", View().set("names", list_of(hex_fields)));
  d.set("aliases", strings(r.aliases));
  if (!r.version_field.empty())
    d.set("version", View()
                         .set("field", r.version_field)
                         .set("constant", r.version_constant)
                         .set("value", std::to_string(r.version_value)));
  return d;
}

}  // namespace cubind::emit
