#include <map>
#include <set>

#include "passes/passes.hpp"

namespace cubind::passes {

void apply_aliases(model::Model& model) {
  std::set<std::string> declared;
  for (const auto& f : model.functions) declared.insert(f.name);
  std::map<std::string, std::string> public_name;  // ABI symbol -> name users call
  for (const auto& a : model.aliases)
    if (!declared.count(a.name)) public_name.emplace(a.target, a.name);
  for (auto& f : model.functions) {
    auto it = public_name.find(f.name);
    if (it == public_name.end()) continue;
    f.alias_of = f.name;
    f.name = it->second;
  }
}

void run_passes(model::Model& model, const spec::Spec& spec) {
  apply_aliases(model);
  name_records(model);
  mark_integer_handles(model, spec);
  infer_parameters(model, spec);
  apply_filters(model, spec);
  mark_gil(model, spec);
}

}  // namespace cubind::passes
