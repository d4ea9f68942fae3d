#!/usr/bin/env bash
# Installs what is missing, builds the generator and the package, runs every
# test: the generator's ctest suite (units and golden cases), ruff, then
# pytest (bindings, loader, packaging, drift of the generated files against a
# fresh regeneration). Python packages go into the project's .venv/; Debian
# packages only when missing, named first. The package build is the one
# scripts/run-example.sh makes: unchanged modules are not compiled again.
source "$(dirname "$0")/_common.sh"
install_generator_deps
install_build_deps
install_python_deps test
build_generator
step "generator tests (ctest)"
ctest --test-dir "$ROOT/generator/build" --output-on-failure
build_package
cd "$ROOT"
step "ruff"
"$PY" -m ruff check .
step "pytest"
CUBIND_GEN="$ROOT/generator/build/cubind-gen" "$PY" -m pytest -rfE tests "$@"
