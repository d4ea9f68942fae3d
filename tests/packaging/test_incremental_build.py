"""setup.py's build is incremental by content. Cython finds a module out of
date when a .pxd it cimports is newer than its C, and a fresh venv's pip
makes Cython's own libc/ and cpython/ .pxd files newer than every module's C:
the C written again as it was keeps its age (the modules compiled from it,
each Python's, stay up to date), and Cython's cache gives it back the next
time without cythonizing."""

import os
import subprocess
import sys
import time

import pytest

from tests._toolkit import ROOT

SETUP = """
import importlib.util
from setuptools import Extension, setup
spec = importlib.util.spec_from_file_location("cubind_setup", {setup!r})
cubind_setup = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cubind_setup)
setup(script_args=["build_ext", "--inplace"], cmdclass={{"build_ext": cubind_setup.build_ext}},
      ext_modules=[Extension("m", ["m.pyx"], extra_compile_args=["-O0"])])
"""


def _build(project):
    done = subprocess.run([sys.executable, "-c", SETUP.format(setup=str(ROOT / "setup.py"))], cwd=project,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _newer(path, seconds):
    """``path`` dated ``seconds`` ahead: newer than any C written meanwhile."""
    later = time.time() + seconds
    os.utime(path, (later, later))


def _call(project):
    done = subprocess.run([sys.executable, "-c", "import m; print(m.f(2))"], cwd=project,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_a_newer_pxd_with_the_same_c_compiles_nothing_and_then_comes_from_the_cache(tmp_path):
    pytest.importorskip("Cython")
    (tmp_path / "bindings").mkdir()  # the build reads the specs' [build] tables from there
    dep = tmp_path / "dep.pxd"
    dep.write_text("cdef inline int twice(int x):\n    return 2 * x\n")
    (tmp_path / "m.pyx").write_text("from dep cimport twice\n\n\ndef f(int x):\n    return twice(x)\n")
    assert "m: compiled in" in _build(tmp_path)
    (so,) = tmp_path.glob("m.*.so")
    compiled = so.stat().st_mtime_ns

    _newer(dep, 10)  # as pip leaves Cython's own .pxd files: same text, new age
    out = _build(tmp_path)
    assert "cythonized 1 of 1, 1 to the same C" in out and "m: up to date" in out, out
    assert so.stat().st_mtime_ns == compiled

    _newer(dep, 20)
    out = _build(tmp_path)
    assert "Found compiled m.pyx in cache" in out and "m: up to date" in out, out
    assert so.stat().st_mtime_ns == compiled and _call(tmp_path) == 4

    dep.write_text("cdef inline int twice(int x):\n    return 3 * x\n")
    _newer(dep, 30)
    out = _build(tmp_path)
    assert "cythonized 1 of 1 (" in out and "m: compiled in" in out, out
    assert _call(tmp_path) == 6
