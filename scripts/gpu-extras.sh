#!/usr/bin/env bash
# What a GPU machine lacks for the UCX tests and rows, made here and carried
# there beside the built tree (docs/building.md, "Checking on a GPU machine"):
#   OUT/ucx.txz     RAPIDS' ucxx and the libraries it loads (scripts/_common.sh's
#                   UCX_WHEELS), installed for PYTHON's version without their
#                   declared dependencies, each library once (pip writes every
#                   soname as a copy: 196 MB; here 78 MB, about 10 MB packed)
#   OUT/ucx_floor   bench/ucx_floor.c built against that libucx (UCX's own floor
#                   for bench/graph_messages.py --ucx-floor)
#   OUT/holoscan.txz  with --holoscan WHEELS_DIR: Holoscan's wheels there (and
#                   cloudpickle, wheel-axle-runtime) installed, the links its
#                   wheel lists made, its operators left out (the bench uses
#                   none): Holoscan's rows beside ours
#   OUT/env.sh      sourced there: unpacks both into /tmp and sets PYTHONPATH
#                   and UCX_FLOOR
#
#   PYTHON=python3.12 scripts/gpu-extras.sh OUT [--holoscan WHEELS_DIR]
# On the GPU machine, from the tree's root: source OUT/env.sh, then
# scripts/gpu-check.sh (the UCX tests run where ucxx imports) or the bench.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
OUT=${1:?usage: scripts/gpu-extras.sh OUT [--holoscan WHEELS_DIR]}
shift
HOLOSCAN=""
while [ $# -gt 0 ]; do
  case "$1" in
    --holoscan) HOLOSCAN="$2"; shift 2 ;;
    *) echo "gpu-extras.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
version=$("$BASE_PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')

# dedupe DIR: pip installs a library's soname links as copies; each becomes a
# link to the longest-named copy of the same bytes in its folder.
dedupe() {
  "$BASE_PYTHON" - "$1" <<'EOF'
import collections, hashlib, os, sys
groups = collections.defaultdict(list)
for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        path = os.path.join(root, name)
        if ".so" in name and not os.path.islink(path):
            with open(path, "rb") as f:
                groups[(root, hashlib.sha256(f.read()).hexdigest())].append(name)
for (root, _), names in groups.items():
    keep = max(names, key=len)
    for name in names:
        if name != keep:
            os.remove(os.path.join(root, name))
            os.symlink(keep, os.path.join(root, name))
EOF
}

step "UCX for Python $version: ${UCX_WHEELS[*]}"
"$BASE_PYTHON" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  --python-version "$version" -d "$WORK/wheels" "${UCX_WHEELS[@]}"
"$BASE_PYTHON" -m pip install -q --disable-pip-version-check --no-deps --target "$WORK/ucx" \
  --python-version "$version" --only-binary=:all: "$WORK"/wheels/*.whl
# Left out: UCX's perftest (30 MB), demos and static libraries; nothing here uses them.
find "$WORK/ucx" \( -name '*perftest*' -o -name '*demo*' -o -name '*.a' \) -prune -exec rm -rf {} +
dedupe "$WORK/ucx"
tar cJf "$OUT/ucx.txz" -C "$WORK" ucx

step "bench/ucx_floor.c against that libucx"
UCX=$WORK/ucx/libucx
# cuda.h from the one CUDA search (a toolkit, conda, or NVIDIA's wheels)
mapfile -t cuda_includes < <(cuda_include_args "$ROOT/bindings/driver.toml")
cc -O2 -o "$OUT/ucx_floor" "$ROOT/bench/ucx_floor.c" -I"$UCX/include" -L"$UCX/lib" -lucp -lucs \
  "${cuda_includes[@]}" -ldl

if [ -n "$HOLOSCAN" ]; then
  step "Holoscan from $HOLOSCAN"
  "$BASE_PYTHON" -m pip install -q --disable-pip-version-check --no-deps --target "$WORK/holoscan" \
    --python-version "$version" --only-binary=:all: "$HOLOSCAN"/*.whl
  # Its wheel lists the library links it needs (wheel-axle): made here.
  for links in "$WORK"/holoscan/holoscan*.dist-info/symlinks.txt; do
    while IFS=, read -r path target _; do
      path=${path#*.data/purelib/}
      [ -e "$WORK/holoscan/$path" ] || ln -s "$target" "$WORK/holoscan/$path"
    done <"$links"
  done
  rm -rf "$WORK/holoscan/holoscan/operators"
  find "$WORK/holoscan/holoscan/lib" \( -name 'libholoscan_op_*' -o -name 'libholoscan_viz*' \
    -o -name 'libholoscan_infer*' -o -name 'libholoinfer*' \) -exec rm -f {} +
  tar cJf "$OUT/holoscan.txz" -C "$WORK" holoscan
fi

cat >"$OUT/env.sh" <<EOF
# Sourced on the GPU machine from the tree's root (scripts/gpu-extras.sh made it).
_extras=\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)
tar xJf "\$_extras/ucx.txz" -C /tmp
[ -f "\$_extras/holoscan.txz" ] && tar xJf "\$_extras/holoscan.txz" -C /tmp
# Holoscan and ucxx load different UCX and RMM builds: a process imports one
# of them (bench/graph_messages.py runs each in processes of its own).
export PYTHONPATH=\$PWD\${PYTHONPATH:+:\$PYTHONPATH}:/tmp/holoscan:/tmp/ucx
# ucx_floor finds its UCX through this wrapper, leaving the others' search alone.
printf '#!/bin/sh\nLD_LIBRARY_PATH=/tmp/ucx/libucx/lib exec %s "\$@"\n' "\$_extras/ucx_floor" >/tmp/ucx_floor.sh
chmod +x /tmp/ucx_floor.sh
export UCX_FLOOR=/tmp/ucx_floor.sh
EOF
step "made in $OUT: $(cd "$OUT" && ls | tr '\n' ' ')($(du -sh "$OUT" | cut -f1))"
