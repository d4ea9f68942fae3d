// The name each record and enum declaration goes by in the headers (its
// typedef, tag, or a made-up one for anonymous nested records); which names
// users see is decided by the naming passes (passes/naming.cpp).
#pragma once

#include <clang-c/Index.h>

#include <set>
#include <string>

#include "parse/types.hpp"

namespace cubind::parse {

// A record or enum is named by the first typedef that names it directly,
// else by its tag; an anonymous nested record by its parent and the field
// that holds it (`Parent_field`), or `Parent_anonN` for an anonymous member.
NameTable declaration_names(CXCursor unit, const std::set<std::string>& files);

}  // namespace cubind::parse
