"""The suite's emulated driver (tests/fake_driver) catches what it says it
catches: what a real driver would crash on or refuse is answered with an
error and recorded as a violation, so that a test relying on it can fail.
Run in this process, on the driver the suite loaded (skipped on a GPU)."""

import numpy as np
import pytest

from tests._helpers import import_cubind_driver, ok

cuda = import_cubind_driver()
pytestmark = pytest.mark.provokes_api_error  # every test here makes a call fail on purpose


@pytest.fixture
def context(emulated_gpu):
    import cubind

    cubind.ensure_context()
    return emulated_gpu


def test_a_copy_outside_every_live_allocation_is_refused(context):
    ptr = int(ok(cuda.cuMemAlloc(16)))
    host = np.zeros(32, np.uint8)
    assert int(cuda.cuMemcpyHtoD(ptr, host, 32)[0]) == 1  # 16 bytes past the end
    assert int(cuda.cuMemcpyHtoD(ptr + 8, host, 8)[0]) == 0  # inside: copied
    assert "outside every live allocation" in context.violations[-1]
    ok(cuda.cuMemFree(ptr))


def test_a_use_after_free_and_a_second_free_are_refused(context):
    ptr = int(ok(cuda.cuMemAlloc(64)))
    ok(cuda.cuMemFree(ptr))
    # the quarantine keeps the address from a new allocation: the use is caught, not a read of other data
    assert int(cuda.cuMemsetD8(ptr, 1, 64)[0]) == 1
    assert int(cuda.cuMemFree(ptr)[0]) == 1
    assert any("not allocated (or freed already)" in v for v in context.violations)
    assert int(ok(cuda.cuMemAlloc(64))) != ptr


def test_an_event_used_or_destroyed_after_its_destruction_is_refused(context):
    event = ok(cuda.cuEventCreate(0))
    ok(cuda.cuEventDestroy(event))
    assert int(cuda.cuEventQuery(event)[0]) == 400
    assert int(cuda.cuEventRecord(event, 0)[0]) == 400
    assert int(cuda.cuEventDestroy(event)[0]) == 400
    assert [v.split(" on ")[0].split(" of ")[0] for v in context.violations] == \
        ["cuEventQuery", "cuEventRecord", "cuEventDestroy"]


def test_events_finish_after_their_queries_or_stay_queued(context):
    context.configure(event_queries=2)
    event = ok(cuda.cuEventCreate(0))
    assert [int(cuda.cuEventQuery(event)[0]) for _ in range(3)] == [600, 600, 0]
    context.events_done = False
    assert int(cuda.cuEventQuery(event)[0]) == 600
    context.events_done = True
    ok(cuda.cuEventDestroy(event))
    assert context.violations == []


def test_refused_kernels_and_injected_failures(context):
    import cubind

    context.configure(kernels=False)
    a = cubind.to_gpu(np.arange(6.0).reshape(2, 3))
    with pytest.raises(cubind.CUDAError):
        a.astype(np.float32)  # the converting copy kernel, refused
    assert context.violations[-1] == "the test's layouts need no cubind_copy_float64_float32 kernel"
    context.fail("cuMemAlloc", 2)
    with pytest.raises(cubind.CUDAError, match="cuMemAlloc"):
        cubind.empty(4, pool=False)
