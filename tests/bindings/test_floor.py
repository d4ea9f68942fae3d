"""The floor (``_cubind``, the generated packages' runtime) is below
everything: importing a generated package imports no module of cubind, in a
fresh interpreter, with or without CUBIND_CUDA_BINDINGS; and importing cubind
imports nothing else (ARCHITECTURE.md, "The packages")."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]


def run(code, env=None):
    full = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    full.update(PYTHONPATH=pythonpath(ROOT), **(env or {}))
    done = subprocess.run([sys.executable, "-c", code], env=full, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


LOADED = textwrap.dedent("""
    import json, sys
    def loaded(prefix):
        return sorted(m for m in sys.modules if m == prefix or m.startswith(prefix + "."))
""")


@pytest.mark.parametrize("package", ["cuda", "cuda.cudart", "nvrtc", "nvvm", "nvjitlink", "nvfatbin", "nvml", "cufile"])
@pytest.mark.parametrize("requested", ["", "1"])
def test_a_generated_package_imports_nothing_of_cubind(package, requested):
    got = run(LOADED + textwrap.dedent(f"""
        import {package}
        print(json.dumps([loaded("cubind"), "_cubind.loader" in sys.modules]))
    """), env={"CUBIND_CUDA_BINDINGS": requested})
    assert got == [[], True]


def test_the_environments_request_is_honoured_without_cubind():
    # NVIDIA's spelling, cubind never imported: `cuda` (imported first by the
    # import system) reads CUBIND_CUDA_BINDINGS and installs the finder.
    got = run(LOADED + textwrap.dedent("""
        from cuda.bindings import driver, runtime, nvrtc
        import cuda, cuda.cudart, nvrtc as ours, _cubind.compat
        print(json.dumps([driver is cuda, runtime is cuda.cudart, nvrtc is ours, _cubind.compat.installed(),
                          loaded("cubind")]))
    """), env={"CUBIND_CUDA_BINDINGS": "1"})
    assert got == [True, True, True, True, []]


def test_unrequested_nothing_is_installed():
    got = run(LOADED + textwrap.dedent("""
        import cuda, nvrtc, _cubind.compat
        print(json.dumps([_cubind.compat.installed(), loaded("cubind")]))
    """), env={"CUBIND_CUDA_BINDINGS": "0"})
    assert got == [False, []]


def test_the_floor_imports_nothing_above_it():
    got = run(LOADED + textwrap.dedent("""
        import _cubind, _cubind.loader, _cubind.convert, _cubind.enum, _cubind.exports, _cubind.errors
        import _cubind.cuda_paths, _cubind.compat
        print(json.dumps([loaded("cubind"), loaded("cuda"), loaded("nvrtc")]))
    """))
    assert got == [[], [], []]


def test_a_status_describes_itself_without_cubind():
    # CUDAError's message is the library's own text of the status, which the
    # status gives (its _describe_(), generated from the spec's
    # status_description): nothing of cubind is imported or registered.
    got = run(LOADED + textwrap.dedent("""
        import nvrtc
        from _cubind.errors import CUDAError
        err = CUDAError(nvrtc.nvrtcResult.NVRTC_ERROR_INVALID_INPUT, "nvrtcCompileProgram")
        print(json.dumps([err.message, str(err), CUDAError(3).message, loaded("cubind")]))
    """))
    message, text, plain, cubind_modules = got
    assert message == "NVRTC_ERROR_INVALID_INPUT", message   # NVRTC's own text of status 3
    assert text == "nvrtcCompileProgram: NVRTC_ERROR_INVALID_INPUT (3): NVRTC_ERROR_INVALID_INPUT"
    assert plain == "" and cubind_modules == []   # a plain int has no library to describe it


def test_importing_cubind_imports_nothing_else():
    # cubind's __init__ is a lazy table: no layer, no generated package, no
    # floor, no finder, even where the environment asks for the finder.
    got = run(LOADED + textwrap.dedent("""
        import cubind
        print(json.dumps([loaded("cubind"), loaded("_cubind"), loaded("cuda"), len(sys.meta_path)]))
    """), env={"CUBIND_CUDA_BINDINGS": "1"})
    baseline = run("import json, sys; print(json.dumps(len(sys.meta_path)))")
    assert got == [["cubind"], [], [], baseline]


def test_cubinds_public_faces_of_the_floor():
    got = run(textwrap.dedent("""
        import json, os, cubind, _cubind.loader, _cubind.errors, cubind.compat, _cubind.compat
        dirs = cubind.get_include()
        print(json.dumps([cubind.LibraryNotFoundError is _cubind.loader.LibraryNotFoundError,
                          issubclass(cubind.LibraryNotFoundError, _cubind.errors.CUDAError),
                          cubind.CUDAError is _cubind.errors.CUDAError,
                          cubind.compat.install is _cubind.compat.install,
                          os.path.isfile(os.path.join(dirs[-1], "EGL", "egl.h")),
                          os.path.relpath(dirs[-1], os.path.dirname(_cubind.__file__))]))
    """))
    assert got == [True, True, True, True, True, "platform_fallback"]


def test_the_request_costs_no_metadata_machinery_at_import():
    # importlib.metadata (email, zipfile, csv, ...) tripled `import cuda` when
    # the hook was cubind.compat's: the floor's imports it only when asked
    # for cuda-bindings' metadata.
    code = textwrap.dedent("""
        import json, sys
        before = "importlib.metadata" in sys.modules
        from cuda.bindings import driver
        import cuda.bindings
        after = "importlib.metadata" in sys.modules
        print(json.dumps(before or not after))
    """)
    assert run(code, env={"CUBIND_CUDA_BINDINGS": "1"}) is True
