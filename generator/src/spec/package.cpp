#include "spec/package.hpp"

#include <toml++/toml.h>

#include <stdexcept>

namespace cubind::spec {

namespace {

[[noreturn]] void fail(const std::string& source, const std::string& key, const std::string& what) {
  throw std::runtime_error(source + ": package." + key + ": " + what);
}

}  // namespace

// The spec's text is parsed again here (spec::parse has already checked it)
// so that this table's reader stands apart from the rest of the spec's.
Package read_package(const std::string& toml_text, const std::string& source_name) {
  const toml::table root = toml::parse(toml_text, source_name);
  Package p;
  const toml::node* node = root.get("package");
  if (!node) return p;
  const toml::table* table = node->as_table();
  if (!table) throw std::runtime_error(source_name + ": package: expected a table");
  for (const auto& [key, value] : *table) {
    const std::string k(key.str());
    if (k == "doc") {
      if (!value.value<std::string>()) fail(source_name, k, "expected a string");
      p.doc = *value.value<std::string>();
    } else if (k == "shared_namespace") {
      if (!value.value<bool>()) fail(source_name, k, "expected true or false");
      p.shared_namespace = *value.value<bool>();
    } else if (k == "submodules") {
      const toml::table* modules = value.as_table();
      if (!modules) fail(source_name, k, "expected a table of name = \"module\"");
      for (const auto& [name, module] : *modules) {
        if (!module.value<std::string>())
          fail(source_name, k + "." + std::string(name.str()), "expected a module name");
        p.submodules.emplace_back(std::string(name.str()), *module.value<std::string>());
      }
    } else {
      fail(source_name, k, "unknown key (doc, shared_namespace, submodules)");
    }
  }
  return p;
}

}  // namespace cubind::spec
