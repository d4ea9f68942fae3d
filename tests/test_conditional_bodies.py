"""Pointer fields the driver fills during a call read back as lists: a
conditional node's body graphs (CUDA_CONDITIONAL_NODE_PARAMS.phGraph_out,
counted by `size`), as NVIDIA's classic modules give them
(`params.conditional.phGraph_out[0]`)."""

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
print(json.dumps([before, [type(b).__name__ for b in bodies], [int(b) for b in bodies]]))
"""


def test_the_body_graphs_the_driver_writes_read_as_a_list(fake_driver):
    from tests._toolkit import pythonpath

    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", BODIES], env=env, capture_output=True, text=True, timeout=60,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert done.returncode == 0, done.stderr
    before, types, handles = json.loads(done.stdout)
    assert before is None   # no array yet: NULL
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
