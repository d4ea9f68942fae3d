#!/usr/bin/env bash
# Regenerates every library in bindings/ from a toolkit's headers.
#   scripts/regenerate.sh [--cuda-include DIR]... [--report] [OUT_DIR]
# Default: the headers' directories found as setup.py finds them
# (_cubind/cuda_paths.py: CUDA_HOME, else nvcc, conda, wheels, the system),
# into the repository itself. --cuda-include (repeatable) names other headers, e.g. those of
# NVIDIA's pip wheels for another CUDA version (.../nvidia/cuda_runtime/include,
# .../nvidia/cuda_nvrtc/include, ...); generate those into a build directory,
# not over the committed files. --report prints each library's coverage.
source "$(dirname "$0")/_common.sh"
includes=()
report=()
while [ $# -gt 0 ]; do
  case "$1" in
    --cuda-include) includes+=(-I "$2"); shift 2 ;;
    --report) report=(--report); shift ;;
    -*) echo "regenerate.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
out=${1:-$ROOT}
gen=${CUBIND_GEN:-$ROOT/generator/build/cubind-gen}
[ -x "$gen" ] || { install_generator_deps; build_generator; }
if [ ${#includes[@]} -eq 0 ]; then
  found=$(cuda_include_args "$ROOT"/bindings/*.toml)
  mapfile -t includes <<<"$found"
fi
for spec in "$ROOT"/bindings/*.toml; do
  "$gen" --spec "$spec" "${includes[@]}" --templates "$ROOT/generator/templates" --out "$out" "${report[@]}"
done
