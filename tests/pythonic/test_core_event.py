"""cubind.Event's own lifetime (cubind/_core/event.pyx), against the
emulated driver, which records every event made and destroyed and what a
real driver would crash on (an event used or destroyed after its
destruction): events made, closed, shared and dropped on many threads at
once are each destroyed once and leave the live list empty; a closed event
refuses use; the collector destroys a dropped one. What events measure and
order on a GPU is in test_core_device_stream_event.py; their release at exit
and at a reset in test_lifetime.py."""

import contextlib
import gc
import threading

import cubind
from cubind._core import event as _event
from tests._helpers import switching

THREADS, ROUNDS = 8, 1500




def test_events_made_closed_shared_and_dropped_on_many_threads_are_each_destroyed_once(emulated_gpu):
    # The live list is linked through the events without a lock; a close
    # racing another thread's close of the same event, or the collector's,
    # must destroy it once. Every thread also closes each of a common set
    # of events, at the shortest switch interval.
    driver = emulated_gpu.configure(latency=0, record_calls=False)
    common = [cubind.Event(timing=bool(n % 2)) for n in range(500)]
    shared, errors = [], []
    start = threading.Barrier(THREADS)

    def work():
        try:
            start.wait()
            for n in range(ROUNDS):
                event = cubind.Event(timing=bool(n % 2)).record(None)
                if n % 3 == 0:
                    event.close()
                elif n % 3 == 1:
                    shared.append(event)  # closed by whichever thread pops it, or collected
                if n % 5 == 0 and shared:
                    with contextlib.suppress(IndexError):
                        shared.pop().close()
                if n < len(common):
                    common[n].close()
        except Exception as exc:  # noqa: BLE001 - reported below with the others
            errors.append(repr(exc))

    with switching(1e-6):
        threads = [threading.Thread(target=work) for _ in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert errors == []
    assert _event.live_count() == len(shared)  # the rest closed, or destroyed as they were dropped
    del shared[:], common[:]
    gc.collect()
    assert _event.live_count() == 0
    assert driver.violations == []
    assert driver.events == [], "every event made was destroyed once"


def test_a_closed_event_refuses_use_and_a_dropped_one_is_destroyed(emulated_gpu):
    driver = emulated_gpu.configure(latency=0)
    kept, dropped = cubind.Event(), cubind.Event(timing=False)
    assert len(driver.events) == 2 and _event.live_count() == 2
    del dropped
    assert len(driver.events) == 1 and _event.live_count() == 1  # destroyed as the last reference went
    kept.record(None)
    assert kept.query() is True
    kept.close()
    kept.close()  # idempotent
    assert driver.events == [] and _event.live_count() == 0
    for use in (kept.query, kept.synchronize, lambda: kept.record(None), lambda: kept.handle):
        try:
            use()
        except ValueError as exc:
            assert str(exc) == "event: the event is closed"
        else:
            raise AssertionError("a closed event was used")
    assert repr(kept) == "<cubind.Event (closed)>"
    assert driver.violations == []


def test_a_record_on_what_is_not_a_stream_names_the_parameter(emulated_gpu):
    emulated_gpu.configure(latency=0)
    event = cubind.Event()
    cases = [("not a stream", TypeError, "stream: expected a stream"),
             (-1, ValueError, "stream: a handle is not negative, got -1"),
             (1 << 64, OverflowError, "stream: 0x10000000000000000 is wider than a handle")]
    for stream, kind, message in cases:
        try:
            event.record(stream)
        except kind as exc:
            assert str(exc).startswith(message), exc
        else:
            raise AssertionError(f"record({stream!r}) was taken")
    assert event.record(None) is event  # still usable


def test_a_record_on_a_devices_default_stream_pushes_its_context_only_where_another_is_current(emulated_gpu,
                                                                                               monkeypatch):
    # A ready event per device message records on the default stream of the
    # context already current: the push and pop around it were two driver
    # calls through the 1:1 functions, kept for another context only.
    from cuda import cuda

    monkeypatch.setenv("FAKE_DEVICE_COUNT", "1")
    device = cubind.Device(0)
    device.set_current()
    event = cubind.Event(timing=False)
    emulated_gpu.clear_calls()
    event.record(device.default_stream)
    assert emulated_gpu.names() == ["cuEventRecord"]
    own = cuda.cuCtxGetCurrent()[1]
    cuda.cuCtxSetCurrent(0xD0)  # another context is current now
    try:
        emulated_gpu.clear_calls()
        event.record(device.default_stream)
        assert emulated_gpu.names() == ["cuCtxPushCurrent", "cuEventRecord", "cuCtxPopCurrent"]
        assert int(cuda.cuCtxGetCurrent()[1]) == 0xD0
    finally:
        cuda.cuCtxSetCurrent(own)
