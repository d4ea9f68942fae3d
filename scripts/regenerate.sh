#!/usr/bin/env bash
# Regenerates every library in bindings/ from the installed toolkit's headers.
#   scripts/regenerate.sh [OUT_DIR]     (default: the repository itself)
source "$(dirname "$0")/_common.sh"
out=${1:-$ROOT}
gen=${CUBIND_GEN:-$ROOT/generator/build/cubind-gen}
[ -x "$gen" ] || { install_generator_deps; build_generator; }
include=$(cuda_include)
for spec in "$ROOT"/bindings/*.toml; do
  "$gen" --spec "$spec" -I "$include" --templates "$ROOT/templates" --out "$out"
done
