#include "emit/templates.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace cubind::emit {

const std::string& Templates::source(const std::string& name) const {
  auto it = cache_.find(name);
  if (it != cache_.end()) return it->second;
  const std::string path = dir_ + "/" + name + ".mustache";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing template " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return cache_.emplace(name, buffer.str()).first->second;
}

std::string Templates::render(const std::string& name, const Data& data) const {
  kainjow::mustache::mustache tmpl(source(name));
  // Templates write code, not HTML.
  tmpl.set_custom_escape([](const std::string& s) { return s; });
  if (!tmpl.is_valid()) throw std::runtime_error("template " + name + ": " + tmpl.error_message());
  std::string out = tmpl.render(data);
  if (!tmpl.is_valid()) throw std::runtime_error("template " + name + ": " + tmpl.error_message());
  return out;
}

bool write_if_changed(const std::string& path, const std::string& text) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream current;
      current << in.rdbuf();
      if (current.str() == text) return false;
    }
  }
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot write " + path);
  out << text;
  return true;
}

}  // namespace cubind::emit
