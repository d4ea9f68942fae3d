// Names that are safe in Cython and Python.
#pragma once

#include <string>

namespace cubind::emit {

// `from` -> `from_`, `bytes` -> `bytes_`: C names that are Python keywords or
// Cython type names get a trailing underscore; others are kept.
std::string safe_name(const std::string& c_name);
// A name Python code cannot spell as an attribute (`x.from`).
bool is_python_keyword(const std::string& name);

}  // namespace cubind::emit
