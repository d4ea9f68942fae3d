// How each parameter is converted: the template that converts it and the
// values it is rendered with. The choice is made here, never in a template.
#pragma once

#include <string>

#include "emit/cython_types.hpp"
#include "emit/templates.hpp"
#include "model/model.hpp"
#include "spec/spec.hpp"

namespace cubind::emit {

struct Context {
  const model::Model& model;
  const spec::Spec& spec;
  TypeNames c_names;   // spelled inside the C layer
  TypeNames py_names;  // spelled from the Python layer ("c." prefix)
  const Templates* templates = nullptr;
};

struct ParamPlan {
  const model::Param* param = nullptr;
  std::string tmpl;  // under templates/params/
  Data data;
  bool input = true;    // in the Python signature
  bool output = false;  // in the returned tuple
  bool late = false;    // converted after the others (needs their values)
  std::string py_type;  // .pyi type of the input
  std::string out_type;  // .pyi type of the output
};

// Names the generated Python layer uses for a parameter's C value.
std::string c_local(const std::string& param);
std::string enum_of_function(const std::string& enum_name);
std::string trampoline_name(const std::string& function, const std::string& param);
// The index of the callback argument that carries the user data back.
int userdata_index(const model::Type& callback);

ParamPlan plan_param(const model::Param& p, const model::Function& f, const Context& ctx);

}  // namespace cubind::emit
