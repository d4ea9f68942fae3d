# Shared by the scripts: where things are, and the installs they need.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PYTHON=${PYTHON:-python3}

cuda_include() {
  local root
  for root in "${CUDA_HOME:-}" "${CUDA_PATH:-}" "$(dirname "$(dirname "$(readlink -f "$(command -v nvcc 2>/dev/null || echo /nonexistent/bin/nvcc)")")")" /usr/local/cuda; do
    [ -n "$root" ] && [ -f "$root/include/cuda.h" ] && { echo "$root/include"; return; }
  done
  echo "CUDA headers not found: set CUDA_HOME" >&2
  return 1
}

# Python build and test requirements (PyPI).
install_python_deps() {
  "$PYTHON" -m pip install -q --disable-pip-version-check "setuptools>=64" wheel "cython>=3.0" numpy pytest ruff
}

# The generator's build requirements (Debian packages); apt only when missing.
install_generator_deps() {
  local pkgs=(cmake ninja-build g++ libclang-dev libkainjow-mustache-dev nlohmann-json3-dev libcli11-dev
              libtomlplusplus-dev libgtest-dev)
  local missing=()
  for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    local sudo=""; [ "$(id -u)" -ne 0 ] && sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

build_generator() {
  cmake -S "$ROOT/generator" -B "$ROOT/generator/build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$ROOT/generator/build"
}

# Builds the extension modules in place from the committed generated sources.
build_package() {
  "$PYTHON" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps -e "$ROOT"
}
