"""cubind.graph: codelets, queues, scheduling terms, schedulers, messages and
YAML apps. Everything host-side runs on every machine; device tensors run
against the emulated driver (their ordering: an event recorded on the
producer's stream, waited for on the consumer's) and, marked ``gpu``, on a GPU."""

import importlib.util
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import cubind
from cubind import graph as gx
from cubind.graph.scheduling.external import ExternalSource
from cubind.graph.scheduling.terms import READY
from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]
APPS = ROOT / "examples" / "graph"


@pytest.fixture
def yaml_needed():
    if importlib.util.find_spec("yaml") is None:
        if os.environ.get("CI"):
            pytest.fail("PyYAML is not installed; scripts/test.sh installs it")
        pytest.skip("PyYAML is not installed (pip install pyyaml): YAML apps are not tested")


def test_a_yaml_app_without_pyyaml_names_the_extra():
    """``python -m cubind.graph app.yaml`` where PyYAML is missing: exit 2 and one
    line saying what to install, not a traceback."""
    code = textwrap.dedent("""
        import runpy, sys
        sys.modules["yaml"] = None  # as in an environment without PyYAML: its import fails
        sys.argv = ["python -m cubind.graph", sys.argv[1]]
        runpy.run_module("cubind.graph", run_name="__main__")
    """)
    done = subprocess.run([sys.executable, "-c", code, str(APPS / "ping.yaml")], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env=dict(os.environ, PYTHONPATH=pythonpath(ROOT)))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    assert "PyYAML" in done.stderr and "pip install 'cubind[graph]'" in done.stderr, done.stderr


def test_importing_cubind_graph_loads_nothing_of_the_layers_below():
    """Its modules import ``cubind`` at module level: the package's names
    load on first use, so importing every room (UCX's included) loads no
    layer of cubind, no generated module and not ucxx."""
    code = ("import sys, cubind.graph, cubind.graph.apps.processes; "
            "print(sorted(m for m in sys.modules if m.startswith(('cubind._', 'cuda', 'nvrtc', '_cubind', 'ucxx'))))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120,
                          env=dict(os.environ, PYTHONPATH=pythonpath(ROOT)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


class Source(gx.Codelet):
    """Publishes a message with the tick count as a host tensor."""

    def tick(self):
        m = gx.Message()
        m.add_tensor("n", np.array([self.get_execution_count()]))
        self.tx("out").publish(m)


class Sink(gx.Codelet):
    def start(self):
        self.seen = []

    def tick(self):
        self.seen.append(int(self.rx("in").receive().tensor("n").data[0]))


def pipeline(count=10, capacity=1, policy=2, scheduler=None, receptive=True):
    g = gx.Graph()
    a = g.entity("a")
    out = a.add(gx.DoubleBufferTransmitter(capacity=capacity, policy=policy), "out")
    if receptive:
        a.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
    a.add(gx.CountSchedulingTerm(count=count))
    a.add(Source(), "source")
    b = g.entity("b")
    b.add(gx.DoubleBufferReceiver(capacity=capacity, policy=policy), "in")
    b.add(gx.MessageAvailableSchedulingTerm(receiver="in", min_size=1))
    sink = b.add(Sink(), "sink")
    g.connect(out, "b/in")
    return g, sink


# -- scheduling


@pytest.mark.parametrize("workers", [1, 4])
def test_a_pipeline_passes_every_message_in_order_and_stops_when_nothing_can_fire(workers):
    g, sink = pipeline(count=50)
    scheduler = gx.GreedyScheduler() if workers == 1 else gx.MultiThreadScheduler(worker_thread_number=workers)
    result = g.run(scheduler)
    assert sink.seen == list(range(1, 51))
    assert result.reason == "done" and result.ticks_by_entity == {"a": 50, "b": 50}


class LastWords(gx.Component, ExternalSource):
    """A source from outside whose last message lands in ``queue`` just as
    it ends: as a transport's thread delivers a peer's last messages and
    its goodbye between the run's pick and its look at the sources."""

    def open_external(self, wake):
        self.asked = 0

    def external_active(self):
        self.asked += 1
        if self.asked == 1:
            m = gx.Message()
            m.add_tensor("n", np.array([7]))
            self.queue.deliver(m)
        return False

    def external_failure(self):
        return None

    def close_external(self, failed):
        return None

    def external_counts(self):
        return {}


@pytest.mark.parametrize("workers", [1, 4])
def test_messages_that_arrive_as_the_last_source_ends_are_read_before_the_run_is_done(workers):
    g = gx.Graph()
    source = g.entity("outside").add(LastWords(), "source")
    b = g.entity("b")
    source.queue = b.add(gx.DoubleBufferReceiver(capacity=2), "in")
    b.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
    sink = b.add(Sink(), "sink")
    scheduler = gx.GreedyScheduler() if workers == 1 else gx.MultiThreadScheduler(worker_thread_number=workers)
    result = g.run(scheduler)
    assert sink.seen == [7] and result.reason == "done"


class LateWords(LastWords):
    """A source whose one message comes from its own thread after ``delay``
    seconds, with a wake: the run waits on its condition meanwhile (this
    source cannot wait itself: ``external_wait`` says False at once)."""

    delay = 0.1

    def open_external(self, wake):
        self.arrived = None

        def later():
            time.sleep(self.delay)
            m = gx.Message()
            m.add_tensor("n", np.array([7]))
            self.queue.deliver(m)
            self.arrived = time.monotonic()
            wake()

        threading.Thread(target=later, daemon=True).start()

    def external_active(self):
        return self.arrived is None


def test_a_wake_from_another_thread_ends_the_runs_wait_at_once():
    # The run notifies its condition only where a thread waits there (Run._wake): a lost
    # notification would leave it waiting out check_recession_period_ms (5 s here).
    g = gx.Graph()
    source = g.entity("outside").add(LateWords(), "source")
    b = g.entity("b")
    source.queue = b.add(gx.DoubleBufferReceiver(capacity=2), "in")
    b.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
    ticked = []

    class Note(gx.Codelet):
        def tick(self):
            self.rx("in").receive()
            ticked.append(time.monotonic())

    b.add(Note(), "note")
    result = g.run(gx.GreedyScheduler(check_recession_period_ms=5000))
    assert result.reason == "done" and len(ticked) == 1
    assert ticked[0] - source.arrived < 1.0


def test_start_and_stop_run_once_for_every_codelet_and_timestamps_advance():
    calls = []

    class Probe(gx.Codelet):
        def start(self):
            calls.append(("start", self.name(), self.eid(), self.cid()))

        def tick(self):
            calls.append(("tick", self.get_execution_count(), self.is_first_tick(), self.get_delta_time() >= 0))

        def stop(self):
            calls.append(("stop", self.get_execution_count(), self.get_execution_timestamp() is not None))

    g = gx.Graph()
    e = g.entity("e")
    e.add(gx.CountSchedulingTerm(count=3))
    probe = e.add(Probe(), "probe")
    g.run()
    assert calls[0] == ("start", "probe", e.eid, probe.cid())
    assert calls[1:] == [("tick", 1, True, True), ("tick", 2, False, True), ("tick", 3, False, True), ("stop", 3, True)]


def test_a_codelet_overriding_stamp_is_stamped_through_it_with_or_without_a_stream(array_gpu, monkeypatch):
    # The loop sets a tick's timestamps itself only for Codelet's own stamp.
    monkeypatch.setenv("FAKE_DEVICE_COUNT", "1")  # the emulated driver's device 0 (a GPU ignores it)
    seen = []

    class Own(gx.Codelet):
        def stamp(self, phase, now):
            seen.append((self.name(), phase))
            super().stamp(phase, now)

        def tick(self):
            pass

    g = gx.Graph()
    plain = g.entity("plain")
    plain.add(gx.CountSchedulingTerm(count=2))
    plain.add(Own(), "own")
    streamed = g.entity("streamed")
    streamed.add(gx.CountSchedulingTerm(count=2))
    streamed.add(gx.CudaStreamPool(), "pool")
    own = streamed.add(Own(), "own2")
    g.run()
    assert seen.count(("own", "tick")) == 2 and seen.count(("own2", "tick")) == 2
    assert own.get_execution_count() == 2 and own.stream is None  # the stream went back to its pool


def test_a_periodic_term_spaces_ticks_by_its_period_on_a_manual_clock():
    times = []

    class Timer(gx.Codelet):
        def tick(self):
            times.append(self.get_clock().timestamp())

    g = gx.Graph()
    g.entity("clock").add(gx.ManualClock(), "clock")
    e = g.entity("e")
    e.add(gx.PeriodicSchedulingTerm(recess_period="10ms"))
    e.add(gx.CountSchedulingTerm(count=4))
    e.add(Timer(), "timer")
    t0 = time.monotonic()
    g.run()
    assert times == [0, 10_000_000, 20_000_000, 30_000_000]
    assert time.monotonic() - t0 < 1  # the manual clock jumps, it does not sleep


def test_a_periodic_term_on_the_realtime_clock_waits():
    g = gx.Graph()
    e = g.entity("e")
    e.add(gx.PeriodicSchedulingTerm(recess_period="50Hz"))
    e.add(gx.CountSchedulingTerm(count=4))
    e.add(gx.Codelet(), "idle")
    t0 = time.monotonic()
    g.run()
    assert time.monotonic() - t0 >= 0.055


def test_the_loop_reads_a_plain_realtime_clock_itself_and_asks_any_other():
    # A plain RealtimeClock's timestamps are the monotonic clock less its
    # origin, which the compiled loop reads without calling it; a scaled one,
    # one counting from the epoch and a subclass's own timestamp() are asked.
    stamps = []

    class Probe(gx.Codelet):
        def tick(self):
            stamps.append((time.monotonic_ns(), self.get_execution_timestamp()))

    class Shifted(gx.RealtimeClock):
        def timestamp(self):
            return super().timestamp() + 10**15

    def run(clock):
        stamps.clear()
        g = gx.Graph()
        g.entity("clock").add(clock, "clock")
        e = g.entity("e")
        e.add(gx.CountSchedulingTerm(count=3))
        e.add(Probe(), "probe")
        g.run()
        return clock, list(stamps)

    clock, seen = run(gx.RealtimeClock())
    origin = clock.monotonic_origin_ns()
    assert origin is not None and all(0 <= mono - origin - ts < 50_000_000 for mono, ts in seen)
    clock, seen = run(Shifted())
    assert clock.monotonic_origin_ns() is None and all(ts >= 10**15 for _, ts in seen)
    for clock in (gx.RealtimeClock(initial_time_scale=2.0), gx.RealtimeClock(use_time_since_epoch=True)):
        clock, seen = run(clock)
        assert clock.monotonic_origin_ns() is None and len(seen) == 3
    assert gx.ManualClock().monotonic_origin_ns() is None


def test_a_boolean_term_disabled_by_the_codelet_ends_its_entity():
    class Three(gx.Codelet):
        def tick(self):
            if self.get_execution_count() == 3:
                self.entity["enabled"].disable_tick()

    g = gx.Graph()
    e = g.entity("e")
    e.add(gx.BooleanSchedulingTerm(enable_tick=True), "enabled")
    e.add(Three(), "three")
    assert g.run().ticks == 3


def test_a_target_time_term_ticks_at_the_times_the_codelet_sets():
    times = []

    class Planner(gx.Codelet):
        def start(self):
            self.entity["target"].set_next_target_time(5)

        def tick(self):
            now = self.get_clock().timestamp()
            times.append(now)
            if len(times) < 3:
                self.entity["target"].set_next_target_time(now + 7)

    g = gx.Graph()
    g.entity("clock").add(gx.ManualClock(), "clock")
    e = g.entity("e")
    e.add(gx.TargetTimeSchedulingTerm(), "target")
    e.add(Planner(), "planner")
    result = g.run()
    assert times == [5, 12, 19] and result.reason == "deadlock"


def test_max_duration_stops_an_endless_graph():
    g = gx.Graph()
    g.entity("e").add(gx.Codelet(), "spin")
    t0 = time.monotonic()
    result = g.run(gx.GreedyScheduler(max_duration_ms=100))
    assert result.reason == "max_duration" and 0.09 <= time.monotonic() - t0 < 2 and result.ticks > 0


def test_interrupt_from_another_thread_stops_the_graph_and_stops_its_codelets():
    stopped = threading.Event()

    class Spin(gx.Codelet):
        def stop(self):
            stopped.set()

    g = gx.Graph()
    g.entity("e").add(Spin(), "spin")
    threading.Timer(0.1, g.interrupt).start()
    assert g.run(gx.MultiThreadScheduler(worker_thread_number=3)).reason == "interrupted"
    assert stopped.is_set()


def test_queue_policies():
    g, sink = pipeline(count=5, capacity=2, policy=0, receptive=False)
    g.entities[1].components[1]._params["min_size"] = 99  # the sink never ticks: the queue fills
    g.run()
    rx = g["b"]["in"]
    assert rx.size() + rx.back_size() == 2 and rx.dropped == 3
    g, _ = pipeline(count=5, capacity=2, policy=1, receptive=False)
    g.entities[1].components[1]._params["min_size"] = 99
    g.run()
    assert [int(m.tensor("n").data[0]) for m in g["b"]["in"].stages.snapshot()[1]] == [1, 2]
    g, _ = pipeline(count=5, capacity=1, policy=2, receptive=False)
    g.entities[1].components[1]._params["min_size"] = 99
    with pytest.raises(gx.CodeletError, match=r"entity 'a', codelet 'source': tick\(\) raised QueueFullError: "
                       r"b/in: queue full \(capacity 1, policy 2: fault\)"):
        g.run()


def test_publishing_what_is_not_a_message_is_a_type_error_naming_it():
    class Bad(gx.Codelet):
        def tick(self):
            self.transmitters[0].publish({"x": 1})

    g = gx.Graph()
    a = g.entity("a")
    a.add(gx.DoubleBufferTransmitter(), "out")
    a.add(gx.CountSchedulingTerm(count=1))
    a.add(Bad(), "bad")
    b = g.entity("b")
    b.add(gx.DoubleBufferReceiver(), "in")
    b.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
    b.add(gx.Codelet(), "idle")
    g.connect("a/out", "b/in")
    with pytest.raises(gx.CodeletError, match="message: expected a cubind.graph Message, not dict"):
        g.run()


# -- errors


@pytest.mark.parametrize("phase", ["start", "tick", "stop"])
def test_a_codelet_error_names_entity_codelet_and_phase_and_every_started_codelet_stops(phase):
    stops = []

    class Bad(gx.Codelet):
        def start(self):
            if phase == "start":
                raise ValueError("broken")

        def tick(self):
            if phase == "tick":
                raise ValueError("broken")

        def stop(self):
            stops.append(self.name())
            if phase == "stop":
                raise ValueError("broken")

    class Good(gx.Codelet):
        def stop(self):
            stops.append(self.name())

    g = gx.Graph()
    g.entity("first").add(Good(), "good")
    bad = g.entity("second")
    bad.add(gx.CountSchedulingTerm(count=2))
    bad.add(Bad(), "bad")
    with pytest.raises(gx.CodeletError) as info:
        g.run(gx.MultiThreadScheduler(worker_thread_number=2, max_duration_ms=2000))
    err = info.value
    assert (err.entity, err.codelet, err.phase) == ("second", "bad", phase)
    assert str(err) == f"entity 'second', codelet 'bad': {phase}() raised ValueError: broken"
    assert isinstance(err.__cause__, ValueError)
    assert stops == (["good"] if phase == "start" else ["good", "bad"])


def test_parameters_are_typed_with_defaults_and_clear_errors():
    class P(gx.Codelet):
        count = gx.Parameter(int, doc="how many")
        rate = gx.Parameter(float, 1.5)
        label = gx.Parameter(str, "x")

    g = gx.Graph()
    p = g.entity("e").add(P(count=3, rate=2), "p")
    assert (p.count, p.rate, p.label) == (3, 2.0, "x")
    with pytest.raises(gx.ParameterError, match=r"^e/q/count: missing required parameter \(int: how many\)$"):
        g["e"].add(P(), "q")
    with pytest.raises(gx.ParameterError, match=r"^e/r/count: expected int, got str '3'$"):
        g["e"].add(P(count="3"), "r")
    with pytest.raises(gx.ParameterError, match=r"^e/s: unknown parameter 'cuont'; P takes .*count.*"):
        g["e"].add(P(cuont=3), "s")
    with pytest.raises(gx.ParameterError, match=r"e/t/capacity: must be at least 1, got 0"):
        g["e"].add(gx.DoubleBufferReceiver(capacity=0), "t")
    with pytest.raises(gx.ParameterError, match=r"recess_period: 'soon' is not a period"):
        g["e"].add(gx.PeriodicSchedulingTerm(recess_period="soon"), "u")


def test_a_parameter_is_read_once_its_component_is_in_an_entity():
    term = gx.CountSchedulingTerm(count=3)
    with pytest.raises(AttributeError, match=r"^parameter 'count' is read once the component is added to an entity$"):
        term.count  # noqa: B018 - the read is the test
    gx.Graph().entity("e").add(term)
    assert term.count == 3 and gx.CountSchedulingTerm.count.doc == "how many ticks"


def test_references_to_missing_or_wrong_components_are_named():
    g = gx.Graph()
    e = g.entity("e")
    e.add(gx.MessageAvailableSchedulingTerm(receiver="nope"), "term")
    e.add(gx.Codelet(), "c")
    with pytest.raises(gx.GraphError, match=r"e/term/receiver: entity 'e' has no component 'nope'; it has 'term', 'c'"):
        g.run()
    g = gx.Graph()
    e = g.entity("e")
    e.add(gx.DoubleBufferTransmitter(), "out")
    e.add(gx.MessageAvailableSchedulingTerm(receiver="out"), "term")
    with pytest.raises(gx.GraphError, match=r"e/term/receiver: e/out is a DoubleBufferTransmitter, not a Receiver"):
        g.run()


# -- messages and host tensors


def test_messages_carry_named_tensors_timestamps_and_objects():
    m = gx.Message()
    t = m.add_tensor("x", np.arange(6, dtype=np.float32).reshape(2, 3)[:, ::2])
    m.add_timestamp(acqtime=5)
    m.add("meta", {"frame": 1})
    assert m.names() == ["x", "timestamp", "meta"] and m.get("meta") == {"frame": 1}
    d = t.description
    assert (d.storage, d.shape, d.dtype, d.strides) == ("host", (2, 2), np.float32, (12, 8))
    assert np.asarray(t).base is not None and np.shares_memory(np.asarray(t), t.data)  # zero-copy out
    with pytest.raises(KeyError, match="no component 'y'; it has 'x', 'timestamp', 'meta'"):
        m.get("y")
    with pytest.raises(ValueError, match="already has a component 'x'"):
        m.add("x", 1)
    assert m.get("y", None) is None and m.timestamp("nothing") is None and m.timestamp().acqtime == 5


def test_messages_made_on_many_threads_at_once_get_distinct_ids():
    # Every message takes a process-wide id; eight threads at the shortest
    # switch interval take them together, and none is handed out twice.
    per_thread, threads = 5000, 8
    ids = [[] for _ in range(threads)]
    start = threading.Barrier(threads)

    def make(out):
        start.wait()
        out.extend(gx.Message().eid for _ in range(per_thread))

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        workers = [threading.Thread(target=make, args=(out,)) for out in ids]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
    finally:
        sys.setswitchinterval(interval)
    every = [i for out in ids for i in out]
    assert len(every) == per_thread * threads and len(set(every)) == len(every)


def test_host_tensors_come_in_from_other_libraries_without_a_copy():
    base = np.arange(8.0)
    assert gx.Tensor("a", memoryview(base)).data.ctypes.data == base.ctypes.data  # the buffer protocol
    torch = pytest.importorskip("torch") if importlib.util.find_spec("torch") else None
    if torch is not None:
        cpu = torch.arange(4.0)
        assert gx.Tensor("t", cpu).data.ctypes.data == cpu.data_ptr()  # DLPack


def test_an_allocator_makes_host_tensors_from_a_description():
    g = gx.Graph()
    alloc = g.entity("e").add(gx.UnboundedAllocator(), "alloc")
    t = alloc.tensor(gx.TensorDescription("t", "kSystem", [3, 4], "float64"))
    assert t.data.shape == (3, 4) and t.storage == "host"
    s = alloc.tensor(gx.TensorDescription("s", "host", [3, 2], np.int16, strides=(8, 2)))
    assert s.data.strides == (8, 2) and s.data.shape == (3, 2)
    with pytest.raises(ValueError, match="is not a storage"):
        gx.TensorDescription("u", "gpu", [1], np.float32)
    # numpy integers and a tuple of ints: the same description
    assert gx.TensorDescription("n", "host", np.int64(5), "f4").shape == (5,)
    assert gx.TensorDescription("n", "host", (np.int32(2), 3), "f4").shape == (2, 3)
    assert gx.TensorDescription("n", "host", (2, 3), np.float32) == gx.TensorDescription("n", "host", [2, 3], "f4")
    with pytest.raises(ValueError, match="negative extent"):
        gx.TensorDescription("n", "host", (2, -1), np.float32)


def test_allocate_makes_device_tensors_through_a_pools_own_limits():
    """allocate() skips the description for a plain device tensor only where
    the allocator does not make tensors its own way: a BlockMemoryPool's
    block size and count still hold, and a bad shape is refused by name."""
    g = gx.Graph()
    e = g.entity("e")
    plain = e.add(gx.UnboundedAllocator(), "plain")
    pool = e.add(gx.BlockMemoryPool(storage_type=1, block_size=64, num_blocks=1), "pool")
    x = plain.allocate((4, 2), np.float32)
    assert isinstance(x, cubind.Array) and x.shape == (4, 2) and x.dtype == np.float32
    held = pool.allocate((16,), np.float32)
    with pytest.raises(gx.GraphError, match=r"^e/pool: all 1 blocks are in use$"):
        pool.allocate((16,), np.float32)
    del held
    with pytest.raises(gx.GraphError, match=r"^e/pool: 68 bytes asked, blocks are 64$"):
        pool.allocate((17,), np.float32)
    with pytest.raises(ValueError, match="negative extent"):
        plain.allocate((2, -1), np.float32)


def test_the_published_timestamp_is_stamped():
    g, sink = pipeline(count=1)
    seen = []
    g["b"]["sink"].tick = lambda: seen.append(g["b"]["in"].receive())
    g["a"]["source"].tick = lambda: g["a"]["out"].publish(_stamped())
    g.run()
    assert seen[0].timestamp().acqtime == 1 and seen[0].timestamp().pubtime is not None


def _stamped():
    m = gx.Message()
    m.add_timestamp(acqtime=1)
    return m


# -- threads


@pytest.mark.parametrize("handoff_ms", [0.0, 1.0])  # 0: every worker ticks at once, the widest race
def test_the_multi_thread_scheduler_never_ticks_a_codelet_on_two_threads_and_loses_nothing(handoff_ms):
    class Guarded(gx.Codelet):
        def start(self):
            self.lock = threading.Lock()
            self.overlaps = 0
            self.got = 0

        def tick(self):
            if not self.lock.acquire(blocking=False):
                self.overlaps += 1
                return
            try:
                for rx in self.get_receivers():
                    while (m := rx.receive()) is not None:
                        self.got += 1
                        for tx in self.get_transmitters():
                            tx.publish(m)
                for tx in self.get_transmitters() if not self.get_receivers() else ():
                    tx.publish(gx.Message())
                if self.entity.name == "sink" and self.got == 8 * 300:
                    self.entity["until"].disable_tick()
                time.sleep(0)
            finally:
                self.lock.release()

    g = gx.Graph()
    sources, stages = [], []
    for i in range(8):
        s = g.entity(f"src{i}")
        s.add(gx.DoubleBufferTransmitter(capacity=4), "out")
        s.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
        s.add(gx.CountSchedulingTerm(count=300))
        sources.append(s.add(Guarded(), "gen"))
        m = g.entity(f"mid{i}")
        m.add(gx.DoubleBufferReceiver(capacity=4), "in")
        m.add(gx.DoubleBufferTransmitter(capacity=4), "out")
        m.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
        # A tick forwards everything its receiver holds (up to its capacity,
        # 4): it may run only while the sink has room for that many, or a sink
        # starved of CPU overflows (policy fault), as GXF's min_size says.
        m.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out", min_size=4))
        stages.append(m.add(Guarded(), "fwd"))
        g.connect(f"src{i}/out", f"mid{i}/in")
    sink = g.entity("sink")
    for i in range(8):
        sink.add(gx.DoubleBufferReceiver(capacity=64), f"in{i}")
        g.connect(f"mid{i}/out", f"sink/in{i}")
    sink.add(gx.BooleanSchedulingTerm(), "until")
    total = sink.add(Guarded(), "sink")
    result = g.run(gx.MultiThreadScheduler(worker_thread_number=8, max_duration_ms=60000, handoff_ms=handoff_ms))
    assert result.reason == "done"
    assert all(c.overlaps == 0 for c in [*sources, *stages, total])
    assert total.got == 8 * 300


class _Timed(gx.Codelet):
    """Notes when each tick ran and how many ticks of the graph ran at once."""

    shared = None
    sleep_s = gx.Parameter(float, 0.0)

    def start(self):
        self.spans, self.threads = [], set()

    def tick(self):
        self.threads.add(threading.get_ident())
        lock, state = _Timed.shared
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
        begin = time.monotonic()
        time.sleep(self.sleep_s)
        self.spans.append((begin, time.monotonic()))
        with lock:
            state["now"] -= 1


def _timed_graph(sleeps):
    _Timed.shared = (threading.Lock(), {"now": 0, "most": 0})
    g = gx.Graph()
    codelets = []
    for i, (sleep_s, count) in enumerate(sleeps):
        e = g.entity(f"e{i}")
        e.add(gx.CountSchedulingTerm(count=count))
        codelets.append(e.add(_Timed(sleep_s=sleep_s), "timed"))
    return g, codelets


def test_short_ticks_on_many_workers_run_one_after_the_other_on_the_calling_thread():
    # The calling thread picks first and keeps the ticks while none blocks:
    # on the H200, the same ticks cost more on a new thread.
    g, codelets = _timed_graph([(0.0, 200)] * 6)
    result = g.run(gx.MultiThreadScheduler(worker_thread_number=4, handoff_ms=1000))
    assert result.ticks == 1200 and _Timed.shared[1]["most"] == 1
    assert set().union(*(c.threads for c in codelets)) == {threading.get_ident()}


def test_a_blocking_tick_lets_another_worker_tick_meanwhile():
    g, (slow, fast) = _timed_graph([(0.5, 1), (0.0, 50)])
    result = g.run(gx.MultiThreadScheduler(worker_thread_number=2, handoff_ms=5))
    assert result.ticks == 51
    slow_begin, slow_end = slow.spans[0]
    during = [b for b, _ in fast.spans if slow_begin < b < slow_end]
    assert len(during) >= 40, "the other worker waited for the sleeping tick"


@pytest.mark.parametrize("workers", [1, 3])
def test_a_term_whose_check_raises_ends_the_run_with_its_error_on_any_scheduler(workers):
    # The check runs under the scheduler's lock in a worker: on a worker
    # thread its error must still end the run (the other workers, idle
    # without the GIL, woken) and reach run()'s caller.
    class Breaks(gx.SchedulingTerm):
        def on_bind(self):
            self.calls = 0

        def check(self, now):
            self.calls += 1
            if self.calls > 20:
                raise ValueError("the term broke")
            return READY, None

    g, _ = _timed_graph([(0.0, 1000)] * 3)
    g["e1"].add(Breaks(), "breaks")
    outcome = []

    def run():
        try:
            g.run(gx.GreedyScheduler() if workers == 1 else gx.MultiThreadScheduler(worker_thread_number=workers))
        except ValueError as exc:
            outcome.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(60)
    assert not thread.is_alive(), "the run did not end"
    assert [str(e) for e in outcome] == ["the term broke"]


def test_a_negative_handoff_is_refused_by_name():
    with pytest.raises(gx.ParameterError, match=r"^s/m/handoff_ms: must be 0 or more, got -1.0$"):
        gx.Graph().entity("s").add(gx.MultiThreadScheduler(handoff_ms=-1.0), "m")


# -- YAML apps


def test_the_ping_app_runs_from_yaml(yaml_needed, capsys):
    g = gx.load(APPS / "ping.yaml")
    result = g.run()
    assert result.reason == "done" and result.ticks_by_entity == {"tx": 10, "rx": 10}
    assert capsys.readouterr().out.splitlines()[-1] == "ping_rx: received 10 messages"


def test_overrides_and_yaml_errors_are_named(yaml_needed):
    g = gx.load(APPS / "ping.yaml", ["rx/ping_rx/log_count=0"])
    assert g["rx"]["ping_rx"].log_count == 0
    with pytest.raises(gx.ParameterError, match=r"rx/ping_rx/log_count: expected int, got str 'many'"):
        gx.load(APPS / "ping.yaml", ["rx/ping_rx/log_count=many"])
    with pytest.raises(gx.ParameterError, match=r"--param rx/nope/x: entity 'rx' has no component 'nope'"):
        gx.load(APPS / "ping.yaml", ["rx/nope/x=1"])
    with pytest.raises(gx.ParameterError, match="expected entity/component/key=value"):
        gx.load(APPS / "ping.yaml", ["rx=1"])
    with pytest.raises(gx.ParameterError, match=r"unknown component type 'nvidia::gxf::Nope'"):
        gx.loads("name: e\ncomponents:\n- type: nvidia::gxf::Nope\n")
    with pytest.raises(gx.GraphError, match=r"unknown key comps; an entity has components, device, name"):
        gx.loads("name: e\ncomps: []\n")
    with pytest.raises(gx.GraphError, match=r"e/c: codelet_file '.*missing.py' does not exist"):
        gx.loads("name: e\ncomponents:\n- name: c\n  type: PyCodeletV0\n  parameters:\n"
                 "    codelet_name: X\n    codelet_file: missing.py\n", base=APPS)


def test_a_codelet_by_module_and_the_multi_thread_scheduler_from_yaml(yaml_needed):
    app = textwrap.dedent("""\
        name: e
        components:
        - type: CountSchedulingTerm
          parameters: {count: 7}
        - name: c
          type: PyCodeletV0
          parameters: {codelet_name: Codelet, codelet_module: cubind.graph}
        ---
        name: s
        components:
        - type: MultiThreadScheduler
          parameters: {worker_thread_number: 3}
        """)
    g = gx.loads(app)
    result = g.run()
    assert isinstance(g.scheduler, gx.MultiThreadScheduler) and result.ticks == 7


def test_a_yaml_app_names_its_gpu_resident_chains_with_a_component(yaml_needed):
    line = textwrap.dedent("""\
        name: a
        components:
        - {name: out, type: DoubleBufferTransmitter}
        - {type: CountSchedulingTerm, parameters: {count: 3}}
        - {name: c, type: PyCodeletV0, parameters: {codelet_name: Codelet, codelet_module: cubind.graph}}
        ---
        name: b
        components:
        - {name: in, type: DoubleBufferReceiver}
        - {type: MessageAvailableSchedulingTerm, parameters: {receiver: in}}
        - {name: c, type: PyCodeletV0, parameters: {codelet_name: Codelet, codelet_module: cubind.graph}}
        - {type: Connection, parameters: {source: a/out, target: b/in}}
        """)
    chains = "---\nname: chains\ncomponents:\n- {type: GPUResidentChain, parameters: {entities: [a, b]}}\n"
    named = gx.loads(line + chains)
    named.finalize()
    assert [c.names for c in named.resident_chains] == [["a", "b"]]
    # Without entities: the lines of codelets declaring gpu_resident = True (here none: nothing to capture).
    declared = gx.loads(line + "---\nname: chains\ncomponents:\n- {type: GPUResidentChain}\n")
    assert declared.run().ticks == 3 and declared.resident_chains == []


def _cli(*args, **env):
    return subprocess.run([sys.executable, "-m", "cubind.graph", *args], capture_output=True, text=True,
                          cwd=ROOT, timeout=120, env=dict(os.environ, PYTHONPATH=pythonpath(ROOT), **env))


def test_the_command_line_runs_an_app_with_overrides(yaml_needed):
    done = _cli("examples/graph/ping.yaml", "--param", "rx/ping_rx/log_count=2", "--threads", "2")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-2:] == ["ping_rx: received 10 messages",
                                            "examples/graph/ping.yaml: done after 20 ticks in " +
                                            done.stdout.splitlines()[-1].split(" in ")[1]]
    bad = _cli("examples/graph/ping.yaml", "--param", "rx/ping_rx/log_count=x")
    assert bad.returncode == 2 and bad.stderr.startswith("error: rx/ping_rx/log_count: expected int")


def test_the_command_line_reports_a_codelet_error_and_stops(yaml_needed, tmp_path):
    (tmp_path / "bad.py").write_text("from cubind.graph import Codelet\n"
                                     "class Bad(Codelet):\n    def tick(self):\n        raise KeyError('x')\n")
    (tmp_path / "app.yaml").write_text("name: e\ncomponents:\n- name: bad\n  type: PyCodeletV0\n  parameters:\n"
                                       "    codelet_name: Bad\n    codelet_file: bad.py\n")
    done = _cli(str(tmp_path / "app.yaml"))
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == "error: entity 'e', codelet 'bad': tick() raised KeyError: 'x'"


@pytest.mark.parametrize("workers", [1, 3])
def test_the_command_line_stops_cleanly_on_sigint(yaml_needed, tmp_path, workers):
    # With several workers the calling thread is one of them: waiting idle,
    # it still takes the signal.
    scheduler = ("---\nname: s\ncomponents:\n- type: MultiThreadScheduler\n"
                 f"  parameters: {{worker_thread_number: {workers}}}\n") if workers > 1 else ""
    (tmp_path / "spin.py").write_text("from cubind.graph import Codelet\n"
                                      "class Spin(Codelet):\n    def tick(self):\n        print('tick', flush=True)\n"
                                      "    def stop(self):\n        print('stopped', flush=True)\n")
    (tmp_path / "app.yaml").write_text("name: e\ncomponents:\n- type: PeriodicSchedulingTerm\n  parameters:\n"
                                       "    recess_period: 10ms\n- name: spin\n  type: PyCodeletV0\n"
                                       "  parameters:\n    codelet_name: Spin\n    codelet_file: spin.py\n" + scheduler)
    proc = subprocess.Popen([sys.executable, "-m", "cubind.graph", str(tmp_path / "app.yaml")], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, PYTHONPATH=pythonpath(ROOT)))
    assert proc.stdout.readline() == "tick\n"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "stopped" in out and "interrupted after" in out


@pytest.mark.parametrize("app", ["stream.yaml", "saxpy_pipeline.yaml"])
def test_device_apps_say_there_is_no_gpu_and_exit_0(yaml_needed, app):
    done = _cli(f"examples/graph/{app}", CUBIND_CUDA_LIBRARY="/nonexistent/libcuda.so.1")
    assert done.returncode == 0 and done.stderr == ""
    assert done.stdout.startswith("No GPU available: cannot open the cuda library given by CUBIND_CUDA_LIBRARY=")
    assert done.stdout.rstrip().endswith("(generator/stream_pool is a CUDA stream pool); skipping.")


# -- device tensors


ORDERING = """
import ctypes, json
import numpy as np
import cubind
import cubind
from cubind import graph as gx
fake = ctypes.CDLL({lib!r})
streams = {{}}  # each codelet's pool stream, seen in its start()
class Make(gx.Codelet):
    def start(self):
        streams[self.name] = int(self.stream)
    def tick(self):
        m = gx.Message()
        m.add_tensor("d", self.allocator.tensor(gx.TensorDescription("d", "device", [256], np.float32)))
        m.add_tensor("p", self.allocator.tensor(gx.TensorDescription("p", "pinned", [4], np.float32)))
        self.tx("out").publish(m)
        self.sent = m
class Take(gx.Codelet):
    def start(self):
        streams[self.name] = int(self.stream)
    def tick(self):
        waits = ctypes.c_int.in_dll(fake, "fake_stream_wait_count").value
        self.got = self.rx("in").receive()
        self.waits = ctypes.c_int.in_dll(fake, "fake_stream_wait_count").value - waits
        self.last = (ctypes.c_ulonglong.in_dll(fake, "fake_last_wait_stream").value,
                     ctypes.c_ulonglong.in_dll(fake, "fake_last_wait_event").value)
        self.p = self.got.tensor("p").data
        self.p[:] = 7
g = gx.Graph()
a = g.entity("a")
a.add(gx.DoubleBufferTransmitter(), "out"); a.add(gx.CountSchedulingTerm(count=1))
a.add(gx.UnboundedAllocator(), "alloc"); a.add(gx.CudaStreamPool(), "pool")
make = a.add(Make(), "make")
b = g.entity("b")
b.add(gx.DoubleBufferReceiver(), "in"); b.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
b.add(gx.CudaStreamPool(stream_flags=1), "pool")
take = b.add(Take(), "take")
g.connect("a/out", "b/in")
g.run()
d = take.got.tensor("d")
print(json.dumps({{"waits": take.waits, "stream": take.last[0], "event": take.last[1],
                  "consumer": streams["take"], "producer": streams["make"],
                  "ready": int(make.sent.ready_event.handle), "same": d.data is make.sent.tensor("d").data,
                  "storage": d.description.storage, "p": take.p.tolist(),
                  "cai": d.__cuda_array_interface__["data"][0] == d.data.ptr}}))
"""


def test_a_device_tensor_crosses_an_edge_ordered_by_an_event_not_a_sync(backend):
    if backend.real:
        pytest.skip("reads the emulated driver's record of stream waits")
    import json

    done = backend.run(ORDERING.format(lib=str(backend.library)), FAKE_DEVICE_COUNT="1")
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout.splitlines()[-1])
    assert r["waits"] == 1 and r["stream"] == r["consumer"] != r["producer"]
    assert r["event"] == r["ready"] and r["same"] and r["storage"] == "device" and r["cai"]
    assert r["p"] == [7.0] * 4  # pinned host memory, written through numpy


READY_EVENTS = """
import ctypes, json, os
import numpy as np
import cubind
from cubind import graph as gx
class Make(gx.Codelet):
    def tick(self):
        m = gx.Message()
        m.add_tensor("d", self.allocator.tensor(gx.TensorDescription("d", "device", [64], np.float32)))
        self.tx("out").publish(m)
class Take(gx.Codelet):
    seen = []
    def tick(self):
        Take.seen = Take.seen[-1:] + [self.rx("in").receive()]
g = gx.Graph()
a = g.entity("a")
a.add(gx.DoubleBufferTransmitter(capacity=2), "out"); a.add(gx.CountSchedulingTerm(count=200))
a.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
a.add(gx.UnboundedAllocator(), "alloc")
if os.environ["PRODUCER_POOL"] == "1":
    a.add(gx.CudaStreamPool(), "pool")
a.add(Make(), "make")
b = g.entity("b")
b.add(gx.DoubleBufferReceiver(capacity=2), "in"); b.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
b.add(gx.CudaStreamPool(), "pool")
b.add(Take(), "take")
g.connect("a/out", "b/in")
g.run()
names = [line.split()[0] for line in open(os.environ["FAKE_CALL_LOG"])]
fake = ctypes.CDLL(os.environ["CUBIND_CUDA_LIBRARY"])
print(json.dumps({"created": names.count("cuEventCreate"), "destroyed": names.count("cuEventDestroy"),
                  "recorded": ctypes.c_int.in_dll(fake, "fake_event_record_count").value,
                  "waits": ctypes.c_int.in_dll(fake, "fake_stream_wait_count").value,
                  "ready": sorted({int(m.ready_event.handle) for m in Take.seen})}))
"""


def _counted_run(backend, code, tmp_path, **env):
    """What ``code`` printed last (JSON), run in a child on the emulated
    driver that logs each call (FAKE_CALL_LOG); skipped on a real GPU."""
    if backend.real:
        pytest.skip("counts the recording driver's event creations")
    import json

    done = backend.run(code, FAKE_DEVICE_COUNT="1", FAKE_CALL_LOG=str(tmp_path / "calls.log"), **env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("producer_pool", ["1", "0"], ids=["pool_stream", "default_stream"])
def test_ready_events_are_reused_not_made_per_message(backend, tmp_path, producer_pool):
    # 200 device messages through an edge of capacity 2, every stream with
    # work still queued: the producer's ready events come back to its
    # stream's pool once the messages are gone; a producer without a stream
    # pool publishes from the device's default stream, whose events are
    # pooled too.
    r = _counted_run(backend, READY_EVENTS, tmp_path, PRODUCER_POOL=producer_pool, FAKE_STREAMS_BUSY="1")
    assert 1 <= r["created"] <= 8, r


def test_a_message_published_from_an_idle_default_stream_needs_no_event(backend, tmp_path):
    # The default stream has run all that was queued on it: nothing for the
    # consumer to wait for, so no event is recorded (beside a data path's
    # device copies a record on the legacy stream cost 15.8 us on the H200).
    idle = _counted_run(backend, READY_EVENTS, tmp_path, PRODUCER_POOL="0")
    busy = _counted_run(backend, READY_EVENTS, tmp_path, PRODUCER_POOL="0", FAKE_STREAMS_BUSY="1")
    assert idle["ready"] == [0] and 0 not in busy["ready"], (idle, busy)
    assert busy["recorded"] - idle["recorded"] == 200, (idle, busy)  # the producer's: one a message
    assert busy["waits"] - idle["waits"] == 200, (idle, busy)  # the consumer's stream waited for each


READY_POOLS_UNDER_THREADS = """
import gc, json, os, sys, threading
import numpy as np
import cubind
from cubind.graph.model import ordering
from cubind.graph.model.message import Message

THREADS, STREAMS, MESSAGES = 8, 20, 10
sys.setswitchinterval(1e-6)
start = threading.Barrier(THREADS)
errors = []

def publish_on(stream, x, count):
    kept = []
    for _ in range(count):
        m = Message()
        m.add_tensor("x", x)
        with stream:
            ordering.publish_order(m)
        kept = kept[-2:] + [m]
    return kept

def work():
    try:
        start.wait()
        for _ in range(STREAMS):
            stream = cubind.Stream(non_blocking=True)
            x = cubind.empty((16,), np.float32, stream=stream)
            publish_on(stream, x, MESSAGES)
            x.free()
            stream.synchronize()
            del stream, x
    except BaseException as exc:
        errors.append(repr(exc))

workers = [threading.Thread(target=work) for _ in range(THREADS)]
for w in workers:
    w.start()
for w in workers:
    w.join()
gc.collect()
last = cubind.Stream(non_blocking=True)
kept = publish_on(last, cubind.empty((16,), np.float32, stream=last), 1)
names = [line.split()[0] for line in open(os.environ["FAKE_CALL_LOG"])]
print(json.dumps({"errors": errors, "created": names.count("cuEventCreate"),
                  "destroyed": names.count("cuEventDestroy")}))
"""


def test_ready_event_pools_under_threads_reuse_events_and_release_each_gone_streams(backend, tmp_path):
    # Eight threads at the shortest switch interval each make and drop 20
    # streams, publishing 10 device messages on each (three in flight): a
    # stream's pool is shared state of the compiled edge (ordering.pyx). Each
    # stream makes 4 events and reuses them; once the streams are gone and
    # one more stream publishes, every gone stream's events are destroyed.
    r = _counted_run(backend, READY_POOLS_UNDER_THREADS, tmp_path)
    assert r["errors"] == []
    assert r["created"] == 8 * 20 * 4 + 1, r  # four a stream (three kept, one being made), one for the last
    assert r["destroyed"] == r["created"] - 1, r  # all but the last stream's, which is alive


READY_AFTER_RESET = """
import numpy as np
import cuda
import cubind
from cubind.graph.model import ordering
from cubind.graph.model.message import Message

def published():
    m = Message()
    m.add_tensor("x", cubind.to_gpu(np.ones(4, np.float32), pool=False))
    busy = cubind.empty(1 << 30, np.uint8, pool=False)  # work queued on the default stream: an event is recorded
    cubind.check(cuda.cuMemsetD8Async(busy.ptr, 0, busy.nbytes, 0), "cuMemsetD8Async")
    ordering.publish_order(m)  # from the device's default stream, found by the current device
    m.ready_event.synchronize()
    return int(m.ready_event.handle)

published()
cubind.Device(0).reset()  # the default stream found before is the device's own, still its NULL stream
print(published() != 0)
"""


def test_a_ready_event_on_the_default_stream_is_recorded_after_a_reset(backend):
    # The default stream is kept per device (ordering.pyx): after Device.reset() a publish still
    # records its ready event there, in the new context, rather than failing or retrying forever.
    done = backend.run(READY_AFTER_RESET, FAKE_DEVICE_COUNT="1", FAKE_STREAMS_BUSY="1")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split()[-1] == "True"


@pytest.mark.gpu
@pytest.mark.parametrize("app", ["stream.yaml", "saxpy_pipeline.yaml"])
@pytest.mark.parametrize("threads", ["1", "4"])
def test_device_apps_run_and_verify_on_a_gpu(yaml_needed, app, threads):
    done = _cli(f"examples/graph/{app}", "--threads", threads)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verify: 20 message pairs equal" in done.stdout


@pytest.mark.gpu
def test_device_tensors_go_to_cupy_and_torch_without_a_copy():
    import cubind

    a = cubind.to_gpu(np.arange(16, dtype=np.float32))
    t = gx.Tensor("a", a)
    for name in ("cupy", "torch"):
        if importlib.util.find_spec(name) is None:
            continue
        lib = importlib.import_module(name)
        theirs = lib.asarray(t) if name == "cupy" else lib.from_dlpack(t)
        ptr = theirs.data.ptr if name == "cupy" else theirs.data_ptr()
        assert ptr == a.ptr
        back = gx.Tensor("b", theirs)
        assert back.is_device and back.data.ptr == a.ptr


REUSE = r"""
extern "C" __global__ void fill(float *x, unsigned n, float v)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = v;
}
// Reads x again after ~a millisecond of arithmetic: memory freed and reused
// meanwhile shows as another message's value.
extern "C" __global__ void slow_plus_one(const float *x, float *y, unsigned n, int iters)
{
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = x[i];
        for (int k = 0; k < iters; ++k) v = v * 0.9999f + 0.0001f;
        y[i] = ((volatile const float *)x)[i] + 1.0f + (v - v);
    }
}
"""


@pytest.mark.gpu
def test_a_consumed_tensor_is_not_reused_while_its_consumer_still_reads_it():
    # The producer's tensor is freed in its stream's order once the consumer
    # lets it go (it publishes a new one): the consumer's slow kernel still
    # reads it then. Without the consumer's stream recorded on it, the
    # producer's next allocation took that memory and filled it (an H100:
    # 198 of 200 results wrong).
    import cubind

    program = cubind.Program(REUSE).compile()
    fill, slow = program.get_kernel("fill"), program.get_kernel("slow_plus_one")
    n, count = 1 << 16, 60

    class Make(gx.Codelet):
        def tick(self):
            x = self.allocator.allocate((n,), np.float32)
            fill((n + 255) // 256, 256, x, n, float(self.get_execution_count()))
            m = gx.Message()
            m.add_tensor("x", x)
            self.tx("out").publish(m)

    class PlusOne(gx.Codelet):
        def tick(self):
            x = self.rx("in").receive().tensor("x").data
            y = self.allocator.allocate((n,), np.float32)
            slow((n + 255) // 256, 256, x, y, n, 20000)
            m = gx.Message()
            m.add_tensor("y", y)
            self.tx("out").publish(m)

    class Keep(gx.Codelet):
        def start(self):
            self.kept = []

        def tick(self):
            self.kept.append(self.rx("in").receive().tensor("y").data)

    g, keep = gx.Graph(), Keep()
    for i, (name, codelet) in enumerate([("make", Make()), ("plus", PlusOne()), ("keep", keep)]):
        e = g.entity(name)
        if i:
            e.add(gx.DoubleBufferReceiver(capacity=2), "in")
            e.add(gx.MessageAvailableSchedulingTerm(receiver="in"))
        else:
            e.add(gx.CountSchedulingTerm(count=count))
        if i < 2:
            e.add(gx.DoubleBufferTransmitter(capacity=2), "out")
            e.add(gx.DownstreamReceptiveSchedulingTerm(transmitter="out"))
        e.add(gx.UnboundedAllocator(), "alloc")
        e.add(gx.CudaStreamPool(stream_flags=1), "pool")
        e.add(codelet, name)
    g.connect("make/out", "plus/in")
    g.connect("plus/out", "keep/in")
    g.run()
    # get_execution_count() is 1 at the first tick
    wrong = [i for i, y in enumerate(keep.kept) if not (y.get() == i + 2).all()]
    assert len(keep.kept) == count and wrong == [], f"{len(wrong)} of {count} results overwritten: {wrong[:10]}"
