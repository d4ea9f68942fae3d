// What every view of one library is built from.
#pragma once

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
  Templates& templates;
};

// Names the generated Python layer gives to C values and helpers.
std::string c_local(const std::string& param);
std::string enum_of_function(const std::string& enum_name);
std::string trampoline_name(const std::string& function, const std::string& param);

}  // namespace cubind::emit
