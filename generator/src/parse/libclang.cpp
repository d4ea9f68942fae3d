#include "parse/libclang.hpp"

#include <cctype>
#include <climits>
#include <cstdlib>
#include <stdexcept>

namespace cubind::parse {

namespace {
CXChildVisitResult trampoline(CXCursor cursor, CXCursor /*parent*/, CXClientData data) {
  (*static_cast<const std::function<void(CXCursor)>*>(data))(cursor);
  return CXChildVisit_Continue;
}
}  // namespace

void visit_children(CXCursor parent, const std::function<void(CXCursor)>& fn) {
  clang_visitChildren(parent, trampoline, const_cast<std::function<void(CXCursor)>*>(&fn));
}

std::string file_of(CXCursor c) {
  CXFile file = nullptr;
  // Where the declaration is expanded: a name pasted by a macro is spelled in
  // clang's scratch buffer, but belongs to the header that expands it.
  clang_getExpansionLocation(clang_getCursorLocation(c), &file, nullptr, nullptr, nullptr);
  if (!file) return {};
  std::string name = take(clang_getFileName(file));
  char resolved[PATH_MAX];
  if (realpath(name.c_str(), resolved)) return resolved;
  return name;
}

std::string preceding_comment(CXCursor c) {
  CXFile file = nullptr;
  unsigned offset = 0;
  clang_getExpansionLocation(clang_getRangeStart(clang_getCursorExtent(c)), &file, nullptr, nullptr, &offset);
  if (!file) return {};
  size_t size = 0;
  const char* text = clang_getFileContents(clang_Cursor_getTranslationUnit(c), file, &size);
  if (!text || offset > size) return {};
  size_t end = offset;
  while (end > 0 && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  if (end < 2 || text[end - 2] != '*' || text[end - 1] != '/') return {};
  const std::string before(text, end);
  const size_t open = before.rfind("/*");
  if (open == std::string::npos || before.compare(open, 3, "/**") != 0) return {};
  return before.substr(open);
}

UnitPtr parse_source(CXIndex index, const std::string& name, const std::string& source,
                     const std::vector<std::string>& args, unsigned options, bool errors_are_fatal) {
  std::vector<const char*> argv;
  argv.reserve(args.size());
  for (const auto& a : args) argv.push_back(a.c_str());
  CXUnsavedFile unsaved{name.c_str(), source.c_str(), static_cast<unsigned long>(source.size())};
  CXTranslationUnit unit = nullptr;
  CXErrorCode rc = clang_parseTranslationUnit2(index, name.c_str(), argv.data(), static_cast<int>(argv.size()),
                                               &unsaved, 1, options, &unit);
  if (rc != CXError_Success || !unit)
    throw std::runtime_error("libclang could not parse " + name + " (error " + std::to_string(rc) + ")");
  UnitPtr owned(unit);
  if (errors_are_fatal) {
    std::string errors;
    for (unsigned i = 0, n = clang_getNumDiagnostics(unit); i < n; ++i) {
      CXDiagnostic d = clang_getDiagnostic(unit, i);
      if (clang_getDiagnosticSeverity(d) >= CXDiagnostic_Error)
        errors += take(clang_formatDiagnostic(d, clang_defaultDiagnosticDisplayOptions())) + "\n";
      clang_disposeDiagnostic(d);
    }
    if (!errors.empty()) throw std::runtime_error("errors while parsing the headers:\n" + errors);
  }
  return owned;
}

}  // namespace cubind::parse
