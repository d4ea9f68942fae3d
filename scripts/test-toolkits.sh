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
printf '\n== toolkits\n'
printf '%s\n' "${summary[@]}"
