"""What the build records of itself (setup.py's ``build_record``, read by
``_cubind/built.py``): every generated package built or left out with the
search's reason, and the ``ImportError`` of a package left out, which says
so, why and what to install, from ``import nvml`` and from ``cubind.system``
alike (not Python's "partially initialized module")."""

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys

import pytest

from _cubind import built, cuda_paths
from tests._toolkit import ROOT, cuda_major_minor


def _setup():
    spec = importlib.util.spec_from_file_location("cubind_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _in_place_record():
    record = built.record()
    if record is None:
        reason = f"no build record for this Python ({built.record_path()}): setup.py build_ext --inplace writes it"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    return record


def test_the_record_names_every_package_built_or_left_out():
    record = _in_place_record()
    assert sorted([*record["built"], *record["skipped"]]) == sorted(_setup().spec_packages(str(ROOT)))
    for package in record["built"]:
        importlib.import_module(package)
    for package, why in record["skipped"].items():
        assert why["missing"] and why["hint"].startswith("pip install"), why
        with pytest.raises(built.NotBuiltError, match=f"{package} was not built"):
            importlib.import_module(package)


def test_the_record_holds_the_headers_and_what_the_loader_is_given():
    record = _in_place_record()
    (driver,) = [h for h in record["headers"] if "cuda._driver" in h["modules"]]
    version = cuda_major_minor()
    assert driver["cuda_version"] == (f"{version[0]}.{version[1]}" if version else None)
    nvrtc = record["libraries"]["nvrtc"]
    assert nvrtc["package"] == "nvrtc" and nvrtc["env_var"] == "CUBIND_NVRTC_LIBRARY"
    assert version is None or nvrtc["sonames"] == [f"libnvrtc.so.{version[0]}"]
    assert record["libraries"]["nvvm"]["toolkit_subdirs"][0] == "nvvm/lib64"   # libNVVM's own place in a toolkit


@pytest.fixture
def nvml_left_out(tmp_path, monkeypatch):
    """The record of a build that found no nvml.h (the build's own search and
    record, over an installation without it and no wheel), and a tree where
    ``nvml`` is its generated ``__init__`` alone, as that build leaves it:
    the floor copied (its compiled modules too) with that record beside it."""
    setup = _setup()
    toolkit = tmp_path / "toolkit"
    (toolkit / "include").mkdir(parents=True)
    monkeypatch.setenv("CUDA_HOME", str(toolkit))
    monkeypatch.setattr(cuda_paths, "_environment_wheels", lambda: [])
    monkeypatch.setattr(setup, "_load_cuda_paths", lambda: cuda_paths)
    monkeypatch.chdir(ROOT)

    class Command:   # what build_ext._find_headers and build_record read of their command
        include_dirs = []
        extensions = [ext for ext in setup.extensions(str(ROOT)) if ext.name.startswith("nvml.")]

    command = Command()
    setup.build_ext._find_headers(command)
    assert command.extensions == []
    tree = tmp_path / "tree"
    shutil.copytree(ROOT / "_cubind", tree / "_cubind", ignore=shutil.ignore_patterns("*.c", "built.*.json"))
    (tree / "nvml").mkdir()
    shutil.copy(ROOT / "nvml" / "__init__.py", tree / "nvml")
    (tree / "_cubind" / built.record_name()).write_text(json.dumps(setup.build_ext.build_record(command)))
    return tree


def _run(tree, code):
    # The copies first; the repository after them for cubind itself.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(ROOT)])}
    return subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("code", ["import nvml", "from cubind import system; system.driver_version"])
def test_a_package_left_out_says_why_and_how_to_get_it(nvml_left_out, code):
    done = _run(nvml_left_out, code)
    assert done.returncode == 1
    assert "partially initialized" not in done.stderr
    (first,) = [line for line in done.stderr.splitlines() if line.startswith("_cubind.built.NotBuiltError: ")]
    assert first.endswith("nvml was not built: when cubind was built, nvml.h could not be found, so the build left "
                          "nvml out (an optional library).")
    assert f"CUDA_HOME: {nvml_left_out.parent / 'toolkit' / 'include'}: missing nvml.h" in done.stderr
    assert "To get it: pip install nvidia-nvml-dev (nvidia-nvml-dev-cu12 for CUDA 12) into the Python " \
           "environment that builds cubind, then build cubind again" in done.stderr


def test_a_package_missing_its_module_without_a_record_says_to_build(nvml_left_out):
    (nvml_left_out / "_cubind" / built.record_name()).unlink()
    done = _run(nvml_left_out, "import nvml")
    assert done.returncode == 1
    assert "nvml is not built: its compiled module nvml._nvml is missing and no build of cubind for this Python " \
           "left a record" in done.stderr
