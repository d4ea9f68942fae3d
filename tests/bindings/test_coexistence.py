"""cubind's ``cuda`` beside NVIDIA's ``cuda.*`` namespace packages and CuPy, in one process.

Each check runs in a fresh interpreter, in both import orders. What is not
installed is left out; what is installed (by its distribution metadata, so a
package that cubind makes unimportable still counts) must import and work.
"""

import importlib.metadata
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _installed(*distributions):
    for name in distributions:
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        return True
    return False


HAVE = {
    "bindings": _installed("cuda-bindings"),
    "pathfinder": _installed("cuda-pathfinder"),
    "cupy": _installed("cupy-cuda13x", "cupy-cuda12x", "cupy"),
}


def _have_cubind_cuda():
    try:
        import cuda
    except ImportError:
        return False
    return hasattr(cuda, "cuInit")


needs_cubind = pytest.mark.skipif(not _have_cubind_cuda(), reason="cubind's cuda driver package is not built")

IMPORTS = {
    "cubind": "import cuda",
    "bindings": "import cuda.bindings.driver",
    "pathfinder": "import cuda.pathfinder",
    "cupy": "import cupy",
}

CHECKS = """
import cuda
assert hasattr(cuda, "cuInit"), "cubind's cuda lost its driver API: " + repr(cuda)
from cuda import cuda as classic
assert classic.cuMemAlloc is cuda.cuMemAlloc
"""

GPU_CHECKS = """
import ctypes
R = cuda.CUresult
assert cuda.cuInit(0) == (R.CUDA_SUCCESS,)
err, dev = cuda.cuDeviceGet(0)
assert err == R.CUDA_SUCCESS
if "bindings" in parts:
    from cuda.bindings import driver as nv
    assert nv.cuInit(0)[0] == nv.CUresult.CUDA_SUCCESS
    err, nv_dev = nv.cuDeviceGet(0)
    assert int(nv_dev) == int(dev)
if "cupy" in parts:
    import cupy
    a = cupy.arange(10, dtype=cupy.int32)
    assert int(a.sum()) == 45
    # Our driver calls work in CuPy's (primary) context and see its memory.
    err, ctx = cuda.cuCtxGetCurrent()
    assert err == R.CUDA_SUCCESS and int(ctx) != 0
    host = (ctypes.c_int32 * 10)()
    assert cuda.cuMemcpyDtoH(host, a.data.ptr, 40) == (R.CUDA_SUCCESS,)
    assert list(host) == list(range(10))
    err, dptr = cuda.cuMemAlloc(40)
    assert err == R.CUDA_SUCCESS
    assert cuda.cuMemcpyDtoD(dptr, a.data.ptr, 40) == (R.CUDA_SUCCESS,)
    b = cupy.ndarray((10,), dtype=cupy.int32,
                     memptr=cupy.cuda.MemoryPointer(cupy.cuda.UnownedMemory(int(dptr), 40, None), 0))
    assert int((b * 2).sum()) == 90
    assert cuda.cuMemFree(dptr) == (R.CUDA_SUCCESS,)
if "pathfinder" in parts:
    import cuda.pathfinder
"""


def run_python(code):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env,
                          check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def _program(parts, cubind_first, gpu):
    order = ["cubind", *parts] if cubind_first else [*parts, "cubind"]
    lines = [f"parts = {parts!r}", *(IMPORTS[p] for p in order), textwrap.dedent(CHECKS)]
    if gpu:
        lines.append(textwrap.dedent(GPU_CHECKS))
    return "\n".join([*lines, "print('ok')"])


@needs_cubind
@pytest.mark.parametrize("cubind_first", [True, False], ids=["cubind_first", "cubind_last"])
def test_namespace_packages_import_beside_cubind(cubind_first):
    # No GPU needed: importing never touches a driver (CuPy's import may, so it is not here).
    parts = [p for p in ("bindings", "pathfinder") if HAVE[p]]
    if not parts:
        pytest.skip("neither cuda-bindings nor cuda-pathfinder is installed")
    assert run_python(_program(parts, cubind_first, gpu=False)).strip() == "ok"


@needs_cubind
@pytest.mark.gpu
@pytest.mark.foreign_code("NVIDIA's cuda.bindings asks the driver for entry points at versions it refuses "
                          "(cuGetProcAddress_v2 INVALID_VALUE from its cydriver), which the sanitizer reports")
@pytest.mark.parametrize("cubind_first", [True, False], ids=["cubind_first", "cubind_last"])
def test_cubind_cuda_bindings_cupy_in_one_process(cubind_first):
    if not (HAVE["bindings"] or HAVE["cupy"]):
        pytest.skip("neither cuda-bindings nor cupy is installed")
    parts = [p for p in ("bindings", "cupy", "pathfinder") if HAVE[p]]
    assert run_python(_program(parts, cubind_first, gpu=True)).strip() == "ok"
