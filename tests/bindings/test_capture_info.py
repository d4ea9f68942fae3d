"""cuStreamGetCaptureInfo / cudaStreamGetCaptureInfo: the arrays the library
owns (the capture's current dependencies and their edge data) come back as
lists, counted by the count it returns, in the classic order
(err, status, id, graph, dependencies, edge data, count). That is CUDA 13's
form (_v3); CUDA 12's cuStreamGetCaptureInfo is _v2, without edge data, and
_v3 a function of its own: a 12.x build is checked in both forms."""

import inspect

import pytest

from tests._helpers import ok

cuda = pytest.importorskip("cuda")
cudart = pytest.importorskip("cuda.cudart")

CUDA_13 = cuda.CUDA_VERSION >= 13000
# The form with edge data: the plain name from CUDA 13 on, _v3 before.
DRIVER_INFO = "cuStreamGetCaptureInfo" if CUDA_13 else "cuStreamGetCaptureInfo_v3"
RUNTIME_INFO = "cudaStreamGetCaptureInfo" if CUDA_13 else "cudaStreamGetCaptureInfo_v3"


def test_signatures_take_only_the_stream():
    assert list(inspect.signature(cuda.cuStreamGetCaptureInfo).parameters) == ["hStream"]
    assert list(inspect.signature(cudart.cudaStreamGetCaptureInfo).parameters) == ["stream"]
    for fn in (cuda.cuStreamGetCaptureInfo, cudart.cudaStreamGetCaptureInfo):
        doc = fn.__doc__
        assert "dependencies_out" in doc and "numDependencies_out" in doc
        assert ("edgeData_out" in doc) == CUDA_13
    for fn in (getattr(cuda, DRIVER_INFO), getattr(cudart, RUNTIME_INFO)):
        assert list(inspect.signature(fn).parameters) in (["hStream"], ["stream"])
        assert "edgeData_out" in fn.__doc__


def test_without_a_driver_every_output_is_none(gpu_reason):
    if gpu_reason is None:
        pytest.skip("a GPU is present: the no-driver path is not reachable")
    result = cudart.cudaStreamGetCaptureInfo(None)
    assert len(result) == (7 if CUDA_13 else 6) and result[0] != cudart.cudaError_t.cudaSuccess
    assert result[1:] == (None,) * (len(result) - 1)
    result = getattr(cudart, RUNTIME_INFO)(None)
    assert len(result) == 7 and result[0] != cudart.cudaError_t.cudaSuccess
    assert result[1:] == (None,) * 6


@pytest.mark.gpu
def test_driver_capture_lists_its_dependencies(driver, cu_context, cu_stream):
    status = driver.CUstreamCaptureStatus
    dptr = ok(driver.cuMemAlloc, 4096)
    try:
        idle = getattr(driver, DRIVER_INFO)(cu_stream)
        assert idle[0] == 0 and idle[1] == status.CU_STREAM_CAPTURE_STATUS_NONE
        assert idle[4] == [] and idle[6] == 0
        ok(driver.cuStreamBeginCapture, cu_stream, driver.CUstreamCaptureMode.CU_STREAM_CAPTURE_MODE_GLOBAL)
        ok(driver.cuMemsetD8Async, dptr, 1, 4096, cu_stream)
        state, capture_id, graph, deps, edges, count = ok(getattr(driver, DRIVER_INFO), cu_stream)
        assert state == status.CU_STREAM_CAPTURE_STATUS_ACTIVE and int(capture_id) > 0 and int(graph) != 0
        assert count == 1 and len(deps) == 1 and len(edges) == 1
        assert isinstance(deps[0], driver.CUgraphNode) and isinstance(edges[0], driver.CUgraphEdgeData)
        assert ok(driver.cuGraphNodeGetType, deps[0]) == driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMSET
        first = deps[0]
        ok(driver.cuMemsetD8Async, dptr, 2, 4096, cu_stream)
        _, same_id, _, deps, _, count = ok(getattr(driver, DRIVER_INFO), cu_stream)
        assert same_id == capture_id and count == 1 and deps[0] != first
        captured = ok(driver.cuStreamEndCapture, cu_stream)
        nodes, n = ok(driver.cuGraphGetNodes, captured, 8)
        assert n == 2 and first in nodes and deps[0] in nodes
        ok(driver.cuGraphDestroy, captured)
    finally:
        ok(driver.cuMemFree, dptr)


@pytest.mark.gpu
def test_runtime_capture_lists_its_dependencies(driver, cu_context):
    err, stream = cudart.cudaStreamCreate()
    assert err == 0
    err, dptr = cudart.cudaMalloc(4096)
    assert err == 0
    try:
        assert cudart.cudaStreamBeginCapture(
            stream, cudart.cudaStreamCaptureMode.cudaStreamCaptureModeGlobal) == (cudart.cudaError_t.cudaSuccess,)
        assert cudart.cudaMemsetAsync(dptr, 0, 4096, stream)[0] == 0
        assert cudart.cudaMemsetAsync(dptr, 1, 2048, stream)[0] == 0
        err, state, capture_id, graph, deps, edges, count = getattr(cudart, RUNTIME_INFO)(stream)
        assert err == 0 and state == cudart.cudaStreamCaptureStatus.cudaStreamCaptureStatusActive
        assert count == 1 and len(deps) == 1 and len(edges) == 1
        assert isinstance(deps[0], cudart.cudaGraphNode_t) and isinstance(edges[0], cudart.cudaGraphEdgeData)
        # Runtime and driver handles are interchangeable: ask the driver about the node.
        assert ok(driver.cuGraphNodeGetType, deps[0]) == driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_MEMSET
        err, captured = cudart.cudaStreamEndCapture(stream)
        assert err == 0
        err, nodes, n = cudart.cudaGraphGetNodes(captured, 4)
        assert err == 0 and n == 2 and deps[0] in nodes
        cudart.cudaGraphDestroy(captured)
    finally:
        cudart.cudaFree(dptr)
        cudart.cudaStreamDestroy(stream)
