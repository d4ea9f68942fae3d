"""The Pythonic layer's pending work and arrays from many threads at once.

Without a GPU, against the emulated driver (tests/fake_driver), which checks
what a real driver would crash on (an event queried, waited on or destroyed
after its destruction, memory freed twice) and records it:
cubind/_pending.py alone, the driver's calls giving up the GIL as the
binding's do around C (on b53cf2a two threads' sweeps took the same finished
entry from one snapshot and both destroyed its event, the crash seen on the
H200 with 8 threads); and 16 threads driving arrays through it, its events
completing after a few queries, so that pending work piles up and every
thread sweeps, waits on and frees entries others made.

On a real GPU (marked ``gpu``): 16 threads (CUBIND_STRESS_THREADS) each run
1000 rounds (CUBIND_STRESS_ROUNDS) mixing everything a program does with the
layer: arrays made with to_gpu, empty and zeros, views, kernels launched on
the thread's own stream and on a stream all threads share, reads checked
against numpy, explicit free(), arrays handed to the next thread to release
(or to leave to gc.collect()), events recorded on one stream and waited on by
another, and compiles of one source by several threads at once with the
compile cache on. On b53cf2a eight threads doing a third of this crashed the
interpreter in cubind/_pending.py.
"""

import gc
import os
import queue
import threading

import numpy as np
import pytest

import cubind
import cubind._core.pending as _pending
from cubind import empty, to_gpu
from tests._helpers import import_cubind_driver, switching

cuda = import_cubind_driver()




# == cubind/_pending.py alone, against the emulated driver =======================================

PENDING_THREADS, PENDING_ROUNDS = 16, 200


@pytest.fixture
def checking_driver(emulated_gpu):
    """The emulated driver under cubind/_core/pending.py: events done after 3
    queries, the thread yielding before each use of one (the binding gives
    up the GIL around every C call), threads switched as often as CPython
    allows."""
    with switching(1e-6):
        yield emulated_gpu.configure(event_queries=3, latency=0, record_calls=False)


def test_hold_sweep_and_wait_from_many_threads(checking_driver):
    errors, start = [], threading.Barrier(PENDING_THREADS)

    class Buffer:   # what the entries keep alive
        pass

    def work(n):
        try:
            start.wait()
            for i in range(PENDING_ROUNDS):
                mine = Buffer()
                _pending.hold(n, mine)
                if i % 3 == 0:
                    _pending.wait_for(mine, None if i % 2 else n)
                _pending.sweep()
                _pending.order(n, (n + 1) % PENDING_THREADS)
        except Exception as exc:   # a ValueError from list.remove on b53cf2a
            errors.append(repr(exc))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(PENDING_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert checking_driver.violations == []
    while _pending.sweep():
        pass
    assert _pending.pending_count() == 0
    assert checking_driver.events == [], "every event made was destroyed once"


@pytest.fixture
def recording_pending_driver(emulated_gpu):
    """The emulated driver under cubind/_core/pending.py, keeping its calls."""
    return emulated_gpu.configure(latency=0)


def test_order_records_the_threads_own_event_again_and_destroys_it_when_the_thread_ends(recording_pending_driver):
    # cuStreamWaitEvent snapshots the event's last record: one event per
    # thread serves every order(), not one made and destroyed per call.
    driver = recording_pending_driver
    made = {}

    def work(n):
        for _ in range(50):
            _pending.order(n, n + 1)
        made[n] = driver.names().count("cuEventCreate")

    for n in range(3):
        t = threading.Thread(target=work, args=(n,))
        t.start()
        t.join()
    assert made == {0: 1, 1: 2, 2: 3}           # one per thread, whatever its calls
    gc.collect()
    assert driver.violations == [] and driver.events == []  # each destroyed with its thread


# == arrays from 16 threads over a thread-safe emulated driver ====================================

THREADS = 16
ITERATIONS = int(os.environ.get("CUBIND_THREADS_NOGPU_ITERATIONS", "200"))


@pytest.fixture
def threaded_gpu(emulated_gpu):
    """The emulated driver, safe from any thread: copies happen at once (the
    values are then right whatever the stream order), events complete after
    0-3 queries, the thread yields before each use of an event, the array's
    kernels are refused (the layouts need none), threads switch as often as
    the interpreter can."""
    with switching(1e-6):
        yield emulated_gpu.configure(event_queries="random", latency=0, kernels=False, record_calls=False)


def _worker(index, shared_stream, handover, errors, barrier):
    rng = np.random.default_rng(index)
    own = 0x100 + index
    try:
        barrier.wait()
        for i in range(ITERATIONS):
            host = rng.standard_normal(8).astype(np.float32)
            a = to_gpu(host, stream=own)  # held until the copy's event is done
            np.testing.assert_array_equal(a[2:6].get(stream=own), host[2:6])
            b = empty(8, np.float32, stream=shared_stream)
            b.fill(float(i), stream=own)  # on another stream than b's: ordered and held
            b[4:].copy_from(a[:4], stream=shared_stream)
            expect = np.concatenate([np.full(4, i, np.float32), host[:4]])
            np.testing.assert_array_equal(b.get(stream=own), expect)
            if i % 3 == 0:
                a.free()  # waits for the work still holding its memory
            else:
                handover.put((a, host))  # another thread checks it and drops it
            if i % 5 == 0:
                _pending.sweep()
            try:
                theirs, their_host = handover.get_nowait()
            except queue.Empty:
                pass
            else:
                np.testing.assert_array_equal(theirs.get(stream=own), their_host)
                if i % 2:
                    theirs.free()
                del theirs
            _pending.wait_for(b.memory, own)
            if i % 50 == 0:
                gc.collect()
    except BaseException as exc:  # reported by the main thread
        errors.append((index, exc))


def test_arrays_from_16_threads_share_the_pending_work_safely(threaded_gpu):
    shared_stream = 0x99
    handover = queue.Queue()
    errors = []
    barrier = threading.Barrier(THREADS)
    threads = [threading.Thread(target=_worker, args=(k, shared_stream, handover, errors, barrier))
               for k in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert not threaded_gpu.violations, threaded_gpu.violations[:5]
    while not handover.empty():
        a, host = handover.get()
        np.testing.assert_array_equal(a.get(), host)
        del a
    # Every event completes after at most 3 queries: a few sweeps release all.
    for _ in range(4):
        _pending.sweep()
    assert _pending.pending_count() == 0
    gc.collect()
    assert not threaded_gpu.allocs, f"{len(threaded_gpu.allocs)} allocations never freed"
    assert not threaded_gpu.events, f"{len(threaded_gpu.events)} events never destroyed"
    assert not threaded_gpu.violations, threaded_gpu.violations[:5]


def test_wait_for_pins_the_event_it_synchronizes_on(threaded_gpu, monkeypatch):
    """A thread synchronizing on an entry's event while others sweep: the
    event stays until the synchronize returns."""
    mem = object()
    entered, release = threading.Event(), threading.Event()
    synchronize = cuda.cuEventSynchronize

    def slow_synchronize(event):
        entered.set()
        release.wait(10)
        return synchronize(event)

    monkeypatch.setattr(cuda, "cuEventSynchronize", slow_synchronize)
    _pending.hold(0x42, mem)
    event = _pending._pending[0].event
    threaded_gpu.finish(event)  # its work is done: any sweep would drop it
    waiter = threading.Thread(target=_pending.wait_for, args=(mem,))
    waiter.start()
    assert entered.wait(10)
    assert _pending.sweep() == 1  # pinned: kept, event alive
    assert int(event) in threaded_gpu.events
    release.set()
    waiter.join()
    assert _pending.sweep() == 0
    assert not threaded_gpu.violations, threaded_gpu.violations


def test_a_finalizer_inside_a_sweep_may_free_held_memory(threaded_gpu, monkeypatch):
    """A garbage collection can start at any allocation inside _pending's
    critical sections and run a finalizer that frees memory (wait_for) or
    queues work (hold): it must neither deadlock nor disturb the sweep."""
    held = object()
    _pending.hold(0x42, held)
    _pending.hold(0x43, object())
    for entry in _pending._pending:
        threaded_gpu.finish(entry.event)
    query = cuda.cuEventQuery
    nested = []

    def query_running_a_finalizer(event):
        if not nested:
            nested.append(True)
            _pending.wait_for(held)  # as DeviceMemory.release() from a __del__ would
            _pending.wait_for(held, 0x44)
            _pending.hold(0x45, object())  # queued meanwhile: kept by the outer sweep
        return query(event)

    monkeypatch.setattr(cuda, "cuEventQuery", query_running_a_finalizer)
    sweeper = threading.Thread(target=_pending.sweep, daemon=True)
    sweeper.start()
    sweeper.join(10)
    assert not sweeper.is_alive(), "sweep deadlocked on a nested wait_for"
    assert nested
    monkeypatch.setattr(cuda, "cuEventQuery", query)
    for _ in range(4):
        _pending.sweep()
    assert _pending.pending_count() == 0
    assert not threaded_gpu.events
    assert not threaded_gpu.violations, threaded_gpu.violations


# == on a real GPU (marked gpu): the whole layer from 16 threads ===================================

STRESS_THREADS = int(os.environ.get("CUBIND_STRESS_THREADS", "16"))
STRESS_ROUNDS = int(os.environ.get("CUBIND_STRESS_ROUNDS", "1000"))

STRESS_SOURCE = r"""
extern "C" __global__ void axpb(float *x, float a, float b, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}
"""


def _compile(tag):
    # The same source for every thread with the same tag: concurrent compiles and cache writes of one entry.
    return cubind.Program(STRESS_SOURCE + f"// {tag}\n").compile().get_kernel("axpb")


@pytest.mark.gpu
def test_many_threads_share_the_layer(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBIND_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUBIND_NO_COMPILE_CACHE", raising=False)
    shared = cubind.Stream()
    handover = [queue.Queue() for _ in range(STRESS_THREADS)]
    start = threading.Barrier(STRESS_THREADS)
    errors = []

    def work(n):
        try:
            start.wait()
            kernel = _compile(n % 4)   # four sources, each compiled by STRESS_THREADS/4 threads at once
            own = cubind.Stream()
            rng = np.random.default_rng(n)
            for i in range(STRESS_ROUNDS):
                size = int(rng.integers(1, 3000))
                host = rng.random(size, dtype=np.float32)
                stream = shared if i % 5 == 0 else own
                a = cubind.to_gpu(host, stream=stream)
                kernel(((size + 127) // 128,), (128,), a, np.float32(2), np.float32(1), size, stream=stream)
                want = host * np.float32(2) + np.float32(1)
                if i % 7 == 0:
                    view = a[1:] if size > 1 else a
                    got = view.get(stream=stream)
                    np.testing.assert_array_equal(got, want[1:] if size > 1 else want)
                else:
                    np.testing.assert_array_equal(a.get(stream=stream), want)
                b = cubind.empty(size, np.float32, stream=own)
                event = stream.record()
                own.wait(event)   # b's copy on `own` follows a's kernel, wherever it ran
                b.copy_from(a, stream=own)
                if i % 3 == 0:
                    b.free()
                else:
                    handover[(n + 1) % STRESS_THREADS].put((b, want))   # released (or checked) by the next thread
                z = cubind.zeros(16, np.int32, stream=own)
                if i % 11 == 0:
                    assert not z.get(stream=own).any()
                try:
                    while True:
                        theirs, expected = handover[n].get_nowait()
                        if i % 2:
                            np.testing.assert_array_equal(theirs.get(stream=own), expected)
                        del theirs
                except queue.Empty:
                    pass
                if i % 97 == 0:
                    gc.collect()
            own.synchronize()
        except Exception as exc:
            errors.append(f"thread {n}: {exc!r}")

    threads = [threading.Thread(target=work, args=(n,)) for n in range(STRESS_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for q in handover:
        while not q.empty():
            q.get()
    gc.collect()
    shared.synchronize()
    assert errors == []
    assert len(os.listdir(tmp_path / "cache")) > 0   # the threads' compiles went through the cache
