// First pass over the headers: the public name of every record and enum.
#pragma once

#include <clang-c/Index.h>

#include <set>
#include <string>

#include "parse/types.hpp"

namespace cubind::parse {

// A record or enum is named by the first typedef that names it directly,
// else by its tag; an anonymous nested record by its parent and the field
// that holds it (`Parent_field`), or `Parent_anonN` for an anonymous member.
NameTable name_records(CXCursor unit, const std::set<std::string>& files);

}  // namespace cubind::parse
