"""Python host callbacks of the 1:1 driver module under threads: 16 threads
each queue callables on their own stream at once, and callbacks that raise.
Each callback runs once, on the driver's thread, with the GIL taken there;
an exception in one is reported through sys.unraisablehook and later ones
still run. Every test needs a real GPU (marked ``gpu``)."""

import sys
import threading

import pytest

from tests._helpers import ok

THREADS, PER_THREAD = 16, 200


@pytest.fixture
def cuda():
    import cubind
    import cuda

    cubind.ensure_context()   # device 0's primary context, current in this thread
    return cuda


@pytest.mark.gpu
def test_callbacks_queued_from_sixteen_threads_each_run_once(cuda):
    context = ok(cuda.cuCtxGetCurrent())
    seen, lock = {}, threading.Lock()
    start, errors = threading.Barrier(THREADS), []

    def callback(key):
        with lock:
            seen[key] = seen.get(key, 0) + 1

    def work(n):
        try:
            ok(cuda.cuCtxSetCurrent(context))
            stream = ok(cuda.cuStreamCreate(0))
            start.wait()
            for i in range(PER_THREAD):
                ok(cuda.cuLaunchHostFunc(stream, callback, (n, i)))
            ok(cuda.cuStreamSynchronize(stream))
            ok(cuda.cuStreamDestroy(stream))
        except Exception as exc:
            errors.append(repr(exc))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(seen) == THREADS * PER_THREAD
    assert set(seen.values()) == {1}


@pytest.mark.gpu
def test_a_raising_callback_is_reported_and_later_ones_run(cuda, monkeypatch):
    reported, ran = [], []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: reported.append(info.exc_value))
    stream = ok(cuda.cuStreamCreate(0))

    def boom(n):
        raise RuntimeError(f"callback {n} failed")

    try:
        for n in range(5):
            ok(cuda.cuLaunchHostFunc(stream, boom, n))
            ok(cuda.cuLaunchHostFunc(stream, ran.append, n))
        ok(cuda.cuStreamSynchronize(stream))
    finally:
        ok(cuda.cuStreamDestroy(stream))
    assert ran == [0, 1, 2, 3, 4]
    assert [str(e) for e in reported] == [f"callback {n} failed" for n in range(5)]
