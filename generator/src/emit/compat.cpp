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
