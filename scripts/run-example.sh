#!/usr/bin/env bash
# Installs what the package needs, builds it, and runs the saxpy example.
source "$(dirname "$0")/_common.sh"
install_python_deps
build_package
cd "$ROOT"
exec "$PYTHON" examples/saxpy.py "$@"
