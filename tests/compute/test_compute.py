"""cubind.compute: Kompute's Manager, Tensor, Algorithm and Sequence on CUDA
graphs.

Without a GPU, the recording logic runs against tests/fake_driver, which
records the graphs it is given (nodes, their dependencies and arguments),
counts instantiations, launches and in-place kernel-node updates, and logs
what is made and released. The PTX is compiled here and each snippet runs in
a fresh interpreter that loads the fake, so that its tables start empty. The GPU tests (marker ``gpu``) check
every operation and flow against numpy.
"""

import asyncio
import gc
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import cubind
from cubind.compute import specialize
from tests._helpers import import_cubind_driver, ok, run_json_on_fake

ROOT = Path(__file__).resolve().parents[2]

KERNELS = r"""
extern "C" __global__ void mult(const float *a, const float *b, float *out, float scale)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = scale * a[i] * b[i];
}
extern "C" __global__ void axpb(float *x, float a, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = a * x[i] + 1.0f;
}
extern "C" __global__ void scale_by(float *x, float s)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] *= s;
}
extern "C" __global__ void not_first(float s, float *x) {}
"""


@pytest.fixture(scope="module")
def ptx_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("compute") / "kernels.ptx"
    path.write_bytes(cubind.Program(KERNELS).compile("ptx", arch=75).code)
    return path


PRELUDE = """
import ctypes, gc, json, struct, sys
import numpy as np
import cubind
from cubind import compute as kp
from tests._fake_graph import count, f32, fake, nodes, setint
module = cubind.Module.load(open({ptx!r}, "rb").read())
from tests._helpers import error
"""


def run_fake(fake_driver, ptx_file, body, env=None):
    code = PRELUDE.format(ptx=str(ptx_file)) + textwrap.dedent(body)
    return run_json_on_fake(fake_driver, code, env)


# Indented as the snippets it prefixes, which are dedented as one.
MULT = """
        setint("fake_record_args", 4)  # the fake reads this many arguments of each kernel node: mult's count
        mgr = kp.Manager()
        a, b, out = mgr.tensor([2, 2, 2]), mgr.tensor([1, 2, 3]), mgr.tensor([0, 0, 0])
        algo = mgr.algorithm([a, b, out], module, entry="mult", push_consts=[1.0])
        dispatch = kp.OpAlgoDispatch(algo)
        seq = (mgr.sequence().record(kp.OpTensorSyncDevice([a, b])).record(dispatch)
               .record(kp.OpTensorSyncLocal([out])))
"""


# -- one graph, instantiated once -------------------------------------------------------


def test_a_sequence_is_one_graph_instantiated_once_however_often_evaluated(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, MULT + """
        before = count("fake_instantiate_count")
        for _ in range(10):
            seq.eval()
        print(json.dumps({"inst": count("fake_instantiate_count") - before,
                          "launches": count("fake_graph_launch_count"),
                          "seq_inst": seq.graph_instantiations, "nodes": nodes(),
                          "ptrs": [[t.host_ptr, t.device_ptr] for t in (a, b, out)], "stream": int(seq.stream),
                          "last_stream": ctypes.c_ulonglong.in_dll(fake, "fake_last_stream").value}))
    """)
    assert got["inst"] == 1 and got["seq_inst"] == 1 and got["launches"] == 10
    assert got["last_stream"] == got["stream"]
    copy_a, copy_b, kernel, back = got["nodes"]
    (ha, da), (hb, db), (ho, do) = got["ptrs"]
    assert [copy_a["kind"], copy_b["kind"], kernel["kind"], back["kind"]] == ["copy", "copy", "kernel", "copy"]
    assert (copy_a["src"], copy_a["src_host"], copy_a["dst"], copy_a["dst_host"], copy_a["bytes"]) == (ha, True, da,
                                                                                                     False, 12)
    assert (back["src"], back["src_host"], back["dst"], back["dst_host"]) == (do, False, ho, True)
    # ordered by the tensors they share: both uploads before the kernel, the download after it
    assert copy_a["deps"] == [] and copy_b["deps"] == []
    assert sorted(kernel["deps"]) == sorted([copy_a["handle"], copy_b["handle"]])
    assert back["deps"] == [kernel["handle"]]
    # tensors first as pointers, then the push constant as its parameter's type (.f32)
    assert kernel["args"][:3] == [da, db, do] and kernel["args"][3] & 0xFFFFFFFF == 0x3F800000
    assert kernel["grid"] == [1, 1, 1] and kernel["block"] == [3, 1, 1]


def test_push_constants_update_the_instantiated_graph_in_place(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, MULT + """
        seq.eval()
        algo.set_push_constants([3.0])
        seq.eval()
        after_algo = [count("fake_exec_update_count"), (ctypes.c_ulonglong * 8).in_dll(fake, "fake_update_args")[3]]
        seq.eval()                        # nothing changed: no update
        unchanged = count("fake_exec_update_count")
        dispatch.set_push_constants([5.0])  # the dispatch's own, over the algorithm's
        seq.eval()
        own = (ctypes.c_ulonglong * 8).in_dll(fake, "fake_update_args")[3]
        algo.set_push_constants([7.0])      # the dispatch keeps its own
        seq.eval()
        print(json.dumps([after_algo, unchanged, own, count("fake_exec_update_count"), count("fake_instantiate_count"),
                          seq.graph_instantiations, f32(3.0), f32(5.0),
                          ctypes.c_ulonglong.in_dll(fake, "fake_update_node").value, nodes()[2]["handle"]]))
    """)
    after_algo, unchanged, own, updates, inst, seq_inst, three, five, node, kernel_node = got
    assert after_algo == [1, three] and unchanged == 1
    assert own == five and updates == 2
    assert inst == 1 and seq_inst == 1 and node == kernel_node


def test_a_push_change_updates_the_nodes_that_read_it_and_no_other(fake_driver, ptx_file):
    # Three dispatches of one algorithm, the middle one with push constants of
    # its own: a change of one dispatch updates its node only; a change of the
    # algorithm updates the two that take the algorithm's, not the third.
    got, _ = run_fake(fake_driver, ptx_file, MULT + """
        extra = [kp.OpAlgoDispatch(algo, push_consts=[4.0]), kp.OpAlgoDispatch(algo)]
        for op in extra:
            seq.record(op)
        seq.eval()
        kernels = [n["handle"] for n in nodes() if n["kind"] == "kernel"]
        before = count("fake_exec_update_count")
        extra[1].set_push_constants([6.0])
        seq.eval()
        one = [count("fake_exec_update_count") - before, ctypes.c_ulonglong.in_dll(fake, "fake_update_node").value]
        algo.set_push_constants([8.0])
        seq.eval()
        two = count("fake_exec_update_count") - before - one[0]
        extra[1].set_push_constants(None)  # back to the algorithm's, which is 8.0 now
        extra[0].set_push_constants([4.0])  # the value it has: nothing to update
        seq.eval()
        last = count("fake_exec_update_count") - before - one[0] - two
        print(json.dumps([one, two, last, kernels, seq.graph_instantiations]))
    """)
    (updated, node), two, last, kernels, instantiations = got
    assert updated == 1 and node == kernels[2]
    assert two == 1 and last == 1 and instantiations == 1


def test_a_push_change_before_the_first_evaluation_reaches_the_graph_node(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, MULT + """
        seq.eval()
        seq.record(kp.OpTensorSyncLocal([a]))  # recording more: the next eval instantiates again
        algo.set_push_constants([2.0])
        seq.eval()
        print(json.dumps([count("fake_instantiate_count"), count("fake_node_update_count"),
                          count("fake_exec_update_count"), seq.graph_instantiations, seq.is_recording()]))
    """)
    assert got == [2, 1, 0, 2, False]


def test_one_shot_eval_and_rerecord_and_clear(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, MULT + """
        one = mgr.sequence().eval(kp.OpTensorSyncDevice([a]))
        seq.eval()
        seq.rerecord().eval()
        n_ops = len(seq.ops())
        seq.clear().eval()   # empty: nothing launched
        print(json.dumps([len(one.ops()), n_ops, len(seq.ops()), count("fake_instantiate_count"),
                          count("fake_graph_launch_count"), seq.graph_instantiations]))
    """)
    assert got == [1, 3, 0, 3, 3, 2]


def test_a_full_barrier_orders_everything_and_disjoint_tensors_run_concurrently(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        mgr = kp.Manager()
        x, y = mgr.tensor([1.0] * 4), mgr.tensor([2.0] * 4)
        sx = mgr.algorithm([x], module, entry="scale_by", push_consts=[2.0])
        sy = mgr.algorithm([y], module, entry="scale_by", push_consts=[3.0])
        seq = (mgr.sequence().record(kp.OpAlgoDispatch(sx)).record(kp.OpAlgoDispatch(sy))
               .record(kp.OpMemoryBarrier()).record(kp.OpAlgoDispatch(sx)))
        print(json.dumps(nodes()))
    """)
    kx, ky, barrier, kx2 = got
    assert kx["deps"] == [] and ky["deps"] == []       # no shared tensor: concurrent
    assert sorted(barrier["deps"]) == sorted([kx["handle"], ky["handle"]]) and barrier["kind"] == "empty"
    assert kx2["deps"] == [barrier["handle"]]


def test_tensor_copy_copies_device_and_host_data(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        mgr = kp.Manager()
        src, dst = mgr.tensor([1, 2, 3]), mgr.tensor([0, 0, 0])
        host = mgr.tensor([0, 0, 0], tensor_type=kp.TensorTypes.host)
        seq = mgr.sequence().record(kp.OpTensorCopy([src, dst, host]))
        before = dst.data().tolist()
        seq.eval()
        print(json.dumps([nodes(), [src.host_ptr, src.device_ptr, dst.host_ptr, dst.device_ptr, host.host_ptr],
                          [before, dst.data().tolist()],
                          error(lambda: kp.OpTensorCopy([src])),
                          error(lambda: mgr.sequence().record(kp.OpTensorCopy([src, mgr.tensor([1, 2])])))]))
    """)
    nodes, (sh, sd, dh, dd, hh), host_data, one, mismatch = got
    # The device data in the graph; the host data after the evaluation (Kompute's postEval).
    assert [(n["src"], n["dst"]) for n in nodes] == [(sd, dd), (sd, hh)]
    assert nodes[1]["dst_host"] and not nodes[0]["dst_host"]
    assert host_data == [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0]]
    assert one == "ValueError: OpTensorCopy: tensors needs a source and at least one destination"
    assert mismatch == "ValueError: OpTensorCopy: tensors[1] has 8 bytes, the source 12"


# -- several sequences, streams and events ---------------------------------------------------


def test_sequences_on_other_streams_wait_only_where_they_share_tensors(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        mgr = kp.Manager(streams=2)
        x, y = mgr.tensor([1.0] * 4), mgr.tensor([2.0] * 4)
        first = mgr.sequence(0).record(kp.OpTensorSyncDevice([x]))
        other = mgr.sequence(1).record(kp.OpTensorSyncDevice([y]))
        shares = mgr.sequence(1).record(kp.OpTensorSyncLocal([x]))
        same_stream = mgr.sequence(1).record(kp.OpTensorSyncLocal([x]))
        first.eval_async()
        other.eval_async()
        no_wait = count("fake_stream_wait_count")
        shares.eval_async()
        waited = [count("fake_stream_wait_count"), ctypes.c_ulonglong.in_dll(fake, "fake_last_wait_stream").value,
                  ctypes.c_ulonglong.in_dll(fake, "fake_last_wait_event").value]
        shares.eval_await()
        same_stream.eval_async()           # x was last used on this stream: it is ordered already
        for s in (first, other, shares, same_stream):
            s.eval_await()
        print(json.dumps([no_wait, waited, int(shares.stream), int(first.event.handle),
                          count("fake_stream_wait_count"), error(lambda: mgr.sequence(2))]))
    """)
    no_wait, (waits, stream, event), shares_stream, first_event, total, bad_index = got
    assert no_wait == 0 and waits == 1 and stream == shares_stream and event == first_event and total == 1
    assert bad_index == "ValueError: queue_index: 2 is out of range (the manager has 2 streams)"


def test_await_under_asyncio_is_woken_by_a_host_function(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, MULT + """
        import asyncio
        async def main():
            setint("fake_event_pending", 1)     # the first query: still running
            done = await seq.eval_async()
            ticks = 0
            async def ticker():
                nonlocal ticks
                ticks += 1
            await asyncio.gather(ticker(), seq.eval_async())
            return done is seq, ticks
        same, ticks = asyncio.run(main())
        print(json.dumps([same, ticks, count("fake_host_func_count"), count("fake_stream_wait_count"),
                          seq.is_running()]))
    """)
    assert got == [True, 1, 1, 1, False]


# -- bad use ------------------------------------------------------------------------------


def test_bad_use_is_a_clear_error(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, MULT + """
        out_ = []
        seq.eval_async()
        setint("fake_event_pending", 1000)
        out_.append(seq.is_running())
        out_.append(error(lambda: seq.record(kp.OpTensorSyncLocal([a]))))
        out_.append(error(lambda: seq.eval()))
        out_.append(error(lambda: seq.eval_await(timeout=0.01)))
        setint("fake_event_pending", 0)
        seq.eval_await()
        other = kp.Manager()
        foreign = other.tensor([1, 2, 3])
        out_.append(error(lambda: seq.record(kp.OpTensorSyncDevice([foreign]))))
        out_.append(error(lambda: mgr.algorithm([foreign], module, entry="scale_by", push_consts=[1.0])))
        out_.append(error(lambda: kp.OpAlgoDispatch(algo, [1.0, 2.0])))
        out_.append(error(lambda: kp.OpAlgoDispatch(algo, ["2"])))
        out_.append(error(lambda: algo.set_push_constants(1.0)))
        axpb = mgr.algorithm([a], module, entry="axpb", push_consts=[2.0, 3])
        out_.append(error(lambda: axpb.set_push_constants([2.0, 2.5])))
        out_.append(error(lambda: axpb.set_push_constants([2.0, -1 << 40])))
        out_.append(error(lambda: mgr.algorithm([a], module, entry="axpb")))
        out_.append(error(lambda: mgr.algorithm([a], module, entry="not_first", push_consts=[1.0])))
        out_.append(error(lambda: mgr.algorithm([a], module, push_consts=[1.0])))
        out_.append(error(lambda: mgr.algorithm([a], module, entry="scale_by", spec_consts=[1])))
        algo.destroy()
        out_.append(error(lambda: seq.eval()))
        out_.append(error(lambda: kp.OpAlgoDispatch(algo)))
        waiting = mgr.sequence().record(kp.OpTensorSyncDevice([a])).eval_async()
        setint("fake_event_pending", 5)
        out_.append(error(lambda: waiting.eval_await(timeout=-1)))
        out_.append(error(lambda: waiting.eval_await(timeout="1")))
        setint("fake_event_pending", 0)
        print(json.dumps(out_))
    """)
    assert got[0] is True
    assert got[1].startswith("RuntimeError: record: the sequence is running")
    assert got[2].startswith("RuntimeError: eval: the sequence is still running")
    assert got[3].startswith("TimeoutError: eval_await: the evaluation is still running after the timeout of 0.01 s")
    assert got[4] == "ValueError: OpTensorSyncDevice: tensors[0]: the tensor belongs to another Manager"
    assert got[5] == "ValueError: tensors[0]: the tensor belongs to another Manager"
    assert got[6] == ("ValueError: push_consts: kernel mult takes 1 push constants after its 3 tensors (.f32), "
                      "got 2 values")
    assert got[7] == "TypeError: push_consts[0]: expected a number, not str"
    assert got[8] == "TypeError: push_consts: expected a list of numbers, not float"
    assert "axpb: parameter 2 (.u32)" in got[9]
    assert got[10].startswith("OverflowError: axpb: parameter 2 (.u32)")
    assert got[11] == ("ValueError: push_consts: kernel axpb takes 2 push constants after its 1 tensors "
                       "(.f32, .u32); give their initial values")
    assert got[12].startswith("TypeError: tensors[0]: kernel not_first's parameter 0 (.f32) is not a pointer")
    assert got[13].startswith("ValueError: entry: the module has 4 kernels (axpb, mult, not_first, scale_by)")
    assert got[14].startswith("ValueError: spec_consts: compiled code cannot take specialisation constants")
    assert got[15].startswith("ValueError: eval: an algorithm it dispatches was destroyed")
    assert got[16] == ("ValueError: OpAlgoDispatch: the algorithm was destroyed "
                       "(Algorithm.destroy() or Manager.destroy())")
    assert got[17] == "ValueError: timeout: must be at least 0, got -1"
    assert got[18] == "TypeError: timeout: expected seconds as a number or None, not str"


def test_destroyed_tensors_and_storage_tensors_refuse_use(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, MULT + """
        seq.eval()
        b.destroy()
        storage = mgr.tensor([1, 2], tensor_type=kp.TensorTypes.storage)
        print(json.dumps([b.is_init(), error(lambda: b.data()), error(lambda: seq.eval()),
                          error(lambda: mgr.sequence().record(kp.OpTensorSyncLocal([b]))),
                          error(lambda: storage.data()),
                          error(lambda: mgr.sequence().record(kp.OpTensorSyncLocal([storage]))),
                          error(lambda: mgr.tensor([])), error(lambda: mgr.tensor([1], tensor_type="host")),
                          error(lambda: kp.Manager(streams=[2])), error(lambda: kp.Manager(streams=0))]))
    """)
    assert got[0] is False
    assert got[1] == "ValueError: data: the tensor was destroyed (Tensor.destroy() or Manager.destroy())"
    assert got[2].startswith("ValueError: eval: a tensor it uses was destroyed")
    assert got[3].startswith("ValueError: OpTensorSyncLocal: tensors[0]: the tensor was destroyed")
    assert got[4] == "ValueError: data: a storage tensor has no host data (TensorTypes.storage)"
    assert got[5] == "ValueError: OpTensorSyncLocal: tensors[0]: a storage tensor has no host data to sync"
    assert got[6] == "ValueError: data: a tensor needs at least one element"
    assert got[7].startswith("TypeError: tensor_type: expected a cubind.compute.TensorTypes member")
    assert got[8].startswith("TypeError: streams[0]: a plain int is ambiguous")
    assert got[9] == "ValueError: streams: a manager needs at least 1 stream, got 0"


def test_after_destroy_the_manager_refuses_use(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, MULT + """
        seq.eval()
        with kp.Manager() as scoped:
            t = scoped.tensor([1])
        mgr.destroy()
        print(json.dumps([error(lambda: mgr.tensor([1])), error(lambda: seq.eval()), a.is_init(), algo.is_init(),
                          seq.is_init(), t.is_init()]))
    """)
    assert got[0] == "ValueError: tensor: the Manager was destroyed"
    assert got[1].startswith("ValueError: eval: the sequence was destroyed")
    assert got[2:] == [False, False, False, False]


# -- lifetime and release ---------------------------------------------------------------------


def test_the_seeds_lifetime_example_runs_as_written(fake_driver, ptx_file):
    # seeds/000: Kompute's Python package overview, "kp" replaced by cubind.compute
    got, _ = run_fake(fake_driver, ptx_file, """
        kp_ = kp
        m = kp_.Manager()
        t = m.tensor([1,2,3])
        td = t.data()
        del t
        td # this is OK
        assert td.base.is_init() == True # OK
        m.destroy() # Frees all memory inside tensors
        assert td.base.is_init() == False # Consistent to expected setup
        values = td.tolist()
        del td # Now this calls tensor destructor as refcount reaches 0
        print(json.dumps(values))
    """)
    assert got == [1.0, 2.0, 3.0]


def test_destroy_frees_what_was_made(fake_driver, ptx_file, tmp_path):
    log = tmp_path / "calls.log"
    got, _ = run_fake(fake_driver, ptx_file, MULT + """
        import asyncio
        seq.eval()
        asyncio.run(seq.eval_async().__await__().__class__ and seq._await_async())  # makes the notifier stream
        handles = {"tensors": [t.device_ptr for t in (a, b, out)], "hosts": [t.host_ptr for t in (a, b, out)],
                   "streams": [int(s) for s in mgr.streams] + [int(mgr._notifier())], "event": int(seq.event.handle)}
        mgr.destroy()
        marker = len(open(sys.argv[0] if False else {log!r}).read().splitlines())
        del a, b, out, algo, dispatch, seq
        gc.collect()
        print(json.dumps([handles, marker]))
    """.replace("{log!r}", repr(str(log))), env={"FAKE_CALL_LOG": str(log)})
    handles, marker = got
    lines = log.read_text().splitlines()
    at_destroy, later = lines[:marker], lines[marker:]
    made = {line.split()[0] for line in at_destroy}
    assert {"cuGraphCreate", "cuGraphInstantiate", "cuGraphExecDestroy", "cuGraphDestroy"} <= made
    freed = [int(line.split()[1], 16) for line in at_destroy if line.startswith("cuMemFree ")]
    assert sorted(freed) == sorted(handles["tensors"])
    destroyed = {int(line.split()[1], 16) for line in at_destroy if line.startswith("cuStreamDestroy")}
    assert set(handles["streams"]) <= destroyed
    assert f"cuEventDestroy {hex(handles['event'])}" in at_destroy
    # the host data goes with the last reference to the tensor (numpy views keep it)
    freed_host = [int(line.split()[1], 16) for line in later if line.startswith("cuMemFreeHost")]
    assert sorted(freed_host) == sorted(handles["hosts"])


def test_logging_names_the_device_and_what_is_made(fake_driver, ptx_file):
    _, stderr = run_fake(fake_driver, ptx_file, """
        import logging
        logging.basicConfig(level=logging.DEBUG, format="%(levelname)s:%(name)s:%(message)s")
    """ + MULT + """
        seq.eval()
        mgr.destroy()
        print("[]")
    """)
    assert "INFO:cubind.compute:using device 0 (" in stderr and "), 1 found" in stderr
    for words in ("DEBUG:cubind.compute:manager: stream 0x",
                  "DEBUG:cubind.compute:tensor of 3 float32 (device) created",
                  "DEBUG:cubind.compute:algorithm mult on 3 tensors", "DEBUG:cubind.compute:graph 0x",
                  "INFO:cubind.compute:manager on device 0 destroyed"):
        assert words in stderr, words


# -- tensors, workgroups ----------------------------------------------------------------------


def test_tensor_types_dtypes_and_workgroups(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        mgr = kp.Manager()
        f = mgr.tensor([1, 2, 3])
        i = mgr.tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
        d = mgr.tensor([1, 2], dtype=np.float64)
        h = mgr.tensor([1.5] * 1000, tensor_type=kp.TensorTypes.host)
        h.set_data(np.arange(1000))
        default = mgr.algorithm([h], module, entry="scale_by", push_consts=[1.0])
        given = mgr.algorithm([h], module, entry="scale_by", workgroup=(1000,), push_consts=[1.0])
        block = mgr.algorithm([h], module, entry="axpb", block=128, push_consts=[1.0, 1000])
        print(json.dumps([str(f.dtype), f.size(), str(i.dtype), list(i.shape), i.data().tolist(), str(d.dtype),
                          h.device_ptr == h.host_ptr, float(h.data()[999]), i.data().base is i,
                          [default.workgroup, default.block], [given.workgroup, given.block],
                          [block.workgroup, block.block], error(lambda: h.set_data([1]))]))
    """)
    assert got[:9] == ["float32", 3, "int32", [2, 3], [[0, 1, 2], [3, 4, 5]], "float64", True, 999.0, True]
    assert got[9] == [[4, 1, 1], [250, 1, 1]]   # 1000 threads exactly, in blocks of the largest divisor <= 256
    assert got[10] == [[1000, 1, 1], [1, 1, 1]]
    assert got[11] == [[8, 1, 1], [128, 1, 1]]
    assert got[12] == "ValueError: data: 1 elements given, the tensor has 1000"


# -- specialisation constants (NVRTC, no driver needed) -----------------------------------------


def test_spec_consts_become_defines():
    assert specialize.defines(None) == ()
    assert specialize.defines([16, 0.5, True]) == ("-DSPEC_CONST_0=16", "-DSPEC_CONST_1=0.5f", "-DSPEC_CONST_2=1")
    assert specialize.defines({"TILE": 8, "ALPHA": np.float64(0.25)}) == ("-DALPHA=0.25", "-DTILE=8")
    assert specialize.defines(np.array([1.5], dtype=np.float32)) == ("-DSPEC_CONST_0=1.5f",)
    with pytest.raises(ValueError, match="not a C identifier"):
        specialize.defines({"2x": 1})
    with pytest.raises(TypeError, match=r"spec_consts\['SPEC_CONST_0'\]: expected an int, float or bool"):
        specialize.defines(["x"])
    with pytest.raises(ValueError, match="not finite"):
        specialize.defines([float("inf")])
    with pytest.raises(TypeError, match="spec_consts: expected a list or a dict"):
        specialize.defines(3)


def test_each_distinct_set_of_spec_consts_compiles_once():
    cache = specialize.CompileCache()
    program = cubind.Program('extern "C" __global__ void k(float *x) { x[0] = SPEC_CONST_0; }')
    first = cache.module(program, specialize.defines([2.5]))
    again = cache.module(program, specialize.defines([2.5]))
    other = cache.module(program, specialize.defines([4.0]))
    assert first is again and other is not first and cache.compiles == 2
    assert b"1075838976" in first.code and b"1082130432" in other.code  # 2.5f and 4.0f's bits in the PTX


# -- on a GPU ----------------------------------------------------------------------------------

MULTIPLY = r"""
extern "C" __global__ void multiply(const float *a, const float *b, float *out)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    out[i] = a[i] * b[i];
}
"""
SCALE_ADD = r"""
extern "C" __global__ void scale_add(float *x, float a, float b)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    x[i] = SPEC_CONST_0 * (a * x[i] + b);
}
"""


@pytest.fixture
def mgr():
    from cubind import compute as kp

    with kp.Manager(streams=2) as manager:
        yield manager


@pytest.mark.gpu
def test_gpu_multiply_every_sync_op_and_copy(mgr):
    from cubind import compute as kp

    a, b = mgr.tensor([2, 2, 2]), mgr.tensor([1, 2, 3])
    out, copy = mgr.tensor([0, 0, 0]), mgr.tensor([0, 0, 0])
    algo = mgr.algorithm([a, b, out], MULTIPLY)
    (mgr.sequence().record(kp.OpTensorSyncDevice([a, b])).record(kp.OpAlgoDispatch(algo))
     .record(kp.OpTensorCopy([out, copy])).record(kp.OpMemoryBarrier()).record(kp.OpTensorSyncLocal([out]))
     .eval())
    assert out.data().tolist() == [2.0, 4.0, 6.0] and copy.data().tolist() == [2.0, 4.0, 6.0]
    copy.data()[:] = 0
    mgr.sequence().eval(kp.OpTensorSyncLocal([copy]))
    assert copy.data().tolist() == [2.0, 4.0, 6.0]


@pytest.mark.gpu
def test_gpu_push_constants_change_without_rerecording(mgr):
    from cubind import compute as kp

    n = 1 << 16
    x = mgr.tensor(np.ones(n, np.float32))
    algo = mgr.algorithm([x], SCALE_ADD, spec_consts=[1.0], push_consts=[1.0, 0.0])
    dispatch = kp.OpAlgoDispatch(algo)
    seq = mgr.sequence().record(kp.OpTensorSyncDevice([x])).record(dispatch).record(kp.OpTensorSyncLocal([x]))
    expected = np.ones(n, np.float32)
    for a, b in [(1.0, 0.0), (2.0, 1.0), (0.5, -3.0), (3.0, 0.25)]:
        dispatch.set_push_constants([a, b])
        x.data()[:] = expected
        seq.eval()
        expected = np.float32(a) * expected + np.float32(b)
        np.testing.assert_allclose(x.data(), expected, rtol=1e-6)
    assert seq.graph_instantiations == 1


@pytest.mark.gpu
def test_gpu_spec_consts_compile_once_per_set(mgr):
    from cubind import compute as kp

    x = mgr.tensor(np.ones(256, np.float32))
    before = mgr.compile_cache.compiles
    for spec in ([2.0], [3.0], [2.0]):
        algo = mgr.algorithm([x], SCALE_ADD, spec_consts=spec, push_consts=[1.0, 0.0])
        x.data()[:] = 1.0
        mgr.sequence().record(kp.OpTensorSyncDevice([x])).record(kp.OpAlgoDispatch(algo)).record(
            kp.OpTensorSyncLocal([x])).eval()
        assert np.all(x.data() == spec[0])
    assert mgr.compile_cache.compiles - before == 2


@pytest.mark.gpu
def test_gpu_host_and_storage_tensors(mgr):
    from cubind import compute as kp

    host = mgr.tensor(np.arange(64, dtype=np.float32), tensor_type=kp.TensorTypes.host)
    storage = mgr.tensor(np.zeros(64, np.float32), tensor_type=kp.TensorTypes.storage)
    back = mgr.tensor(np.zeros(64, np.float32))
    twice = mgr.algorithm([host], SCALE_ADD, spec_consts=[2.0], push_consts=[1.0, 0.0])
    (mgr.sequence().record(kp.OpAlgoDispatch(twice)).record(kp.OpTensorCopy([host, storage]))
     .record(kp.OpTensorCopy([storage, back])).record(kp.OpTensorSyncLocal([back])).eval())
    expected = 2 * np.arange(64, dtype=np.float32)
    assert np.array_equal(host.data(), expected) and np.array_equal(back.data(), expected)


@pytest.mark.gpu
def test_gpu_sequences_alternate_and_run_on_two_streams(mgr):
    from cubind import compute as kp

    n = 4096
    x, y = mgr.tensor(np.ones(n, np.float32)), mgr.tensor(np.full(n, 2, np.float32))
    inc_x = mgr.algorithm([x], SCALE_ADD, spec_consts=[1.0], push_consts=[1.0, 1.0])
    dbl_y = mgr.algorithm([y], SCALE_ADD, spec_consts=[1.0], push_consts=[2.0, 0.0])
    mgr.sequence().eval(kp.OpTensorSyncDevice([x, y]))
    sx = mgr.sequence(0).record(kp.OpAlgoDispatch(inc_x))
    sy = mgr.sequence(1).record(kp.OpAlgoDispatch(dbl_y))
    for _ in range(10):
        sx.eval_async()
        sy.eval_async()
        sx.eval_await()
        sy.eval_await()
    # a sequence on stream 1 reading x waits for stream 0's last use of it
    sx.eval_async()
    mgr.sequence(1).eval(kp.OpTensorSyncLocal([x, y]))
    sx.eval_await()
    assert np.all(x.data() == 12) and np.all(y.data() == 2 * 2**10)


@pytest.mark.gpu
def test_gpu_eval_async_under_asyncio(mgr):
    from cubind import compute as kp

    n = 1 << 20
    x = mgr.tensor(np.ones(n, np.float32))
    algo = mgr.algorithm([x], SCALE_ADD, spec_consts=[1.0], push_consts=[1.0, 1.0])
    seq = mgr.sequence().record(kp.OpTensorSyncDevice([x]))
    for _ in range(50):
        seq.record(kp.OpAlgoDispatch(algo))
    seq.record(kp.OpTensorSyncLocal([x]))

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while seq.is_running():
                ticks += 1
                await asyncio.sleep(0)

        evaluated = seq.eval_async()
        await asyncio.gather(ticker(), evaluated)
        return ticks

    asyncio.run(main())
    assert np.all(x.data() == 51) and not seq.is_running()


@pytest.mark.gpu
def test_gpu_logistic_regression_converges(mgr):
    sys.path.insert(0, str(ROOT / "examples"))
    try:
        import compute_logistic_regression as example
    finally:
        sys.path.pop(0)
    assert example.train(mgr) is True


@pytest.mark.gpu
def test_gpu_destroy_releases_device_memory():
    from cubind import compute as kp

    # Tensors come from the device's memory pool, which keeps freed memory
    # for reuse: the pool's memory in use says what is held, not the free count.
    cuda = import_cubind_driver()
    gc.collect()
    cubind.Device(0).set_current()
    pool = ok(cuda.cuDeviceGetMemPool(0))
    used = cuda.CUmemPool_attribute.CU_MEMPOOL_ATTR_USED_MEM_CURRENT
    ok(cuda.cuCtxSynchronize())
    before = int(ok(cuda.cuMemPoolGetAttribute(pool, used)))
    mgr = kp.Manager()
    tensors = [mgr.tensor(np.zeros(1 << 24, np.float32)) for _ in range(4)]
    assert int(ok(cuda.cuMemPoolGetAttribute(pool, used))) >= before + 4 * 64 * 2**20
    mgr.destroy()
    assert not any(t.is_init() for t in tensors)
    ok(cuda.cuCtxSynchronize())
    assert int(ok(cuda.cuMemPoolGetAttribute(pool, used))) == before


def test_threads_evaluating_sequences_that_share_a_tensor_while_push_constants_change(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        import threading
        mgr = kp.Manager(streams=4)
        shared = mgr.tensor([1.0] * 64)
        algo = mgr.algorithm([shared], module, entry="scale_by", push_consts=[1.0])
        sequences = [mgr.sequence(i % 4).record(kp.OpAlgoDispatch(algo)) for i in range(8)]
        start, errors, stop = threading.Barrier(9), [], threading.Event()
        def evaluate(seq):
            start.wait()
            try:
                for _ in range(200):
                    seq.eval()
            except Exception as exc:
                errors.append(repr(exc))
        def change():
            start.wait()
            value = 1.0
            while not stop.is_set():
                value += 1.0
                algo.set_push_constants([value])
        threads = [threading.Thread(target=evaluate, args=(s,)) for s in sequences]
        changer = threading.Thread(target=change)
        for t in threads + [changer]:
            t.start()
        for t in threads:
            t.join()
        stop.set()
        changer.join()
        print(json.dumps([errors, count("fake_graph_launch_count"), count("fake_instantiate_count"),
                          [s.graph_instantiations for s in sequences],
                          any(shared._last[1] is s.event for s in sequences)]))
    """)
    errors, launches, instantiations, per_sequence, last_is_known = got
    assert errors == [] and launches == 1600 and instantiations == 8 and per_sequence == [1] * 8 and last_is_known
