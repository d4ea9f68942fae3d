"""Pointer fields the driver fills during a call read back as lists: a
conditional node's body graphs (CUDA_CONDITIONAL_NODE_PARAMS.phGraph_out,
counted by `size`), as NVIDIA's classic modules give them
(`params.conditional.phGraph_out[0]`): NULL handles before the call, the
driver's graphs after it; on the emulated driver and on a GPU, where the
bodies run."""

import json
import os
import subprocess
import sys

import pytest

cuda = pytest.importorskip("cuda")

BODIES = r"""
import json
import cuda
from tests._helpers import ok
ok(cuda.cuInit, 0)
graph = ok(cuda.cuGraphCreate, 0)
params = cuda.CUgraphNodeParams()
params.type = cuda.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
params.conditional.type = cuda.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_SWITCH
params.conditional.size = 3
before = params.conditional.phGraph_out
# 12.x's cuGraphAddNode has no edgeData (13.0 added it to the unversioned name).
edges = (None,) if cuda.CUDA_VERSION >= 13000 else ()
ok(cuda.cuGraphAddNode, graph, None, *edges, 0, params)
bodies = params.conditional.phGraph_out
print(json.dumps([[int(b) for b in before], [type(b).__name__ for b in bodies], [int(b) for b in bodies]]))
"""


def test_the_body_graphs_the_driver_writes_read_as_a_list(fake_driver):
    from tests._toolkit import pythonpath

    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", BODIES], env=env, capture_output=True, text=True, timeout=60,
                          cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert done.returncode == 0, done.stderr
    before, types, handles = json.loads(done.stdout)
    assert before == [0, 0, 0]   # no array yet: size NULL handles, as the classic modules read it
    assert types == ["CUgraph"] * 3
    assert all(handles) and len(set(handles)) == 3


def test_the_runtimes_body_graphs_read_as_a_list_of_its_size():
    from cuda import cudart

    params = cudart.cudaConditionalNodeParams()
    params.size = 2
    params.phGraph_out = [cudart.cudaGraph_t(0x10), cudart.cudaGraph_t(0x20)]
    bodies = params.phGraph_out
    assert [type(b) for b in bodies] == [cudart.cudaGraph_t] * 2
    assert [int(b) for b in bodies] == [0x10, 0x20]


def test_a_null_array_reads_as_size_null_handles():
    params = cuda.CUDA_CONDITIONAL_NODE_PARAMS()
    assert params.phGraph_out == []
    params.size = 2
    assert [type(b) for b in params.phGraph_out] == [cuda.CUgraph] * 2
    assert [int(b) for b in params.phGraph_out] == [0, 0]


@pytest.mark.gpu
def test_the_drivers_body_graph_is_filled_and_runs(driver, cu_context):
    from tests._helpers import ok

    graph = ok(driver.cuGraphCreate, 0)
    dst = ok(driver.cuMemAlloc, 4)
    try:
        # defaultLaunchValue 1 with CU_GRAPH_COND_ASSIGN_DEFAULT (1): the "if" body runs at each launch.
        handle = ok(driver.cuGraphConditionalHandleCreate, graph, cu_context, 1, 1)
        params = driver.CUgraphNodeParams()
        params.type = driver.CUgraphNodeType.CU_GRAPH_NODE_TYPE_CONDITIONAL
        params.conditional.handle = handle
        params.conditional.type = driver.CUgraphConditionalNodeType.CU_GRAPH_COND_TYPE_IF
        params.conditional.size = 1
        params.conditional.ctx = cu_context
        assert [int(b) for b in params.conditional.phGraph_out] == [0]
        ok(driver.cuGraphAddNode, graph, None, None, 0, params)
        (body,) = params.conditional.phGraph_out
        assert isinstance(body, driver.CUgraph) and int(body) != 0
        memset = driver.CUDA_MEMSET_NODE_PARAMS()
        memset.dst, memset.value, memset.elementSize, memset.width, memset.height = dst, 42, 4, 1, 1
        ok(driver.cuGraphAddMemsetNode, body, None, 0, memset, cu_context)
        exec_ = ok(driver.cuGraphInstantiate, graph, 0)
        ok(driver.cuGraphLaunch, exec_, None)
        ok(driver.cuCtxSynchronize)
        out = bytearray(4)
        ok(driver.cuMemcpyDtoH, out, dst, 4)
        assert int.from_bytes(out, "little") == 42
        ok(driver.cuGraphExecDestroy, exec_)
    finally:
        driver.cuGraphDestroy(graph)
        driver.cuMemFree(dst)


@pytest.mark.gpu
def test_the_runtimes_body_graph_is_filled_by_cudaGraphAddNode(driver, cu_context):
    from cuda import cudart
    from tests._helpers import ok

    graph = ok(cudart.cudaGraphCreate, 0)
    try:
        handle = ok(cudart.cudaGraphConditionalHandleCreate, graph, 1, 1)
        params = cudart.cudaGraphNodeParams()
        params.type = cudart.cudaGraphNodeType.cudaGraphNodeTypeConditional
        params.conditional.handle = handle
        params.conditional.type = cudart.cudaGraphConditionalNodeType.cudaGraphCondTypeWhile
        params.conditional.size = 1
        assert [int(b) for b in params.conditional.phGraph_out] == [0]
        ok(cudart.cudaGraphAddNode, graph, None, None, 0, params)
        (body,) = params.conditional.phGraph_out
        assert isinstance(body, cudart.cudaGraph_t) and int(body) != 0
        assert ok(cudart.cudaGraphGetNodes, body, 0)[1] == 0   # an empty body, the driver's own graph
    finally:
        cudart.cudaGraphDestroy(graph)
