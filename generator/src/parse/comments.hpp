// Doxygen comments as the CUDA headers write them -> model::Doc.
// Pure string code: no libclang, unit-tested on its own.
#pragma once

#include <string>

#include "model/model.hpp"

namespace cubind::parse {

// `raw` is the comment as in the source, markers included.
model::Doc parse_comment(const std::string& raw);

}  // namespace cubind::parse
