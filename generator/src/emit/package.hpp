// The package around a library's modules: its __init__.py, which re-exports
// the Python layer, and py.typed. Written by the spec whose stubs are the
// package's own (__init__.pyi); another spec of the same package (the
// runtime's cuda.cudart beside the driver's cuda) adds its modules only.
#pragma once

#include <string>
#include <vector>

#include "emit/emitter.hpp"
#include "emit/templates.hpp"
#include "model/model.hpp"
#include "spec/spec.hpp"

namespace cubind::emit {

// The package's files (none where the spec does not own the package), under
// `<library>/`; `banner` is the generated files' first line.
std::vector<GeneratedFile> render_package(const model::Model& model, const spec::Spec& spec, Templates& templates,
                                          const std::string& banner);

}  // namespace cubind::emit
