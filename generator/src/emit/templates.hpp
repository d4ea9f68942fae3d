// Loads templates by name from the templates/ folder and renders them.
#pragma once

#include <kainjow/mustache.hpp>
#include <map>
#include <string>

namespace cubind::emit {

using Data = kainjow::mustache::data;

class Templates {
 public:
  explicit Templates(std::string dir) : dir_(std::move(dir)) {}
  // Renders `<dir>/<name>.mustache`; throws naming the template on errors.
  std::string render(const std::string& name, const Data& data) const;

 private:
  const std::string& source(const std::string& name) const;
  std::string dir_;
  mutable std::map<std::string, std::string> cache_;
};

// Writes `text` to `path` unless the file already holds exactly that.
// Returns true when the file was written.
bool write_if_changed(const std::string& path, const std::string& text);

}  // namespace cubind::emit
