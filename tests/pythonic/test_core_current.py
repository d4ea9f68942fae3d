"""The current context read at the C level (cubind/_core/current.pyx), and
``ensure_context`` answering from it, against the emulated driver; whether
its default stream is idle."""

import pytest

import cubind
from cubind._core.current import current_ordinal, default_stream_idle
from cuda import cuda


def test_the_current_ordinal_is_the_current_contexts_device_and_minus_one_without_one(emulated_gpu, monkeypatch):
    monkeypatch.setenv("FAKE_DEVICE_COUNT", "1")
    own = cuda.cuCtxGetCurrent()[1]
    try:
        cuda.cuCtxSetCurrent(0)
        assert current_ordinal() == -1
        assert cubind.ensure_context() == 0  # none current: device 0's primary context is made current
        assert int(cuda.cuCtxGetCurrent()[1]) == int(cubind.Device(0).context)
        assert current_ordinal() == 0
    finally:
        cuda.cuCtxSetCurrent(own)



@pytest.mark.provokes_api_error
def test_the_default_stream_is_idle_only_when_the_driver_says_all_its_work_ran(emulated_gpu, monkeypatch):
    monkeypatch.setenv("FAKE_DEVICE_COUNT", "1")
    cubind.ensure_context()
    monkeypatch.delenv("FAKE_STREAMS_BUSY", raising=False)
    assert default_stream_idle() is True
    monkeypatch.setenv("FAKE_STREAMS_BUSY", "1")  # work still queued: CUDA_ERROR_NOT_READY
    assert default_stream_idle() is False
    monkeypatch.delenv("FAKE_STREAMS_BUSY")
    emulated_gpu.fail("cuStreamQuery", 700)  # an error is no answer: not idle (an event is recorded)
    try:
        assert default_stream_idle() is False
    finally:
        emulated_gpu.reset()
