// Which names users see (the naming passes; parse keeps the declarations' own
// names, emit/names.hpp only makes them safe in Python): records by their unversioned typedef
// (`CUDA_MEMCPY2D`, not `CUDA_MEMCPY2D_v2` or `CUDA_MEMCPY2D_st`), and the
// integer typedefs the spec declares handles (`CUdeviceptr`, `CUdevice`).
#include <algorithm>
#include <map>
#include <regex>
#include <stdexcept>

#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

namespace {

bool is_version_of(const std::string& versioned, const std::string& base, const std::regex& suffix) {
  return versioned.size() > base.size() && versioned.compare(0, base.size(), base) == 0 &&
         std::regex_match(versioned.substr(base.size()), suffix);
}

void retype(Type& t, const std::map<std::string, std::string>& handles) {
  for (auto& inner : t.inner) retype(inner, handles);
  if (t.kind != TypeKind::Integer) return;
  auto it = handles.find(t.name);
  if (it == handles.end()) return;
  t.kind = TypeKind::Handle;
  t.name = it->second;
}

}  // namespace

void name_public_records(Model& model, const spec::Spec& spec) {
  const std::regex suffix(spec.conventions.version_suffix);
  for (auto& r : model.records) r.public_name = r.name;
  for (const auto& t : model.typedefs) {
    if (t.type.kind != TypeKind::Record) continue;
    for (auto& r : model.records)
      if (r.name == t.type.canonical && is_version_of(r.name, t.name, suffix)) r.public_name = t.name;
  }
  // Every other name of the type, in the headers' order, each once.
  for (auto& r : model.records) {
    auto add = [&](const std::string& name) {
      if (!name.empty() && name != r.public_name &&
          std::find(r.aliases.begin(), r.aliases.end(), name) == r.aliases.end())
        r.aliases.push_back(name);
    };
    add(r.tag);
    if (r.parent.empty()) add(r.name);  // a nested record's name is made up
    for (const auto& t : model.typedefs)
      if (t.type.kind == TypeKind::Record && t.type.canonical == r.name) add(t.name);
  }
}

void mark_failure_members(Model& model, const spec::Spec& spec) {
  for (auto& e : model.enums) {
    if (e.values.empty()) continue;
    auto named = spec.conventions.failure_members.find(e.name);
    if (named != spec.conventions.failure_members.end()) {
      const bool found =
          std::any_of(e.values.begin(), e.values.end(), [&](const EnumValue& v) { return v.name == named->second; });
      if (!found) throw std::runtime_error("conventions.failure_members." + e.name + ": no member " + named->second);
      e.failure_member = named->second;
      continue;
    }
    const EnumValue* largest = &e.values.front();
    for (const auto& v : e.values)
      if (v.value > largest->value) largest = &v;
    e.failure_member = largest->name;
  }
}

void apply_field_counts(Model& model, const spec::Spec& spec) {
  for (const auto& fc : spec.field_counts) {
    Field* target = nullptr;
    for (auto& r : model.records) {
      const bool named = r.name == fc.record || r.public_name == fc.record ||
                         std::find(r.aliases.begin(), r.aliases.end(), fc.record) != r.aliases.end();
      if (!named) continue;
      bool has_count = false;
      for (auto& f : r.fields) {
        if (f.name == fc.field) target = &f;
        has_count |= f.name == fc.count_field;
      }
      if (target && !has_count) throw std::runtime_error("fields." + fc.record + ": no count field " + fc.count_field);
      if (target) break;
    }
    if (!target) throw std::runtime_error("fields." + fc.record + "." + fc.field + ": no such field");
    target->count_field = fc.count_field;
  }
}

void mark_integer_handles(Model& model, const spec::Spec& spec) {
  const std::regex suffix(spec.conventions.version_suffix);
  std::map<std::string, std::string> names;  // typedef (or its versions) -> handle
  for (const auto& wanted : spec.integer_handles) {
    names[wanted] = wanted;
    for (const auto& t : model.typedefs)
      if (is_version_of(t.name, wanted, suffix)) names[t.name] = wanted;
  }
  for (const auto& t : model.typedefs) {
    if (std::find(spec.integer_handles.begin(), spec.integer_handles.end(), t.name) == spec.integer_handles.end())
      continue;
    Handle h;
    h.order = t.order;
    h.name = t.name;
    h.is_integer = true;
    h.doc = t.doc;
    h.header = t.header;
    model.handles.push_back(h);
  }
  for (auto& f : model.functions) {
    retype(f.result, names);
    for (auto& p : f.params) retype(p.type, names);
  }
  for (auto& r : model.records)
    for (auto& field : r.fields) retype(field.type, names);
  for (auto& c : model.callbacks) retype(c.type, names);
}

}  // namespace cubind::passes
