"""API.md "For library authors": an extension built from source with
``from cuda.bindings cimport cydriver`` (and the other C-level modules of
NVIDIA's that a spec's ``[compat]`` serves) compiles against cubind's .pxd
files, found through ``cubind.get_include()`` as Cython's include path, and
runs on cubind under the hook (``CUBIND_CUDA_BINDINGS=1``).

The consumer takes the address of every function each .pxd declares: at import,
Cython looks each one up in the serving module's ``__pyx_capi__`` by its name
and the signature text it spelled from the .pxd, so any declaration whose text
is not the capsule's (NVIDIA's: tests/bindings/test_cy_capsules.py) fails the
import. Functions only cubind's modules have are among them, which NVIDIA's
.pxd files could not have compiled."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._helpers import compat_modules
from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]
DECLARED = re.compile(r"^cdef \S[^(]* (\w+)\(", re.M)


def _served():
    """{NVIDIA's module: the names its .pxd declares}, for each built serving module."""
    import cubind

    pxd_dir = Path(cubind.get_include()[0]) / "cuda" / "bindings"
    found = {}
    for nvidia, ours in compat_modules().items():
        try:
            __import__(ours)
        except ImportError:
            continue  # its library's headers were missing at the build
        found[nvidia] = DECLARED.findall((pxd_dir / f"{nvidia}.pxd").read_text())
    return found


def _consumer_source(served):
    lines = ["# cython: language_level=3", f"from cuda.bindings cimport {', '.join(served)}", "",
             "",
             "def addresses():",
             "    return {"]
    for module, names in served.items():
        lines += [f"        '{module}.{name}': <size_t><void*>{module}.{name}," for name in names]
    lines += ["    }", "", "",
              "def driver_version():",
              "    cdef int version = 0",
              "    cdef cydriver.CUresult err",
              "    with nogil:",
              "        err = cydriver.cuDriverGetVersion(&version)",
              "    return <int>err, version", ""]
    return "\n".join(lines)


@pytest.fixture(scope="module")
def consumer(tmp_path_factory):
    """The consumer, compiled without optimisation or debug information: it
    is 3 MB of C over every header, which -O3 -g takes a minute to compile."""
    pytest.importorskip("Cython")
    served = _served()
    if "cydriver" not in served:
        pytest.skip("cubind's cuda._cydriver is not built")
    build = tmp_path_factory.mktemp("cy_source_consumer")
    (build / "src_consumer.pyx").write_text(_consumer_source(served))
    setup = textwrap.dedent("""
        import cubind
        from setuptools import Extension, setup
        from Cython.Build import cythonize
        setup(script_args=["build_ext", "--inplace", "-q"],
              ext_modules=cythonize([Extension("src_consumer", ["src_consumer.pyx"],
                                               include_dirs=cubind.get_include(),
                                               extra_compile_args=["-O0", "-g0"])],
                                    include_path=cubind.get_include(), quiet=True))
    """)
    done = subprocess.run([sys.executable, "-c", setup], cwd=build, capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=pythonpath(ROOT)), timeout=900)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    return build, served


def _run(build, code, **env):
    full = dict(os.environ, PYTHONPATH=pythonpath(ROOT, build), CUBIND_CUDA_BINDINGS="1", **env)
    return subprocess.run([sys.executable, "-c", "import src_consumer\n" + textwrap.dedent(code)], cwd=ROOT,
                          env=full, capture_output=True, text=True, timeout=120)


def test_get_include_leads_with_nvidias_module_names():
    import cubind
    from _cubind import cuda_paths

    first = Path(cubind.get_include()[0])
    assert str(first) == cuda_paths.CIMPORT_INCLUDE
    for nvidia in compat_modules():
        assert (first / "cuda" / "bindings" / f"{nvidia}.pxd").is_file(), nvidia


def test_every_declared_function_imports_from_cubind(consumer):
    build, served = consumer
    done = _run(build, "import json; print(json.dumps(src_consumer.addresses()))")
    assert done.returncode == 0, done.stderr
    addresses = __import__("json").loads(done.stdout.strip().splitlines()[-1])
    expected = {f"{module}.{name}" for module, names in served.items() for name in names}
    assert set(addresses) == expected and all(addresses.values())


def test_the_consumer_calls_cubinds_driver(consumer, fake_driver):
    build, _ = consumer
    done = _run(build, "print(*src_consumer.driver_version())", CUBIND_CUDA_LIBRARY=str(fake_driver))
    assert done.returncode == 0, done.stderr
    err, version = map(int, done.stdout.split())
    assert err == 0 and version > 0
