#!/usr/bin/env bash
# Regenerates, builds and tests the bindings for every toolkit named in
# scripts/toolkits/ (CUDA 12.9 and the newest 13.x on the package index),
# one after the other with scripts/toolkit-build.sh; then prints each one's
# coverage and time. CI runs it after scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
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
