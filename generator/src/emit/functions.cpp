#include "emit/functions.hpp"

#include <map>
#include <sstream>

#include "emit/conversion_view.hpp"
#include "emit/docs.hpp"

namespace cubind::emit {

using namespace cubind::model;

namespace {

std::string text_of(const View& fragment) { return fragment.get("text")->string_value(); }

View trampoline_view(const Function& f, const Param& p, const Context& ctx) {
  const Conversion& c = p.conversion;
  const Type& cb = p.type;
  View d;
  d.set("name", trampoline_name(f.name, p.name));
  d.set("result", ctx.py_names.cython(cb.inner[0]));
  d.flag("returns_value", cb.inner[0].kind != TypeKind::Void);
  std::vector<View> params, args;
  for (size_t i = 0; i < c.arguments.size(); ++i) {
    const std::string arg = "a" + std::to_string(i);
    const Conversion& a = c.arguments[i];
    params.push_back(View().set("ctype", ctx.py_names.cython(a.c_type)).set("name", arg));
    args.push_back(ctx.templates.fragment(a.name, conversion_view(a, arg, ctx), Shape::Inline,
                                          f.name + "." + p.name + " " + arg));
    if (static_cast<int>(i) == c.userdata_argument) d.set("box", arg);
  }
  d.set("params", list_of(params));
  d.set("py_args", list_of(args));
  if (c.ownership == Ownership::Once) d.flag("once", true);
  // The value is a number: Cython takes one for an enum only cast to it.
  if (!c.error_value.empty())
    d.set("error_value", cb.inner[0].kind == TypeKind::Enum ? "<" + ctx.py_names.cython(cb.inner[0]) + ">" + c.error_value
                                                            : c.error_value);
  return d;
}

// The value of the status member a value function returns first.
int64_t status_value(const std::string& member, const Context& ctx) {
  if (const Enum* e = ctx.model.enumeration(ctx.spec.status_type))
    for (const auto& v : e->values)
      if (v.name == member) return v.value;
  return 0;
}

// The status pointer's pending member, by name (UCS_INPROGRESS).
std::string pending_member(const Function& f, const Context& ctx) {
  if (const Enum* e = ctx.model.enumeration(f.status_pointer_enum))
    for (const auto& v : e->values)
      if (v.value == f.status_pointer_pending) return v.name;
  return std::to_string(f.status_pointer_pending);
}

}  // namespace

View c_function_view(const Function& f, std::vector<View>& fn_typedefs, const Context& ctx) {
  View d;
  d.set("name", f.name);
  d.set("symbol", f.alias_of.empty() ? f.name : f.alias_of);
  d.flag("header_only", f.header_only);
  if (f.loads_first) d.flag("loads_first", true);
  if (f.returns_status && !ctx.spec.missing_function_status.empty())
    d.set("missing_status", ctx.spec.missing_function_status);
  if (f.header_only) d.set("header", f.header);
  d.set("proc_name", f.proc_name.empty() ? f.name : f.proc_name);
  d.set("abi_version", std::to_string(f.abi_version));
  d.set("c_result", ctx.c_names.cython(f.result));
  // A void function's call is no value to return (Cython refuses it).
  d.flag("void_result", f.result.kind == TypeKind::Void);
  // Cython's exception clause: none for a function that cannot raise (no
  // check after each call, which Cython would otherwise make under the GIL),
  // else a check after the error value, or after every call where there is none.
  const Conversion& r = f.result_conversion;
  d.set("exception", !r.raises                ? std::string("noexcept")
                     : r.error_value.empty() ? std::string("except *")
                                             : "except? " + r.error_value);
  std::vector<View> params;
  for (const auto& p : f.params) {
    std::string type = ctx.c_names.cython(p.type);
    if (p.type.kind == TypeKind::FunctionPointer && p.type.name.empty()) {
      type = p.conversion.callback_type;
      std::vector<View> args;
      for (size_t i = 1; i < p.type.inner.size(); ++i) args.push_back(View().set("ctype", ctx.c_names.cython(p.type.inner[i])));
      fn_typedefs.push_back(
          View().set("name", type).set("result", ctx.c_names.cython(p.type.inner[0])).set("args", list_of(args)));
    }
    params.push_back(View().set("ctype", type).set("name", p.py_name));
  }
  d.set("params", list_of(params));
  return d;
}

View py_function_view(const Function& f, std::vector<View>& trampolines, const Context& ctx) {
  std::vector<View> views;
  for (const auto& p : f.params) {
    views.push_back(param_view(f, p, ctx));
    if (!p.conversion.arguments.empty()) views.back().set("trampoline", trampoline_name(f.name, p.name));
  }
  std::vector<View> inputs, call_args, outputs;
  std::vector<DocOutput> doc_outputs;
  std::map<std::string, std::string> forms;  // the Python forms each input takes, where its template says
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    const Conversion& c = p.conversion;
    const std::string label = f.name + "." + p.name;
    call_args.push_back(slot(c, views[i], "arg", label, ctx));
    if (c.input) {
      View input = View().set("name", p.py_name).set("type", slot(c, views[i], "stub", label, ctx));
      if (!p.py_default.empty()) input.set("default", p.py_default);
      inputs.push_back(input);
      if (ctx.templates.defines(c.name, "forms")) forms[p.name] = text_of(slot(c, views[i], "forms", label, ctx));
    }
    if (c.output) {
      const View stub = slot(c, views[i], "stub", label, ctx);
      outputs.push_back(View().set("ret", slot(c, views[i], "ret", label, ctx)).set("type", stub));
      const DocParam* dp = f.doc.param(p.name);
      doc_outputs.push_back({p.name, text_of(stub), dp ? dp->text : ""});
    }
    if (!c.arguments.empty()) trampolines.push_back(trampoline_view(f, p, ctx));
  }
  View d;
  // Objects the library keeps pointing at, kept with the handle owning them
  // (link_kept_alive), and dropped by the call releasing that handle.
  std::vector<View> keeps, releases;
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    for (size_t j = 0; j < f.params.size() && !p.kept_by.empty(); ++j) {
      if (f.params[j].name != p.kept_by) continue;
      const View owner = slot(f.params[j].conversion, views[j], "ret", f.name + "." + p.kept_by, ctx);
      keeps.push_back(View()
                          .set("keep", p.py_name + "_keep")
                          .set("owner", owner)
                          .set("handle", f.params[j].type.pointee().name)
                          .set("until", p.kept_until));
    }
    if (p.name == f.releases_kept)
      releases.push_back(View().set("arg", call_args[i]).set("handle", p.type.name));
  }
  if (!keeps.empty()) d.set("keeps", list_of(keeps));
  if (!releases.empty()) d.set("releases", list_of(releases));
  d.set("name", f.name);
  d.set("inputs", list_of(inputs));
  d.set("call_args", list_of(call_args));
  d.set("outputs", list_of(outputs));
  d.set("status_of", enum_of_function(ctx.spec.status_type));
  d.flag("release_gil", f.releases_gil);
  if (f.loads_first) d.flag("loads_first", true);
  d.flag("has_outputs", !outputs.empty());
  d.flag("returns_status", f.returns_status);
  const Conversion& r = f.result_conversion;
  View rv = conversion_view(r, "_r", ctx);
  if (!f.status_pointer_enum.empty()) {
    rv.set("status_class", f.status_pointer_enum);
    rv.set("first_error", std::to_string(f.status_pointer_first_error));
    rv.set("pending", std::to_string(f.status_pointer_pending));
  }
  const View result_stub = slot(r, rv, "stub", f.name + " result", ctx);
  d.set("result_type", result_stub);
  if (f.returns_status) {
    // The status read from the struct holding it (`.err` of CUfileError_t).
    d.set("status_access", f.status_field.empty() ? std::string() : "." + f.status_field);
    d.set("doc", docstring(function_docstring(f, ctx.spec.status_type, doc_outputs, forms), "    "));
  } else {
    d.set("c_result", ctx.py_names.cython(f.result));
    // A void function: called without a result to hold (`cdef void _r` is no Cython).
    d.flag("void_result", f.result.kind == TypeKind::Void);
    // What follows the status: the value, then the outputs; a void function
    // with outputs returns those alone (ucp_get_version: (UCS_OK, major,
    // minor, release)), one without them None. A status pointer's
    // (status, request) is spread before outputs: ucp_stream_recv_nbx
    // returns (status, request, length).
    const bool with_value = f.result.kind != TypeKind::Void || outputs.empty();
    const bool spread = !f.status_pointer_enum.empty() && !outputs.empty();
    std::vector<View> returned;
    if (with_value) {
      View value = View().set("ret", slot(r, rv, "ret", f.name + " result", ctx)).set("type", result_stub);
      value.flag("spread", spread);
      if (spread) value.set("items", slot(r, rv, "items", f.name + " result", ctx));
      returned.push_back(std::move(value));
    }
    for (const View& o : outputs) {
      View out = o;
      out.flag("spread", false);
      returned.push_back(std::move(out));
    }
    // A tuple display: with the status, with several values, or with one spread.
    d.flag("tuple", !f.value_only || returned.size() > 1);
    d.set("returned", list_of(returned));
    d.flag("with_status", !f.value_only);
    if (!f.value_only) {
      d.set("status_class", ctx.spec.status_type);
      d.set("success", std::to_string(status_value(f.success_status, ctx)));
    }
    std::string doc;
    if (f.status_pointer_enum.empty()) {
      doc = value_docstring(f, ctx.spec.status_type, f.success_status, text_of(result_stub), forms, doc_outputs,
                            with_value);
    } else {
      const DocOutput request{"request", "int | None",
                              "The request's address while the operation is in progress (" +
                                  pending_member(f, ctx) + "): to test, wait for and free; else None."};
      doc = function_docstring(f, f.status_pointer_enum, {request}, forms);
    }
    d.set("doc", docstring(doc, "    "));
  }
  // Statements last: they may return early with the outputs as None.
  std::vector<View> statements;
  const auto phase = [](const Conversion& c) { return c.last ? 2 : c.late ? 1 : 0; };
  for (int p = 0; p < 3; ++p)
    for (size_t i = 0; i < f.params.size(); ++i)
      if (phase(f.params[i].conversion) == p)
        statements.push_back(slot(f.params[i].conversion, views[i], "pre", f.name + "." + f.params[i].name, ctx, {&d}));
  d.set("statements", list_of(statements));
  return d;
}

}  // namespace cubind::emit
