#include "emit/compat.hpp"

namespace cubind::emit {

using namespace cubind::model;

namespace {

// The wrapper's name: the C layer's functions are cimported by theirs.
std::string wrapper_name(const Function& f) { return "_nv_" + f.name; }

View wrapper_view(const Function& f, const Context& ctx) {
  View d;
  d.set("name", wrapper_name(f));
  d.set("function", f.name);
  d.set("c_result", ctx.c_names.cython(f.result));
  d.flag("void_result", f.result.kind == TypeKind::Void);
  d.set("exception", f.compat_exception);
  std::vector<View> params;
  for (const auto& p : f.params) {
    // The C layer's own typedef of a function pointer the header spells out.
    const bool spelled_out = p.type.kind == TypeKind::FunctionPointer && p.type.name.empty();
    params.push_back(View()
                         .set("ctype", spelled_out ? p.conversion.callback_type : ctx.c_names.cython(p.type))
                         .set("name", p.py_name));
  }
  d.set("params", list_of(params));
  return d;
}

}  // namespace

std::string compat_pxd_path(const spec::Compat& compat) {
  // One directory for every library's (cubind.get_include() names it): the
  // package path NVIDIA's modules have, which no installed file of cubind has.
  std::string path = "_cubind/cimport/" + compat.serves;
  for (auto& ch : path)
    if (ch == '.') ch = '/';
  return path + ".pxd";
}

View compat_pxd_view(const Context& ctx, const View& root) {
  View d;
  d.set("banner", root.get("banner")->string_value());
  d.set("library", ctx.spec.library);
  d.set("module", ctx.spec.compat.module);
  d.set("serves", ctx.spec.compat.serves);
  const auto dot = ctx.spec.compat.serves.rfind('.');
  d.set("serves_package", ctx.spec.compat.serves.substr(0, dot));
  d.set("serves_module", ctx.spec.compat.serves.substr(dot + 1));
  d.set("c_declarations", *root.get("c_declarations"));
  std::vector<View> cimports;
  for (const auto& [module, names] : ctx.spec.compat.cimports) {
    std::string list;
    for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
    cimports.push_back(View().set("module", module).set("names", list));
  }
  d.set("cimports", list_of(cimports));
  std::vector<View> types, defines;
  for (const auto& t : ctx.model.compat_types) {
    types.push_back(View().set("name", t.name).set("of", t.of).set("cname", t.cname));
    if (!t.mangled.empty()) defines.push_back(View().set("mangled", t.mangled).set("c_type", t.c_type));
  }
  d.flag("has_private_types", !types.empty());
  if (!types.empty()) d.set("private_types", list_of(types)).set("defines", list_of(defines));
  std::vector<View> functions;
  for (const auto& f : ctx.model.functions) {
    if (f.compat_signature.empty()) continue;
    std::vector<View> params;
    for (size_t i = 0; i < f.params.size(); ++i)
      params.push_back(View().set("ctype", f.compat_param_declarations[i]).set("name", f.params[i].py_name));
    // One declaration per name the module exports the function under.
    for (const auto& name : f.compat_names)
      functions.push_back(View()
                              .set("name", name)
                              .set("result", f.compat_result_declaration)
                              .set("params", list_of(params))
                              .set("exception", f.compat_exception));
  }
  d.set("functions", list_of(functions));
  return d;
}

View compat_view(const Context& ctx, const std::string& banner) {
  View d;
  d.set("banner", banner);
  d.set("library", ctx.spec.library);
  d.set("c_module", ctx.spec.c_module);
  d.set("serves", ctx.spec.compat.serves);
  std::vector<View> wrappers, exports;
  for (const auto& f : ctx.model.functions) {
    if (f.compat_signature.empty()) continue;
    wrappers.push_back(wrapper_view(f, ctx));
    for (const auto& name : f.compat_names)
      exports.push_back(View().set("name", name).set("wrapper", wrapper_name(f)).set("signature", f.compat_signature));
  }
  d.set("wrappers", list_of(wrappers));
  d.set("exports", list_of(exports));
  return d;
}

}  // namespace cubind::emit
