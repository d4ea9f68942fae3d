#!/usr/bin/env bash
# Installs everything, builds the generator and the package, runs every test:
# the generator's ctest suite (units and golden cases), then pytest (bindings,
# loader, drift of the generated files against a fresh regeneration).
source "$(dirname "$0")/_common.sh"
install_generator_deps
install_python_deps
build_generator
ctest --test-dir "$ROOT/generator/build" --output-on-failure
build_package
cd "$ROOT"
"$PYTHON" -m ruff check .
CUBIND_GEN="$ROOT/generator/build/cubind-gen" "$PYTHON" -m pytest -ra tests "$@"
