#include "emit/package.hpp"

#include "emit/docs.hpp"

namespace cubind::emit {

namespace {

// The stubs and the package's __init__.py are two faces of one module: the
// spec that writes the one writes the other.
bool owns_package(const spec::Spec& s) { return s.stub == "__init__.pyi"; }

View package_view(const model::Model& m, const spec::Spec& s, const std::string& banner) {
  View d;
  d.set("banner", banner);
  d.set("library", s.library);
  d.set("py_module", s.py_module);
  if (!s.package.doc.empty())
    d.set("doc", docstring(s.package.doc, ""));
  else
    d.set("default_doc", View().set("main_header", m.headers.front()).set("status_type", s.status_type));
  d.flag("shared_namespace", s.package.shared_namespace);
  if (!s.package.submodules.empty()) {
    std::vector<View> items;
    for (const auto& [name, module] : s.package.submodules)
      items.push_back(View().set("name", name).set("module", module));
    d.set("submodules", View().set("items", list_of(items)));
  }
  return d;
}

}  // namespace

std::vector<GeneratedFile> render_package(const model::Model& model, const spec::Spec& spec, Templates& templates,
                                          const std::string& banner) {
  if (!owns_package(spec)) return {};
  const View view = package_view(model, spec, banner);
  const std::string dir = spec.library + "/";
  return {{dir + "__init__.py", templates.render("package_init.py", view)},
          {dir + "py.typed", templates.render("py_typed", view)}};
}

}  // namespace cubind::emit
