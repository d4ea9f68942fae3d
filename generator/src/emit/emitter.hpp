// The emit stage: model -> Cython sources of one library, through templates.
#pragma once

#include <string>
#include <vector>

#include "model/model.hpp"
#include "spec/spec.hpp"

namespace cubind::emit {

struct EmitOptions {
  std::string templates_dir;
  std::string out_dir;  // the repository root: files go to <out>/<library>/
  std::string generator_version;
  // Non-empty: render the log of every template's fragments (the golden
  // cases' output) instead of the package, for writing under this folder.
  std::string fragments_dir;
};

struct GeneratedFile {
  std::string path;  // relative to out_dir
  std::string text;
};

std::vector<GeneratedFile> render_library(const model::Model& model, const spec::Spec& spec,
                                          const EmitOptions& options);

// Writes the files that changed; returns the paths written.
std::vector<std::string> write_files(const std::vector<GeneratedFile>& files, const std::string& out_dir);

}  // namespace cubind::emit
