// cubind-gen: CUDA headers -> Cython bindings, in three visible stages:
// parse (libclang -> model), passes (decisions), emit (templates).
#include <CLI/CLI.hpp>
#include <chrono>
#include <iostream>

#include "emit/emitter.hpp"
#include "emit/report.hpp"
#include "model/model_json.hpp"
#include "parse/parser.hpp"
#include "passes/passes.hpp"
#include "spec/spec.hpp"

#ifndef CUBIND_VERSION
#define CUBIND_VERSION "0.0.0"
#endif

namespace {

struct Options {
  std::string spec;
  std::vector<std::string> include_dirs;
  std::string templates = "generator/templates";  // from the repository root
  std::string out;
  std::string fragments;
  bool dump_model = false;
  bool report = false;
  bool timing = false;
};

int run(const Options& o) {
  using clock = std::chrono::steady_clock;
  const auto start = clock::now();
  const cubind::spec::Spec spec = cubind::spec::load(o.spec);

  cubind::parse::ParseOptions parse;
  parse.library = spec.library;
  parse.headers = spec.headers;
  parse.prelude_headers = spec.prelude_headers;
  parse.include_dirs = o.include_dirs;
  parse.clang_args = spec.clang_args;
  parse.version_header = spec.version_header;
  parse.version_macro = spec.version_macro;
  parse.abi_typedefs_headers = spec.abi_typedefs_headers;
  parse.abi_prototype = spec.conventions.abi_prototype;
  cubind::model::Model model = cubind::parse::parse_headers(parse);
  if (!spec.twin_headers.empty()) {
    // The other spelling of the library's enums, in a unit of its own: only
    // its enums are kept, for find_twin_enums to compare.
    cubind::parse::ParseOptions twins;
    twins.library = spec.library;
    twins.headers = spec.twin_headers;
    twins.prelude_headers = spec.prelude_headers;
    twins.include_dirs = o.include_dirs;
    twins.clang_args = spec.clang_args;
    model.twin_candidates = cubind::parse::parse_headers(twins).enums;
  }
  const auto parsed = clock::now();

  cubind::passes::run_passes(model, spec);

  if (o.dump_model) std::cout << cubind::model::to_json(model).dump(2) << "\n";
  if (o.report) std::cout << cubind::emit::coverage_report(model);
  if (!o.out.empty()) {
    const cubind::emit::EmitOptions emit{o.templates, o.out, CUBIND_VERSION, ""};
    const auto files = cubind::emit::render_library(model, spec, emit);
    for (const auto& path : cubind::emit::write_files(files, o.out)) std::cerr << "wrote " << path << "\n";
  }
  if (!o.fragments.empty()) {
    const cubind::emit::EmitOptions emit{o.templates, "", CUBIND_VERSION, o.fragments};
    const auto files = cubind::emit::render_library(model, spec, emit);
    for (const auto& path : cubind::emit::write_files(files, o.fragments)) std::cerr << "wrote " << path << "\n";
  }
  if (o.timing) {
    auto ms = [](auto d) { return std::chrono::duration_cast<std::chrono::milliseconds>(d).count(); };
    std::cerr << "parse " << ms(parsed - start) << " ms, total " << ms(clock::now() - start) << " ms\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cubind-gen " CUBIND_VERSION ": generates Cython bindings from CUDA headers"};
  Options o;
  app.add_option("--spec", o.spec, "bindings/<library>.toml")->required()->check(CLI::ExistingFile);
  app.add_option("-I,--include", o.include_dirs, "header search directory (repeatable)")->required();
  app.add_option("--templates", o.templates, "templates directory")->check(CLI::ExistingDirectory);
  app.add_option("--out", o.out, "write the generated package under this root");
  app.add_option("--fragments", o.fragments,
                 "write each template's renderings (nested fragments as <<template>>) under this folder");
  app.add_flag("--dump-model", o.dump_model, "print the model (after passes) as JSON");
  app.add_flag("--report", o.report, "print the coverage report: every function bound or skipped with a reason");
  app.add_flag("--timing", o.timing, "print how long parsing and generation took");
  app.set_version_flag("--version", CUBIND_VERSION);
  CLI11_PARSE(app, argc, argv);
  try {
    return run(o);
  } catch (const std::exception& e) {
    std::cerr << "cubind-gen: " << e.what() << "\n";
    return 1;
  }
}
