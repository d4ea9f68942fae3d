#include "parse/comments.hpp"

#include <algorithm>
#include <regex>
#include <sstream>
#include <vector>

namespace cubind::parse {

namespace {

std::string trim(const std::string& s) {
  const auto begin = s.find_first_not_of(" \t\r\n");
  if (begin == std::string::npos) return {};
  const auto end = s.find_last_not_of(" \t\r\n");
  return s.substr(begin, end - begin + 1);
}

// The comment's text lines without `/**`, `*/`, `/**<` and leading `*`.
std::vector<std::string> text_lines(std::string raw) {
  static const std::regex open(R"(^\s*(/\*\*<|/\*!<|/\*\*|/\*!|/\*|///<|///|//!<|//!))");
  static const std::regex close(R"(\*+/\s*$)");
  static const std::regex lead(R"(^\s*\*(?!/) ?)");  // lines without '*' keep their indentation
  std::vector<std::string> lines;
  std::istringstream in(raw);
  std::string line;
  bool first = true;
  while (std::getline(in, line)) {
    if (first) line = std::regex_replace(line, open, "");
    line = std::regex_replace(line, close, "");
    if (!first) line = std::regex_replace(line, lead, "");
    if (!first && line.rfind("///", 0) == 0) line = line.substr(3);
    first = false;
    const auto end = line.find_last_not_of(" \t\r");
    lines.push_back(end == std::string::npos ? "" : line.substr(0, end + 1));
  }
  return lines;
}

void append(std::string& to, const std::string& text, const char* joint) {
  if (text.empty()) return;
  if (!to.empty()) to += joint;
  to += text;
}

enum class Section { Body, Brief, Param, Returns };

}  // namespace

model::Doc parse_comment(const std::string& raw) {
  static const std::regex command(R"(^[\\@](\w+)(\[[^\]]*\])?\s*(.*)$)");
  static const std::regex param(R"(^(\[[^\]]*\])?\s*(\w+)\s*(?:-\s*)?(.*)$)");
  model::Doc doc;
  Section section = Section::Body;
  bool in_code = false;
  for (const std::string& line : text_lines(raw)) {
    const std::string text = trim(line);
    if (in_code) {
      doc.body += "\n" + line;
      if (text.rfind("\\endcode", 0) == 0) in_code = false;
      continue;
    }
    if (text.empty()) {
      section = Section::Body;
      if (!doc.body.empty() && doc.body.compare(doc.body.size() - std::min<size_t>(2, doc.body.size()),
                                                 std::string::npos, "\n\n") != 0)
        doc.body += doc.body.back() == '\n' ? "\n" : "\n\n";
      continue;
    }
    std::smatch m;
    if (std::regex_match(text, m, command)) {
      const std::string name = m[1];
      const std::string rest = trim(m[3]);
      if (name == "brief" || name == "short") {
        section = Section::Brief;
        append(doc.brief, rest, " ");
        continue;
      }
      if (name == "param") {
        std::smatch pm;
        const std::string spec = m[2].matched ? std::string(m[2]) + " " + rest : rest;
        if (std::regex_match(spec, pm, param)) {
          std::string dir = pm[1].matched ? std::string(pm[1]) : "";
          if (!dir.empty()) dir = trim(dir.substr(1, dir.size() - 2));
          dir.erase(std::remove(dir.begin(), dir.end(), ' '), dir.end());
          doc.params.push_back({pm[2], dir, trim(pm[3])});
          section = Section::Param;
        }
        continue;
      }
      if (name == "return" || name == "returns" || name == "retval") {
        section = Section::Returns;
        append(doc.returns, rest, "\n");
        continue;
      }
      if (name == "ingroup" || name == "defgroup" || name == "addtogroup" || name == "hideinitializer" ||
          name == "notefnerr" || name.rfind("note_", 0) == 0) {
        continue;
      }
      if (name == "sa" || name == "see") {
        section = Section::Body;
        append(doc.body, "See also: " + rest, doc.body.empty() || doc.body.back() == '\n' ? "" : "\n");
        continue;
      }
      if (name == "note") {
        section = Section::Body;
        append(doc.body, "Note: " + rest, doc.body.empty() || doc.body.back() == '\n' ? "" : "\n");
        continue;
      }
      if (name == "code") in_code = true;
    }
    switch (section) {
      case Section::Brief: append(doc.brief, text, " "); break;
      case Section::Param: append(doc.params.back().text, text, " "); break;
      case Section::Returns: append(doc.returns, text, "\n"); break;
      case Section::Body:
        if (!doc.body.empty() && doc.body.back() != '\n') doc.body += "\n";
        doc.body += line;
        break;
    }
  }
  doc.body = trim(doc.body);
  return doc;
}

}  // namespace cubind::parse
