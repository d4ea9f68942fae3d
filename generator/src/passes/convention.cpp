// Decisions of the classic CUDA Python convention that are not about one
// value's conversion: what a call returns first where C returns no status
// (or that it returns its value alone, where the spec says so).
#include <stdexcept>

#include "passes/passes.hpp"

namespace cubind::passes {

using namespace cubind::model;

void mark_success_status(Model& model, const spec::Spec& spec) {
  const std::string& wanted = spec.conventions.success_member;
  const Enum* status = model.enumeration(spec.status_type);
  std::string success;
  if (status) {
    for (const auto& v : status->values)
      if (wanted.empty() ? v.value == 0 : v.name == wanted) {
        success = v.name;
        break;
      }
  }
  // The spec's value-only functions: checked to exist and to return a value,
  // so that a renamed function or a typo is not silently ignored.
  for (const auto& name : spec.value_results) {
    Function* f = nullptr;
    for (auto& candidate : model.functions)
      if (candidate.name == name) f = &candidate;
    if (!f) throw std::runtime_error("functions." + name + ".result: " + name + " is not declared by the headers");
    if (f->returns_status)
      throw std::runtime_error("functions." + name + ".result: " + name + " returns the status, not a value");
    f->value_only = true;
  }
  for (auto& f : model.functions) {
    if (f.returns_status || f.value_only || !f.skip_reason.empty()) continue;
    if (success.empty())
      throw std::runtime_error(f.name + " returns no status, and " +
                               (wanted.empty() ? "status_type " + spec.status_type + " has no member of value 0"
                                               : "conventions.success_member " + wanted + " is no member of " +
                                                     spec.status_type) +
                               " to return first");
    f.success_status = success;
  }
}

void mark_status_pointers(Model& model, const spec::Spec& spec) {
  if (!spec.conventions.status_pointer) return;
  const spec::StatusPointer& sp = *spec.conventions.status_pointer;
  const std::string where = "conventions.status_pointer: ";
  const Enum* status = model.enumeration(spec.status_type);
  if (!status) throw std::runtime_error(where + "status_type " + spec.status_type + " is not declared by the headers");
  const auto value_of = [&](const std::string& member) {
    for (const auto& v : status->values)
      if (v.name == member) return v.value;
    throw std::runtime_error(where + member + " is no member of " + spec.status_type);
  };
  const int64_t first_error = value_of(sp.first_error), pending = value_of(sp.pending);
  bool used = false;
  for (auto& f : model.functions) {
    if (f.result.kind != TypeKind::Pointer || f.result.name != sp.type) continue;
    f.status_pointer_enum = spec.status_type;
    f.status_pointer_first_error = first_error;
    f.status_pointer_pending = pending;
    f.value_only = true;  // the (status, request) pair is the value: no success member before it
    used = true;
  }
  if (!used) throw std::runtime_error(where + "no function returns " + sp.type);
}

void mark_status_description(Model& model, const spec::Spec& spec) {
  const std::string& name = spec.status_description;
  if (name.empty()) return;
  const std::string where = "library.status_description: ";
  Enum* status = nullptr;
  for (auto& e : model.enums)
    if (e.name == spec.status_type) status = &e;
  if (!status) throw std::runtime_error(where + "status_type " + spec.status_type + " is not declared by the headers");
  const Function* f = model.function(name);
  if (!f) throw std::runtime_error(where + name + " is not declared by the headers");
  if (!f->skip_reason.empty()) throw std::runtime_error(where + name + " is not bound (" + f->skip_reason + ")");
  // Its one input is the status; the C text comes back as an output
  // (cuGetErrorString's pStr) or as the result (nvrtcGetErrorString).
  std::size_t inputs = 0;
  bool takes_status = false;
  for (const auto& p : f->params) {
    if (p.direction == Direction::Out) continue;
    ++inputs;
    takes_status = p.type.name == spec.status_type;
  }
  if (inputs != 1 || !takes_status)
    throw std::runtime_error(where + name + " must take one " + spec.status_type + " and outputs only");
  status->description_function = name;
}

// An in/out count left out asks for the count alone (`cuGraphGetNodes(graph)`
// gives `(err, [], numNodes)`), as the classic bindings' `numNodes = 0`; only
// where no input without a default follows it, as Python requires.
void mark_classic_defaults(Model& model, const spec::Spec&) {
  for (auto& f : model.functions) {
    for (auto it = f.params.rbegin(); it != f.params.rend(); ++it) {
      if (!it->conversion.input) continue;
      if (it->role != Role::InOutCount) break;
      it->py_default = "0";
    }
  }
}

void bind_helpers(Model& model, const spec::Spec& spec) {
  for (const auto& [name, function] : spec.helpers) {
    const Function* f = model.function(function);
    if (!f || !f->skip_reason.empty())
      throw std::runtime_error("helpers." + name + ": " + function +
                               (f ? " is skipped (" + f->skip_reason + ")" : " is not declared by the headers"));
    model.helpers.push_back({name, function, f->header});
  }
}

}  // namespace cubind::passes
