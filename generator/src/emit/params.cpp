#include "emit/params.hpp"

#include <stdexcept>

#include "emit/names.hpp"
#include "emit/records.hpp"

namespace cubind::emit {

using namespace cubind::model;

std::string c_local(const std::string& param) { return "_c_" + param; }
std::string enum_of_function(const std::string& enum_name) { return "_" + enum_name + "_of"; }
std::string trampoline_name(const std::string& function, const std::string& param) {
  return "_trampoline_" + function + "_" + param;
}

int userdata_index(const Type& callback) {
  for (size_t i = 1; i < callback.inner.size(); ++i) {
    const Type& t = callback.inner[i];
    if (t.kind == TypeKind::Pointer && t.pointee().kind == TypeKind::Void) return static_cast<int>(i - 1);
  }
  return -1;
}

namespace {

// The number of items an array must have: its count parameter's C value, or
// an expression on it (`tensorRank - 1`), as C code and as text for messages.
void set_count(Data& d, const Param& p) {
  std::string cname = c_local(safe_name(p.count_param));
  std::string text = p.count_param;
  if (p.count_offset != 0) {
    std::string op = p.count_offset < 0 ? " - " : " + ";
    std::string amount = std::to_string(p.count_offset < 0 ? -p.count_offset : p.count_offset);
    cname = "(<long long>" + cname + op + amount + ")";
    text += op + amount;
  }
  d.set("count", text);
  d.set("count_cname", cname);
}

const Param& find_param(const Function& f, const std::string& name) {
  for (const auto& p : f.params)
    if (p.name == name) return p;
  throw std::runtime_error(f.name + ": no parameter " + name);
}

// Arguments of a query function taken from the caller's parameters by name;
// its last parameter receives the size or count.
std::string query_args(const Function& f, const std::string& query, const Model& m) {
  const Function* q = m.function(query);
  if (!q || q->params.empty()) throw std::runtime_error(f.name + ": bad query function " + query);
  std::string args;
  for (size_t i = 0; i + 1 < q->params.size(); ++i)
    args += c_local(safe_name(find_param(f, q->params[i].name).name)) + ", ";
  return args;
}

std::string none_outputs(const Function& f) {
  std::string out;
  for (const auto& p : f.params)
    if (p.direction == Direction::Out) out += ", None";
  return out;
}

void set_integer(Data& d, const Type& t, const Model& m) {
  Type as_int = t;
  if (t.kind == TypeKind::Enum) {
    const Enum* e = m.enumeration(t.canonical);
    as_int.is_signed = e ? e->is_signed : true;
  }
  const IntegerBounds b = integer_bounds(as_int);
  d.set("helper", b.helper);
  if (!b.low.empty()) d.set("low", b.low);
  d.set("high", b.high);
}

std::string handle_py_type(const std::string& name) { return name + " | int | None"; }

}  // namespace

ParamPlan plan_param(const Param& p, const Function& f, const Context& ctx) {
  ParamPlan plan;
  plan.param = &p;
  Data& d = plan.data;
  const std::string name = safe_name(p.name);
  d.set("name", name);
  d.set("cname", c_local(name));
  d.set("ctype", ctx.py_names.cython(p.type));
  d.set("function", f.name);
  d.set("status_of", enum_of_function(ctx.spec.status_type));
  d.set("none_outputs", none_outputs(f));
  const Type& t = p.type;
  switch (p.role) {
    case Role::Scalar:
    case Role::Count:
      if (t.kind == TypeKind::Floating) {
        plan.tmpl = "in_float";
        plan.py_type = "float";
      } else {
        plan.tmpl = "in_integer";
        plan.py_type = "int";
        set_integer(d, t, ctx.model);
      }
      break;
    case Role::Enum:
      plan.tmpl = "in_integer";
      plan.py_type = t.name + " | int";
      set_integer(d, t, ctx.model);
      break;
    case Role::Handle:
      plan.tmpl = "in_handle";
      plan.py_type = handle_py_type(t.name);
      d.set("handle", t.name);
      break;
    case Role::String:
      plan.tmpl = "in_string";
      plan.py_type = "bytes | str | None";
      break;
    case Role::StringArray:
      plan.tmpl = "in_string_array";
      plan.py_type = "Sequence[bytes | str] | None";
      plan.late = true;
      d.set("count", p.count_param);
      d.set("count_cname", c_local(safe_name(p.count_param)));
      break;
    case Role::Array: {
      plan.tmpl = "array";
      plan.late = true;
      const Type& e = t.pointee();
      d.set("ctype", ctx.py_names.cython_mutable(e));
      set_count(d, p);
      Data element = d;
      std::string element_template;
      if (e.kind == TypeKind::Handle) {
        element.set("handle", e.name);
        element_template = "element_handle";
        plan.py_type = "Sequence[" + e.name + " | int] | None";
      } else if (e.kind == TypeKind::Pointer) {
        element_template = "element_address";
        plan.py_type = "Sequence[int | Buffer | None] | None";
      } else if (e.kind == TypeKind::Record) {
        element.set("rclass", record_class(ctx.model, e.canonical));
        element_template = "element_record";
        plan.py_type = "Sequence[" + record_class(ctx.model, e.canonical) + "] | None";
      } else {
        set_integer(element, e, ctx.model);
        element_template = "element_integer";
        plan.py_type = "Sequence[int] | None";
      }
      std::string text = ctx.templates->render("params/" + element_template, element);
      text.erase(text.find_last_not_of(" \n") + 1);
      d.set("element", text);
      break;
    }
    case Role::Record:
      plan.tmpl = "record_value";
      d.set("rclass", record_class(ctx.model, t.canonical));
      plan.py_type = record_class(ctx.model, t.canonical);
      break;
    case Role::RecordIn:
      plan.tmpl = "record_in";
      d.set("rclass", record_class(ctx.model, t.pointee().canonical));
      d.set("ctype", ctx.py_names.cython_mutable(t.pointee()));
      plan.py_type = record_class(ctx.model, t.pointee().canonical) + " | int | None";
      break;
    case Role::RecordOut:
      plan.tmpl = "record_out";
      plan.input = false;
      plan.output = true;
      d.set("rclass", record_class(ctx.model, t.pointee().canonical));
      plan.out_type = record_class(ctx.model, t.pointee().canonical);
      break;
    case Role::OutAddress:
      plan.tmpl = "out_address";
      plan.input = false;
      plan.output = true;
      plan.out_type = "int";
      break;
    case Role::OutBuffer:
      plan.tmpl = "out_buffer";
      plan.input = false;
      plan.output = true;
      plan.late = true;
      plan.out_type = "bytes";
      d.set("count", p.count_param);
      d.set("count_cname", c_local(safe_name(p.count_param)));
      break;
    case Role::KernelParams:
      plan.tmpl = "kernel_params";
      plan.py_type = "int | Buffer | tuple[Sequence[object], Sequence[type | None]] | None";
      break;
    case Role::Buffer:
      plan.tmpl = "in_buffer";
      plan.py_type = "bytearray | bytes";
      plan.late = true;
      d.set("query", p.query_function);
      d.set("query_args", query_args(f, p.query_function, ctx.model));
      break;
    case Role::VoidPtr:
      plan.tmpl = "in_voidptr";
      plan.py_type = "int | Buffer | None";
      break;
    case Role::Callback: {
      plan.tmpl = p.userdata_param.empty() ? "in_callback_raw" : "in_callback";
      plan.py_type = "Callable[..., int] | int | None";
      plan.late = true;
      const std::string cb_type = t.name.empty() ? callback_typedef_name(f.name, p.name) : t.name;
      d.set("cb_type", "c." + cb_type);
      d.set("trampoline", trampoline_name(f.name, p.name));
      d.set("userdata", safe_name(p.userdata_param));
      d.set("userdata_cname", c_local(safe_name(p.userdata_param)));

      break;
    }
    case Role::UserData:
      plan.tmpl = "in_userdata";
      plan.py_type = "object";
      break;
    case Role::OutScalar: {
      plan.input = false;
      plan.output = true;
      const Type& pointee = t.pointee();
      d.set("ctype", ctx.py_names.cython(pointee));
      if (pointee.kind == TypeKind::Enum) {
        plan.tmpl = "out_enum";
        plan.out_type = pointee.name;
        d.set("enum_of", enum_of_function(pointee.canonical));
      } else if (pointee.kind == TypeKind::Handle) {
        plan.tmpl = "out_handle";
        plan.out_type = pointee.name;
        d.set("handle", pointee.name);
      } else {
        plan.tmpl = "out_value";
        plan.out_type = pointee.kind == TypeKind::Floating ? "float" : "int";
      }
      break;
    }
    case Role::OutString:
      plan.tmpl = "out_string";
      plan.input = false;
      plan.output = true;
      plan.out_type = "bytes";
      break;
    case Role::OutArray:
      plan.tmpl = "out_array";
      plan.input = false;
      plan.output = true;
      plan.late = true;
      plan.out_type = "list[int]";
      d.set("ctype", ctx.py_names.cython(t.pointee()));
      d.set("count_ctype", ctx.py_names.cython(ctx.model.function(p.query_function)->params.back().type.pointee()));
      d.set("query", p.query_function);
      d.set("query_args", query_args(f, p.query_function, ctx.model));
      break;
    case Role::InOutHandle:
      plan.tmpl = "inout_handle";
      plan.py_type = t.pointee().name;
      d.set("handle", t.pointee().name);
      d.set("ctype", ctx.py_names.cython(t.pointee()));
      break;
    default: throw std::runtime_error(f.name + "." + p.name + ": no template for role " + to_string(p.role));
  }
  return plan;
}

}  // namespace cubind::emit
