// `#define`s of the headers: numeric constants and API aliases.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "model/model.hpp"

namespace cubind::parse {

struct MacroDef {
  std::string name;
  bool function_like = false;
  std::vector<std::string> params;
  std::vector<std::string> body;  // replacement tokens
  std::string header;
};

struct MacroClasses {
  std::vector<model::Alias> aliases;
  // `#define cudaStreamAttrID cudaLaunchAttributeID`: another name of a type.
  std::vector<model::Alias> type_aliases;
  std::vector<const MacroDef*> constant_candidates;  // to be evaluated by the compiler
};

// Splits macros into API aliases (`#define f f_v2`, or through a one-parameter
// pasting macro such as `#define f __API_PTDS(f_v2)`) and candidates for
// constants, and type aliases (`#define X T`, T a type the headers declare).
// `functions` and `types` are the names the headers declare.
MacroClasses classify_macros(const std::vector<MacroDef>& macros, const std::set<std::string>& functions,
                             const std::set<std::string>& types = {});

}  // namespace cubind::parse
