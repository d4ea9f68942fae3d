"""``python -m cubind`` and ``cubind.show_config()`` (cubind/_config): every
section printed, on this machine whatever it has (no GPU, no driver, a
package left out), a library not found said so, and nothing raised, even
over a record it cannot read."""

import os
import re
import shutil
import subprocess
import sys

import pytest

from _cubind import built
from tests._toolkit import ROOT

SECTIONS = ["Python", "Packages", "CUDA headers (the build's)", "CUDA libraries (the loader's search)",
            "GPUs (the driver's)"]


def _show(*, tree=None, **env):
    paths = [str(tree), str(ROOT)] if tree else [str(ROOT)]
    done = subprocess.run([sys.executable, "-m", "cubind"], cwd=tree or ROOT, capture_output=True, text=True,
                          timeout=120, env={**os.environ, "PYTHONPATH": os.pathsep.join(paths), **env})
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
    return done.stdout


def _section(text, title):
    """The indented lines under ``title``."""
    lines = text.splitlines()
    return [line.strip() for line in _until_blank(lines[lines.index(title) + 1:])]


def _until_blank(lines):
    for line in lines:
        if not line.strip():
            return
        yield line


def test_every_section_prints():
    text = _show()
    # The version pyproject.toml gives, the one place it is written.
    version = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert text.startswith(f"cubind {version} (")
    for title in SECTIONS:
        assert _section(text, title), title
    python = _section(text, "Python")
    assert python[0].startswith(f"Python {sys.version.split()[0]}")
    assert any(line.startswith("numpy ") for line in python) and any(line.startswith("Cython ") for line in python)
    gpus = _section(text, "GPUs (the driver's)")
    assert gpus[0].startswith(("no driver: ", "no GPU: ", "no usable GPU: ", "driver supports CUDA")), gpus


def test_the_packages_are_those_the_record_names():
    record = built.record()
    if record is None:
        pytest.skip("no build record for this Python (setup.py build_ext --inplace writes it)")
    packages = _section(_show(), "Packages")
    for package in record["built"]:
        assert any(line.startswith(f"{package}: built, generated from ") for line in packages), packages
    for package, why in record["skipped"].items():
        assert f"{package}: not built: {', '.join(why['missing'])} not found when cubind was built; " \
               f"{why['hint']}, then build again" in packages


def test_a_library_not_found_is_said_so():
    if built.record() is None:
        pytest.skip("no build record for this Python (setup.py build_ext --inplace writes it)")
    missing = "/nonexistent/libnvrtc.so.13"
    libraries = _section(_show(CUBIND_NVRTC_LIBRARY=missing), "CUDA libraries (the loader's search)")
    (nvrtc,) = [line for line in libraries if line.startswith("NVRTC (")]
    assert "not found: cannot open the nvrtc library given by CUBIND_NVRTC_LIBRARY=" in nvrtc, nvrtc
    assert any(line.startswith("driver (libcuda.so.1): ") for line in libraries)


@pytest.fixture
def floor_copy(tmp_path):
    """The floor copied (its compiled modules too, not its record), first on the path."""
    shutil.copytree(ROOT / "_cubind", tmp_path / "_cubind", ignore=shutil.ignore_patterns("*.c", "built.*.json"))
    return tmp_path


def test_without_a_record_it_says_so(floor_copy):
    text = _show(tree=floor_copy)
    for title in ("Packages", "CUDA headers (the build's)", "CUDA libraries (the loader's search)"):
        assert _section(text, title)[0].startswith("no build record for this Python"), title


def test_a_record_it_cannot_read_is_said_so_in_its_place(floor_copy):
    (floor_copy / "_cubind" / built.record_name()).write_text('{"libraries": {"nvrtc": {}}, "headers": [{}]}')
    text = _show(tree=floor_copy)
    assert _section(text, "CUDA libraries (the loader's search)") == ["could not be read: KeyError: 'sonames'"]
    assert _section(text, "CUDA headers (the build's)") == ["could not be read: KeyError: 'path'"]
    assert _section(text, "GPUs (the driver's)")   # the sections after it still print
