// Thin RAII and string helpers over libclang's C API. Only the parse stage
// includes this file: no CXCursor or CXType leaves it.
#pragma once

#include <clang-c/Index.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace cubind::parse {

inline std::string take(CXString s) {
  const char* c = clang_getCString(s);
  std::string out = c ? c : "";
  clang_disposeString(s);
  return out;
}

inline std::string spelling(CXCursor c) { return take(clang_getCursorSpelling(c)); }
inline std::string spelling(CXType t) { return take(clang_getTypeSpelling(t)); }
inline std::string usr(CXCursor c) { return take(clang_getCursorUSR(c)); }

// Newer libclang wraps every named type as written in an Elaborated node;
// older ones do not. Unwrapping keeps the output identical across versions.
inline CXType unwrap(CXType t) {
  while (t.kind == CXType_Elaborated) t = clang_Type_getNamedType(t);
  return t;
}

// Visits the direct children of `parent` with a std::function.
void visit_children(CXCursor parent, const std::function<void(CXCursor)>& fn);

// The file a cursor is spelled in (realpath), or "" for built-ins.
std::string file_of(CXCursor c);

// The `/** ... */` block right before a declaration, for the declarations
// older libclang attaches no comment to (names that come from a macro).
std::string preceding_comment(CXCursor c);

struct IndexDeleter {
  void operator()(void* index) const { clang_disposeIndex(index); }
};
struct UnitDeleter {
  void operator()(CXTranslationUnitImpl* unit) const { clang_disposeTranslationUnit(unit); }
};
using IndexPtr = std::unique_ptr<void, IndexDeleter>;
using UnitPtr = std::unique_ptr<CXTranslationUnitImpl, UnitDeleter>;

// Parses `source` (an in-memory file named `name`) with `args`. Throws
// std::runtime_error with the first error diagnostics when parsing fails.
UnitPtr parse_source(CXIndex index, const std::string& name, const std::string& source,
                     const std::vector<std::string>& args, unsigned options, bool errors_are_fatal);

}  // namespace cubind::parse
