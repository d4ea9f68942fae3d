// The package a library's modules live in (`[package]` of its spec): what its
// __init__.py says and answers beside the Python layer's names.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cubind::spec {

struct Package {
  // The package's docstring; empty: the template's, said from the headers.
  std::string doc;
  // Other distributions install packages under the same top-level name
  // (NVIDIA's cuda.bindings and cuda.core beside this `cuda`): the package's
  // __path__ takes theirs in, so that both import.
  bool shared_namespace = false;
  // Modules the package answers for as attributes, imported on first look-up
  // (`from cuda import cudart`): attribute name -> module, by name (a TOML
  // table has no order).
  std::vector<std::pair<std::string, std::string>> submodules;
};

// `[package]` of a spec's text (absent: the defaults). Throws
// std::runtime_error naming the file and the key on a malformed table.
Package read_package(const std::string& toml_text, const std::string& source_name);

}  // namespace cubind::spec
