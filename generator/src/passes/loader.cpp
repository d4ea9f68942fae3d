// Where the loader looks, for the toolkit the headers came from: a library's
// soname and wheel folder carry the CUDA major version (libnvrtc.so.12 and
// nvidia/cuda_nvrtc/lib for 12.x, libnvrtc.so.13 and nvidia/cu13/lib for
// 13.x), so the spec writes `{cuda_major}` and one spec serves every toolkit.
#include <stdexcept>

#include "passes/passes.hpp"

namespace cubind::passes {

std::string expand_loader_name(const std::string& pattern, int cuda_version) {
  static const std::string placeholder = "{cuda_major}";
  std::string out;
  for (size_t i = 0; i < pattern.size();) {
    if (pattern.compare(i, placeholder.size(), placeholder) == 0) {
      if (cuda_version == 0)
        throw std::runtime_error("'" + pattern + "' needs the CUDA version, and the headers give none");
      out += std::to_string(cuda_version / 1000);
      i += placeholder.size();
    } else if (pattern[i] == '{') {
      throw std::runtime_error("'" + pattern + "': the only placeholder in a loader name is {cuda_major}");
    } else {
      out += pattern[i++];
    }
  }
  return out;
}

std::vector<std::string> expand_loader_names(const std::vector<std::string>& patterns, int cuda_version) {
  std::vector<std::string> out;
  for (const auto& p : patterns) out.push_back(expand_loader_name(p, cuda_version));
  return out;
}

void resolve_loader(model::Model& model, const spec::Spec& spec) {
  model.loader.sonames = expand_loader_names(spec.sonames, model.cuda_version);
  model.loader.wheel_subdirs = expand_loader_names(spec.wheel_subdirs, model.cuda_version);
  model.loader.toolkit_subdirs = expand_loader_names(spec.toolkit_subdirs, model.cuda_version);
  model.loader.resolver = spec.proc_address_function.empty() ? "dlsym" : "proc_address";
}

}  // namespace cubind::passes
