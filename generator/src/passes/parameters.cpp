// General rules for how each C parameter crosses into Python. The rules read
// the type, the header's own [in]/[out] annotations and sibling functions
// (`fGetPTX` has `fGetPTXSize`); the spec overrides what they get wrong.
#include <cctype>

#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

namespace {

bool is_char(const Type& t) { return t.kind == TypeKind::Integer && t.canonical == "char"; }
bool is_void(const Type& t) { return t.kind == TypeKind::Void; }
bool is_value(const Type& t) {
  return t.kind == TypeKind::Integer || t.kind == TypeKind::Floating || t.kind == TypeKind::Bool ||
         t.kind == TypeKind::Enum || t.kind == TypeKind::Handle;
}
bool is_count_name(const std::string& n) {
  auto starts_upper = [&](size_t at) { return n.size() > at && std::isupper(static_cast<unsigned char>(n[at])); };
  return (n.rfind("num", 0) == 0 && starts_upper(3)) || (n[0] == 'n' && starts_upper(1)) ||
         (n.size() > 5 && (n.compare(n.size() - 5, 5, "Count") == 0 || n.compare(n.size() - 5, 5, "count") == 0)) ||
         n == "count";
}

// `prefixGetPTX` -> `prefixGetPTXSize`, the query returning the byte size.
std::string size_query(const Function& f, const Model& m) {
  const std::string name = f.name + "Size";
  return m.function(name) ? name : "";
}

// `prefixGetSupportedArchs` -> `prefixGetNumSupportedArchs`, the element count.
std::string count_query(const Function& f, const Model& m) {
  const auto at = f.name.find("Get");
  if (at == std::string::npos) return "";
  const std::string name = f.name.substr(0, at + 3) + "Num" + f.name.substr(at + 3);
  return m.function(name) ? name : "";
}

void infer_pointer(Param& p, const Function& f, const Model& m) {
  const Type& pointee = p.type.pointee();
  const DocParam* doc = f.doc.param(p.name);
  const std::string annotated = doc ? doc->direction : "";
  if (pointee.kind == TypeKind::FunctionPointer) {
    p.skip_reason = "pointer to a function pointer";
  } else if (is_char(pointee) && pointee.is_const) {
    p.role = Role::String;
  } else if (is_char(pointee)) {
    p.query_function = size_query(f, m);
    if (!p.query_function.empty()) {
      p.role = Role::Buffer;
    } else {
      p.skip_reason = "char* buffer without a size query function";
    }
  } else if (pointee.kind == TypeKind::Pointer && is_char(pointee.pointee())) {
    if (pointee.is_const) {
      p.role = Role::StringArray;
    } else if (pointee.pointee().is_const) {
      p.role = Role::OutString;
      p.direction = Direction::Out;
    } else {
      p.skip_reason = "char** without const";
    }
  } else if (is_void(pointee)) {
    p.role = Role::VoidPtr;
  } else if (pointee.is_const && is_value(pointee)) {
    p.role = Role::Array;
  } else if (is_value(pointee)) {
    if (pointee.kind == TypeKind::Handle && annotated == "in") {
      p.role = Role::InOutHandle;
      p.direction = Direction::InOut;
    } else if (annotated == "in") {
      p.skip_reason = "non-const pointer annotated [in]";
    } else if (!(p.query_function = count_query(f, m)).empty()) {
      p.role = Role::OutArray;
      p.direction = Direction::Out;
    } else {
      p.role = Role::OutScalar;
      p.direction = Direction::Out;
    }
  } else {
    p.skip_reason = "no rule for " + p.type.spelling;
  }
}

void infer_one(Param& p, const Function& f, const Model& m) {
  switch (p.type.kind) {
    case TypeKind::Integer:
    case TypeKind::Floating:
    case TypeKind::Bool: p.role = Role::Scalar; break;
    case TypeKind::Enum: p.role = Role::Enum; break;
    case TypeKind::Handle: p.role = Role::Handle; break;
    case TypeKind::Record: p.role = Role::Record; break;
    case TypeKind::FunctionPointer: p.role = Role::Callback; break;
    case TypeKind::Pointer: infer_pointer(p, f, m); break;
    default: p.skip_reason = "no rule for " + p.type.spelling; break;
  }
}

// Arrays are counted by the nearest integer before them with a count-like name.
void link_counts(Function& f) {
  for (size_t i = 0; i < f.params.size(); ++i) {
    Param& p = f.params[i];
    if ((p.role != Role::Array && p.role != Role::StringArray) || !p.count_param.empty()) continue;
    for (size_t j = i; j-- > 0;) {
      Param& c = f.params[j];
      if (c.type.kind == TypeKind::Integer && is_count_name(c.name)) {
        p.count_param = c.name;
        c.role = Role::Count;
        break;
      }
    }
    if (p.count_param.empty()) {
      p.role = Role::Unresolved;
      p.skip_reason = "array without a count parameter";
    }
  }
}

// A callback hands back the void* that follows it.
void link_userdata(Function& f) {
  for (size_t i = 0; i < f.params.size(); ++i) {
    Param& cb = f.params[i];
    if (cb.role != Role::Callback || !cb.userdata_param.empty()) continue;
    for (size_t j = i + 1; j < f.params.size(); ++j) {
      if (f.params[j].role == Role::VoidPtr) {
        cb.userdata_param = f.params[j].name;
        f.params[j].role = Role::UserData;
        break;
      }
    }
  }
}

void apply_override(Param& p, const spec::ParamOverride& o) {
  p.skip_reason.clear();
  if (o.direction) p.direction = *o.direction;
  if (o.role) p.role = *o.role;
  if (!o.count_param.empty()) p.count_param = o.count_param;
  if (!o.query_function.empty()) p.query_function = o.query_function;
  if (!o.userdata_param.empty()) p.userdata_param = o.userdata_param;
}

}  // namespace

void infer_parameters(Model& model, const spec::Spec& spec) {
  for (auto& f : model.functions) {
    f.returns_status = f.result.kind == TypeKind::Enum && f.result.name == spec.status_type;
    for (auto& p : f.params) {
      infer_one(p, f, model);
      const std::string symbol = f.alias_of.empty() ? f.name : f.alias_of;
      const spec::ParamOverride* o = spec.override_for(f.name, p.name);
      if (!o) o = spec.override_for(symbol, p.name);
      if (o) apply_override(p, *o);
    }
    link_counts(f);
    link_userdata(f);
    for (auto& p : f.params)
      if (p.role == Role::Unresolved && p.skip_reason.empty()) p.skip_reason = "no rule for " + p.type.spelling;
  }
}

}  // namespace cubind::passes
