"""cubind/_core/pending.py from many threads at once, without a GPU.

The driver is a Python stand-in that checks what a real driver would crash
on: an event queried, waited on or destroyed after it was destroyed, or
destroyed twice. Each of its calls gives up the GIL, as the binding's calls
do around C, so threads interleave where they would with a real driver.
On b53cf2a two threads' sweeps took the same finished entry from one snapshot
and both destroyed its event (the crash seen on the H200 with 8 threads)."""

import itertools
import sys
import threading
import time

import pytest

from cubind._core import pending as _pending

THREADS, ROUNDS = 16, 200


class CheckingDriver:
    """Events that finish after a few queries; every misuse is recorded."""

    def __init__(self):
        self.lock = threading.Lock()
        self.live, self.misuse, self.ids = {}, [], itertools.count(1)

    def _use(self, call, event):
        time.sleep(0)   # the binding releases the GIL around every C call
        with self.lock:
            if event not in self.live:
                self.misuse.append(f"{call} on destroyed event {event}")
                return None
            return self.live[event]

    def cuEventCreate(self, flags):
        with self.lock:
            event = next(self.ids)
            self.live[event] = 3   # NOT_READY for the first queries
        return 0, event

    def cuEventRecord(self, event, stream):
        self._use("cuEventRecord", event)
        return (0,)

    def cuEventQuery(self, event):
        left = self._use("cuEventQuery", event)
        with self.lock:
            if event in self.live and left:
                self.live[event] = left - 1
                return (600,)
        return (0,)

    def cuEventSynchronize(self, event):
        self._use("cuEventSynchronize", event)
        return (0,)

    def cuStreamWaitEvent(self, stream, event, flags):
        self._use("cuStreamWaitEvent", event)
        return (0,)

    def cuEventDestroy(self, event):
        time.sleep(0)
        with self.lock:
            if self.live.pop(event, None) is None:
                self.misuse.append(f"cuEventDestroy of destroyed event {event}")
        return (0,)


@pytest.fixture
def driver(monkeypatch):
    fake = CheckingDriver()
    monkeypatch.setattr(_pending, "_driver", lambda: fake)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)   # switch threads as often as CPython allows
    yield fake
    sys.setswitchinterval(previous)
    with _pending._lock:
        _pending._pending.clear()


def test_hold_sweep_and_wait_from_many_threads(driver):
    errors, start = [], threading.Barrier(THREADS)

    class Buffer:   # what the entries keep alive
        pass

    def work(n):
        try:
            start.wait()
            for i in range(ROUNDS):
                mine = Buffer()
                _pending.hold(n, mine)
                if i % 3 == 0:
                    _pending.wait_for(mine, None if i % 2 else n)
                _pending.sweep()
                _pending.order(n, (n + 1) % THREADS)
        except Exception as exc:   # a ValueError from list.remove on b53cf2a
            errors.append(repr(exc))

    threads = [threading.Thread(target=work, args=(n,)) for n in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert driver.misuse == []
    while _pending.sweep():
        pass
    assert _pending.pending_count() == 0
    assert driver.live == {}, "every event made was destroyed once"
