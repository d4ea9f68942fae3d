"""The package's root (cubind/__init__.py): importing it opens no CUDA
library and imports none of the packages it is built on, and its public
names are there on first use.
"""

import os
import subprocess
import sys

import pytest

import cubind
from tests._toolkit import pythonpath
from tests.pythonic._core_fixtures import ROOT


def test_import_opens_no_library_and_stays_light():
    code = ("import sys, cubind; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('cuda', 'nvrtc', 'numpy', 'nvjitlink')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=pythonpath(ROOT)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_public_names():
    for name in ("Device", "Stream", "Event", "Program", "Module", "Kernel", "LaunchConfig", "launch",
                 "CUDAError", "CompileError", "Array", "current_stream", "to_gpu", "empty", "zeros", "from_dlpack"):
        assert hasattr(cubind, name), name
        assert name in dir(cubind)
    with pytest.raises(AttributeError):
        cubind.no_such_thing  # noqa: B018
