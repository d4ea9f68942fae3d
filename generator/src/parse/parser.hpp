// The parse stage: headers -> model::Model through libclang.
#pragma once

#include <string>
#include <vector>

#include "model/model.hpp"

namespace cubind::parse {

struct ParseOptions {
  std::string library;
  std::vector<std::string> headers;          // as included: "nvrtc.h"
  std::vector<std::string> prelude_headers;  // included before them, never bound
  std::vector<std::string> include_dirs;     // searched in order
  std::vector<std::string> clang_args;       // extra, from the spec
  std::string version_header;                // the header defining version_macro
  std::string version_macro;                 // e.g. CUDA_VERSION (13000)
  // A header of `typedef R (*PFN_<name>_v<version>)(...)` prototypes: each
  // function's ABI version is the one whose prototype matches its declaration.
  std::vector<std::string> abi_typedefs_headers;
  std::string abi_prototype;  // the regex of its prototypes' names (spec conventions)
};

model::Model parse_headers(const ParseOptions& options);

}  // namespace cubind::parse
