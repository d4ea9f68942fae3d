#include "emit/names.hpp"

#include <set>

namespace cubind::emit {

namespace {
const std::set<std::string>& python_keywords() {
  static const std::set<std::string> keywords = {
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del",
      "elif", "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda", "nonlocal",
      "not", "or", "pass", "raise", "return", "try", "while", "with", "yield",
  };
  return keywords;
}
}  // namespace

bool is_python_keyword(const std::string& name) { return python_keywords().count(name) > 0; }

std::string safe_name(const std::string& c_name) {
  if (is_python_keyword(c_name)) return c_name + "_";
  static const std::set<std::string> reserved = {
      // Cython keywords and built-in type names
      "cdef", "cpdef", "ctypedef", "cimport", "include", "struct", "union", "enum", "extern", "inline", "public",
      "readonly", "api", "nogil", "gil", "noexcept", "const", "volatile", "signed", "unsigned", "sizeof", "NULL",
      "bytes", "str", "unicode", "int", "long", "float", "double", "char", "short", "object", "list", "dict",
      "tuple", "set", "bint", "property",
  };
  return reserved.count(c_name) ? c_name + "_" : c_name;
}

}  // namespace cubind::emit
