"""API.md "For library authors": an extension compiled against NVIDIA's own
``cuda.bindings.cydriver`` and ``cynvrtc`` declarations (the .pxd files of the
installed cuda-bindings wheel, as cuda.core and numba-cuda are built) imports
and runs on cubind under the hook (``CUBIND_CUDA_BINDINGS=1``): Cython finds
each function in cubind's ``cuda._cydriver``/``nvrtc._cynvrtc`` by name and
signature text, the call goes through cubind's loader, and a failure of the
loader reaches the consumer as NVIDIA's error value with the exception set,
which the consumer raises."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._toolkit import cuda_include, pythonpath

ROOT = Path(__file__).resolve().parents[2]

CONSUMER = """
# cython: language_level=3
from cuda.bindings cimport cydriver, cynvrtc


def driver_version():
    cdef int version = 0
    cdef cydriver.CUresult err
    with nogil:
        err = cydriver.cuDriverGetVersion(&version)
    return <int>err, version


def device_count():
    cdef int count = 0
    cdef cydriver.CUresult err = cydriver.cuInit(0)
    if err == cydriver.CUDA_SUCCESS:
        err = cydriver.cuDeviceGetCount(&count)
    return <int>err, count


def nvrtc_version():
    cdef int major = 0, minor = 0
    cdef cynvrtc.nvrtcResult err = cynvrtc.nvrtcVersion(&major, &minor)
    return <int>err, major, minor
"""


def _nvidia_pxd_root():
    """The site-packages holding NVIDIA's cuda/bindings/cydriver.pxd, or None."""
    for entry in sys.path:
        if (Path(entry or ".") / "cuda" / "bindings" / "cydriver.pxd").is_file():
            return Path(entry or ".")
    return None


@pytest.fixture(scope="module")
def consumer(tmp_path_factory):
    """The consumer, built against NVIDIA's .pxd files and CUDA's headers only."""
    pytest.importorskip("Cython")
    pxd_root = _nvidia_pxd_root()
    if pxd_root is None:
        pytest.skip("NVIDIA's cuda-bindings (its .pxd files) is not installed")
    if cuda_include() is None:
        pytest.skip("no CUDA headers")
    try:
        import cuda._cydriver  # noqa: F401
        import nvrtc._cynvrtc  # noqa: F401
    except ImportError:
        pytest.skip("cubind's C-level modules under NVIDIA's names are not built")
    build = tmp_path_factory.mktemp("cy_consumer")
    (build / "nv_consumer.pyx").write_text(CONSUMER)
    setup = textwrap.dedent(f"""
        from setuptools import Extension, setup
        from Cython.Build import cythonize
        setup(script_args=["build_ext", "--inplace", "-q"],
              ext_modules=cythonize([Extension("nv_consumer", ["nv_consumer.pyx"],
                                               include_dirs=[{str(cuda_include())!r}])],
                                    include_path=[{str(pxd_root)!r}], quiet=True))
    """)
    done = subprocess.run([sys.executable, "-c", setup], cwd=build, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=""), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    return build


def _run(consumer, code, **env):
    """``code`` after ``import nv_consumer`` in a fresh interpreter with the hook on."""
    full = dict(os.environ, PYTHONPATH=pythonpath(ROOT, consumer), CUBIND_CUDA_BINDINGS="1", **env)
    return subprocess.run([sys.executable, "-c", "import nv_consumer\n" + textwrap.dedent(code)], cwd=ROOT,
                          env=full, capture_output=True, text=True, timeout=120)


def test_consumer_compiled_against_nvidias_declarations_runs_on_cubind(consumer, fake_driver):
    done = _run(consumer, """
        import sys
        assert sys.modules["cuda.bindings.cydriver"].__name__ == "cuda._cydriver", sys.modules["cuda.bindings.cydriver"]
        print(*nv_consumer.driver_version(), *nv_consumer.device_count())
    """, CUBIND_CUDA_LIBRARY=str(fake_driver), FAKE_DEVICE_COUNT="2")
    assert done.returncode == 0, done.stderr
    err, version, err2, count = map(int, done.stdout.split())
    assert (err, err2, count) == (0, 0, 2) and version > 0


def test_consumer_calls_cubinds_nvrtc(consumer):
    done = _run(consumer, "print(*nv_consumer.nvrtc_version())")
    if done.returncode != 0 and "LibraryNotFoundError" in done.stderr:
        pytest.skip("no NVRTC library here")
    assert done.returncode == 0, done.stderr
    err, major, minor = map(int, done.stdout.split())
    assert err == 0 and major >= 12


def test_a_loader_failure_reaches_the_consumer_as_an_exception(consumer, tmp_path):
    """cubind's loader raises; the exported function returns NVIDIA's error
    value (CUDA_ERROR_NOT_FOUND), the one after which the consumer looks for
    the exception: it raises it, not a status."""
    done = _run(consumer, """
        try:
            nv_consumer.driver_version()
        except Exception as e:
            print(type(e).__name__)
        else:
            print("no exception")
    """, CUBIND_CUDA_LIBRARY=str(tmp_path / "libcuda.so.1"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["LibraryNotFoundError"], done.stdout + done.stderr
