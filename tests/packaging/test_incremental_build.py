"""setup.py's build is incremental by content. Cython finds a module out of
date when any .pxd it cimports is newer than its C, and a fresh venv's pip
makes Cython's own libc/ and cpython/ .pxd files newer than every module's
C: C newer than every Cython source of the tree is current, and C written
again with the same code (its metadata comment aside) keeps its age, so that
the modules compiled from it, each Python's, stay up to date."""

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
      ext_modules=[Extension(name, [name + ".pyx"], include_dirs={include_dirs!r}, extra_compile_args=["-O0"])
                   for name in {modules!r}])
"""


@pytest.fixture
def project(tmp_path):
    """m.pyx, cimporting dep.pxd from a folder outside the project (on
    PYTHONPATH, as Cython's own .pxd files are outside it), built once."""
    pytest.importorskip("Cython")
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "bindings").mkdir(parents=True)  # the build reads the specs' [build] tables from there
    outside.mkdir()
    (outside / "dep.pxd").write_text("cdef inline int twice(int x):\n    return 2 * x\n")
    (project / "m.pyx").write_text("from dep cimport twice\n\n\ndef f(int x):\n    return twice(x)\n")
    assert "m: compiled in" in _build(project)
    return project


def _build(project, include_dirs=(), modules=("m",)):
    env = dict(os.environ, PYTHONPATH=str(project.parent / "outside"))
    done = subprocess.run([sys.executable, "-c", SETUP.format(setup=str(ROOT / "setup.py"),
                                                              include_dirs=list(include_dirs),
                                                              modules=list(modules))],
                          cwd=project, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _newer(path, seconds):
    """``path`` dated ``seconds`` ahead: newer than any C written meanwhile."""
    later = time.time() + seconds
    os.utime(path, (later, later))


def _compiled(project):
    (so,) = project.glob("m.*.so")
    return so.stat().st_mtime_ns


def _call(project):
    done = subprocess.run([sys.executable, "-c", "import m; print(m.f(2))"], cwd=project,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return int(done.stdout)


def test_a_newer_pxd_outside_the_tree_cythonizes_nothing(project):
    compiled = _compiled(project)
    time.sleep(0.01)
    os.utime(project.parent / "outside" / "dep.pxd")  # as pip leaves Cython's own: same text, newer than the C
    out = _build(project)
    assert "cythonized 0 of 1 (" in out and "m: up to date" in out, out
    assert _compiled(project) == compiled and _call(project) == 4


def test_a_new_module_leaves_the_others_current(project):
    compiled = _compiled(project)
    time.sleep(0.01)
    os.utime(project.parent / "outside" / "dep.pxd")
    (project / "n.pyx").write_text("def g():\n    return 1\n")  # newer than m's C, as its wrapper would be
    out = _build(project, modules=("m", "n"))
    assert "cythonized 1 of 2 (" in out and "m: up to date" in out and "n: compiled in" in out, out
    assert _compiled(project) == compiled


def test_c_made_again_with_the_same_code_keeps_its_age(project):
    compiled = _compiled(project)
    _newer(project / "m.pyx", 10)
    (project / "inc").mkdir()
    out = _build(project, include_dirs=["inc"])  # named in the C's metadata comment only
    assert "cythonized 1 of 1, 1 to the same code" in out and "m: up to date" in out, out
    assert _compiled(project) == compiled


def test_changed_code_is_compiled(project):
    (project.parent / "outside" / "dep.pxd").write_text("cdef inline int twice(int x):\n    return 3 * x\n")
    _newer(project.parent / "outside" / "dep.pxd", 10)
    _newer(project / "m.pyx", 10)  # a change in the tree: the C is looked at again
    out = _build(project)
    assert "cythonized 1 of 1 (" in out and "m: compiled in" in out, out
    assert _call(project) == 6
