#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <stdexcept>

#include "passes/passes.hpp"

namespace cubind::passes {

namespace {

// ABI symbol -> the name users call. An alias whose name is itself declared
// is not a rename; the first alias of a symbol wins.
std::map<std::string, std::string> public_names(const model::Model& model) {
  std::set<std::string> declared;
  for (const auto& f : model.functions) declared.insert(f.name);
  std::map<std::string, std::string> out;
  for (const auto& a : model.aliases)
    if (!declared.count(a.name)) out.emplace(a.target, a.name);
  return out;
}

}  // namespace

void apply_aliases(model::Model& model) {
  const auto public_name = public_names(model);
  for (auto& f : model.functions) {
    auto it = public_name.find(f.name);
    if (it != public_name.end()) {
      f.alias_of = f.name;
      f.name = it->second;
    }
  }
}

void name_proc_symbols(model::Model& model, const spec::Spec& spec) {
  if (spec.proc_address_function.empty()) return;
  const std::regex versioned("(" + spec.conventions.version_suffix + ")$");
  for (auto& f : model.functions) {
    if (f.alias_of.empty()) continue;
    const std::string base = std::regex_replace(f.alias_of, versioned, "");
    if (base != f.name) f.proc_name = base;
  }
}

void choose_abi_versions(model::Model& model) {
  std::map<std::pair<std::string, std::string>, int> versions;  // (name, signature) -> version
  std::set<std::string> known;                                  // names with any prototype
  for (const auto& p : model.abi_prototypes) {
    versions[{p.name, p.signature}] = p.version;
    known.insert(p.name);
  }
  for (auto& f : model.functions) {
    const std::string& name = f.proc_name.empty() ? f.name : f.proc_name;
    auto version = versions.find({name, f.abi_signature});
    const bool matched = !f.abi_signature.empty() && version != versions.end();
    if (!matched && known.count(name))
      throw std::runtime_error(f.name + ": the ABI typedefs know " + name + " only with other parameters than " +
                               f.abi_signature + "; asked for " + name + " at the headers' version, the loader " +
                               "would call one of those");
    f.abi_version = matched ? version->second : model.cuda_version;
  }
}

namespace {

// The same type but for const, which a call converts (`const char **` is
// passed where `const char *const *` is declared).
bool same_but_const(const model::Type& a, const model::Type& b) {
  if (a.kind != b.kind || a.name != b.name || a.canonical != b.canonical || a.inner.size() != b.inner.size())
    return false;
  for (size_t i = 0; i < a.inner.size(); ++i)
    if (!same_but_const(a.inner[i], b.inner[i])) return false;
  return true;
}

bool same_parameters(const model::Function& a, const model::Function& b) {
  if (a.params.size() != b.params.size()) return false;
  for (size_t i = 0; i < a.params.size(); ++i)
    if (!same_but_const(a.params[i].type, b.params[i].type)) return false;
  return true;
}

}  // namespace

void merge_abi_symbols(model::Model& model, const spec::Spec& spec) {
  const auto& rule = spec.conventions.abi_symbol;
  if (!rule) return;
  const std::regex match(rule->match);
  std::set<std::string> merged;
  for (auto& f : model.functions) {
    if (!std::regex_match(f.name, match)) continue;
    const std::regex symbol(std::regex_replace(f.name, match, rule->replace));
    for (const auto& g : model.functions) {
      if (&g == &f || !std::regex_match(g.name, symbol) || !same_parameters(f, g)) continue;
      f.alias_of = g.name;
      f.header_only = false;  // the wrapper's symbol is called, not its inline body
      merged.insert(g.name);
      break;
    }
  }
  model.functions.erase(std::remove_if(model.functions.begin(), model.functions.end(),
                                       [&](const model::Function& f) { return merged.count(f.name) != 0; }),
                        model.functions.end());
}

}  // namespace cubind::passes
