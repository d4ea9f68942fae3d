"""cubind.CUDAGraph: the core's CUDA graph (kernel, copy, memset and empty
nodes with dependencies; instantiate; launch; kernel nodes' arguments
rewritten in place; released as the other core objects are; recorded by
capturing a stream, a call capture forbids refused where it is made).

Against tests/fake_driver, which records the nodes it is given, counts
instantiations, launches and in-place updates, and logs what is released;
each snippet runs in a fresh interpreter (the fake's tables start empty), with
the PTX compiled here.
"""

import textwrap
from pathlib import Path

import pytest

import cubind
from tests._helpers import run_json_on_fake

ROOT = Path(__file__).resolve().parents[2]
KERNEL = r"""
extern "C" __global__ void axpb(float *x, float a, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + 1.0f;
}
"""

PRELUDE = """
import ctypes, gc, json, struct
import numpy as np
import cubind
from tests._fake_graph import count, f32, fake, setint
from tests._fake_graph import nodes as _nodes
module = cubind.Module.load(open({ptx!r}, "rb").read())
axpb = module.get_kernel("axpb")
setint("fake_record_args", 3)
def nodes():
    return _nodes(3)
from tests._helpers import error
"""


@pytest.fixture(scope="module")
def ptx_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cuda_graph") / "axpb.ptx"
    path.write_bytes(cubind.Program(KERNEL).compile("ptx", arch=75).code)
    return path


def run_fake(fake_driver, ptx_file, body, env=None):
    code = PRELUDE.format(ptx=str(ptx_file)) + textwrap.dedent(body)
    return run_json_on_fake(fake_driver, code, env)[0]


def test_nodes_dependencies_instantiate_launch_and_update_in_place(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        x = cubind.empty(256, np.float32)
        host = cubind.empty_pinned(256, np.float32)
        graph = cubind.CUDAGraph()
        up = graph.add_copy(x.ptr, host.ctypes.data, x.nbytes, src_host=True)
        zero = graph.add_memset(x, 0, 256, element_size=4, after=up)
        k = graph.add_kernel(axpb, 1, 256, x, 2.0, 256, after=[zero])
        join = graph.add_empty(after=[k, up])
        down = graph.add_copy(host.ctypes.data, x, x.nbytes, after=join, dst_host=True)
        before = graph.instantiated
        stream = cubind.Stream()
        graph.launch(stream)                        # instantiates first
        graph.launch(stream)
        launches, inst = count("fake_graph_launch_count"), count("fake_instantiate_count")
        k.set_args(x, 3.0, 128)                     # the executable node, in place
        updates = count("fake_exec_update_count")
        update_args = [ctypes.c_ulonglong.in_dll(fake, "fake_update_args").value]
        graph.launch(stream)
        extra = graph.add_empty(after=down)          # a new node: the next launch instantiates again
        graph.launch(stream)
        out = [nodes(), [int(n) for n in (up, zero, k, join, down)], before, launches, inst, updates,
               count("fake_instantiate_count"), graph.instantiations, update_args, x.ptr, host.ctypes.data,
               f32(3.0), f32(2.0), int(stream), ctypes.c_ulonglong.in_dll(fake, "fake_last_stream").value]
        graph.close()
        out.append(error(lambda: graph.launch()))
        out.append(error(lambda: graph.add_empty()))
        print(json.dumps(out))
    """)
    (table, handles, before, launches, inst, updates, inst_after, instantiations, update_args, xptr, hptr,
     three, two, stream, last_stream, closed_launch, closed_add) = got
    up, zero, k, join, down = handles
    by = {n["handle"]: n for n in table}
    assert [by[h]["kind"] for h in handles] == ["copy", "memset", "kernel", "empty", "copy"]
    assert by[up]["deps"] == [] and by[up]["src_host"] and not by[up]["dst_host"] and by[up]["dst"] == xptr
    assert by[up]["src"] == hptr and by[up]["bytes"] == 1024
    assert by[zero]["deps"] == [up] and by[zero]["dst"] == xptr and by[zero]["bytes"] == 1024
    assert by[k]["deps"] == [zero] and by[k]["grid"] == [1, 1, 1] and by[k]["block"] == [256, 1, 1]
    assert by[k]["args"] == [xptr, two, 256]
    assert sorted(by[join]["deps"]) == sorted([k, up]) and by[down]["deps"] == [join] and by[down]["dst_host"]
    assert before is False and launches == 2 and inst == 1 and updates == 1
    assert inst_after == 2 and instantiations == 2
    assert stream == last_stream
    assert closed_launch == "ValueError: graph: the graph is closed"
    assert closed_add == "ValueError: graph: the graph is closed"


def test_a_node_update_before_instantiation_reaches_the_graph_node(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        x = cubind.empty(256, np.float32)
        graph = cubind.CUDAGraph()
        k = graph.add_kernel(axpb, 1, 256, x, 2.0, 256)
        graph.instantiate()
        k.set_args(x, 5.0, 256)           # the executable graph's node
        graph.add_empty(after=k)          # drops the executable graph
        graph.instantiate()               # the graph's own node gets the new arguments first
        print(json.dumps([count("fake_exec_update_count"), count("fake_instantiate_count"),
                          count("fake_node_update_count")]))
    """)
    assert got == [1, 2, 1]


def test_bad_arguments_are_refused_by_name(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        x = cubind.empty(256, np.float32)
        graph, other = cubind.CUDAGraph(), cubind.CUDAGraph()
        foreign = other.add_empty()
        print(json.dumps([
            error(lambda: graph.add_kernel("axpb", 1, 1)),
            error(lambda: graph.add_kernel(axpb, 0, 1, x, 1.0, 1)),
            error(lambda: graph.add_kernel(axpb, 1, 1, x, 1.0)),
            error(lambda: graph.add_kernel(axpb, 1, 1, x, 1.0, 1, shared_mem=-1)),
            error(lambda: graph.add_empty(after=[foreign])),
            error(lambda: graph.add_empty(after=[1])),
            error(lambda: graph.add_memset(x, 0, 4, element_size=3)),
            error(lambda: graph.add_memset(x, 256, 4)),
            error(lambda: graph.add_copy(x, "y", 4)),
            error(lambda: graph.add_copy(x, x, -1)),
        ]))
    """)
    assert got[0].startswith("TypeError: kernel: expected a cubind.Kernel")
    assert got[1].startswith("ValueError: grid: each dimension must be at least 1")
    assert got[2].startswith("TypeError: axpb takes 3 arguments")
    assert got[3].startswith("OverflowError: shared_mem")
    assert got[4] == "ValueError: after[0]: the node belongs to another graph"
    assert got[5] == "TypeError: after[0]: expected a node of this graph, not int"
    assert got[6].startswith("ValueError: element_size")
    assert got[7].startswith("OverflowError: value: 256 does not fit 1 bytes")
    assert got[8].startswith("TypeError: src: expected an address")
    assert got[9] == "ValueError: nbytes: -1 is negative"


def test_graphs_are_released_when_collected_and_at_exit(fake_driver, ptx_file, tmp_path):
    log = tmp_path / "calls.log"
    got = run_fake(fake_driver, ptx_file, """
        x = cubind.empty(256, np.float32)
        dropped = cubind.CUDAGraph()
        dropped.add_kernel(axpb, 1, 256, x, 2.0, 256)
        dropped.instantiate()
        handles = [int(dropped.handle), int(dropped.exec_handle)]
        del dropped
        gc.collect()
        kept = cubind.CUDAGraph()           # a module global: released at exit
        kept.instantiate()
        handles += [int(kept.handle), int(kept.exec_handle)]
        print(json.dumps(handles))
    """, env={"FAKE_CALL_LOG": str(log)})
    dropped_graph, dropped_exec, kept_graph, kept_exec = got
    calls = [line.split() for line in log.read_text().splitlines()]
    destroyed = {(c[0], int(c[1], 0)) for c in calls if c[0] in ("cuGraphDestroy", "cuGraphExecDestroy")}
    assert {("cuGraphExecDestroy", dropped_exec), ("cuGraphDestroy", dropped_graph),
            ("cuGraphExecDestroy", kept_exec), ("cuGraphDestroy", kept_graph)} <= destroyed
    names = [c[0] for c in calls]
    assert names.index("cuGraphDestroy") < names.index("cuDevicePrimaryCtxRelease")


# -- capture from a stream


def test_capture_records_the_streams_work_as_nodes_and_launch_replays_it(fake_driver, ptx_file, tmp_path):
    log = tmp_path / "calls.log"
    got = run_fake(fake_driver, ptx_file, """
        stream = cubind.Stream(non_blocking=True)
        x, y = cubind.empty(256, np.float32, stream=stream), cubind.empty(256, np.float32, stream=stream)
        graph = cubind.CUDAGraph()
        empty = int(graph.handle)
        launched = count("fake_launch_count")
        with graph.capture(stream) as s:
            inside = [s is stream, cubind.current_stream() == stream, stream.capturing]
            axpb(1, 256, x, 2.0, 256)               # the current stream: the capturing one
            y.copy_from(x)
            axpb(1, 256, y, 3.0, 256, stream=stream)
        after = [stream.capturing, cubind.current_stream() is None, graph.captured]
        ran = count("fake_launch_count") - launched  # captured work does not run
        graph.launch(stream)
        graph.launch(stream)
        print(json.dumps([inside, after, ran, graph.node_types(), count("fake_graph_launch_count"),
                          int(graph.handle) != empty, empty, [n["kind"] for n in nodes()],
                          [n["args"][1] for n in nodes() if n["kind"] == "kernel"], f32(2.0), f32(3.0),
                          error(lambda: graph.capture(stream).__enter__())]))
    """, env={"FAKE_CALL_LOG": str(log)})
    inside, after, ran, types, launches, replaced, empty, kinds, scales, two, three, again = got
    assert inside == [True, True, True] and after == [False, True, True]
    assert ran == 0 and launches == 2 and replaced
    assert types == ["kernel", "memcpy", "kernel"] and kinds == ["kernel", "copy", "kernel"]
    # The fake records 8 bytes per argument; the kernel reads the float's 4 (the
    # launch packs on the C stack and leaves the slot's other bytes as they were).
    assert [s & 0xFFFFFFFF for s in scales] == [two, three]
    assert again.startswith("ValueError: graph: capture records into an empty graph")
    destroyed = [line.split() for line in log.read_text().splitlines() if line.startswith("cuGraphDestroy")]
    assert int(destroyed[0][1], 0) == empty  # the empty graph the capture replaced is released at once


@pytest.mark.provokes_api_error
def test_a_call_capture_forbids_raises_where_it_is_made_and_ends_the_capture(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        x = cubind.empty(256, np.float32)
        stream = cubind.Stream(non_blocking=True)
        graph = cubind.CUDAGraph()
        def sync_inside():
            with graph.capture(stream):
                axpb(1, 256, x, 2.0, 256)
                stream.synchronize()
        raised = error(sync_inside)
        notes = []
        try:
            sync_inside()
        except cubind.CUDAError as exc:
            notes = exc.__notes__
        state = [stream.capturing, graph.captured, graph.node_types()]
        def swallowed():                             # invalidated, the error caught: the end says so
            with graph.capture(stream):
                try:
                    stream.synchronize()
                except cubind.CUDAError:
                    pass
        late = error(swallowed)
        def raising():
            with graph.capture(stream):
                raise KeyError("mine")
        mine = error(raising)
        with graph.capture(stream):                  # the graph is still empty: it can capture
            axpb(1, 256, x, 2.0, 256)
        print(json.dumps([raised, notes, state, late, mine, stream.capturing, graph.node_types()]))
    """)
    raised, notes, state, late, mine, capturing, types = got
    assert raised.startswith("CUDAError: cuStreamSynchronize: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED (900)")
    assert any("while the stream was being captured" in n for n in notes)
    assert state == [False, False, []]
    assert late.startswith("CUDAError: cuStreamEndCapture: CUDA_ERROR_STREAM_CAPTURE_INVALIDATED (901)")
    assert mine == "KeyError: 'mine'" and not capturing and types == ["kernel"]


@pytest.mark.provokes_api_error
def test_an_array_of_another_stream_in_a_capture_is_refused_as_a_dependency_across_it(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        stream = cubind.Stream(non_blocking=True)
        mine, other = cubind.empty(256, np.float32, stream=stream), cubind.empty(256, np.float32)
        graph = cubind.CUDAGraph()
        def copy_across():
            with graph.capture(stream):
                mine.copy_from(other)                # ordered after other's stream by an event
        print(json.dumps([error(copy_across), stream.capturing, graph.captured]))
    """)
    assert got[0].startswith("CUDAError: cuStreamWaitEvent: CUDA_ERROR_STREAM_CAPTURE_ISOLATION (905)")
    assert got[1:] == [False, False]


def test_an_allocation_on_the_capturing_stream_is_a_node_node_types_show(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        stream = cubind.Stream(non_blocking=True)
        graph = cubind.CUDAGraph()
        with graph.capture(stream, mode="relaxed"):
            x = cubind.empty(256, np.float32)        # stream-ordered: a node of the graph's own memory
            axpb(1, 256, x, 2.0, 256)
        print(json.dumps(graph.node_types()))
    """)
    assert got == ["mem_alloc", "kernel"]


def test_bad_capture_arguments_are_refused_by_name(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        graph = cubind.CUDAGraph()
        stream = cubind.Stream()
        def enter(*args, **kw):
            with graph.capture(*args, **kw):
                pass
        built = cubind.CUDAGraph()
        built.add_empty()
        print(json.dumps([error(lambda: enter(stream, mode="local")), error(lambda: enter(None)),
                          error(lambda: enter(cubind.Device(0).default_stream)), error(lambda: enter("s")),
                          error(lambda: built.capture(stream).__enter__()), stream.capturing]))
    """)
    assert got[0] == "ValueError: mode: expected one of 'global', 'thread_local', 'relaxed', got 'local'"
    assert got[1].startswith("ValueError: stream: the default (legacy or per-thread) stream cannot be captured")
    assert got[2] == got[1]
    assert got[3].startswith("TypeError: stream")
    assert got[4].startswith("ValueError: graph: capture records into an empty graph")
    assert got[5] is False


@pytest.mark.gpu
@pytest.mark.provokes_api_error
def test_a_captured_graph_gives_on_a_gpu_what_running_the_stream_gives():
    import numpy as np

    axpb = cubind.Program(KERNEL).compile().get_kernel("axpb")
    start = np.arange(4096, dtype=np.float32)
    stream = cubind.Stream(non_blocking=True)  # the arrays live on it: no ordering event crosses the capture
    x, y = cubind.to_gpu(start, stream=stream), cubind.empty(4096, np.float32, stream=stream)
    graph = cubind.CUDAGraph()
    with graph.capture(stream):
        axpb(16, 256, x, 2.0, 4096)
        y.copy_from(x)
        axpb(16, 256, y, 3.0, 4096)
    assert graph.node_types() == ["kernel", "memcpy", "kernel"]
    for _ in range(3):
        graph.launch(stream)
    stream.synchronize()
    want_x = start.copy()
    for _ in range(3):
        want_x = 2 * want_x + 1
    want_y = 3 * want_x + 1
    np.testing.assert_allclose(x.get(), want_x, rtol=1e-6)
    np.testing.assert_allclose(y.get(), want_y, rtol=1e-6)
    # A synchronisation inside a capture is refused there, and the stream works after it.
    with pytest.raises(cubind.CUDAError, match="STREAM_CAPTURE"):
        with cubind.CUDAGraph().capture(stream):
            axpb(16, 256, x, 2.0, 4096)
            stream.synchronize()
    assert not stream.capturing
    axpb(16, 256, x, 0.0, 4096, stream=stream)
    np.testing.assert_array_equal(x.get(stream=stream), np.ones(4096, np.float32))


@pytest.mark.provokes_api_error
def test_a_copy_node_takes_new_addresses_and_a_graph_runs_another_as_a_child(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        x, y, z = (cubind.empty(256, np.float32) for _ in range(3))
        inner = cubind.CUDAGraph()
        inner.add_kernel(axpb, 1, 256, y, 2.0, 256)
        graph = cubind.CUDAGraph()
        copy_in = graph.add_copy(y, x, x.nbytes)
        child = graph.add_graph(inner, after=copy_in)
        copy_out = graph.add_copy(z, y, y.nbytes, after=child)
        copy_in.set(src=z)                          # before instantiation: the graph's node
        graph.instantiate()
        before = nodes()
        copy_out.set(dst=x)                         # the executable graph's node
        update = [count("fake_exec_copy_update_count"), ctypes.c_ulonglong.in_dll(fake, "fake_copy_update_node").value,
                  ctypes.c_ulonglong.in_dll(fake, "fake_copy_update_src").value,
                  ctypes.c_ulonglong.in_dll(fake, "fake_copy_update_dst").value]
        setint("fake_refuse_copy_update", 1)
        refused = error(lambda: copy_out.set(dst=z))
        kept = copy_out.params.dstDevice
        setint("fake_refuse_copy_update", 0)
        up = graph.add_copy(x.ptr, 4096, 16, src_host=True)
        print(json.dumps([before, [int(n) for n in (copy_in, child, copy_out)], int(inner.handle), update, refused,
                          int(kept), error(lambda: up.set(src=x)), error(lambda: graph.add_graph(graph)),
                          error(lambda: graph.add_graph(3)), x.ptr, y.ptr, z.ptr, graph.node_types()]))
    """)
    (table, (copy_in, child, copy_out), inner, update, refused, kept, host_set, itself, not_graph, x, y, z,
     types) = got
    by = {n["handle"]: n for n in table}
    assert by[copy_in]["src"] == z and by[copy_in]["dst"] == y        # the graph's node got the new source
    assert by[child]["kind"] == "graph" and by[child]["src"] == inner and by[child]["deps"] == [copy_in]
    assert by[copy_out]["deps"] == [child]
    assert update == [1, copy_out, y, x]
    assert refused.startswith("CUDAError: cuGraphExecMemcpyNodeSetParams") and kept == x
    assert host_set == "ValueError: src: the node's src is host memory; set() changes device addresses"
    assert itself == "ValueError: graph: a graph cannot contain itself"
    assert not_graph == "TypeError: graph: expected a cubind.CUDAGraph, not int"
    assert types == ["memcpy", "graph", "memcpy", "memcpy"]
