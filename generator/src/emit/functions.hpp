// Functions: the C layer's declaration and resolver of each, and the Python
// function that converts its arguments, calls it and returns its outputs.
#pragma once

#include <vector>

#include "emit/context.hpp"

namespace cubind::emit {

// `fn_typedefs` gains the C layer's typedefs of unnamed function pointer parameters.
View c_function_view(const model::Function& f, std::vector<View>& fn_typedefs, const Context& ctx);
// `trampolines` gains the C entry points of the function's Python callbacks.
View py_function_view(const model::Function& f, std::vector<View>& trampolines, const Context& ctx);

}  // namespace cubind::emit
