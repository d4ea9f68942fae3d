"""The shipped stubs type-check on their own, and the examples type-check against them."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STUBS = ["cuda/__init__.pyi", "cuda/cudart.pyi", "nvrtc/__init__.pyi", "nvjitlink/__init__.pyi", "nvvm/__init__.pyi"]


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
    import re

    text = (ROOT / "cuda" / "__init__.pyi").read_text()
    defined = set(re.findall(r"^class (\w+)", text, re.M))
    used = set(re.findall(r"\b(CU\w+|CUDA_\w+)\b", "\n".join(
        line for line in text.splitlines() if line.startswith("def "))))
    assert used - defined == set()
