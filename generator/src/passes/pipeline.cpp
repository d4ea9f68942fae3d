// The order of the passes: each reads what the ones above it decided.
#include "passes/passes.hpp"

namespace cubind::passes {

namespace {

using model::Model;
using spec::Spec;

struct Pass {
  const char* name;
  void (*run)(Model&, const Spec&);
};

// Aliases come first, so that every later pass (the spec's overrides and
// skips among them) sees the names users call; roles before the filters,
// which skip what has none; Python's names once every parameter and field
// exists; conversions last but for the GIL, of the functions the filters kept.
const Pass kPipeline[] = {
    {"merge_abi_symbols", merge_abi_symbols},
    {"apply_aliases", [](Model& m, const Spec&) { apply_aliases(m); }},
    {"name_proc_symbols", name_proc_symbols},
    {"choose_abi_versions", [](Model& m, const Spec&) { choose_abi_versions(m); }},
    {"resolve_loader", resolve_loader},
    {"name_public_records", name_public_records},
    {"mark_struct_versions", mark_struct_versions},
    {"mark_failure_members", mark_failure_members},
    {"find_twin_enums", [](Model& m, const Spec&) { find_twin_enums(m); }},
    {"drop_tag_typedefs", [](Model& m, const Spec&) { drop_tag_typedefs(m); }},
    {"declare_foreign_typedefs", declare_foreign_typedefs},
    {"mark_integer_handles", mark_integer_handles},
    {"name_tagged_handles", [](Model& m, const Spec&) { name_tagged_handles(m); }},
    {"mark_void_handles", mark_void_handles},
    {"name_type_aliases", name_type_aliases},
    {"mark_char_strings", mark_char_strings},
    {"apply_field_counts", apply_field_counts},
    {"mark_hex_fields", [](Model& m, const Spec&) { mark_hex_fields(m); }},
    {"resolve_attribute_types", resolve_attribute_types},
    {"resolve_option_types", resolve_option_types},
    {"infer_parameters", infer_parameters},
    {"link_option_values", [](Model& m, const Spec&) { link_option_values(m); }},
    {"accept_documented_casts", accept_documented_casts},
    {"link_attributes", [](Model& m, const Spec&) { link_attributes(m); }},
    {"link_kept_alive", [](Model& m, const Spec&) { link_kept_alive(m); }},
    {"mark_status_pointers", mark_status_pointers},
    {"apply_filters", apply_filters},
    {"name_python", [](Model& m, const Spec&) { name_python(m); }},
    {"mark_callback_classes", [](Model& m, const Spec&) { mark_callback_classes(m); }},
    {"mark_success_status", mark_success_status},
    {"mark_status_description", mark_status_description},
    {"bind_helpers", bind_helpers},
    {"assign_conversions", [](Model& m, const Spec&) { assign_conversions(m); }},
    {"mark_classic_defaults", mark_classic_defaults},
    {"mark_noexcept_void", mark_noexcept_void},
    {"mark_gil", mark_gil},
    {"spell_compat_signatures", spell_compat_signatures},
};

}  // namespace

std::vector<std::string> pass_names() {
  std::vector<std::string> out;
  for (const Pass& p : kPipeline) out.push_back(p.name);
  return out;
}

void run_passes(Model& model, const Spec& spec) {
  for (const Pass& p : kPipeline) p.run(model, spec);
}

}  // namespace cubind::passes
