#include "parse/macros.hpp"

#include <cctype>
#include <map>

namespace cubind::parse {

namespace {

bool is_identifier(const std::string& token) {
  return !token.empty() && (std::isalpha(static_cast<unsigned char>(token[0])) || token[0] == '_');
}

// Expands `M(arg)` where M has one parameter and a body of `p` or `p ## suffix`.
std::string expand_paste(const MacroDef& macro, const std::string& arg) {
  if (macro.params.size() != 1) return {};
  const auto& b = macro.body;
  if (b.size() == 1 && b[0] == macro.params[0]) return arg;
  if (b.size() == 3 && b[0] == macro.params[0] && b[1] == "##" && is_identifier(b[2])) return arg + b[2];
  return {};
}

std::string alias_target(const MacroDef& m, const std::map<std::string, const MacroDef*>& function_macros) {
  const auto& b = m.body;
  if (b.size() == 1 && is_identifier(b[0])) return b[0];
  if (b.size() == 4 && b[1] == "(" && b[3] == ")" && is_identifier(b[2])) {
    auto it = function_macros.find(b[0]);
    if (it != function_macros.end()) return expand_paste(*it->second, b[2]);
  }
  return {};
}

}  // namespace

MacroClasses classify_macros(const std::vector<MacroDef>& macros, const std::set<std::string>& functions,
                             const std::set<std::string>& types) {
  std::map<std::string, const MacroDef*> function_macros;
  for (const auto& m : macros)
    if (m.function_like) function_macros.emplace(m.name, &m);

  MacroClasses out;
  for (const auto& m : macros) {
    if (m.function_like || m.body.empty()) continue;
    const std::string target = alias_target(m, function_macros);
    if (target == m.name) continue;  // an identity macro names nothing new
    if (!target.empty() && functions.count(target)) {
      out.aliases.push_back({m.name, target, m.header});
      continue;
    }
    if (!target.empty() && types.count(target)) {
      out.type_aliases.push_back({m.name, target, m.header});
      continue;
    }
    // Reserved names are the headers' own plumbing (include guards, API macros).
    if (m.name.rfind("__", 0) == 0) continue;
    out.constant_candidates.push_back(&m);
  }
  return out;
}

}  // namespace cubind::parse
