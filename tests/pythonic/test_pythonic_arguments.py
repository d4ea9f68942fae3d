"""Every public constructor and function of ``cubind`` checks its arguments
before it looks for the driver, and ``Device.count()`` is 0 without one.

The calls run in one fresh interpreter whose ``CUBIND_CUDA_LIBRARY`` names a
file that does not exist: any call that reached for the driver before
checking its arguments would raise the loader's ``LibraryNotFoundError``
instead of the argument error, on a machine with a GPU as on one without.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cubind._core.driver as _driver
from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]

# (call, exception, the message's start): the parameter is named first.
CASES = [
    ("cubind.Device(-1)", "ValueError", "device: ordinal -1 is negative"),
    ("cubind.Device('0')", "TypeError", "device: expected a device ordinal"),
    ("cubind.Device(1.0)", "TypeError", "device: expected a device ordinal"),
    ("cubind.Device(2**31)", "OverflowError", "device: ordinal 2147483648 does not fit"),
    ("cubind.Stream(priority='high')", "TypeError", "priority: expected an int, not str"),
    ("cubind.Stream(priority=2**31)", "OverflowError", "priority: 2147483648 is out of range"),
    ("cubind.Stream(flags=-1)", "OverflowError", "flags: -1 is out of range"),
    ("cubind.Stream(flags=1.5)", "TypeError", "flags: expected an int, not float"),
    ("cubind.Stream(device=-1)", "ValueError", "device: ordinal -1 is negative"),
    ("cubind.Stream(device='0')", "TypeError", "device: expected a device ordinal"),
    ("cubind.Stream.from_handle('s')", "TypeError", "stream: expected a stream"),
    ("cubind.Stream.from_handle(0, device=-1)", "ValueError", "device: ordinal -1 is negative"),
    ("cubind.LaunchConfig(grid=0, block=1)", "ValueError", "grid: each dimension must be at least 1"),
    ("cubind.LaunchConfig(grid=1, block=(0, 1, 1))", "ValueError", "block[0]: each dimension must be at least 1"),
    ("cubind.LaunchConfig(grid='8', block=1)", "TypeError", "grid: expected an int"),
    ("cubind.LaunchConfig(1, 1, shared_mem=-1)", "OverflowError", "shared_mem: -1 is out of range"),
    ("cubind.LaunchConfig(1, 1, shared_mem='x')", "TypeError", "shared_mem: expected an int, not str"),
    ("cubind.LaunchConfig(1, 1, stream=None)", "TypeError",
     "LaunchConfig.__init__() got an unexpected keyword argument 'stream'"),
    ("cubind.LaunchConfig(1, 1, cluster=(2, 0))", "ValueError", "cluster[1]: each dimension must be at least 1"),
    ("cubind.LaunchConfig(1, 1, attributes={'nope': 1})", "ValueError", "attributes: 'nope' is not a"),
    ("cubind.LaunchConfig(1, 1, attributes=3)", "TypeError", "attributes: expected a mapping"),
    ("cubind.LaunchConfig(1, 1, attributes={'priority': 'x'})", "TypeError",
     "attributes['priority']: expected an int, not str"),
    ("cubind.launch(None, 3, None)", "TypeError", "config: expected a cubind.LaunchConfig"),
    ("cubind.launch(None, cubind.LaunchConfig(1, 1), 3)", "TypeError", "kernel: expected a cubind.Kernel"),
    ("cubind.launch(cubind.LaunchConfig(1, 1), None, None)", "TypeError",
     "launch(stream, config, kernel, *args): the stream comes first"),
    ("cubind.empty(-1)", "ValueError", "shape: negative dimensions are not allowed"),
    ("cubind.empty((2, 'a'))", "TypeError", "shape: expected an int or a sequence of ints"),
    ("cubind.empty(3, dtype='foo')", "TypeError", "dtype: 'foo' is not a data type"),
    ("cubind.empty(3, dtype=object)", "TypeError", "dtype: object is not supported on the device"),
    ("cubind.empty(3, stream='x')", "TypeError", "stream: expected a stream"),
    ("cubind.zeros(-1)", "ValueError", "shape: negative dimensions are not allowed"),
    ("cubind.zeros(3, dtype=np.str_)", "TypeError", "dtype: <U0 is not supported on the device"),
    ("cubind.Array(-1)", "ValueError", "shape: negative dimensions are not allowed"),
    ("cubind.Array.from_ptr('x', 3)", "TypeError", "ptr: expected a device address"),
    ("cubind.empty_like(3)", "TypeError", "array: expected an array (with shape and dtype), not int"),
    ("cubind.zeros_like(None)", "TypeError", "array: expected an array (with shape and dtype), not NoneType"),
    ("cubind.empty_like(np.zeros(3), dtype='foo')", "TypeError", "dtype: 'foo' is not a data type"),
    ("cubind.to_gpu(np.array(['a']))", "TypeError", "host: <U1 is not supported on the device"),
    ("cubind.to_gpu([1, 'a', None])", "TypeError", "host: object is not supported on the device"),
    ("cubind.to_gpu([[1], [1, 2]])", "ValueError", "host: list is not array data numpy reads"),
    ("cubind.to_gpu(np.arange(3, dtype='>i4'))", "TypeError", "host: >i4 is not in the machine's byte order"),
    ("cubind.to_gpu(np.zeros(3), stream='x')", "TypeError", "stream: expected a stream"),
    ("cubind.asarray(object())", "TypeError", "host: object is not supported on the device"),
    ("cubind.from_dlpack(3)", "TypeError", "obj: expected an object with __dlpack__"),
    ("cubind.Program(3)", "TypeError", "source: expected str or bytes, not int"),
    ("cubind.Program('x', options='-G')", "TypeError", "options: expected a list of options"),
    ("cubind.Program('x').compile(target='sass')", "ValueError", "target: expected one of ptx, cubin, ltoir"),
    ("cubind.Program('x').compile(arch='sm_x')", "ValueError", "arch: expected an architecture"),
    ("cubind.Module(3, 'ptx')", "TypeError", "code: expected bytes"),
    ("cubind.Module(b'', 'elf')", "ValueError", "kind: expected 'ptx', 'cubin', 'fatbin' or 'ltoir'"),
    ("cubind.Module.load(3)", "TypeError", "path_or_bytes: expected a path or bytes"),
]

RUNNER = """
import json, sys
import numpy as np
import cubind

out = []
for call in json.loads(sys.argv[1]):
    try:
        eval(call)
        out.append(["returned", ""])
    except Exception as exc:
        out.append([type(exc).__name__, str(exc).splitlines()[0] if str(exc) else ""])
print(json.dumps(out))
"""


def run_without_driver(code, *args, env=None):
    """``code`` in a fresh interpreter whose driver library cannot be opened; its stdout."""
    full_env = dict(os.environ, PYTHONPATH=pythonpath(ROOT), CUBIND_CUDA_LIBRARY="/nonexistent/libcuda.so.1",
                    **(env or {}))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], env=full_env, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def outcomes():
    calls = [call for call, _, _ in CASES]
    return dict(zip(calls, json.loads(run_without_driver(RUNNER, json.dumps(calls)))))


@pytest.mark.parametrize("call, exc, start", CASES, ids=[c[0] for c in CASES])
def test_bad_arguments_are_refused_before_the_driver_is_looked_for(outcomes, call, exc, start):
    got_type, got_message = outcomes[call]
    assert (got_type, got_message[:len(start)]) == (exc, start), got_message


def test_the_runner_does_see_the_missing_driver():
    # The cases above mean something only if touching the driver fails here.
    got = json.loads(run_without_driver(RUNNER, json.dumps(["cubind.Device(0)", "cubind.Stream()"])))
    assert [t for t, _ in got] == ["LibraryNotFoundError"] * 2


def test_a_launch_config_is_built_without_a_driver():
    got = run_without_driver("""
        import cubind
        config = cubind.LaunchConfig((4, 2), 128, shared_mem=1024, cluster=2, cooperative=True,
                                     attributes={"priority": 1})
        print(config.grid, config.block, config.shared_mem, config.cluster, config._struct.numAttrs)
    """)
    assert got.split() == ["(4,", "2,", "1)", "(128,", "1,", "1)", "1024", "(2,", "1,", "1)", "3"]


# -- Device.count() -------------------------------------------------------------------


def test_device_count_is_0_without_a_driver_library():
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_LIBRARY"}
    code = "import cubind, cuda\ntry:\n    cuda.cuInit(0)\n    print('driver')\nexcept OSError:\n" \
           "    print('none', cubind.Device.count())\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=dict(env, PYTHONPATH=pythonpath(ROOT)))
    assert done.returncode == 0, done.stderr
    if done.stdout.strip() == "driver":
        pytest.skip("a driver library is installed here (test_core_device_stream_event.py's gpu tests use it)")
    assert done.stdout.split() == ["none", "0"]


def test_device_count_raises_where_the_named_driver_library_does_not_open():
    # CUBIND_CUDA_LIBRARY is the user saying where the driver is: a wrong path
    # is reported, not taken for "no devices".
    got = run_without_driver("""
        import cubind
        try:
            print(cubind.Device.count())
        except OSError as exc:
            print(type(exc).__name__, "CUBIND_CUDA_LIBRARY" in str(exc))
    """)
    assert got.split() == ["LibraryNotFoundError", "True"]


@pytest.mark.parametrize("status, count", [(100, 0), (0, 3)])  # CUDA_ERROR_NO_DEVICE; success
def test_device_count_follows_cuinit(monkeypatch, status, count):
    import cubind
    import cuda

    monkeypatch.setattr(cuda, "cuInit", lambda flags: (cuda.CUresult(status),))
    monkeypatch.setattr(cuda, "cuDeviceGetCount", lambda: (cuda.CUresult(0), 3))
    monkeypatch.setitem(_driver._state, "initialized", _driver._state["initialized"])
    assert cubind.Device.count() == count


def test_device_count_raises_other_cuinit_failures(monkeypatch):
    import cubind
    import cuda

    insufficient = cuda.CUresult.CUDA_ERROR_STUB_LIBRARY
    monkeypatch.setattr(cuda, "cuInit", lambda flags: (insufficient,))
    with pytest.raises(cubind.CUDAError, match="cuInit: CUDA_ERROR_STUB_LIBRARY") as info:
        cubind.Device.count()
    assert info.value.code == insufficient


def test_without_a_driver_a_device_is_the_loader_error_not_0_devices():
    got = run_without_driver("""
        import cubind
        try:
            cubind.Device(0)
        except OSError as exc:
            print(type(exc).__name__)
    """)
    assert got.split() == ["LibraryNotFoundError"]
