"""API.md "For library authors": another Cython extension cimports cubind's
C-level driver functions and handle classes. This builds
tests/packaging/cimport_ext/consumer.pyx against the package's .pxd files and runs it:
without a GPU, a status check (the missing driver is a clear error, the fake
driver answers); with one, a kernel launched entirely at C level."""

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._toolkit import cuda_include, pythonpath, without_platform_headers

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "tests" / "packaging" / "cimport_ext" / "consumer.pyx"

FILL_SRC = r"""
extern "C" __global__ void fill(unsigned int *out, unsigned int value, unsigned int n)
{
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value + i;
}
"""


@pytest.fixture(scope="module", params=["system_headers", "no_platform_headers"])
def consumer_dir(request, tmp_path_factory):
    """The consumer built as docs/bindings.md's "For library authors" says: the .pxd
    files from the package, ``include_dirs=cubind.get_include()``; also on a
    system without EGL's, GL's and VDPAU's headers (hidden here: CI has them),
    as on most servers and NVIDIA's standard toolkit layout."""
    pytest.importorskip("Cython")
    try:
        import cuda._driver  # noqa: F401
    except ImportError:
        pytest.skip("cubind's cuda package is not built")
    build = tmp_path_factory.mktemp("consumer")
    hidden = request.param == "no_platform_headers"
    flags = without_platform_headers(tmp_path_factory.mktemp("sysroot")) if hidden else []
    shutil.copy(SOURCE, build / "consumer.pyx")
    setup = textwrap.dedent(f"""
        import cubind
        from setuptools import Extension, setup
        from Cython.Build import cythonize
        setup(script_args=["build_ext", "--inplace", "-q"],
              ext_modules=cythonize([Extension("consumer", ["consumer.pyx"], include_dirs=cubind.get_include(),
                                               extra_compile_args={flags!r})],
                                    include_path=[{str(ROOT)!r}], quiet=True))
    """)
    done = subprocess.run([sys.executable, "-c", setup], cwd=build, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=pythonpath(ROOT)))
    assert done.returncode == 0, done.stdout + done.stderr
    return build


def test_get_include_names_the_cuda_headers_and_the_platform_stand_ins():
    import cubind
    from _cubind import cuda_paths

    dirs = cubind.get_include()
    assert dirs[-1] == cuda_paths.FALLBACK_INCLUDE and os.path.isfile(os.path.join(dirs[-1], "EGL", "egl.h"))
    assert any(os.path.isfile(os.path.join(d, "cuda.h")) for d in dirs)
    assert str(cuda_include()) in dirs   # the headers the package was built from


def test_get_include_knows_every_generated_package():
    import re

    from _cubind import cuda_paths

    # Each spec's [library] name is its package (the first name = line of the file).
    made = {re.search(r'^name\s*=\s*"([^"]+)"', p.read_text(), re.M).group(1).split(".")[0]
            for p in (ROOT / "bindings").glob("*.toml")}
    assert set(cuda_paths.GENERATED_PACKAGES) == made


def run(consumer_dir, body, **env):
    full = dict(os.environ, PYTHONPATH=pythonpath(consumer_dir, ROOT), **env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(body)], env=full, cwd=consumer_dir,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_cimported_call_without_driver_raises_the_loader_error(consumer_dir, tmp_path):
    out = run(consumer_dir, """
        import consumer
        from _cubind.loader import LibraryNotFoundError
        try:
            consumer.driver_version()
        except LibraryNotFoundError as exc:
            print("raised:", exc)
    """, CUBIND_CUDA_LIBRARY=str(tmp_path / "no-such-libcuda.so.1"))
    assert "raised:" in out and "CUBIND_CUDA_LIBRARY" in out


def test_cimported_call_reaches_the_driver_through_cubinds_loader(consumer_dir, fake_driver):
    lib = fake_driver
    out = run(consumer_dir, """
        import ctypes, consumer, cuda
        print(consumer.driver_version()[0])
        import os
        fake = ctypes.CDLL(os.environ["CUBIND_CUDA_LIBRARY"])
        count = ctypes.c_int.in_dll(fake, "fake_request_count").value
        print(count)
        print(consumer.stream_value(cuda.CUstream(0x1234)), int(consumer.as_handle(0x40)))
    """, CUBIND_CUDA_LIBRARY=str(lib))
    status, requests, values = out.split("\n")[:3]
    assert status == "0"
    assert int(requests) >= 1   # resolved through cuGetProcAddress, like the Python layer
    assert values == f"{0x1234} {0x40}"


@pytest.mark.gpu
def test_cimported_kernel_launch(consumer_dir, device_arch):
    out = run(consumer_dir, """
        import os, consumer, nvrtc
        from tests._helpers import ok
        prog = ok(nvrtc.nvrtcCreateProgram(os.environ["FILL_SRC"].encode(), b"fill.cu", 0, None, None))
        ok(nvrtc.nvrtcCompileProgram(prog, 1, [f"--gpu-architecture=compute_{os.environ['ARCH']}".encode()]))
        ptx = bytearray(ok(nvrtc.nvrtcGetPTXSize(prog)))
        ok(nvrtc.nvrtcGetPTX(prog, ptx))
        print(consumer.fill(bytes(ptx), 100, 7))
    """, FILL_SRC=FILL_SRC, ARCH=str(device_arch))
    assert out.strip() == str((0, [7 + i for i in range(100)]))
