"""What cubind needs beside itself: numpy is declared (the Pythonic layer's
arrays are numpy's dtypes and host buffers), and where an environment lacks
it anyway the layer says so by name."""

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]


def _project():
    try:
        import tomllib
    except ImportError:  # Python 3.10: tomli, which scripts/_common.sh installs there
        tomllib = pytest.importorskip("tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_numpy_is_a_declared_dependency():
    project = _project()
    names = [spec.split(";")[0].split("[")[0].strip(" <>=!~").lower() for spec in project.get("dependencies", [])]
    assert [n for n in names if n.startswith("numpy")] == ["numpy"], project.get("dependencies")


def test_the_pythons_claimed_are_the_pythons_ci_tests():
    """requires-python, the classifiers, the README and scripts/test-pythons.sh's
    oldest and newest name one range, and this interpreter is in it."""
    project = _project()
    oldest = project["requires-python"].removeprefix(">=")
    versions = sorted((c.rsplit(" :: ", 1)[1] for c in project["classifiers"]
                       if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)),
                      key=lambda v: tuple(map(int, v.split("."))))
    newest = versions[-1]
    assert versions[0] == oldest, (versions, oldest)
    script = (ROOT / "scripts" / "test-pythons.sh").read_text()
    assert f"OLDEST={oldest}\n" in script and f"NEWEST={newest}\n" in script
    assert f"CPython {oldest} to {newest}" in " ".join((ROOT / "README.md").read_text().split())
    assert tuple(map(int, oldest.split("."))) <= sys.version_info[:2] <= tuple(map(int, newest.split(".")))


def test_without_numpy_the_array_layer_names_it():
    code = textwrap.dedent("""
        import sys
        sys.modules["numpy"] = None  # as in an environment without numpy: its import fails
        import cubind
        print(cubind.Device.count() >= 0, cubind.Program("x").name)  # these need no numpy
        for name in ("to_gpu", "empty", "Array", "zeros"):
            try:
                getattr(cubind, name)
            except ModuleNotFoundError as exc:
                print(exc.name, str(exc))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=dict(os.environ, PYTHONPATH=pythonpath(ROOT)))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "True program.cu"
    assert lines[1:] == [f"numpy cubind.{name} needs numpy, which is not installed (pip install numpy)"
                         for name in ("to_gpu", "empty", "Array", "zeros")]
