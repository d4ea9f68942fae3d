"""cubind.compat's ``cuda.bindings.nvvm`` and ``.nvjitlink`` (the modules the
finder serves under those names) have every public name of NVIDIA's, with the
same kind (a function, an enum, a class), and no other: code written for
NVIDIA's exception-raising API finds each function it calls.

NVIDIA's names come from its cuda-bindings 13.0.x (a test dependency), listed
by a fresh interpreter so that its modules never meet cubind's in one process.
"""

import importlib
import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._helpers import public_kinds
from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]
SERVED = {"nvvm": "cubind.compat.nvvm", "nvjitlink": "cubind.compat.nvjitlink"}


def _bindings_missing():
    try:
        version = importlib.metadata.version("cuda-bindings")
    except importlib.metadata.PackageNotFoundError:
        return "NVIDIA's cuda-bindings is not installed (pip install cuda-bindings==13.0.3)"
    if not version.startswith("13.0."):
        return f"the names are checked against cuda-bindings 13.0.x; {version} is installed"
    return None


pytestmark = pytest.mark.skipif(_bindings_missing() is not None, reason=str(_bindings_missing()))

LIST_NVIDIA = f"""
import json
import cuda.bindings
from tests._helpers import public_kinds
assert "cubind" not in (cuda.bindings.__file__ or ""), cuda.bindings.__file__
from cuda.bindings import {", ".join(SERVED)}
out = {{name: public_kinds(globals()[name]) for name in {list(SERVED)!r}}}
# The one function answered from the library without a program: its messages.
out["messages"] = {{int(r): nvvm.get_error_string(r) for r in nvvm.Result}}
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def nvidia():
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    env["PYTHONPATH"] = pythonpath(ROOT)
    done = subprocess.run([sys.executable, "-c", LIST_NVIDIA], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("module", SERVED)
def test_public_names_and_kinds_match_nvidias(module, nvidia):
    pytest.importorskip(module, reason=f"cubind's {module} package is not built")
    ours = public_kinds(importlib.import_module(SERVED[module]))
    theirs = nvidia[module]
    missing = {name: kind for name, kind in theirs.items() if name not in ours}
    extra = sorted(set(ours) - set(theirs))
    other_kind = {name: (kind, ours[name]) for name, kind in theirs.items() if name in ours and ours[name] != kind}
    assert not missing, f"NVIDIA's cuda.bindings.{module} has these, cubind's does not: {missing}"
    assert not extra, f"cubind's cuda.bindings.{module} has names NVIDIA's lacks: {extra}"
    assert not other_kind, f"(NVIDIA's kind, cubind's) differ: {other_kind}"


def test_nvvm_error_strings_are_nvidias(nvidia):
    pytest.importorskip("nvvm", reason="cubind's nvvm package is not built")
    from cubind.compat import nvvm

    ours = {str(int(r)): nvvm.get_error_string(r) for r in nvvm.Result}
    assert ours == nvidia["messages"]
    assert nvvm.get_error_string(int(nvvm.Result.ERROR_COMPILATION)) == "NVVM_ERROR_COMPILATION"
    assert isinstance(nvvm.get_error_string(0), str)
