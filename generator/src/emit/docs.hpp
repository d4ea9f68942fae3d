// Docstrings from the headers' doxygen comments, rewritten for Python.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace cubind::emit {

// Inline doxygen markup -> plain text: `\p x`, `\c x`, `::f`, `\link #E V \endlink`.
std::string plain_text(const std::string& doxygen);

struct DocOutput {
  std::string name;
  std::string type;
  std::string text;
};

// The docstring of a function as Python sees it: inputs under Parameters,
// each with the Python forms it takes (`forms`, by parameter name) after the
// header's text; outputs under Returns, after the status. No signature line:
// help() shows the function's own signature above it.
std::string function_docstring(const model::Function& f, const std::string& status,
                               const std::vector<DocOutput>& outputs,
                               const std::map<std::string, std::string>& forms = {});
// The docstring of a function whose C return is not a status: the status
// `success` under Returns, then the value as C's return documents it (where
// `with_value`: a void function with outputs returns those alone), then the
// `outputs`; with `success` empty, no status (a function returning only its value).
std::string value_docstring(const model::Function& f, const std::string& status, const std::string& success,
                            const std::string& value_type, const std::map<std::string, std::string>& forms = {},
                            const std::vector<DocOutput>& outputs = {}, bool with_value = true);
std::string entity_docstring(const model::Doc& doc, const std::string& fallback);

// A docstring body indented to sit inside a def or class at `indent`, its
// closing quotes on their own line when it has several.
std::string docstring(const std::string& text, const std::string& indent);

// Escapes text for a Python triple-quoted string.
std::string python_string_body(const std::string& text);

}  // namespace cubind::emit
