#include "emit/conversion_view.hpp"

#include <stdexcept>

#include "emit/attributes.hpp"

namespace cubind::emit {

using namespace cubind::model;

std::string c_local(const std::string& param) { return "_c_" + param; }
std::string enum_of_function(const std::string& enum_name) { return "_" + enum_name + "_of"; }
std::string trampoline_name(const std::string& function, const std::string& param) {
  return "_trampoline_" + function + "_" + param;
}

namespace {

// The slots an item's template may have, in the order they are rendered.
constexpr const char* kElementSlots[] = {"item", "get", "set", "stub", "stub_set"};

void set_range(View& d, const IntRange& r) {
  if (!r.bits) return;
  Type t;
  t.kind = r.is_bool ? TypeKind::Bool : TypeKind::Integer;
  t.size = r.bits / 8;
  t.is_signed = r.is_signed;
  const IntegerBounds b = integer_bounds(t);
  d.set("helper", b.helper);
  if (!b.low.empty()) d.set("low", b.low);
  d.set("high", b.high);
}

// The Python name of a sibling parameter the Param names (name_python).
const std::string& py_name_of(const Function& f, const std::string& name) {
  for (const auto& p : f.params)
    if (p.name == name) return p.py_name;
  throw std::runtime_error(f.name + ": no parameter " + name);
}

void set_count(View& d, const Function& f, const Param& p) {
  if (p.count_param.empty()) return;
  d.set("count", p.count_param);
  d.set("count_cname", c_local(py_name_of(f, p.count_param)));
  if (!p.written_param.empty()) d.set("written_cname", c_local(py_name_of(f, p.written_param)));
  if (p.count_offset != 0) {
    d.set("offset_op", p.count_offset < 0 ? "-" : "+");
    d.set("offset_amount", std::to_string(p.count_offset < 0 ? -p.count_offset : p.count_offset));
  }
}

void set_query(View& d, const Function& f, const Param& p, const Context& ctx) {
  if (p.query_function.empty()) return;
  const Conversion& c = p.conversion;
  d.set("query", p.query_function);
  std::vector<View> args;
  for (const auto& a : c.query_args) args.push_back(View().set("cname", c_local(py_name_of(f, a))));
  d.set("query_args", list_of(args));
  if (c.query_result.kind != TypeKind::Unknown) d.set("count_ctype", ctx.py_names.cython(c.query_result));
}

void set_attribute(View& d, const Function& f, const Param& p, const Context& ctx) {
  const Conversion& c = p.conversion;
  if (c.attribute_enum.empty()) return;
  const AttributeTable* table = ctx.model.attribute_table(c.attribute_enum);
  for (const auto& t : ctx.model.option_tables) {
    if (table || t.enum_name != c.attribute_enum) continue;
    // Option values: each item converted by its option, in the options' C array.
    d.set("attribute_cname", c_local(py_name_of(f, p.attribute_param)));
    d.set("options", py_name_of(f, p.attribute_param));
    d.set("option_value", option_value_function(t.enum_name));
  }
  if (!table) return;
  const AttributeNames names = attribute_names(c.attribute_enum);
  d.set("attribute", py_name_of(f, p.attribute_param));
  d.set("attribute_cname", c_local(py_name_of(f, p.attribute_param)));
  // An array of attributes: the parameter counting it counts the values.
  for (const auto& a : f.params)
    if (a.name == p.attribute_param && !a.count_param.empty())
      d.set("attribute_count_cname", c_local(py_name_of(f, a.count_param)));
  d.set("union", names.union_name);
  d.set("size_of", names.size_of);
  if (c.output) {
    d.set("value_of", names.value_of);
  } else {
    d.set("store", names.store);
  }
  d.set("value_stub", attribute_value_stub(*table, c.output, ctx));
}

}  // namespace

View conversion_view(const Conversion& c, const std::string& name, const Context& ctx) {
  View d;
  d.set("name", name);
  d.set("cname", c_local(name));
  if (c.c_type.kind != TypeKind::Unknown) d.set("ctype", ctx.py_names.cython(c.c_type));
  set_range(d, c.range);
  if (!c.handle.empty()) d.set("handle", c.handle);
  if (!c.also_handle.empty()) d.set("also_handle", c.also_handle);
  if (c.c_type.kind == TypeKind::Enum) d.set("enum", c.c_type.canonical);  // the class, not a typedef of it
  if (!c.enum_name.empty()) d.set("enum_of", enum_of_function(c.enum_name));
  if (!c.record_class.empty()) d.set("rclass", c.record_class);
  if (c.fixed_count >= 0) d.set("count", std::to_string(c.fixed_count));
  if (!c.count_field.empty()) d.set("count_field", c.count_field);
  if (!c.callback_type.empty()) d.set("cb_type", c.callback_type);
  if (!c.callback_class.empty()) d.set("callback_class", c.callback_class);
  if (c.ownership == Ownership::Once) d.flag("once", true);
  if (c.c_string) d.flag("c_string", true);
  if (c.optional) d.flag("optional", true);
  if (!c.element.empty()) {
    // The item's template fills the slots of its container's kind (params/
    // elements convert `item`; fields/ elements read and write in place),
    // each rendered as element_<slot>.
    const Conversion& e = c.element.front();
    const View ev = conversion_view(e, name, ctx);
    for (const char* s : kElementSlots)
      if (ctx.templates.defines(e.name, s)) d.set(std::string("element_") + s, slot(e, ev, s, name, ctx));
  }
  return d;
}

View param_view(const Function& f, const Param& p, const Context& ctx) {
  View d = conversion_view(p.conversion, p.py_name, ctx);
  set_count(d, f, p);
  set_query(d, f, p, ctx);
  set_attribute(d, f, p, ctx);
  if (!p.userdata_param.empty()) {
    d.set("userdata", py_name_of(f, p.userdata_param));
    d.set("userdata_cname", c_local(py_name_of(f, p.userdata_param)));
  }
  return d;
}

View slot(const Conversion& c, const View& view, const std::string& slot, const std::string& label, const Context& ctx,
          const std::vector<const Data*>& parents) {
  View d = view;
  d.flag(slot, true);
  // Statements keep their indentation; a property is a whole block.
  const Shape shape = slot == "pre" ? Shape::Block : slot == "code" ? Shape::Raw : Shape::Inline;
  return ctx.templates.fragment(c.name, d, shape, label + " [" + slot + "]", parents);
}

}  // namespace cubind::emit
