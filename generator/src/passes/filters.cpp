#include <algorithm>
#include <regex>
#include <set>

#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

namespace {

bool bindable_result(const Function& f) {
  if (!f.status_pointer_enum.empty()) return true;
  const Type& r = f.result;
  switch (r.kind) {
    case TypeKind::Void:
    case TypeKind::Bool:
    case TypeKind::Integer:
    case TypeKind::Floating:
    case TypeKind::Enum:
    case TypeKind::Handle:
    case TypeKind::Record: return true;
    case TypeKind::Pointer: return r.pointee().kind == TypeKind::Integer && r.pointee().canonical == "char";
    default: return false;
  }
}

}  // namespace

void apply_filters(Model& model, const spec::Spec& spec) {
  for (auto& f : model.functions) {
    for (const auto& skip : spec.skips) {
      if (std::regex_match(f.name, std::regex(skip.pattern))) {
        f.skip_reason = skip.reason;
        break;
      }
    }
    if (!f.skip_reason.empty()) continue;
    if (!bindable_result(f)) {
      f.skip_reason = "returns " + f.result.spelling + ", which has no conversion";
      continue;
    }
    for (const auto& p : f.params) {
      if (!p.skip_reason.empty()) {
        f.skip_reason = "parameter " + p.name + ": " + p.skip_reason;
        break;
      }
    }
  }
}

void drop_tag_typedefs(Model& model) {
  std::set<std::string> tags;
  for (const auto& e : model.enums)
    if (!e.tag.empty()) tags.insert(e.tag);
  for (const auto& r : model.records)
    if (!r.tag.empty()) tags.insert(r.tag);
  auto& t = model.typedefs;
  t.erase(std::remove_if(t.begin(), t.end(),
                         [&](const Typedef& d) {
                           return tags.count(d.name) && (d.type.kind == TypeKind::Enum || d.type.kind == TypeKind::Record);
                         }),
          t.end());
}

void mark_noexcept_void(Model& model, const spec::Spec& spec) {
  if (!spec.conventions.noexcept_void) return;
  for (auto& f : model.functions) {
    if (f.result.kind != TypeKind::Void || f.header_only || !f.skip_reason.empty()) continue;
    f.result_conversion.raises = false;
    f.loads_first = true;
  }
}

void mark_gil(Model& model, const spec::Spec& spec) {
  std::vector<std::regex> keep;
  for (const auto& pattern : spec.keep_gil) keep.emplace_back(pattern);
  for (auto& f : model.functions) {
    f.releases_gil = true;
    for (const auto& re : keep) {
      if (std::regex_match(f.name, re)) {
        f.releases_gil = false;
        break;
      }
    }
  }
}

}  // namespace cubind::passes
