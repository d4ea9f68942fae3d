#include "model/model_json.hpp"

namespace cubind::model {

using json = nlohmann::ordered_json;

namespace {

// Empty members are left out so that goldens stay short and readable.
void put(json& j, const char* key, const std::string& value) {
  if (!value.empty()) j[key] = value;
}

json doc_json(const Doc& doc) {
  json j = json::object();
  put(j, "brief", doc.brief);
  put(j, "body", doc.body);
  if (!doc.params.empty()) {
    json params = json::array();
    for (const auto& p : doc.params) {
      json jp = {{"name", p.name}};
      put(jp, "direction", p.direction);
      put(jp, "text", p.text);
      params.push_back(jp);
    }
    j["params"] = params;
  }
  put(j, "returns", doc.returns);
  return j;
}

void put_doc(json& j, const Doc& doc) {
  if (!doc.empty()) j["doc"] = doc_json(doc);
}

json conversion_json(const Conversion& c) {
  json j = json::object();
  put(j, "name", c.name);
  put(j, "skip_reason", c.skip_reason);
  if (c.c_type.kind != TypeKind::Unknown) j["c_type"] = c.c_type.spelling.empty() ? c.c_type.name : c.c_type.spelling;
  if (c.range.bits) {
    j["range"] = c.range.is_bool ? "bool" : (c.range.is_signed ? "int" : "uint") + std::to_string(c.range.bits);
  }
  put(j, "handle", c.handle);
  put(j, "also_handle", c.also_handle);
  put(j, "enum", c.enum_name);
  put(j, "record_class", c.record_class);
  put(j, "count_field", c.count_field);
  if (c.fixed_count >= 0) j["fixed_count"] = c.fixed_count;
  if (!c.query_args.empty()) j["query_args"] = c.query_args;
  put(j, "callback_type", c.callback_type);
  put(j, "callback_class", c.callback_class);
  if (c.userdata_argument >= 0) j["userdata_argument"] = c.userdata_argument;
  put(j, "attribute_enum", c.attribute_enum);
  if (c.last) j["last"] = true;
  if (!c.element.empty()) j["element"] = conversion_json(c.element.front());
  if (!c.arguments.empty()) {
    json args = json::array();
    for (const auto& a : c.arguments) args.push_back(conversion_json(a));
    j["arguments"] = args;
  }
  put(j, "error_value", c.error_value);
  if (!c.raises) j["raises"] = false;
  if (c.ownership != Ownership::None) j["ownership"] = to_string(c.ownership);
  if (!c.input) j["input"] = false;
  if (c.output) j["output"] = true;
  if (c.late) j["late"] = true;
  if (c.c_string) j["c_string"] = true;
  if (c.optional) j["optional"] = true;
  return j;
}

void put_conversion(json& j, const char* key, const Conversion& c) {
  if (c.bound() || !c.skip_reason.empty()) j[key] = conversion_json(c);
}

json param_json(const Param& p) {
  json j = {{"name", p.name}, {"type", to_json(p.type)}};
  if (p.py_name != p.name) put(j, "py_name", p.py_name);
  j["direction"] = to_string(p.direction);
  j["role"] = to_string(p.role);
  put(j, "count_param", p.count_param);
  if (p.count_offset) j["count_offset"] = p.count_offset;
  put(j, "query_function", p.query_function);
  put(j, "userdata_param", p.userdata_param);
  if (p.called_once) j["called_once"] = true;
  put(j, "on_error_return", p.on_error_return);
  put(j, "attribute_param", p.attribute_param);
  put(j, "also_accepts", p.also_accepts);
  put(j, "skip_reason", p.skip_reason);
  put_conversion(j, "conversion", p.conversion);
  put(j, "py_default", p.py_default);
  put(j, "kept_until", p.kept_until);
  put(j, "kept_by", p.kept_by);
  put(j, "written_name", p.written_name);
  return j;
}

json function_json(const Function& f) {
  json j = {{"name", f.name}, {"result", to_json(f.result)}};
  json params = json::array();
  for (const auto& p : f.params) params.push_back(param_json(p));
  j["params"] = params;
  j["returns_status"] = f.returns_status;
  put(j, "success_status", f.success_status);
  put(j, "status_field", f.status_field);
  if (f.value_only) j["value_only"] = true;
  if (f.loads_first) j["loads_first"] = true;
  if (!f.status_pointer_enum.empty())
    j["status_pointer"] = {{"enum", f.status_pointer_enum},
                           {"first_error", f.status_pointer_first_error},
                           {"pending", f.status_pointer_pending}};
  put(j, "alias_of", f.alias_of);
  put(j, "proc_name", f.proc_name);
  put(j, "releases_kept", f.releases_kept);
  if (f.header_only) j["header_only"] = true;
  if (f.abi_version) j["abi_version"] = f.abi_version;
  if (!f.releases_gil) j["releases_gil"] = false;
  put(j, "skip_reason", f.skip_reason);
  put_conversion(j, "result_conversion", f.result_conversion);
  put(j, "compat_signature", f.compat_signature);
  put(j, "compat_exception", f.compat_exception);
  if (!f.compat_names.empty()) j["compat_names"] = f.compat_names;
  put(j, "compat_result_declaration", f.compat_result_declaration);
  if (!f.compat_param_declarations.empty()) j["compat_param_declarations"] = f.compat_param_declarations;
  put_doc(j, f.doc);
  return j;
}

json enum_json(const Enum& e) {
  json j = {{"name", e.name}};
  put(j, "tag", e.tag);
  j["signed"] = e.is_signed;
  json values = json::array();
  for (const auto& v : e.values) {
    json jv = {{"name", v.name}, {"value", v.value}};
    put_doc(jv, v.doc);
    values.push_back(jv);
  }
  j["values"] = values;
  put(j, "failure_member", e.failure_member);
  if (!e.twins.empty()) j["twins"] = e.twins;
  put(j, "description_function", e.description_function);
  put_doc(j, e.doc);
  return j;
}

json record_json(const Record& r) {
  json j = {{"name", r.name}};
  put(j, "tag", r.tag);
  j["union"] = r.is_union;
  j["complete"] = r.is_complete;
  if (r.is_anonymous) j["anonymous"] = true;
  put(j, "parent", r.parent);
  if (r.forward_order >= 0) j["forward_declared"] = true;
  if (!r.aliases.empty()) j["aliases"] = r.aliases;
  j["size"] = r.size;
  j["align"] = r.align;
  json fields = json::array();
  for (const auto& f : r.fields) {
    json jf = {{"name", f.name}, {"type", to_json(f.type)}, {"offset_bits", f.offset_bits}};
    if (f.bit_width >= 0) jf["bit_width"] = f.bit_width;
    if (f.py_name != f.name) put(jf, "py_name", f.py_name);
    put(jf, "py_alias", f.py_alias);
    put(jf, "count_field", f.count_field);
    if (f.kernel_params) jf["kernel_params"] = true;
    if (f.c_string) jf["c_string"] = true;
    if (f.prints_hex) jf["prints_hex"] = true;
    put_conversion(jf, "conversion", f.conversion);
    put_doc(jf, f.doc);
    fields.push_back(jf);
  }
  j["fields"] = fields;
  if (!r.version_field.empty())
    j["version"] = {{"field", r.version_field}, {"constant", r.version_constant}, {"value", r.version_value}};
  put_doc(j, r.doc);
  return j;
}

json constant_json(const Constant& c) {
  json j = {{"name", c.name}, {"kind", c.kind}};
  if (c.kind == "int") {
    if (c.is_unsigned)
      j["value"] = static_cast<uint64_t>(c.int_value);
    else
      j["value"] = c.int_value;
  } else if (c.kind == "float") {
    j["value"] = c.float_value;
  } else {
    j["value"] = c.string_value;
  }
  return j;
}

template <typename T, typename F>
json list(const std::vector<T>& items, F&& convert) {
  json j = json::array();
  for (const auto& item : items) j.push_back(convert(item));
  return j;
}

}  // namespace

json to_json(const Type& type) {
  json j = {{"kind", to_string(type.kind)}, {"spelling", type.spelling}};
  put(j, "name", type.name);
  put(j, "canonical", type.canonical);
  if (type.is_const) j["const"] = true;
  if (type.kind == TypeKind::Integer) j["signed"] = type.is_signed;
  if (type.size >= 0) j["size"] = type.size;
  if (type.count >= 0) j["count"] = type.count;
  if (!type.inner.empty()) j["inner"] = list(type.inner, [](const Type& t) { return to_json(t); });
  return j;
}

json to_json(const Model& model) {
  json j;
  j["library"] = model.library;
  j["headers"] = model.headers;
  j["cuda_version"] = model.cuda_version;
  j["loader"] = {{"sonames", model.loader.sonames},
                 {"wheel_subdirs", model.loader.wheel_subdirs},
                 {"toolkit_subdirs", model.loader.toolkit_subdirs},
                 {"resolver", model.loader.resolver}};
  j["functions"] = list(model.functions, function_json);
  j["enums"] = list(model.enums, enum_json);
  j["records"] = list(model.records, record_json);
  j["handles"] = list(model.handles, [](const Handle& h) {
    json jh = {{"name", h.name}, {"record_tag", h.record_tag}};
    if (h.is_function) jh["function"] = true;
    put_doc(jh, h.doc);
    return jh;
  });
  j["callbacks"] = list(model.callbacks, [](const Callback& c) {
    json jc = {{"name", c.name}, {"type", to_json(c.type)}};
    if (c.has_class) jc["class"] = true;
    put(jc, "no_class_reason", c.no_class_reason);
    put_doc(jc, c.doc);
    return jc;
  });
  j["typedefs"] = list(model.typedefs, [](const Typedef& t) {
    json jt = {{"name", t.name}, {"type", to_json(t.type)}};
    put_doc(jt, t.doc);
    return jt;
  });
  j["constants"] = list(model.constants, constant_json);
  if (!model.attribute_tables.empty()) {
    j["attribute_tables"] = list(model.attribute_tables, [](const AttributeTable& t) {
      json jt = {{"enum", t.enum_name}};
      put(jt, "value_param", t.value_param);
      jt["values"] = list(t.values, [](const AttributeValue& v) {
        json jv = {{"member", v.member}, {"value", v.value}, {"type", to_json(v.type)}};
        if (v.is_array) jv["array"] = true;
        if (v.string_size) jv["string_size"] = v.string_size;
        if (v.storage.kind != v.type.kind) jv["storage"] = to_json(v.storage);
        if (v.setter == AttributeValue::Setter::FixedString) jv["setter"] = "fixed_string";
        put_conversion(jv, "out", v.out);
        put_conversion(jv, "in", v.in);
        return jv;
      });
      return jt;
    });
  }
  if (!model.option_tables.empty()) {
    j["option_tables"] = list(model.option_tables, [](const OptionTable& t) {
      json jt = {{"enum", t.enum_name}};
      jt["values"] = list(t.values, [](const OptionValue& v) {
        json jv = {{"member", v.member}, {"value", v.value}, {"kind", to_string(v.kind)}};
        put(jv, "enum", v.enum_name);
        return jv;
      });
      return jt;
    });
  }
  j["aliases"] = list(model.aliases, [](const Alias& a) { return json{{"name", a.name}, {"target", a.target}}; });
  if (!model.type_aliases.empty())
    j["type_aliases"] = list(model.type_aliases, [](const Alias& a) {
      return json{{"name", a.name}, {"target", a.target}};
    });
  if (!model.compat_types.empty())
    j["compat_types"] = list(model.compat_types, [](const CompatType& t) {
      return json{{"name", t.name}, {"of", t.of}, {"cname", t.cname}, {"mangled", t.mangled}, {"c_type", t.c_type}};
    });
  if (!model.helpers.empty())
    j["helpers"] = list(model.helpers, [](const Alias& a) { return json{{"name", a.name}, {"function", a.target}}; });
  return j;
}

}  // namespace cubind::model
