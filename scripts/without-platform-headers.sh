#!/usr/bin/env bash
# Runs a command as on a machine without the EGL, GL and VDPAU development
# headers (libegl-dev, libgl-dev, libvdpau-dev: most servers lack them, and
# NVIDIA's toolkit does not ship them), where this one has them:
#   scripts/without-platform-headers.sh scripts/run-example.sh
# C compiles under it (CFLAGS, which setuptools and pip's builds add) see the
# compiler's own include directories mirrored without EGL/, KHR/, GL/ and
# vdpau/ (tests/_toolkit.py's without_platform_headers, the suite's way), so
# the package must build with cubind's stand-ins (_cubind/platform_fallback).
# CI runs the README's first command this way before scripts/test.sh
# installs those headers for the generator.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG...]" >&2; exit 2; }
mirror=$(mktemp -d)
trap 'rm -rf "$mirror"' EXIT
flags=$(cd "$ROOT" && "${PYTHON:-python3}" -c '
import pathlib, sys
from tests._toolkit import without_platform_headers
print(" ".join(without_platform_headers(pathlib.Path(sys.argv[1]), sys.argv[2])))' "$mirror" "${CC:-cc}")
echo "== without the platform headers: CFLAGS+=$flags"
CFLAGS="${CFLAGS:-} $flags" "$@"
