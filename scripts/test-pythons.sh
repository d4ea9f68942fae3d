#!/usr/bin/env bash
# Builds the package and runs the suite on the oldest and the newest CPython
# that pyproject.toml claims (requires-python and its classifiers), each in a
# virtual environment of its own (.venv-py3.X/), so that the claimed range is
# the tested one. CI runs it after scripts/test.sh, which tests python3 (3.11).
#   scripts/test-pythons.sh [PYTEST ARGS...]
# The interpreters come from pyenv (PYENV_ROOT, default ~/.pyenv: the newest
# patch release installed of each minor version), or CUBIND_PYTHONS="/path/python3.10
# /path/python3.13" names them. A missing one fails: the range would be untested.
# The compiled modules are tagged per Python version (.cpython-310-...so) and
# their objects go to build/temp.*-cpython-3X, so they coexist in the tree; the
# C that Cython writes (build/cython-src) is shared: current for every Python
# (setup.py's _cythonize), it is not made again.
# The generator (built by scripts/test.sh) is reused.
# The whole suite runs on each (the wheel and sdist tests included: they take
# half a minute, and the wheel is built per Python).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
# Compiled without optimisation, as scripts/test-toolkits.sh's builds: what
# differs per Python is the interpreter's API, not gcc's optimiser, and -O0
# takes a fifth of -O2's time on the large modules. CUBIND_OPT set overrides.
export CUBIND_OPT=${CUBIND_OPT:--O0}
OLDEST=3.10
NEWEST=3.13

pyenv_python() {  # pyenv_python 3.10: the newest 3.10.x pyenv has, or nothing
  local root=${PYENV_ROOT:-$HOME/.pyenv} dir
  dir=$(ls -d "$root"/versions/"$1".* 2>/dev/null | sort -V | tail -n 1)
  [ -n "$dir" ] && [ -x "$dir/bin/python" ] && echo "$dir/bin/python"
}

if [ -n "${CUBIND_PYTHONS:-}" ]; then
  read -r -a pythons <<<"$CUBIND_PYTHONS"
else
  pythons=()
  for v in "$OLDEST" "$NEWEST"; do
    p=$(pyenv_python "$v") || { echo "test-pythons.sh: no CPython $v under ${PYENV_ROOT:-$HOME/.pyenv}/versions (pyenv install $v, or set CUBIND_PYTHONS)" >&2; exit 1; }
    pythons+=("$p")
  done
fi

summary=()
failed=0
for python in "${pythons[@]}"; do
  version=$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  start=$SECONDS
  printf '\n== CPython %s (%s)\n' "$version" "$python"
  # Each runs to its end: one failing Python does not hide the other's result.
  status=passed
  PYTHON=$python CUBIND_VENV=$ROOT/.venv-py$version bash -c '
    source scripts/_common.sh
    install_build_deps
    install_python_deps test
    build_package
    cd "$ROOT"
    step "pytest ($("$PY" -V))"
    CUBIND_GEN="$ROOT/generator/build/cubind-gen" "$PY" -m pytest -q -rfE tests "$@"
  ' test-pythons "$@" || { status=FAILED; failed=1; }
  summary+=("CPython $version: $status ($((SECONDS - start)) s)")
done
printf '\n== Pythons\n'
printf '%s\n' "${summary[@]}"
exit $failed
