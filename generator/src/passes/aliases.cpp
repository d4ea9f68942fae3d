#include <map>
#include <set>

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
  std::map<std::pair<std::string, std::string>, int> versions;  // (name, signature) -> version
  for (const auto& p : model.abi_prototypes) versions[{p.name, p.signature}] = p.version;
  for (auto& f : model.functions) {
    auto it = public_name.find(f.name);
    if (it != public_name.end()) {
      f.alias_of = f.name;
      f.name = it->second;
    }
    auto version = versions.find({f.name, f.abi_signature});
    if (!f.abi_signature.empty() && version != versions.end()) f.abi_version = version->second;
  }
}

void run_passes(model::Model& model, const spec::Spec& spec) {
  apply_aliases(model);
  name_records(model);
  mark_integer_handles(model, spec);
  infer_parameters(model, spec);
  apply_filters(model, spec);
  assign_conversions(model);
  mark_gil(model, spec);
}

}  // namespace cubind::passes
