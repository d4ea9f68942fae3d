"""The current context read at the C level (cubind/_core/current.pyx), and
``ensure_context`` answering from it, against the emulated driver."""

import cubind
from cubind._core.current import current_ordinal
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

