"""The coredump settings (cuCoredumpGet/SetAttribute and their Global forms):
the classic signatures, the value typed by the setting (bool, int, bytes),
and the size the driver reads through a pointer set from that type."""

import inspect
import os
import subprocess
import sys

import pytest

from tests._helpers import ok
from tests._toolkit import pythonpath

cuda = pytest.importorskip("cuda")
S = cuda.CUcoredumpSettings


def test_signatures_are_the_classic_ones():
    for name in ("cuCoredumpGetAttribute", "cuCoredumpGetAttributeGlobal"):
        assert list(inspect.signature(getattr(cuda, name)).parameters) == ["attrib"]
    for name in ("cuCoredumpSetAttribute", "cuCoredumpSetAttributeGlobal"):
        assert list(inspect.signature(getattr(cuda, name)).parameters) == ["attrib", "value"]


@pytest.mark.parametrize("attrib,value,exc,words", [
    (S.CU_COREDUMP_FILE, b"x" * 1024, ValueError, "at most 1023"),
    (S.CU_COREDUMP_FILE, b"a\0b", ValueError, "NUL"),
    (S.CU_COREDUMP_PIPE, 42, TypeError, "bytes or str"),
    (S.CU_COREDUMP_ENABLE_ON_EXCEPTION, 2, OverflowError, "value"),
    (S.CU_COREDUMP_MAX, 1, ValueError, "no known value type"),
])
def test_bad_values_are_refused_before_the_driver(attrib, value, exc, words):
    with pytest.raises(exc, match=words):
        cuda.cuCoredumpSetAttributeGlobal(attrib, value)


# Run in a child interpreter: the global settings are the process's, and on
# driver 580 turning CU_COREDUMP_ENABLE_ON_EXCEPTION on and off again leaves
# every later cuModuleLoadData failing with CUDA_ERROR_INVALID_VALUE, which
# broke the GPU tests that ran after this one in the same process.
GLOBAL_ROUND_TRIP = """
import cuda
S = cuda.CUcoredumpSettings


def get(setting):
    err, value = cuda.cuCoredumpGetAttributeGlobal(setting)
    assert err == 0, err
    return value


assert cuda.cuInit(0) == (0,)
path = get(S.CU_COREDUMP_FILE)
assert isinstance(path, bytes)  # empty until set (driver 580): the driver then uses core.cuda.HOSTNAME.PID
enabled = get(S.CU_COREDUMP_ENABLE_ON_EXCEPTION)
assert enabled is False or enabled is True
assert isinstance(get(S.CU_COREDUMP_GENERATION_FLAGS), int)
# No %p in it: the driver reads back the path with %p expanded to the pid.
assert cuda.cuCoredumpSetAttributeGlobal(S.CU_COREDUMP_FILE, "/tmp/cubind-core") == (0,)
assert get(S.CU_COREDUMP_FILE) == b"/tmp/cubind-core"
assert cuda.cuCoredumpSetAttributeGlobal(S.CU_COREDUMP_ENABLE_ON_EXCEPTION, not enabled) == (0,)
assert get(S.CU_COREDUMP_ENABLE_ON_EXCEPTION) is (not enabled)
assert cuda.cuCoredumpSetAttributeGlobal(S.CU_COREDUMP_ENABLE_ON_EXCEPTION, enabled) == (0,)
assert get(S.CU_COREDUMP_ENABLE_ON_EXCEPTION) is enabled
print("round trip ok")
"""


@pytest.mark.gpu
def test_global_settings_round_trip(driver):
    done = subprocess.run([sys.executable, "-c", GLOBAL_ROUND_TRIP], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=pythonpath()), timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "round trip ok"


@pytest.mark.gpu
def test_context_settings_round_trip(driver, cu_context):
    # Per context the driver answers these; the pipe and the user trigger it
    # keeps process-wide (CUDA_ERROR_INVALID_VALUE here, on driver 580).
    assert ok(cuda.cuCoredumpGetAttribute, S.CU_COREDUMP_TRIGGER_HOST) in (True, False)
    assert isinstance(ok(cuda.cuCoredumpGetAttribute, S.CU_COREDUMP_GENERATION_FLAGS), int)
    path = ok(cuda.cuCoredumpGetAttribute, S.CU_COREDUMP_FILE)
    try:
        assert cuda.cuCoredumpSetAttribute(S.CU_COREDUMP_FILE, b"/tmp/cubind-ctx-core") == (0,)
        assert ok(cuda.cuCoredumpGetAttribute, S.CU_COREDUMP_FILE) == b"/tmp/cubind-ctx-core"
    finally:
        cuda.cuCoredumpSetAttribute(S.CU_COREDUMP_FILE, path)
