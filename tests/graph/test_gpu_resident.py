"""cubind.graph's GPU-resident chains: a line of codelets ticked as usual for
the first message, captured into a CUDA graph at the second and replayed
per message after. On the C stand-in (tests/fake_driver, which records what
a capture holds): one capture, one graph launch per later message, no kernel
launched outside the graph after the first, the chain's buffers fixed and
its outputs new arrays; a tick doing what capture forbids stops the graph
naming the codelet. Marked ``gpu``: the results, message by
message, equal the same graph ticked, on one thread and on four."""

import textwrap

import numpy as np
import pytest

from cubind import graph as gx
from cubind.graph.scheduling.resident import REPLAY_GRAPHS
from tests._helpers import run_json_on_fake

KERNEL = r"""
extern "C" __global__ void axpb(float *out, const float *x, float a, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + 1.0f;
}

extern "C" __global__ void count_up(float *out, float *state, unsigned n)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        state[i] += 1.0f;
        out[i] = state[i] * i;
    }
}
"""
N = 4096

# The app, run both here (on a GPU) and in the stand-in's interpreters: a
# generator of per-message values, two stages (each a new tensor through its
# allocator, one kernel), a sink keeping what arrives; `resident` captures
# the two stages.
APP = '''
import numpy as np
from cubind import graph as gx

N = 4096


class Generate(gx.Codelet):
    def tick(self):
        count = self.get_execution_count()
        x = self.allocator.allocate((N,), np.float32)
        x.set(np.arange(N, dtype=np.float32) * count, stream=self.stream)
        m = gx.Message()
        m.add_tensor("x", x)
        m.add_timestamp(acqtime=count)
        self.tx("out").publish(m)


class Stage(gx.Codelet):
    gpu_resident = True
    kernel = None
    a = gx.Parameter(float, 2.0)

    def tick(self):
        x = self.rx("in").receive().tensor("x").data
        y = self.allocator.allocate((N,), np.float32)
        Stage.kernel((N + 255) // 256, 256, y, x, self.a, N)
        m = gx.Message()
        m.add_tensor("x", y)
        self.tx("out").publish(m)


class Counter(gx.Codelet):
    """A source on the device, which a chain may begin with: message k holds
    k * i, from a count it keeps in device memory (a replayed tick runs no
    host code, so what changes per message lives on the device)."""

    gpu_resident = True
    kernel = None

    def start(self):
        import cubind

        self.state = cubind.zeros((N,), np.float32, stream=self.stream)

    def tick(self):
        x = self.allocator.allocate((N,), np.float32)
        Counter.kernel((N + 255) // 256, 256, x, self.state, N)
        m = gx.Message()
        m.add_tensor("x", x)
        self.tx("out").publish(m)


class Sink(gx.Codelet):
    def start(self):
        self.got = []

    def tick(self):
        m = self.rx("in").receive()
        t = m.tensor("x")
        stamp = m.timestamp()  # ticked, the stages make new messages; a chain passes the input's on
        self.got.append((t.data.ptr, stamp and stamp.acqtime, t.host().copy()))
        # Not kept: a message of the chain's stream let go here while the
        # chain captures its second message is freed after the capture, not
        # inside it (cubind._core.allocations).


def build(count, resident, stage=Stage, source=Generate):
    g = gx.Graph()
    names = ["gen", "s1", "s2", "sink"]
    for i, name in enumerate(names):
        e = g.entity(name)
        if i:
            e.add(gx.DoubleBufferReceiver(capacity=2), "in")
            e.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
            g.connect(names[i - 1] + "/out", name + "/in")
        else:
            e.add(gx.CountSchedulingTerm(count=count))
        if i < 3:
            e.add(gx.DoubleBufferTransmitter(capacity=2), "out")
            e.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
        e.add(gx.UnboundedAllocator(), "alloc")
        e.add(gx.CudaStreamPool(stream_flags=1), "pool")
    g["gen"].add(source(), "gen")
    g["s1"].add(stage(a=2.0), "stage")
    g["s2"].add(stage(a=-0.5), "stage")
    sink = g["sink"].add(Sink(), "sink")
    chain = None
    if resident == "declared":  # the stages declare gpu_resident = True: the line of them is found at run
        g.gpu_resident()
    elif resident == "from_source":  # the chain begins with the source: no input to copy in
        chain = g.gpu_resident("gen", "s1", "s2")
    elif resident:
        chain = g.gpu_resident("s1", "s2")
    return g, sink, chain
'''

ON_FAKE = """
import ctypes, json
import numpy as np
import cubind
from tests._fake_graph import count, fake, nodes, setint
from tests._helpers import error
setint("fake_record_args", 2)
module = cubind.Module.load(open({ptx!r}, "rb").read())
""" + APP + """
Stage.kernel = module.get_kernel("axpb")
Counter.kernel = module.get_kernel("count_up")
def launches():
    return count("fake_launch_count")
"""


@pytest.fixture(scope="module")
def ptx_file(tmp_path_factory):
    import cubind

    path = tmp_path_factory.mktemp("resident") / "axpb.ptx"
    path.write_bytes(cubind.Program(KERNEL).compile("ptx", arch=75).code)
    return path


def run_fake(fake_driver, ptx_file, body):
    return run_json_on_fake(fake_driver, ON_FAKE.format(ptx=str(ptx_file)) + textwrap.dedent(body))


@pytest.mark.parametrize("how", ["named", "declared"])
def test_a_chain_is_captured_once_and_replayed_per_message(fake_driver, ptx_file, how):
    got, _ = run_fake(fake_driver, ptx_file, f"""
        g, sink, chain = build(6, resident={'True' if how == 'named' else '"declared"'})
        before = launches()
        result = g.run(gx.MultiThreadScheduler(worker_thread_number=3))
        chain = chain or g.resident_chains[0]
        assert [c.names for c in g.resident_chains] == [["s1", "s2"]]
        captured = [n for n in nodes() if n["kind"] == "kernel"][-2:]
        replay = [n for n in nodes() if n["kind"] in ("copy", "graph")][-3:]
        print(json.dumps([result.reason, result.ticks_by_entity, count("fake_capture_count"),
                          count("fake_graph_launch_count"), launches() - before, chain.replays, chain.node_types,
                          [n["kind"] for n in captured], [p for p, _, _ in sink.got],
                          [t for _, t, _ in sink.got], chain.buffers, captured[0]["args"][0],
                          captured[1]["args"][1], replay, [n["args"][:2] for n in captured],
                          count("fake_exec_copy_update_count"), count("fake_instantiate_count"),
                          len(chain.replay_graphs)]))
    """)
    (reason, ticks, captures, graph_launches, kernels, replays, types, kinds, ptrs, stamps, kept, out1, in2, replay,
     args, copy_updates, instantiations, left) = got
    assert reason == "done" and ticks == {"gen": 6, "s1": 6, "s2": 6, "sink": 6}
    assert captures == 1 and graph_launches == 5 and replays == 4
    assert kernels == 2  # the first message ticked as usual; every later kernel ran inside the graph
    assert types == ["kernel", "kernel"] and kinds == ["kernel", "kernel"]
    assert len(set(ptrs)) == 6  # each output a new array: a consumer may keep it
    assert stamps == [1, 2, 3, 4, 5, 6]  # the input's timestamp passes through
    assert kept == 2 and out1 == in2  # the stages' tensors: fixed buffers, stage 1's output stage 2's input
    assert out1 not in ptrs
    # Replayed as one graph: the message's tensor copied into the chain's input
    # buffer, the captured chain as a child, stage 2's output copied out.
    copy_in, body, copy_out = replay
    assert [n["kind"] for n in replay] == ["copy", "graph", "copy"]
    assert body["deps"] == [copy_in["handle"]] and copy_out["deps"] == [body["handle"]]
    (out_1, in_1), (out_2, _) = args
    assert copy_in["dst"] == in_1 and copy_out["src"] == out_2 and copy_in["bytes"] == 4 * 4096
    # Each message here at new addresses (the stand-in holds freed blocks
    # back): a replay graph of its own while fewer than REPLAY_GRAPHS are
    # kept (the capture made the first), then the least recently used one
    # retargeted, two address updates; the captured graph instantiated once.
    assert replays == REPLAY_GRAPHS
    assert copy_updates == 2 and instantiations == 1 + REPLAY_GRAPHS
    assert left == 0  # closed when the run stopped



def test_a_chain_may_begin_with_its_source(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        g, sink, chain = build(6, resident="from_source", source=Counter)
        before = launches()
        result = g.run(gx.MultiThreadScheduler(worker_thread_number=3))
        replay = [n for n in nodes() if n["kind"] in ("copy", "graph")][-2:]
        print(json.dumps([result.reason, result.ticks_by_entity, count("fake_capture_count"),
                          count("fake_graph_launch_count"), launches() - before, chain.replays, chain.node_types,
                          [p for p, _, _ in sink.got], chain.buffers, [n["kind"] for n in replay],
                          replay[0]["deps"], count("fake_exec_copy_update_count"), count("fake_instantiate_count")]))
    """)
    (reason, ticks, captures, graph_launches, kernels, replays, types, ptrs, kept, replay, body_deps, copy_updates,
     instantiations) = got
    assert reason == "done" and ticks == {"gen": 6, "s1": 6, "s2": 6, "sink": 6}
    assert captures == 1 and graph_launches == 5 and replays == 4
    assert kernels == 3  # the first message ticked through the three; every later kernel ran inside the graph
    assert types == ["kernel"] * 3 and kept == 3  # the source's tensor is one of the chain's fixed buffers
    assert len(set(ptrs)) == 6  # each output a new array
    # Replayed as the captured chain and one copy out: nothing to copy in,
    # so the child graph waits for nothing and a retarget updates one address.
    assert replay == ["graph", "copy"] and body_deps == []
    assert copy_updates == 1 and instantiations == 1 + REPLAY_GRAPHS


def test_messages_at_addresses_seen_before_launch_their_replay_graph_as_it_is(fake_driver, ptx_file):
    # A stream-ordered pool hands freed blocks out again (fake_pool_reuse:
    # the newest of the size first, as the driver's pool did on the H200 for
    # every message of a run): inputs and outputs come back at a few
    # addresses, and each message launches the replay graph made for its
    # own, with no copy node retargeted.
    got, _ = run_fake(fake_driver, ptx_file, """
        setint("fake_pool_reuse", 1)
        g, sink, chain = build(12, resident=True)
        result = g.run()
        copies = [n for n in nodes() if n["kind"] == "copy"]
        print(json.dumps([result.reason, chain.replays, count("fake_graph_launch_count"),
                          count("fake_exec_copy_update_count"), count("fake_instantiate_count"),
                          [p for p, _, _ in sink.got], [n["dst"] for n in copies]]))
    """)
    reason, replays, launches, copy_updates, instantiations, outputs, copy_targets = got
    assert reason == "done" and replays == 10 and launches == 11
    assert copy_updates == 0 and instantiations <= 1 + REPLAY_GRAPHS
    assert len(set(outputs[2:])) < replays  # the outputs' blocks came back
    assert set(outputs[2:]) <= set(copy_targets)  # each one a replay graph's copy writes


@pytest.mark.provokes_api_error
def test_a_copy_the_driver_refuses_to_retarget_makes_the_replay_graph_anew(fake_driver, ptx_file):
    # The driver refuses a copy node's new address of another kind of
    # allocation than the instantiated one (a pool's for cuMemAlloc's): the
    # chain then makes its replay graph around the new addresses.
    got, _ = run_fake(fake_driver, ptx_file, """
        setint("fake_refuse_copy_update", 1)
        g, sink, chain = build(6, resident=True)
        result = g.run()
        copies = [n for n in nodes() if n["kind"] == "copy"]
        print(json.dumps([result.reason, chain.replays, count("fake_instantiate_count"),
                          count("fake_graph_launch_count"), len({p for p, _, _ in sink.got}),
                          copies[-1]["dst"], sink.got[-1][0]]))
    """)
    reason, replays, instantiations, launches, outputs, last_copy_dst, last_output = got
    assert reason == "done" and replays == 4 and launches == 5 and outputs == 6
    # The captured graph and the capture's replay graph; three more while
    # fewer than REPLAY_GRAPHS are kept; then the retarget the driver
    # refused, made anew.
    assert instantiations == 2 + 4
    assert last_copy_dst == last_output  # the graph made for the last message copies into what it handed out

def test_without_a_chain_each_kernel_is_launched_and_nothing_is_captured(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        g, sink, _ = build(4, resident=False)
        before = launches()
        ticked = g.run()
        print(json.dumps([ticked.ticks, launches() - before, count("fake_capture_count")]))
    """)
    assert got == [16, 8, 0]


@pytest.mark.provokes_api_error
def test_a_tick_that_synchronizes_stops_the_graph_naming_the_codelet(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        class Syncs(Stage):
            gpu_resident = None
            def tick(self):
                super().tick()
                self.stream.synchronize()
        g, sink, chain = build(3, resident=True, stage=Syncs)
        try:
            g.run()
            raised = None
        except gx.CodeletError as exc:
            raised = [str(exc), exc.entity, exc.codelet, exc.phase, getattr(exc, "__notes__", [])]
        print(json.dumps([raised, chain.cuda_graph is None, len(sink.got)]))
    """)
    raised, no_graph, received = got
    message, entity, codelet, phase, notes = raised
    assert (entity, codelet, phase) == ("s1", "stage", "tick")
    assert "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED" in message
    assert any("GPU-resident chain s1 -> s2 was being captured" in n for n in notes)
    assert no_graph and received == 1  # the first message, ticked as usual, went through


def test_a_tick_that_allocates_on_its_stream_outside_the_allocator_is_refused(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        class Allocates(Stage):
            def tick(self):
                cubind.empty(16, np.float32)          # the capturing stream: a node of the graph's memory
                super().tick()
        g, sink, chain = build(3, resident=True, stage=Allocates)
        print(json.dumps([error(g.run), len(sink.got)]))
    """)
    assert got[0].startswith("CodeletError: entity 's1', codelet 'GPU-resident chain s1 -> s2': tick() raised "
                             "GraphError: GPU-resident chain s1 -> s2: a codelet allocated or freed device memory")
    assert got[1] == 1


def test_a_message_of_another_shape_after_the_capture_is_refused(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        class Grows(Generate):
            def tick(self):
                n = N * self.get_execution_count()
                m = gx.Message()
                m.add_tensor("x", self.allocator.allocate((n,), np.float32))
                self.tx("out").publish(m)
        g, sink, chain = build(3, resident=True)
        g["gen"].components.remove(g["gen"]["gen"])
        g["gen"].add(Grows(), "gen")
        print(json.dumps([error(g.run), len(sink.got)]))
    """)
    assert "tensor 'x' is <Tensor x device float32[12288]>; the captured chain reads device float32[8192]" in got[0]
    assert got[1] == 2


class _Noop(gx.Codelet):
    pass


class _Refuses(gx.Codelet):
    gpu_resident = False


class _Declared(gx.Codelet):
    gpu_resident = True


def _line(*names, extra_rx=False, declared=()):
    g = gx.Graph()
    for i, name in enumerate(names):
        e = g.entity(name)
        if i:
            e.add(gx.DoubleBufferReceiver(), "in")
        if extra_rx and i == 0:
            e.add(gx.DoubleBufferReceiver(), "a")
            e.add(gx.DoubleBufferReceiver(), "b")
        if i < len(names) - 1:
            e.add(gx.DoubleBufferTransmitter(), "out")
        e.add(_Declared() if name in declared else _Noop(), "c")
    for a, b in zip(names, names[1:]):
        g.connect(f"{a}/out", f"{b}/in")
    return g


@pytest.mark.parametrize("case", ["unknown", "twice", "not_a_line", "refuses", "two_inputs", "two_devices"])
def test_a_chain_that_cannot_be_one_is_refused_by_name(case):
    g = _line("a", "b", "c", extra_rx=case == "two_inputs")
    names, want = ("a", "b"), None
    if case == "unknown":
        names, want = ("a", "x"), "GPU-resident chain a -> x: no entity 'x'"
    elif case == "twice":
        g.gpu_resident("b", "c")
        with pytest.raises(gx.GraphError, match="gpu_resident: entity 'b' is in a chain already"):
            g.gpu_resident("a", "b")
        return
    elif case == "not_a_line":
        names, want = ("a", "c"), "'a' must feed 'c' alone"
    elif case == "refuses":
        g["b"].add(_Refuses(), "r")
        want = "codelet b/r says gpu_resident = False"
    elif case == "two_inputs":
        want = "the first entity 'a' has 2 receivers"
    elif case == "two_devices":
        g["b"].device = 1
        want = "entity 'b' is on device 1, the chain's first on None"
    g.gpu_resident(*names)
    with pytest.raises(gx.GraphError, match=want.replace("(", r"\(").replace(")", r"\)")):
        g.run()


# -- on a GPU: the same results as ticking


@pytest.mark.gpu
@pytest.mark.parametrize("threads", [1, 4])
def test_a_resident_chain_gives_what_ticking_gives_message_by_message(threads):
    import cubind

    space = {}
    exec(APP, space)
    space["Stage"].kernel = cubind.Program(KERNEL).compile().get_kernel("axpb")
    runs = {}
    for resident in (False, True):
        g, sink, chain = space["build"](12, resident)
        result = g.run(gx.MultiThreadScheduler(worker_thread_number=threads) if threads > 1 else None)
        assert result.reason == "done" and result.ticks == 48
        runs[resident] = [values for _, _, values in sink.got]
        if resident:
            assert chain.replays == 10 and chain.node_types.count("kernel") == 2
            assert "mem_alloc" not in chain.node_types
    want = [-0.5 * (2.0 * np.arange(N, dtype=np.float32) * k + 1) + 1 for k in range(1, 13)]
    for ticked, replayed, expected in zip(runs[False], runs[True], want):
        np.testing.assert_array_equal(replayed, ticked)
        np.testing.assert_allclose(ticked, expected, rtol=1e-6)


@pytest.mark.gpu
def test_a_chain_beginning_with_its_source_gives_what_ticking_gives():
    import cubind

    space = {}
    exec(APP, space)
    module = cubind.Program(KERNEL).compile()
    space["Stage"].kernel, space["Counter"].kernel = module.get_kernel("axpb"), module.get_kernel("count_up")
    runs = {}
    for resident in (False, "from_source"):
        g, sink, chain = space["build"](12, resident, source=space["Counter"])
        result = g.run()
        assert result.reason == "done" and result.ticks == 48
        runs[resident] = [values for _, _, values in sink.got]
        if resident:
            assert chain.replays == 10 and chain.node_types.count("kernel") == 3
    want = [-0.5 * (2.0 * np.arange(N, dtype=np.float32) * k + 1) + 1 for k in range(1, 13)]
    for ticked, replayed, expected in zip(runs[False], runs["from_source"], want):
        np.testing.assert_array_equal(replayed, ticked)
        np.testing.assert_allclose(ticked, expected, rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.provokes_api_error
def test_a_tick_reading_a_result_back_is_refused_on_a_gpu_and_the_device_stays_usable():
    import cubind

    space = {}
    exec(APP, space)
    space["Stage"].kernel = cubind.Program(KERNEL).compile().get_kernel("axpb")

    class Reads(space["Stage"]):
        def tick(self):
            super().tick()
            self.allocator.allocate((4,), np.float32).get()  # a copy back to the host: a synchronisation

    g, sink, _ = space["build"](3, True, stage=Reads)
    with pytest.raises(gx.CodeletError, match="STREAM_CAPTURE") as info:
        g.run()
    assert info.value.entity == "s1"
    np.testing.assert_array_equal(cubind.to_gpu(np.ones(4, np.float32)).get(), np.ones(4, np.float32))



def test_the_lines_of_declared_codelets_are_found():
    g = _line("a", "b", "c", "d", "e", declared=("b", "c", "e"))
    assert g.gpu_resident() is None
    g.finalize()
    from cubind.graph.scheduling.resident import declared_lines

    assert declared_lines(g) == [["b", "c"], ["e"]]
    assert declared_lines(g, taken={"c"}) == [["b"], ["e"]]


def test_a_codelet_on_another_thread_naming_a_chains_allocator_gets_new_tensors(fake_driver, ptx_file):
    got, _ = run_fake(fake_driver, ptx_file, """
        import time
        class Slow(Stage):                            # the chain's first two ticks (ticked, captured) take a while
            def tick(self):
                super().tick()
                if self.get_execution_count() <= 2:
                    time.sleep(0.2)
        class Other(gx.Codelet):                      # outside the chain, on another worker meanwhile
            def start(self):
                self.got, self.wrong = 0, 0
            def tick(self):
                t = self.allocator.tensor(gx.TensorDescription("t", "device", [N], np.float32))
                self.got += 1
                self.wrong += any(t is k for k in chain.kept)
                time.sleep(0.002)
        g, sink, chain = build(4, resident=True, stage=Slow)
        o = g.entity("other")
        o.add(gx.CountSchedulingTerm(count=300))
        other = o.add(Other(allocators=["s1/alloc"]), "other")
        result = g.run(gx.MultiThreadScheduler(worker_thread_number=4, handoff_ms=0))
        print(json.dumps([result.reason, other.got, other.wrong, len(sink.got), chain.buffers]))
    """)
    reason, allocated, wrong, received, buffers = got
    assert reason == "done" and received == 4 and buffers == 2
    assert allocated == 300 and wrong == 0

