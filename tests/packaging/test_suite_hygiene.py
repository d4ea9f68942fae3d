"""The suite writes nothing to the user's home: the caches it fills (cubind's
compile cache, the driver's JIT cache) are a temporary directory of the
session, set by tests/conftest.py before collection and inherited by every
subprocess a test starts. And scripts/gpu-check.sh, the GPU run of the suite,
deselects only markers the suite declares and refuses what it cannot do."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]


def under(path, root):
    path, root = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([path, root]) == root


def test_the_caches_are_in_a_temporary_directory_not_home():
    from cubind._compile import cache as _cache

    home = os.path.expanduser("~")
    for where in (_cache.cache_dir(), os.environ["CUDA_CACHE_PATH"]):
        assert under(where, tempfile.gettempdir()) and not under(where, home), where


def test_a_subprocess_compiles_into_the_sessions_cache():
    code = ("import cubind; from cubind._compile import cache as _cache; "
            "cubind.Program('__global__ void k() {}').compile(); print(_cache.cache_dir())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=dict(os.environ, PYTHONPATH=pythonpath(ROOT)))
    assert done.returncode == 0, done.stderr
    where = done.stdout.strip()
    assert where == os.environ["CUBIND_CACHE_DIR"] and any(Path(where).rglob("*.bin"))


# -- scripts/gpu-check.sh: what it deselects is what the suite marks ---------------------


def _gpu_check(*args, logs):
    return subprocess.run(["bash", str(ROOT / "scripts" / "gpu-check.sh"), *args], capture_output=True, text=True,
                          env=dict(os.environ, PYTHON=sys.executable, GPU_CHECK_LOGS=logs), timeout=120)


def test_gpu_check_deselects_only_markers_the_suite_declares():
    import re

    script = (ROOT / "scripts" / "gpu-check.sh").read_text()
    select = re.search(r'^SELECT="([^"]+)"', script, re.M).group(1)
    conftest = (ROOT / "tests" / "conftest.py").read_text()
    for marker in set(re.findall(r"\b([a-z_]+)\b", select)) - {"and", "or", "not"}:
        assert f'"{marker}:' in conftest or f'"{marker}(' in conftest, marker


def test_gpu_check_refuses_bad_arguments_and_a_machine_without_a_gpu(tmp_path, gpu_reason):
    done = _gpu_check("-j", "x", logs=str(tmp_path))
    assert done.returncode == 2 and "-j takes a positive number, not 'x'" in done.stderr
    done = _gpu_check("--only", "everything", logs=str(tmp_path))
    assert done.returncode == 2 and "--only takes suite, sanitize, apps, consumers or bench" in done.stderr
    if gpu_reason is not None:
        done = _gpu_check(logs=str(tmp_path / "logs"))
        assert done.returncode == 2 and done.stderr.strip() == f"gpu-check.sh: {gpu_reason}"


# -- the layout: test files in subject folders, each name once ---------------------------


def test_every_test_file_is_in_a_subject_folder_under_a_name_of_its_own():
    # pytest imports a test file of a folder without __init__.py by its name
    # alone (rootdir-relative "prepend" mode): two files of one name in two
    # folders would collide. CONTRIBUTING.md ("A test") lists the folders.
    tests = ROOT / "tests"
    files = sorted(tests.rglob("test_*.py"))
    assert not [p.name for p in files if p.parent == tests], "a test file at tests/' top: put it in a subject folder"
    names = [p.name for p in files]
    assert sorted(set(names)) == sorted(names), [n for n in set(names) if names.count(n) > 1]
    folders = {p.parent.relative_to(tests).parts[0] for p in files}
    assert folders == {"bindings", "pythonic", "compute", "graph", "generator_integration", "packaging"}, folders


# -- the summary: skips counted by reason, listed one by one only when asked ---------------

SKIPS = """
import pytest

@pytest.mark.parametrize("n", range(3))
def test_needs_a_gpu(n):
    pytest.skip("no GPU: for the summary")

def test_other():
    pytest.skip("another reason")
"""


def _pytest_with_the_suites_hooks(tmp_path, *args):
    (tmp_path / "test_skips.py").write_text(SKIPS)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider",
                           "--rootdir", str(tmp_path), "-c", os.devnull, *args, str(tmp_path / "test_skips.py")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=pythonpath()))


def test_skips_are_counted_by_reason_unless_listing_is_asked(tmp_path):
    done = _pytest_with_the_suites_hooks(tmp_path, "-rfE")   # as scripts/test.sh runs it
    assert "4 skipped, by reason (-rs lists each test)" in done.stdout, done.stdout
    lines = done.stdout.splitlines()
    assert "    3  no GPU: for the summary" in lines and "    1  another reason" in lines
    assert "SKIPPED" not in done.stdout
    done = _pytest_with_the_suites_hooks(tmp_path, "-rs")
    assert "by reason" not in done.stdout and "SKIPPED [3]" in done.stdout, done.stdout
