# Shared by the scripts: where things are, and the installs they need.
# Python packages go into a project-local virtual environment (.venv/, or
# CUBIND_VENV), never into the Python that creates it (PYTHON, default
# python3). Debian packages are installed only when missing, named first.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASE_PYTHON=${PYTHON:-python3}
VENV=${CUBIND_VENV:-$ROOT/.venv}
PY=$VENV/bin/python

step() { printf '\n== %s\n' "$*"; }

# RAPIDS' ucxx and what it loads, installed without its declared dependencies
# (see install_deps): for the tests here, and carried to a GPU machine by
# scripts/gpu-extras.sh.
UCX_WHEELS=("ucxx-cu13==0.52.*" "libucxx-cu13==0.52.*" "libucx-cu13>=1.19,<1.22" "librmm-cu13==26.10.*"
            "rapids-logger==0.3.*")

# cuda_include_args SPEC...: -I options for the headers the specs parse (and
# what those include), from the one CUDA search (_cubind/cuda_paths.py) that
# setup.py and the loader use too.
cuda_include_args() {
  local specs=() spec dirs
  for spec in "$@"; do specs+=(--spec "$spec"); done
  # The venv's Python where there is one: its site-packages hold the wheels of
  # the libraries a toolkit may lack (nvidia-nvfatbin), which the search adds.
  local py=$BASE_PYTHON
  [ -x "$PY" ] && py=$PY
  dirs=$("$py" "$ROOT/_cubind/cuda_paths.py" include-dirs "${specs[@]}") || return 1
  while IFS= read -r dir; do printf -- '-I\n%s\n' "$dir"; done <<<"$dirs"
}

# apt_install WHY PACKAGE...: installs the Debian packages not installed yet,
# saying which first, with apt's own output.
apt_install() {
  local why=$1; shift
  local missing=() p
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  step "installing: ${missing[*]} (Debian packages, $why)"
  command -v apt-get >/dev/null || { echo "apt-get not found: install ${missing[*]} (or their equivalents) yourself" >&2; return 1; }
  local sudo=()
  [ "$(id -u)" -ne 0 ] && sudo=(sudo)
  "${sudo[@]}" apt-get update
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
}

# What building the package needs from the system: a C compiler and Python's
# headers. Checked by what they provide (a Python that is not Debian's brings
# its own headers), the Debian packages asked for only when absent.
install_build_deps() {
  local need=()
  command -v "${CC:-cc}" >/dev/null || need+=(gcc)
  "$BASE_PYTHON" -c 'import os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' || need+=("$(python_deb)-dev")
  [ ${#need[@]} -eq 0 ] || apt_install "to build the package" "${need[@]}"
}

python_deb() {  # Debian's name of BASE_PYTHON's version: python3.11
  "$BASE_PYTHON" -c 'import sys; print("python%d.%d" % sys.version_info[:2])'
}

# The generator's build requirements (Debian packages), and libegl-dev,
# libgl-dev and libvdpau-dev: the EGL, GL and VDPAU headers the CUDA interop
# headers include, which the generator parses (the package's build does
# without: setup.py's PLATFORM_FALLBACK).
install_generator_deps() {
  apt_install "to build the generator" cmake ninja-build g++ libclang-dev libkainjow-mustache-dev nlohmann-json3-dev \
    libcli11-dev libtomlplusplus-dev libgtest-dev libegl-dev libgl-dev libvdpau-dev
}

# The virtual environment, made on first use; then the Python packages a step
# needs, from PyPI (pip says "already satisfied" for what is there).
make_venv() {
  [ -x "$PY" ] && return 0
  [ -e "$VENV" ] && { echo "$VENV exists but is not a virtual environment: move it away" >&2; return 1; }
  step "creating the virtual environment $VENV (from $(command -v "$BASE_PYTHON"))"
  if ! "$BASE_PYTHON" -m venv "$VENV"; then
    # Debian's Python makes venvs with pip only with its -venv package.
    rm -rf "$VENV"
    apt_install "for python -m venv" "$(python_deb)-venv"
    "$BASE_PYTHON" -m venv "$VENV"
  fi
}

install_python_deps() {  # install_python_deps build|test
  make_venv
  # tomli: setup.py reads bindings/*.toml, with Python's tomllib from 3.11 only.
  local pkgs=("setuptools>=77" "cython>=3.0" numpy 'tomli>=1.1; python_version < "3.11"')
  # cuda-core: tests/bindings/test_cuda_core.py (it requires numpy only); cuda-bindings:
  # the names tests/bindings/test_classic_names.py compares cubind's modules with.
  [ "${1:-build}" = test ] && pkgs+=(pytest "ruff==0.17.6" build mypy pyyaml "cuda-core==0.3.2" "cuda-bindings==13.0.3")
  # The headers and libraries of the CUDA libraries a toolkit may lack, as
  # NVIDIA's wheels (the 13.x of the toolkit CI builds against, 13.0): nvFatbin,
  # NVML's header (its library comes with the driver), cuFile (its own version:
  # 1.15 is CUDA 13.0's).
  # Regenerating reads their headers; without them the build leaves their
  # packages out (setup.py, [build] optional in their specs). The same for
  # UCX's (bindings/ucx.toml; a py3 wheel, for every Python, where ucxx
  # below needs 3.11): the ucx package and cubind.graph's pump over it.
  [ "${1:-build}" = test ] && pkgs+=("nvidia-nvfatbin==13.0.*" "nvidia-nvml-dev==13.0.*" "nvidia-cufile==1.15.*"
                                     "libucx-cu13>=1.19,<1.22")
  step "Python packages into $VENV: ${pkgs[*]}"
  "$PY" -m pip install --disable-pip-version-check "${pkgs[@]}"
  if [ "${1:-build}" = test ]; then
    # The released consumers of NVIDIA's bindings whose names cubind.compat serves
    # (tests/bindings/test_compat_consumers.py reads them from these files), into a
    # directory of their own so that cuda-core 0.3.2 above stays what the suite
    # imports; without their dependencies (numba-cuda's numba wants numpy < 2.4:
    # running it is for a venv of its own) but cuda-core's backport of StrEnum,
    # which it imports before Python 3.11 (numpy and cuda-pathfinder are here).
    step "consumers of cuda.bindings into $VENV/consumers: cuda-core 1.2.x, numba-cuda 0.30.x (--no-deps)"
    "$PY" -m pip install --disable-pip-version-check --no-deps --upgrade --target "$VENV/consumers" \
      "cuda-core==1.2.*" "numba-cuda==0.30.*" 'backports.strenum; python_version < "3.11"'
  fi
  if [ "${1:-build}" = test ] && "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then
    # RAPIDS' ucxx, for cubind.graph's UCX queues (tests/graph/test_ucx*.py; its wheels are
    # cp311-abi3). Without its declared dependencies: cuda-core stays at the version pinned
    # above (ucxx imports it only to make a CUDA context current on a GPU) and rmm's Python
    # package is not imported by ucxx; libucxx loads librmm and rapids-logger. About 52 MB.
    step "UCX for cubind.graph into $VENV: ${UCX_WHEELS[*]}"
    "$PY" -m pip install --disable-pip-version-check --no-deps "${UCX_WHEELS[@]}"
  fi
}

build_generator() {
  step "building the generator (generator/build)"
  cmake -S "$ROOT/generator" -B "$ROOT/generator/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$ROOT/generator/build"
}

# Builds the extension modules in place from the committed generated sources:
# the .so files land beside their .pyx and the objects stay in build/, so a
# second run compiles only what changed. The source tree is put on the
# venv's path with a .pth file (what an editable install does, without pip
# rebuilding every module in a temporary directory each time).
build_package() {
  step "building the package in place (setup.py build_ext --inplace; about 6 min on 2 cores the first time, then only what changed)"
  (cd "$ROOT" && "$PY" setup.py -q build_ext --inplace)
  local site
  site=$("$PY" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  printf '# cubind built in place by scripts/ (setup.py build_ext --inplace)\n%s\n' "$ROOT" >"$site/cubind-inplace.pth"
}
