"""What cubind needs beside itself: numpy is declared (the Pythonic layer's
arrays are numpy's dtypes and host buffers), and where an environment lacks
it anyway the layer says so by name."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parent.parent


def test_numpy_is_a_declared_dependency():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = [spec.split(";")[0].split("[")[0].strip(" <>=!~").lower() for spec in project.get("dependencies", [])]
    assert [n for n in names if n.startswith("numpy")] == ["numpy"], project.get("dependencies")


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
