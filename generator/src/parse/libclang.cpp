#include "parse/libclang.hpp"

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
  clang_getSpellingLocation(clang_getCursorLocation(c), &file, nullptr, nullptr, nullptr);
  if (!file) return {};
  std::string name = take(clang_getFileName(file));
  char resolved[PATH_MAX];
  if (realpath(name.c_str(), resolved)) return resolved;
  return name;
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
