"""The Pythonic layer from many threads at once, on a GPU.

16 threads (CUBIND_STRESS_THREADS) each run 1000 rounds (CUBIND_STRESS_ROUNDS)
mixing everything a program does with the layer: arrays made with to_gpu,
empty and zeros, views, kernels launched on the thread's own stream and on a
stream all threads share, reads checked against numpy, explicit free(),
arrays handed to the next thread to release (or to leave to gc.collect()),
events recorded on one stream and waited on by another, and compiles of one
source by several threads at once with the compile cache on. On b53cf2a
eight threads doing a third of this crashed the interpreter in
cubind/_core/pending.py. The host-side version without a GPU is
tests/test_pending_threads.py.
"""

import gc
import os
import queue
import threading

import numpy as np
import pytest

import cubind

pytestmark = pytest.mark.gpu

THREADS = int(os.environ.get("CUBIND_STRESS_THREADS", "16"))
ROUNDS = int(os.environ.get("CUBIND_STRESS_ROUNDS", "1000"))

SOURCE = r"""
extern "C" __global__ void axpb(float *x, float a, float b, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + b;
}
"""


def _compile(tag):
    # The same source for every thread with the same tag: concurrent compiles and cache writes of one entry.
    return cubind.Program(SOURCE + f"// {tag}\n").compile().get_kernel("axpb")


def test_many_threads_share_the_layer(tmp_path, monkeypatch):
    monkeypatch.setenv("CUBIND_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("CUBIND_NO_COMPILE_CACHE", raising=False)
    shared = cubind.Stream()
    handover = [queue.Queue() for _ in range(THREADS)]
    start = threading.Barrier(THREADS)
    errors = []

    def work(n):
        try:
            start.wait()
            kernel = _compile(n % 4)   # four sources, each compiled by THREADS/4 threads at once
            own = cubind.Stream()
            rng = np.random.default_rng(n)
            for i in range(ROUNDS):
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
                    handover[(n + 1) % THREADS].put((b, want))   # released (or checked) by the next thread
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

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
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
