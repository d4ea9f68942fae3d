#!/usr/bin/env bash
# Makes the project's virtual environment (.venv/) with what the package
# needs, builds the package in place, and runs the saxpy example with it.
# Nothing is installed into the Python that made the venv; Debian packages
# (a C compiler, Python's headers and venv) only when missing, named first.
source "$(dirname "$0")/_common.sh"
install_build_deps
install_python_deps build
build_package
cd "$ROOT"
step "examples/saxpy.py"
exec "$PY" examples/saxpy.py "$@"
