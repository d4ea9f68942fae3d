#include "emit/attributes.hpp"

#include <algorithm>
#include <vector>

#include "emit/conversion_view.hpp"

namespace cubind::emit {

using namespace cubind::model;

namespace {

std::string text_of(const View& fragment) { return fragment.get("text")->string_value(); }

// The element conversions read and write through `buf` cast to the value's type.
View element_view(const Conversion& c, const std::string& ctype, const std::string& name, const Context& ctx) {
  View d = conversion_view(c, name, ctx);
  d.set("cname", "(<" + ctype + "*>buf)");
  return d;
}

}  // namespace

std::string value_ctype(const AttributeValue& v, const Context& ctx) { return ctx.py_names.cython(v.storage); }

AttributeNames attribute_names(const std::string& enum_name) {
  const std::string base = "_" + enum_name;
  return {base + "_value", base + "_size", base + "_value_of", base + "_store"};
}

std::string attribute_value_stub(const AttributeTable& table, bool out, const Context& ctx) {
  std::vector<std::string> types;
  for (const auto& v : table.values) {
    const Conversion& c = out ? v.out : v.in;
    if (!c.bound()) continue;
    const std::string ctype = value_ctype(v, ctx);
    std::string stub = text_of(slot(c, element_view(c, ctype, "value", ctx), "stub", table.enum_name, ctx));
    if (v.is_array) stub = "list[" + stub + "]";
    if (std::find(types.begin(), types.end(), stub) == types.end()) types.push_back(stub);
  }
  if (!out) types.push_back("Buffer");
  std::string joined;
  for (const auto& t : types) joined += (joined.empty() ? "" : " | ") + t;
  return joined;
}

std::string option_value_function(const std::string& enum_name) { return "_" + enum_name + "_option_value"; }

View option_table_code(const OptionTable& table, const Context& ctx) {
  View d;
  d.set("enum", table.enum_name);
  d.set("function", option_value_function(table.enum_name));
  std::vector<View> values;
  for (const auto& v : table.values) {
    View e;
    e.set("member", v.member).set("value", std::to_string(v.value));
    for (OptionKind k : {OptionKind::Unsigned, OptionKind::Signed, OptionKind::Float, OptionKind::Enum,
                         OptionKind::Buffer, OptionKind::None, OptionKind::Address})
      e.flag(to_string(k), k == v.kind);
    if (!v.enum_name.empty()) e.set("value_enum", v.enum_name);
    values.push_back(e);
  }
  d.set("values", list_of(values));
  return ctx.templates.fragment("option_table.pyx", d, Shape::Raw, table.enum_name);
}

View attribute_table_code(const AttributeTable& table, const Context& ctx) {
  const AttributeNames names = attribute_names(table.enum_name);
  View d;
  d.set("enum", table.enum_name);
  d.set("union", names.union_name);
  d.set("size_of", names.size_of);
  d.set("value_of", names.value_of);
  std::vector<std::string> member_types;
  std::vector<View> members, values, strings, stored;
  const std::string value_param = table.value_param.empty() ? "value" : table.value_param;
  for (const auto& v : table.values) {
    const std::string ctype = value_ctype(v, ctx);
    // A string's storage is a char array in the union: `char v3[1024]`.
    const std::string dims = v.string_size ? "[" + std::to_string(v.string_size) + "]" : "";
    if (std::find(member_types.begin(), member_types.end(), ctype + dims) == member_types.end()) {
      member_types.push_back(ctype + dims);
      members.push_back(View().set("ctype", ctype).set("field", "v" + std::to_string(members.size()) + dims));
    }
    View dv;
    dv.set("member", v.member);
    dv.set("value", std::to_string(v.value));
    dv.set("size", v.string_size ? std::to_string(v.string_size) : "sizeof(" + ctype + ")");
    dv.flag("array", v.is_array);
    dv.set("item", slot(v.out, element_view(v.out, ctype, value_param, ctx), "item", table.enum_name + "." + v.member, ctx));
    if (v.setter == AttributeValue::Setter::FixedString) {
      values.push_back(dv);
      if (!table.value_param.empty())
        strings.push_back(View().set("member", v.member).set("value", std::to_string(v.value)));
      continue;
    }
    dv.set("ctype", ctype);
    if (!table.value_param.empty()) {
      dv.flag("settable", v.in.bound());
      if (v.in.bound())
        dv.set("in_item", slot(v.in, element_view(v.in, ctype, value_param, ctx), "item", table.enum_name + "." + v.member, ctx));
      else
        dv.set("reason", v.in.skip_reason);
    }
    values.push_back(dv);
    stored.push_back(dv);
  }
  d.set("members", list_of(members));
  d.set("values", list_of(values));
  d.set("strings", list_of(strings));
  d.set("stored", list_of(stored));
  if (!table.value_param.empty()) d.set("store", View().set("store", names.store).set("value_param", value_param));
  return ctx.templates.fragment("attribute_table.pyx", d, Shape::Raw, table.enum_name);
}

}  // namespace cubind::emit
