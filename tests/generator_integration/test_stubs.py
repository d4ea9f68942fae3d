"""The shipped stubs type-check on their own, and the examples type-check against them."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STUBS = ["cuda/__init__.pyi", "cuda/cudart.pyi", "nvrtc/__init__.pyi", "nvjitlink/__init__.pyi", "nvvm/__init__.pyi",
         "nvfatbin/__init__.pyi", "nvml/__init__.pyi", "cufile/__init__.pyi"]


def mypy(*args):
    if importlib.util.find_spec("mypy") is None:
        if os.environ.get("CI"):
            pytest.fail("mypy is not installed; scripts/test.sh installs it")
        pytest.skip("mypy is not installed")
    return subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("target", ["3.10", "3.12"])
def test_stubs_type_check(target):
    done = mypy("--python-version", target, *STUBS)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_examples_type_check_against_the_stubs():
    done = mypy("examples")
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


def test_every_struct_used_in_a_signature_is_defined():
    # A struct class a function names must be a class of the stub itself
    # (mypy above would report it too; this names the missing ones directly).
    text = (ROOT / "cuda" / "__init__.pyi").read_text()
    defined = set(re.findall(r"^class (\w+)", text, re.M))
    used = set(re.findall(r"\b(CU\w+|CUDA_\w+)\b", "\n".join(
        line for line in text.splitlines() if line.startswith("def "))))
    assert used - defined == set()


def readme_snippet():
    """The NVRTC example at the top of README.md, as the reader sees it."""
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    snippet = next(b for b in blocks if "nvrtcGetPTXSize" in b)
    return snippet


DRIVER_SNIPPET = """\
import cuda
from nvrtc import nvrtcResult, nvrtcVersion

err, = cuda.cuInit(0)
err, dev = cuda.cuDeviceGet(0)
err, name = cuda.cuDeviceGetName(64, dev)
text: str = name.decode()
err, free, total = cuda.cuMemGetInfo()
used: int = total - free
err, ctx = cuda.cuDevicePrimaryCtxRetain(dev)
handle: int = int(ctx)
status, major, minor = nvrtcVersion()
version: tuple[int, int] = (major, minor)
ok: bool = status == nvrtcResult.NVRTC_SUCCESS
"""

# Misuse the stubs must still reject: an output keeps its own type.
WRONG_SNIPPET = """\
import cuda
err, name = cuda.cuDeviceGetName(64, 0)
wrong: int = name
"""


def test_outputs_are_typed_as_their_values(tmp_path):
    # Issue 21: `bytearray(size)` with `size: int | None` failed mypy on the
    # README's own snippet; outputs are None only on error, after the status.
    (tmp_path / "readme_snippet.py").write_text(readme_snippet())
    (tmp_path / "driver_snippet.py").write_text(DRIVER_SNIPPET)
    (tmp_path / "wrong_snippet.py").write_text(WRONG_SNIPPET)
    cache = str(tmp_path / "cache")
    done = mypy("--cache-dir", cache, str(tmp_path / "readme_snippet.py"), str(tmp_path / "driver_snippet.py"))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    wrong = mypy("--cache-dir", cache, str(tmp_path / "wrong_snippet.py"))
    assert wrong.returncode == 1 and 'has type "bytes"' in wrong.stdout, wrong.stdout + wrong.stderr
