#include "emit/docs.hpp"

#include <algorithm>
#include <regex>
#include <sstream>

namespace cubind::emit {

std::string plain_text(const std::string& doxygen) {
  static const std::vector<std::pair<std::regex, std::string>> rules = {
      {std::regex(R"(\\#)"), "\x01"},  // an escaped '#' survives the '#name' rule below
      {std::regex(R"(\\deprecated\b)"), "Deprecated:"},
      {std::regex(R"((\w)::(\w))"), "$1.$2"},
      {std::regex(R"(\\link\s+(?:#|::)?(\w+)\s+([^\\]*?)\s*\\endlink)"), "$2"},
      {std::regex(R"(\\ref\s+#?(\w+))"), "$1"},
      {std::regex(R"(\\(p|c|e|b|a|em)\s+)"), ""},
      {std::regex(R"(::(\w))"), "$1"},
      {std::regex(R"(#(\w+))"), "$1"},
      {std::regex(R"(\\n\b)"), "\n"},
      {std::regex(R"(\\(code|endcode)(\{\.\w+\})?)"), ""},
      {std::regex(R"(\\([<>&%"]))"), "$1"},
  };
  std::string out = doxygen;
  for (const auto& [pattern, replacement] : rules) out = std::regex_replace(out, pattern, replacement);
  std::replace(out.begin(), out.end(), '\x01', '#');
  return out;
}

namespace {

std::string indent(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) out += (line.empty() ? "" : prefix + line) + "\n";
  return out;
}

// Words of `text` in lines of at most `width` characters.
std::string wrap(const std::string& text, size_t width) {
  std::istringstream in(text);
  std::string word, line, out;
  while (in >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line + "\n";
}

}  // namespace

std::string function_docstring(const model::Function& f, const std::string& status,
                               const std::vector<DocOutput>& outputs, const std::map<std::string, std::string>& forms) {
  std::string out;
  if (!f.doc.brief.empty()) out += plain_text(f.doc.brief) + "\n\n";
  if (!f.doc.body.empty()) out += plain_text(f.doc.body) + "\n\n";
  std::string params;
  for (const auto& p : f.params) {
    // An output the call returns is no parameter of the Python function; a
    // buffer the caller gives for the call to write into is one.
    if (p.direction == model::Direction::Out && !p.conversion.input) continue;
    const model::DocParam* d = f.doc.param(p.name);
    params += p.py_name + "\n" + indent(d ? plain_text(d->text) : p.type.spelling, "    ");
    auto taken = forms.find(p.name);
    if (taken != forms.end() && !taken->second.empty()) params += indent(wrap("Takes " + taken->second + ".", 80), "    ");
  }
  if (!params.empty()) out += "Parameters\n----------\n" + params + "\n";
  out += "Returns\n-------\n";
  if (!status.empty()) {
    out += status + "\n";
    if (!f.doc.returns.empty()) out += indent(plain_text(f.doc.returns), "    ");
  }
  for (const auto& o : outputs) {
    out += o.name + " : " + o.type + "\n";
    if (!o.text.empty()) out += indent(plain_text(o.text), "    ");
  }
  return out;
}

std::string value_docstring(const model::Function& f, const std::string& status, const std::string& success,
                            const std::string& value_type, const std::map<std::string, std::string>& forms,
                            const std::vector<DocOutput>& outputs, bool with_value) {
  std::vector<DocOutput> returned;
  if (with_value) returned.push_back({"value", value_type, f.doc.returns});
  returned.insert(returned.end(), outputs.begin(), outputs.end());
  if (success.empty()) return function_docstring(f, "", returned, forms);  // no status
  model::Function shown = f;
  shown.doc.returns = "Always " + success + ": this function reports no error.";
  return function_docstring(shown, status, returned, forms);
}

std::string entity_docstring(const model::Doc& doc, const std::string& fallback) {
  std::string out = doc.brief.empty() ? fallback : plain_text(doc.brief);
  if (!doc.body.empty()) out += "\n\n" + plain_text(doc.body);
  return out;
}

std::string python_string_body(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string docstring(const std::string& text, const std::string& indent) {
  std::string out, line;
  std::istringstream in(python_string_body(text));
  bool first = true;
  while (std::getline(in, line)) {
    out += first || line.empty() ? line : indent + line;
    out += "\n";
    first = false;
  }
  if (out.find('\n') != out.size() - 1) out += indent;
  else out.pop_back();
  return out;
}

}  // namespace cubind::emit
