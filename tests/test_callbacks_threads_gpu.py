"""Python host callbacks of the 1:1 driver module under threads: 16 threads
each queue callables on their own stream at once, and callbacks that raise.
Each callback runs once, on the driver's thread, with the GIL taken there;
an exception in one is reported through sys.unraisablehook and later ones
still run."""

import sys
import threading

import pytest

pytestmark = pytest.mark.gpu

THREADS, PER_THREAD = 16, 200


@pytest.fixture
def cuda():
    import cubind
    import cuda

    cubind.ensure_context()   # device 0's primary context, current in this thread
    return cuda


def _ok(result):
    assert int(result[0]) == 0, result
    return result[1] if len(result) == 2 else result[1:]


def test_callbacks_queued_from_sixteen_threads_each_run_once(cuda):
    context = _ok(cuda.cuCtxGetCurrent())
    seen, lock = {}, threading.Lock()
    start, errors = threading.Barrier(THREADS), []

    def callback(key):
        with lock:
            seen[key] = seen.get(key, 0) + 1

    def work(n):
        try:
            _ok(cuda.cuCtxSetCurrent(context))
            stream = _ok(cuda.cuStreamCreate(0))
            start.wait()
            for i in range(PER_THREAD):
                _ok(cuda.cuLaunchHostFunc(stream, callback, (n, i)))
            _ok(cuda.cuStreamSynchronize(stream))
            _ok(cuda.cuStreamDestroy(stream))
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


def test_a_raising_callback_is_reported_and_later_ones_run(cuda, monkeypatch):
    reported, ran = [], []
    monkeypatch.setattr(sys, "unraisablehook", lambda info: reported.append(info.exc_value))
    stream = _ok(cuda.cuStreamCreate(0))

    def boom(n):
        raise RuntimeError(f"callback {n} failed")

    try:
        for n in range(5):
            _ok(cuda.cuLaunchHostFunc(stream, boom, n))
            _ok(cuda.cuLaunchHostFunc(stream, ran.append, n))
        _ok(cuda.cuStreamSynchronize(stream))
    finally:
        _ok(cuda.cuStreamDestroy(stream))
    assert ran == [0, 1, 2, 3, 4]
    assert [str(e) for e in reported] == [f"callback {n} failed" for n in range(5)]
