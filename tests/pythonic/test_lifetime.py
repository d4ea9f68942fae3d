"""What the layer releases at exit and after a sticky error: the message of a
sticky error, the silence of collection after it and Device.reset() on the
``backend`` (the real GPU where there is one, where a kernel really writes to
an illegal address; else the recording fake driver, tests/fake_driver, told to
poison the context at the first launch), and against the fake on every
machine the order of the releases the driver saw (FAKE_CALL_LOG) and the
layer's own lookups asking only what exists. Each snippet runs in a fresh
interpreter, since exit is what is tested and the driver is opened once per
process."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]

KERNEL = r"""
__device__ int counter = 41;
extern "C" __global__ void bump(int *p, int n) { if (threadIdx.x < n) p[threadIdx.x] += counter; }
extern "C" __global__ void nothing() { }
"""

PRELUDE = """
import ctypes, gc, json, sys
import numpy as np
import cubind
fake = ctypes.CDLL({lib!r})
def requested():
    class Request(ctypes.Structure):
        _fields_ = [("symbol", ctypes.c_char * 64), ("version", ctypes.c_int), ("flags", ctypes.c_ulonglong),
                    ("rc", ctypes.c_int)]
    count = ctypes.c_int.in_dll(fake, "fake_request_count").value
    return [(r.symbol.decode(), r.version, r.rc) for r in (Request * 4096).in_dll(fake, "fake_requests")[:count]]
from tests._helpers import error
"""


@pytest.fixture(scope="module")
def ptx(tmp_path_factory):
    pytest.importorskip("numpy")
    import cubind

    path = tmp_path_factory.mktemp("lifetime") / "k.ptx"
    path.write_bytes(cubind.Program(KERNEL).compile("ptx", arch=75).code)
    return path


def run(fake_driver, tmp_path, body, **env):
    """(stdout as JSON or None, stderr, the driver's call log as (name, arg) pairs)."""
    log = tmp_path / "calls.log"
    code = PRELUDE.format(lib=str(fake_driver)) + textwrap.dedent(body)
    full_env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath(ROOT),
                    FAKE_CALL_LOG=str(log), FAKE_DEVICE_COUNT="1", CUBIND_NO_COMPILE_CACHE="1", **env)
    done = subprocess.run([sys.executable, "-c", code], env=full_env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    calls = [tuple(line.split()) for line in log.read_text().splitlines()] if log.exists() else []
    return (json.loads(done.stdout) if done.stdout.strip() else None), done.stderr, calls


def test_exit_frees_memory_then_streams_events_libraries_then_the_primary_context(fake_driver, tmp_path, ptx):
    _, stderr, calls = run(fake_driver, tmp_path, f"""
        kept = cubind.to_gpu(np.ones(4, np.float32))           # a module global of the program
        cycle = [cubind.empty(8, np.float32)]
        cycle.append(cycle)                                      # only the cycle collector would free it
        stream = cubind.Stream()
        on_stream = cubind.empty(16, np.float32, stream=stream)  # freed in its stream's order, before the stream
        event = cubind.Event()
        module = cubind.Module.load(open({str(ptx)!r}, "rb").read())
        module.get_kernel("bump")
    """)
    assert stderr == ""
    names = [name for name, _ in calls]
    allocated = {arg for name, arg in calls if name == "cuMemAlloc"}
    freed = [arg for name, arg in calls if name == "cuMemFree"]
    assert len(allocated) == 3 and sorted(freed) == sorted(allocated)   # every allocation freed, once
    release = names.index("cuDevicePrimaryCtxRelease")
    assert names.count("cuDevicePrimaryCtxRelease") == names.count("cuDevicePrimaryCtxRetain") == 1
    assert release == len(names) - 1                                     # the context goes last
    last_free = max(i for i, name in enumerate(names) if name == "cuMemFree")
    for made, gone in (("cuStreamCreate", "cuStreamDestroy"), ("cuEventCreate", "cuEventDestroy"),
                       ("cuLibraryLoadData", "cuLibraryUnload")):
        handles = {arg for name, arg in calls if name == made}
        assert {arg for name, arg in calls if name == gone} >= handles, (made, calls)
        assert last_free < min(i for i, (name, arg) in enumerate(calls) if name == gone and arg in handles)


def test_pinned_host_memory_is_freed_when_collected_and_at_exit_before_the_context(fake_driver, tmp_path):
    # The core's, cubind.compute's tensors' and cubind.graph's pinned memory:
    # one allocation, tracked with the rest of the layer's.
    out, stderr, calls = run(fake_driver, tmp_path, """
        import cubind.compute as kp
        from cubind.graph.model.resources import _pinned_buffer
        kept = cubind.empty_pinned((2, 3), np.float32)              # a module global of the program
        kept[...] = 7
        mapped = cubind.PinnedMemory(64, mapped=True)
        gone = cubind.PinnedMemory(32)
        address = gone.ptr
        del gone                                                    # freed at once
        freed_twice = cubind.PinnedMemory(16)
        freed_twice.free(); freed_twice.free()
        mgr = kp.Manager()
        tensors = [mgr.tensor([1.0, 2.0]), mgr.tensor([3.0], tensor_type=kp.TensorTypes.host)]
        view = tensors[0].data()
        tensors[0].destroy()                                        # its host data stays while views live
        graph_buffer = _pinned_buffer(100, None)
        print(json.dumps({"gone": address, "sum": float(kept.sum()), "mapped": mapped.device_ptr is not None,
                          "freed": freed_twice.freed, "data": view.tolist()}))
    """)
    assert stderr == ""
    assert out == {"gone": out["gone"], "sum": 42.0, "mapped": True, "freed": True, "data": [1.0, 2.0]}
    names = [name for name, _ in calls]
    allocated = [arg for name, arg in calls if name == "cuMemHostAlloc"]
    freed = [arg for name, arg in calls if name == "cuMemFreeHost"]
    assert len(allocated) == 7 and sorted(freed) == sorted(allocated)   # every allocation freed, once
    assert int(freed[0], 16) == out["gone"]                              # collected: freed before exit
    assert max(i for i, name in enumerate(names) if name == "cuMemFreeHost") < names.index("cuDevicePrimaryCtxRelease")


def test_memory_in_a_cycle_with_its_stream_is_freed_on_it_before_the_stream_is_destroyed(fake_driver, tmp_path):
    # The collector runs the stream's weakref.finalize before the memory's
    # __del__ when both are garbage in one cycle: the destruction waits.
    failed = tmp_path / "failed.log"
    out, stderr, calls = run(fake_driver, tmp_path, """
        from cubind._core import allocations
        stream = cubind.Stream()
        a = cubind.empty(16, np.float32, stream=stream)
        b = cubind.empty(8, np.float32, stream=stream)
        ids = {"stream": int(stream), "a": a.ptr, "b": b.ptr}
        cycle = [stream, a, b]
        cycle.append(cycle)
        del stream, a, b, cycle
        gc.collect()
        ids["in_use"] = len(allocations.streams_in_use())
        print(json.dumps(ids))
    """, FAKE_FAILED_LOG=str(failed))
    assert stderr == "" and not (failed.exists() and failed.read_text())
    assert out["in_use"] == 0
    order = [(call[0], int(call[-1], 16)) for call in calls]
    destroyed = order.index(("cuStreamDestroy", out["stream"]))
    assert order.index(("cuMemFree", out["a"])) < destroyed and order.index(("cuMemFree", out["b"])) < destroyed


def test_memory_let_go_during_a_capture_of_its_stream_is_freed_after_it_not_captured(fake_driver, tmp_path):
    failed = tmp_path / "failed.log"
    out, stderr, calls = run(fake_driver, tmp_path, """
        import os
        stream = cubind.Stream()
        a = cubind.empty(16, np.float32, stream=stream)
        cyclic = [cubind.empty(4, np.float32, stream=stream)]
        cyclic.append(cyclic)
        ids = {"a": a.ptr, "cyclic": cyclic[0].ptr}
        graph = cubind.CUDAGraph()
        with graph.capture(stream):
            cubind.empty(4, np.float32, stream=stream).fill(1)  # the graph's own memory: a node
            del a, cyclic
            gc.collect()
            ids["during"] = sum(line.startswith("cuMemFree ") for line in open(os.environ["FAKE_CALL_LOG"]))
        ids["nodes"] = graph.node_types()
        print(json.dumps(ids))
    """, FAKE_FAILED_LOG=str(failed))
    assert stderr == "" and not (failed.exists() and failed.read_text())
    assert out["during"] == 0                                   # nothing freed while the stream was captured
    assert out["nodes"].count("mem_free") == 1                  # the graph's own allocation's free alone
    freed = {int(call[-1], 16) for call in calls if call[0] == "cuMemFree"}
    assert {out["a"], out["cyclic"]} <= freed                    # freed once the capture ended


def test_pinned_memory_refuses_bad_sizes_and_shapes_by_name():
    import cubind

    with pytest.raises(ValueError, match="nbytes: -1 is negative"):
        cubind.PinnedMemory(-1)
    with pytest.raises(TypeError, match="nbytes: expected an int, got float"):
        cubind.PinnedMemory(1.5)
    with pytest.raises(ValueError, match="shape: .* negative"):
        cubind.empty_pinned((2, -1))
    with pytest.raises(TypeError, match="shape: expected ints"):
        cubind.empty_pinned((2, "x"))


# -- on a real GPU: a kernel that writes to an illegal address ------------------------

FAULT_PRELUDE = r"""
import numpy as np
import cubind

SOURCE = r'''
extern "C" __global__ void poke(int *p) { p[threadIdx.x] = 1; }
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
'''
module = cubind.Program(SOURCE).compile()

def saxpy_runs():
    n = 1 << 16
    x, y = np.random.rand(n).astype(np.float32), np.random.rand(n).astype(np.float32)
    out = cubind.empty(n, np.float32)
    module.get_kernel("saxpy")((n + 255) // 256, 256, 2.0, cubind.to_gpu(x), cubind.to_gpu(y), out, n)
    assert np.allclose(out.get(), np.float32(2.0) * x + y)
"""

STICKY_SCRIPT = FAULT_PRELUDE + r"""
old = cubind.to_gpu(np.zeros(4, np.float32))
stream = cubind.Stream()
module.get_kernel("poke")(1, 32, 0x10)  # an illegal address: a sticky error
try:
    old.get()
    raise SystemExit("no error after an illegal address")
except cubind.CUDAError as exc:
    assert exc.sticky and exc.name == "CUDA_ERROR_ILLEGAL_ADDRESS", exc
    assert "Start a new process" in str(exc), exc
del old, stream  # collected in the poisoned context: nothing may print
try:
    cubind.Device(0).reset()   # driver 580 refuses a new context after a sticky error
    saxpy_runs()
    print("recovered")
except cubind.CUDAError as exc:
    assert exc.sticky and "Start a new process" in str(exc), exc
    print("refused")
"""

RESET_SCRIPT = FAULT_PRELUDE + r"""
old = cubind.to_gpu(np.zeros(4, np.float32))
stream = cubind.Stream()
saxpy_runs()
cubind.Device(0).reset()
try:
    stream.synchronize()
    raise SystemExit("a stream of the reset context was used")
except ValueError as exc:
    assert "Device.reset()" in str(exc), exc
del old, stream
saxpy_runs()   # the module reloads into the new context
print("reset ok")
"""


def run_on_the_gpu(backend, script):
    """Run ``script`` on the real GPU in a fresh interpreter (a sticky error or a reset must not reach the rest
    of the suite); its stdout, after checking that nothing was printed by collection or exit."""
    done = backend.run(script)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Exception ignored" not in done.stderr and "Traceback" not in done.stderr, done.stderr
    return done.stdout.strip()


@pytest.mark.provokes_api_error
def test_a_sticky_error_says_what_to_do_and_later_releases_are_quiet(backend, tmp_path, ptx):
    if backend.real:
        # Whether the driver lets reset() make a new context after it is the driver's; driver 580 refuses,
        # and then reset() says so as the error itself does.
        assert run_on_the_gpu(backend, STICKY_SCRIPT) in ("refused", "recovered")
        return
    got, stderr, calls = run(backend.library, tmp_path, f"""
        module = cubind.Module.load(open({str(ptx)!r}, "rb").read())
        bump = module.get_kernel("bump")
        a = cubind.to_gpu(np.zeros(4, np.int32))
        stream = cubind.Stream()
        more = [cubind.empty(4, np.int32) for _ in range(3)]
        bump(1, 4, a, 4)                        # the fake poisons the context, as an illegal address would
        first = error(lambda: a.get())
        del a, more, stream                     # collected after the error: nothing may print
        gc.collect()
        print(json.dumps(first))
    """, FAKE_FAULT_ON_LAUNCH="1")
    assert got.startswith("CUDAError: ") and "CUDA_ERROR_ILLEGAL_ADDRESS (700)" in got, got
    assert "context is unusable" in got and "new process" in got and "Device(n).reset()" in got
    assert "Exception ignored" not in stderr and "Traceback" not in stderr, stderr
    assert "cuMemFree" not in [name for name, _ in calls]   # nothing to free in a poisoned context


@pytest.mark.provokes_api_error  # the kernel writes to an illegal address before the reset
def test_reset_makes_the_device_usable_and_old_objects_refuse_use(backend, tmp_path, ptx):
    if backend.real:
        assert run_on_the_gpu(backend, RESET_SCRIPT) == "reset ok"
        return
    got, stderr, calls = run(backend.library, tmp_path, f"""
        module = cubind.Module.load(open({str(ptx)!r}, "rb").read())
        bump = module.get_kernel("bump")
        old = cubind.to_gpu(np.zeros(4, np.int32))
        stream, event = cubind.Stream(), cubind.Event()
        bump(1, 4, old, 4)
        sticky = error(lambda: old.get())
        cubind.Device(0).reset()
        refused = [error(lambda: old.get()), error(lambda: stream.synchronize()), error(lambda: event.query()),
                   error(lambda: bump(1, 4, 0, 4))]
        new = cubind.to_gpu(np.arange(4, dtype=np.int32))
        module.get_kernel("bump")(1, 4, new, 4)  # the module loads again
        del old, stream, event
        gc.collect()
        print(json.dumps([sticky, refused, new.device.ordinal]))
    """, FAKE_FAULT_ON_LAUNCH="1")
    sticky, refused, device = got
    assert "unusable" in sticky
    assert refused[0] == ("ValueError: the array's memory was released (free() or the end of its 'with' block); "
                          "it can no longer be used")
    assert refused[1] == "ValueError: stream: its context was destroyed by Device.reset(); make a new stream"
    assert refused[2] == "ValueError: event: its context was destroyed by Device.reset(); make a new event"
    assert refused[3] == "ValueError: bump: its module was closed"
    assert device == 0
    assert stderr == ""
    names = [name for name, _ in calls]
    reset = names.index("cuDevicePrimaryCtxReset")
    before = {arg for name, arg in calls[:reset] if name == "cuMemAlloc"}
    after = {arg for name, arg in calls[reset:] if name == "cuMemAlloc"}
    freed = {arg for name, arg in calls if name == "cuMemFree"}
    assert not before & freed          # what died with the old context is never freed in the new one
    assert after and after <= freed    # what the new one holds is freed at exit
    # the old retain is given back after the reset, a new one taken; both released by the end
    assert names.count("cuDevicePrimaryCtxRetain") == names.count("cuDevicePrimaryCtxRelease") == 2
    assert "cuStreamDestroy" not in names[reset:] and "cuEventDestroy" not in names[reset:]


def test_the_layer_asks_only_for_what_exists(fake_driver, tmp_path, ptx):
    got, stderr, _ = run(fake_driver, tmp_path, f"""
        arch = cubind.default_arch()            # no context current: device 0, never cuCtxGetDevice
        module = cubind.Module.load(open({str(ptx)!r}, "rb").read())
        missing = error(lambda: module.get_global("no_such_variable"))
        print(json.dumps([arch, missing, requested()]))
    """)
    arch, missing, requests = got
    names = [name for name, _, _ in requests]
    assert missing == "ValueError: global 'no_such_variable' is not in the module"
    assert "cuLibraryGetGlobal" not in names and "cuCtxGetDevice" not in names
    assert all(rc == 0 for _, _, rc in requests), requests


def test_kernel_parameter_count_comes_from_the_cubin():
    pytest.importorskip("numpy")
    import cubind
    from cubind._launch.cubin import param_count

    source = KERNEL + r"""
    struct S { char c[24]; };
    extern "C" __global__ void three(S s, int *p, char c) { p[0] = s.c[3] + c; }
    """
    code = cubind.Program(source).compile("cubin", arch=75).code
    assert [param_count(code, name) for name in ("bump", "nothing", "three")] == [2, 0, 3]
    assert param_count(code, "absent") is None
    assert param_count(b"not an ELF", "bump") is None
    assert param_count(code[:200], "bump") is None   # a truncated image is not read past its end


def test_memory_used_on_another_stream_is_freed_after_that_streams_work(fake_driver, tmp_path):
    # Stream-ordered memory goes back to the pool in its own stream's order;
    # record_stream makes the free wait for another stream's work as well.
    out, stderr, calls = run(fake_driver, tmp_path, """
        waits = ctypes.c_int.in_dll(fake, "fake_stream_wait_count")
        last = ctypes.c_ulonglong.in_dll(fake, "fake_last_wait_stream")
        own, other = cubind.Stream(), cubind.Stream()
        a = cubind.empty(16, np.float32, stream=own)
        a.record_stream(other)
        a.record_stream(other)          # once is enough
        a.record_stream(own)            # its own stream: nothing to add
        before = waits.value
        ids = {"own": int(own), "ptr": a.ptr}
        other_handle = int(other)
        del other                       # its destruction waits for the free
        ids["destroyed_early"] = any(line.split()[-1] == hex(other_handle) for line in
                                     open(__import__("os").environ["FAKE_CALL_LOG"]) if "cuStreamDestroy" in line)
        del a
        gc.collect()
        ids.update(waits=waits.value - before, waited_on=last.value, other=other_handle)
        b = cubind.empty(16, np.float32, pool=False)    # cuMemAlloc memory: its free waits for all work anyway
        b.record_stream(own)
        del b
        ids["after_sync_free"] = waits.value - before
        c = cubind.empty(4, np.float32, stream=own)
        c.free()
        try:
            c.record_stream(own)
        except ValueError as exc:
            ids["refused"] = str(exc)
        print(json.dumps(ids))
    """)
    assert stderr == ""
    assert out["waits"] == 1 and out["waited_on"] == out["own"]    # the allocation stream waited once
    assert out["after_sync_free"] == 1
    assert not out["destroyed_early"]
    assert "released" in out["refused"]
    names = [(call[0], int(call[-1], 16)) for call in calls]
    assert names.index(("cuMemFree", out["ptr"])) < names.index(("cuStreamDestroy", out["other"]))



@pytest.mark.parametrize("preset", [0, 1 << 30])
def test_the_pool_keeps_freed_memory_unless_its_threshold_was_set(fake_driver, tmp_path, preset):
    # The driver's release threshold of 0 hands a pool's free memory back at
    # every synchronisation (the next allocation maps it again); cubind raises
    # it before a device's first stream-ordered allocation, as cuda.core does,
    # and leaves a threshold someone set.
    out, stderr, _ = run(fake_driver, tmp_path, f"""
        threshold = ctypes.c_ulonglong.in_dll(fake, "fake_pool_release_threshold")
        sets = ctypes.c_int.in_dll(fake, "fake_pool_threshold_sets")
        threshold.value = {preset}
        plain = cubind.empty(16, np.float32, pool=False)  # cuMemAlloc: no pool
        before = (threshold.value, sets.value)
        s = cubind.Stream()
        arrays = [cubind.empty(16, np.float32, stream=s) for _ in range(3)]
        print(json.dumps([before, threshold.value, sets.value]))
    """)
    assert stderr == ""
    before, after, sets = out
    assert before == [preset, 0]
    if preset:
        assert (after, sets) == (preset, 0)
    else:
        assert (after, sets) == (2**64 - 1, 1)   # once, for all three


def test_copy_into_takes_only_writable_c_contiguous_buffers(fake_driver, tmp_path):
    # Array.get(out=...)'s direct path: anything else goes back to the general one (False), never raises.
    out, stderr, _ = run(fake_driver, tmp_path, """
        from cubind._memory.memory import copy_into
        a = cubind.to_gpu(np.arange(8, dtype=np.float32))
        ro = np.zeros(8, np.float32)
        ro.flags.writeable = False
        got = [copy_into(np.zeros(8, np.float32), a.ptr), copy_into(np.zeros(16, np.float32)[::2], a.ptr),
               copy_into(ro, a.ptr)]
        strided = np.zeros(16, np.float32)[::2]
        a.get(out=strided)                 # through the general path
        print(json.dumps(got))
    """)
    assert stderr == ""
    assert out == [True, False, False]


# == a release runs once, whoever asks first ==========================================================


def test_a_release_runs_once_when_a_close_races_the_objects_death_and_the_exit_hook():
    """Eight threads close an object's release while the object goes in
    another and the exit hook's path runs too: ``fn`` runs once per object,
    and an object collected alone releases by itself."""
    import gc
    import threading

    from cubind._core import lifetime

    class Held:
        __slots__ = ("__weakref__",)

    runs, lock = [], threading.Lock()

    def fn(i):
        with lock:
            runs.append(i)

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for round_ in range(200):
            objs = [Held() for _ in range(4)]
            releases = [lifetime.track(o, None, fn, (round_, k)) for k, o in enumerate(objs)]
            barrier = threading.Barrier(9)

            def closer(barrier=barrier, releases=releases):
                barrier.wait()
                for r in releases:
                    r()

            threads = [threading.Thread(target=closer) for _ in range(8)]
            for t in threads:
                t.start()
            barrier.wait()
            del objs[:]  # the objects go while the closers run
            for r in releases[::2]:
                with lifetime._lock:  # what _at_exit does: take the entry, then run it
                    taken = lifetime._resources.pop(r, None) is not None
                if taken:
                    r._run()
            for t in threads:
                t.join()
        assert sorted(runs) == [(i, k) for i in range(200) for k in range(4)]
        runs.clear()
        held = Held()
        lifetime.track(held, None, fn, "alone")
        del held
        gc.collect()
        assert runs == ["alone"]
    finally:
        sys.setswitchinterval(switch)
