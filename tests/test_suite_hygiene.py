"""The suite writes nothing to the user's home: the caches it fills (cubind's
compile cache, the driver's JIT cache) are a temporary directory of the
session, set by tests/conftest.py before collection and inherited by every
subprocess a test starts."""

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parent.parent


def under(path, root):
    path, root = os.path.realpath(path), os.path.realpath(root)
    return os.path.commonpath([path, root]) == root


def test_the_caches_are_in_a_temporary_directory_not_home():
    from cubind._core import cache as _cache

    home = os.path.expanduser("~")
    for where in (_cache.cache_dir(), os.environ["CUDA_CACHE_PATH"]):
        assert under(where, tempfile.gettempdir()) and not under(where, home), where


def test_a_subprocess_compiles_into_the_sessions_cache():
    code = ("import cubind; from cubind._core import cache as _cache; "
            "cubind.Program('__global__ void k() {}').compile(); print(_cache.cache_dir())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=dict(os.environ, PYTHONPATH=pythonpath(ROOT)))
    assert done.returncode == 0, done.stderr
    where = done.stdout.strip()
    assert where == os.environ["CUBIND_CACHE_DIR"] and any(Path(where).rglob("*.bin"))
