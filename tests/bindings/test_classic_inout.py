"""In/out parameters of the classic convention: an in/out count left out asks
for the count (`cuGraphGetNodes(graph)` -> `(err, [], numNodes)`), and an
in/out scalar is taken and its new value returned
(`cuThreadExchangeStreamCaptureMode(mode)` -> `(err, previous_mode)`)."""
import textwrap

import pytest

import cuda
from cuda import cudart

SCRIPT = textwrap.dedent("""
    import cuda
    from tests._helpers import ok

    ok(cuda.cuInit(0))
    ctx = ok(cuda.cuDevicePrimaryCtxRetain(ok(cuda.cuDeviceGet(0))))
    ok(cuda.cuCtxSetCurrent(ctx))
    graph = ok(cuda.cuGraphCreate(0))
    first = ok(cuda.cuGraphAddEmptyNode(graph, None, 0))
    second = ok(cuda.cuGraphAddEmptyNode(graph, [first], 1))
    # Left out, the count is 0: the call only counts, as NVIDIA's bindings.
    nodes, count = ok(cuda.cuGraphGetNodes(graph))
    assert nodes == [] and count == 2, (nodes, count)
    nodes, count = ok(cuda.cuGraphGetNodes(graph, count))
    assert count == 2 and sorted(map(int, nodes)) == sorted([int(first), int(second)]), (nodes, count)
    roots, count = ok(cuda.cuGraphGetRootNodes(graph)) if {real} else ([], 1)
    assert roots == [] and count == 1, (roots, count)
    ok(cuda.cuGraphDestroy(graph))

    mode = cuda.CUstreamCaptureMode
    previous = ok(cuda.cuThreadExchangeStreamCaptureMode(mode.CU_STREAM_CAPTURE_MODE_RELAXED))
    assert previous == mode.CU_STREAM_CAPTURE_MODE_GLOBAL, previous
    previous = ok(cuda.cuThreadExchangeStreamCaptureMode(previous))
    assert previous == mode.CU_STREAM_CAPTURE_MODE_RELAXED and type(previous) is mode, previous
    print("inout ok")
""")


def test_counts_default_to_asking_and_scalars_are_swapped(backend):
    done = backend.run(SCRIPT.format(real=backend.real))
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "inout ok"


def test_an_inout_scalar_is_checked_before_the_call():
    with pytest.raises(TypeError, match="mode"):
        cuda.cuThreadExchangeStreamCaptureMode("relaxed")
    with pytest.raises(TypeError, match="mode"):
        cuda.cuThreadExchangeStreamCaptureMode(cuda.CUstreamCaptureStatus.CU_STREAM_CAPTURE_STATUS_NONE)
    with pytest.raises(TypeError, match="mode"):
        cudart.cudaThreadExchangeStreamCaptureMode(None)
    with pytest.raises(TypeError):
        cuda.cuThreadExchangeStreamCaptureMode()

