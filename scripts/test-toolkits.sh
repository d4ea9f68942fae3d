#!/usr/bin/env bash
# Regenerates, builds and tests the bindings for every toolkit named in
# scripts/toolkits/ (CUDA 12.9 and the newest 13.x on the package index),
# one after the other with scripts/toolkit-build.sh; then prints each one's
# coverage and time. CI runs it after scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
# Compiled without optimisation: these builds check what each toolkit's
# headers make (generated, compiled, tested), and gcc takes a fifth of -O2's
# time on cuda/_driver.c (16 against 76 s). The optimised build is the one
# scripts/test.sh tests and the wheels ship. CUBIND_OPT set overrides.
export CUBIND_OPT=${CUBIND_OPT:--O0}
summary=()
for list in scripts/toolkits/*.txt; do
  name=$(basename "$list" .txt)
  start=$SECONDS
  bash scripts/toolkit-build.sh "$name"
  summary+=("$name ($((SECONDS - start)) s): $(grep -h '^total: ' ".toolkits/$name/tree/REPORT.txt" | tr '\n' ';')")
done
# The wheels as they install (not gathered into one tree): the package's build
# finds every header there and nowhere else (tests/packaging/test_build_layouts.py).
sites=$(printf '%s:' "$PWD"/.toolkits/*/site)
CUBIND_LAYOUT_SITES=${sites%:} "${CUBIND_VENV:-.venv}/bin/python" -m pytest -q -p no:cacheprovider tests/packaging/test_build_layouts.py
printf '\n== toolkits\n'
printf '%s\n' "${summary[@]}"
