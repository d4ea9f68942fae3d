"""Schedulers: a greedy one ticking on the calling thread, and a
multi-thread one with a pool of workers. Both run the same loop: under one
lock (a condition) a worker picks an idle entity whose terms are all ready,
marks it running (so that no other worker ticks it), ticks it without the
lock, then under the lock hands its published messages to the connected
receivers, updates its terms and wakes the others.

Locks are taken in one order: the scheduler's, then a queue's. A codelet's
tick takes only queue locks (publish, receive), never the scheduler's."""

import dataclasses
import threading
import time

from cubind.graph.model.clock import Clock
from cubind.graph.model.codelet import Codelet
from cubind.graph.model.component import Component
from cubind.graph.model.errors import CodeletError, ParameterError
from cubind.graph.model.errors import add_note as _note
from cubind.graph.model.parameters import Parameter, Ref
from cubind.graph.model.queues import Receiver, Transmitter

from .external import ExternalSource
from .terms import NEVER, READY, WAIT_TIME, SchedulingTerm, combine

IDLE, RUNNING, DONE = "idle", "running", "done"


@dataclasses.dataclass
class RunResult:
    """How a run ended: ``reason`` is ``"done"`` (every entity's terms said
    never), ``"deadlock"`` (nothing can become ready), ``"max_duration"``,
    ``"interrupted"`` or ``"error"``; ``ticks`` counts entity ticks,
    ``ticks_by_entity`` per entity name; ``messages`` the counts of the
    queues fed across processes (``{path: {"sent": n, ...}}``)."""

    reason: str
    ticks: int
    duration_s: float
    ticks_by_entity: dict
    messages: dict = dataclasses.field(default_factory=dict)


class Scheduler(Component):
    clock = Parameter(Ref(Clock), None, "default: the graph's clock")
    max_duration_ms = Parameter(int, None, "stop after this long (wall time)")
    stop_on_deadlock = Parameter(bool, True, "stop when no entity can become ready")
    check_recession_period_ms = Parameter(float, 20.0, "longest wait before looking again (interrupts, duration)")

    workers = 1
    handoff_ms = 0.0

    def on_bind(self):
        if self.max_duration_ms is not None and self.max_duration_ms < 0:
            raise ParameterError(f"{self.path}/max_duration_ms: must be 0 or more, got {self.max_duration_ms}")
        if self.check_recession_period_ms <= 0:
            raise ParameterError(f"{self.path}/check_recession_period_ms: must be above 0")

    def resolve(self, graph):
        super().resolve(graph)
        if self._params["clock"] is None:
            self._params["clock"] = graph.clock

    def run(self, graph):
        return _Run(graph, self).execute()


class GreedyScheduler(Scheduler, gxf_type="GreedyScheduler"):
    """Ticks one entity at a time, on the thread that called ``run``."""


class MultiThreadScheduler(Scheduler, gxf_type="MultiThreadScheduler"):
    """Ticks entities on ``worker_thread_number`` threads; an entity (so each
    of its codelets) is never ticked on two threads at once. While a tick
    runs another starts only once every running tick has run ``handoff_ms``
    (a tick that blocks lets the others go on; short Python ticks, which hold
    the GIL, run one after the other instead of trading it).

    A waiting worker looks again every ``handoff_ms`` while ticks run, and
    each look takes the GIL from the ticking thread. On an H100 four workers
    ran the 1 MiB pipeline at 0.82 to 0.95x the greedy scheduler with 1 or
    5 ms, 0.98x with 100 ms (medians over three calls; one run spreads
    +-15 %): no handoff measured better than another inside that noise, so
    the default stays 1 ms, the shortest wait a blocking tick imposes."""

    worker_thread_number = Parameter(int, 2)
    handoff_ms = Parameter(float, 1.0, "how long every running tick must have run before another starts "
                                       "(0: at once)")

    def on_bind(self):
        super().on_bind()
        if self.worker_thread_number < 1:
            raise ParameterError(f"{self.path}/worker_thread_number: must be at least 1, "
                                 f"got {self.worker_thread_number}")
        if self.handoff_ms < 0:
            raise ParameterError(f"{self.path}/handoff_ms: must be 0 or more, got {self.handoff_ms}")
        self.workers = self.worker_thread_number


class _Run:
    def __init__(self, graph, scheduler):
        self.graph, self.clock = graph, scheduler.clock
        self.workers = scheduler.workers
        self.stop_on_deadlock = scheduler.stop_on_deadlock
        self.poll_s = scheduler.check_recession_period_ms / 1000
        limit = scheduler.max_duration_ms
        self.wall_end = None if limit is None else time.monotonic() + limit / 1000
        # Held through `with self.lock` (the C lock's own enter and exit: the
        # Condition's are Python calls, twice a tick); waited on through cond.
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        every = [e for e in graph.entities if e.of_type(Codelet)]
        self.plan = {e: (e.of_type(Codelet), e.of_type(SchedulingTerm), e.of_type(Receiver), e.of_type(Transmitter))
                     for e in every}
        # A GPU-resident chain is scheduled as one entity, its first: its
        # terms are the chain's, its transmitters the last entity's.
        self.chains = {}
        for chain in graph.resident_chains:
            chain.bind()
            self.chains[chain.entities[0]] = chain
            self.plan[chain.entities[0]] = ([c for _, c in chain.codelets], chain.terms, [], chain.outputs)
        inner = {e for chain in self.chains.values() for e in chain.entities[1:]}
        self.entities = [e for e in every if e not in inner]
        self.state = dict.fromkeys(self.entities, IDLE)
        self.ticks = dict.fromkeys(every, 0)
        # Per entity, its terms' bound checks and the before/after hooks that
        # do something (most terms leave them empty): looked up once, not at
        # every scheduling step.
        self.hooks = {e: ([t.check for t in self.plan[e][1]] or [_always_ready], _hooks(self.plan[e][1], "before_tick"),
                          _hooks(self.plan[e][1], "after_tick")) for e in self.entities}
        self.running = 0
        self.started = {}  # running entity -> when its tick began (time.monotonic())
        self.watcher = None  # the waiting worker that looks again when the running ticks stall
        self.handoff_s = scheduler.handoff_ms / 1000
        self.cursor = 0
        self.reason = None
        self.error = None
        # Components fed from outside the run (remote queues): opened before
        # the first start(), closed after the last stop().
        self.sources = graph.components(ExternalSource)

    # -- the run

    def execute(self):
        started_at = time.monotonic()
        started, opened = [], []
        try:
            for source in self.sources:
                source.open_external(self._wake)
                opened.append(source)
            self._start_all(started)
            self._work_on_pool()
        finally:
            stop_error = self._stop_all(started)
            close_error = self._close_sources(opened, self.error or stop_error)
        error = self.error or stop_error or close_error
        if error is not None:
            for later in (stop_error, close_error):
                if later is not None and later is not error:
                    _note(error, f"and then: {later}")
            raise error
        messages = {}
        for source in self.sources:
            messages.update(source.external_counts())
        return RunResult(self.reason, sum(self.ticks.values()), time.monotonic() - started_at,
                         {e.name: n for e, n in self.ticks.items()}, messages)

    def _close_sources(self, opened, failed):
        first = None
        for source in opened:
            error = source.close_external(failed is not None)
            first = first or error
        return first

    def _wake(self):
        with self.cond:
            self.cond.notify_all()

    def _start_all(self, started):
        for entity in self.ticks:
            for codelet in entity.of_type(Codelet):
                self._phase(entity, codelet, "start")
                codelet.started = True
                started.append((entity, codelet))
        for chain in self.chains.values():
            chain.start()

    def _stop_all(self, started):
        first = None
        for chain in self.chains.values():
            try:
                chain.stop()
            except Exception as exc:  # noqa: BLE001 - the codelets' stops still run; the first error is raised
                first = first or exc
        for entity, codelet in started:
            try:
                self._phase(entity, codelet, "stop")
            except CodeletError as exc:
                first = first or exc
            finally:
                codelet.started = False
                codelet.return_stream()
        return first

    def _phase(self, entity, codelet, phase, stream=None):
        try:
            codelet.run_phase(phase, self.clock.timestamp(), stream)
        except Exception as exc:
            raise CodeletError(entity.name, codelet.name, phase, exc) from exc

    def _work_on_pool(self):
        if self.workers == 1:
            self._work()
            return
        threads = [threading.Thread(target=self._work, name=f"cubind.graph worker {i}", daemon=True)
                   for i in range(self.workers)]
        for t in threads:
            t.start()
        try:
            for t in threads:
                while t.is_alive():
                    t.join(0.1)  # a timeout keeps the main thread able to take signals
        except BaseException:
            self.graph.interrupt()
            for t in threads:
                t.join()
            raise

    def _work(self):
        while True:
            with self.lock:
                picked = self._next()
                if picked is None:
                    return
            entity, now = picked
            error = None
            try:
                self._tick(entity, now)
            except CodeletError as exc:
                error = exc
            except BaseException as exc:  # KeyboardInterrupt in the greedy one: stop cleanly, then raise
                with self.lock:
                    self._finish(entity, None)
                    self._stop("interrupted")
                raise exc
            with self.lock:
                self._finish(entity, error)

    # -- under the lock

    def _stop(self, reason):
        if self.reason is None:
            self.reason = reason
        self.cond.notify_all()

    def _next(self):
        """The next entity to tick and the time, marked running; None to stop. Waits as needed."""
        while True:
            if self.reason is not None:
                return None
            if self.graph.interrupted:
                self._stop("interrupted")
                return None
            if self.sources:
                failure = next(filter(None, (s.external_failure() for s in self.sources)), None)
                if failure is not None:
                    self.error = self.error or failure
                    self._stop("error")
                    return None
            if self.wall_end is not None and time.monotonic() >= self.wall_end:
                self._stop("max_duration")
                return None
            if self.running and self.workers > 1 and self._gate():
                continue
            now = self.clock.timestamp()
            entity, target = self._pick(now)
            if entity is not None:
                if self.workers > 1:  # what _gate reads
                    self.started[entity] = time.monotonic()
                return entity, now
            if self.running == 0 and target is None and not any(s.external_active() for s in self.sources):
                # Nothing can fire again. Entities that ended and others left
                # waiting for their messages is the usual end ("done"), as is
                # a part of a split app whose remote peers all ended; waiting
                # with none ended is a deadlock.
                if self.sources or any(s == DONE for s in self.state.values()):
                    self._stop("done")
                    return None
                if self.stop_on_deadlock:
                    self._stop("deadlock")
                    return None
            self._wait(target)

    def _gate(self):
        """Whether this worker must wait (it has waited): while a tick runs,
        another starts only once every running tick has run ``handoff_ms``
        (it blocks: a sleep, a synchronisation, I/O). Python ticks hold the
        GIL, so two at once only trade it at every driver call: four workers
        ticking together ran a pipeline a third slower than one. One waiting
        worker (the watcher) wakes when the youngest tick reaches the limit;
        the others sleep until the run ends or the poll period passes."""
        left = self.handoff_s - (time.monotonic() - max(self.started.values()))
        if left <= 0:
            if self.watcher == threading.get_ident():
                self.watcher = None
                self.cond.notify()  # another waiting worker becomes the watcher
            return False
        if self.watcher is None:
            self.watcher = threading.get_ident()
        self.cond.wait(min(left, self.poll_s) if self.watcher == threading.get_ident() else self.poll_s)
        return True

    def _pick(self, now):
        target = None
        count = len(self.entities)
        for i in range(count):
            index = (self.cursor + i) % count
            entity = self.entities[index]
            if self.state[entity] != IDLE:
                continue
            checks, befores, _ = self.hooks[entity]
            state, at = checks[0](now) if len(checks) == 1 else combine([check(now) for check in checks])
            if state == NEVER:
                self.state[entity] = DONE
                for source in self.sources:
                    source.entity_done(entity)
            elif state == READY:
                self.cursor = index + 1
                self.state[entity] = RUNNING
                self.running += 1
                for before in befores:
                    before(now)
                return entity, None
            elif state == WAIT_TIME:
                target = at if target is None else min(target, at)
        return None, target

    def _wait(self, target):
        limit = self.poll_s
        if self.wall_end is not None:
            limit = max(0.0, min(limit, self.wall_end - time.monotonic()))
        # A manual clock jumps to the target: only once nothing runs, whose
        # messages could make an entity ready sooner.
        if target is not None and (self.running == 0 or not self.clock.jumps):
            self.clock.wait_until(self.cond, target, limit)
        else:
            self.cond.wait(limit)

    def _finish(self, entity, error):
        codelets, _, _, transmitters = self.plan[entity]
        try:
            for tx in transmitters:
                for message in tx.sync():
                    for rx in tx.targets:
                        rx.deliver(message)
        except Exception as exc:
            error = error or CodeletError(entity.name, codelets[0].name, "tick", exc)
            error.__cause__ = error.__cause__ or exc
        afters = self.hooks[entity][2]
        if afters:
            now = self.clock.timestamp()
            for after in afters:
                after(now)
        self.state[entity] = IDLE
        self.running -= 1
        if self.workers > 1:
            self.started.pop(entity, None)
        chain = self.chains.get(entity)
        for member in chain.entities if chain is not None else (entity,):
            self.ticks[member] += 1
        if error is not None:
            self.error = self.error or error
            self._stop("error")
        # No worker is woken: this one picks again at once, and the others
        # start a tick only where every running one has stalled (_gate).

    # -- without the lock

    def _tick(self, entity, now):
        chain = self.chains.get(entity)
        if chain is not None:
            try:
                chain.tick(self._phase)
            except CodeletError:
                raise
            except Exception as exc:  # the chain's own work (its copies, the graph launch): named by the chain
                raise CodeletError(entity.name, chain.label, "tick", exc) from exc
            return
        codelets, _, receivers, _ = self.plan[entity]
        for rx in receivers:
            rx.sync()
        for codelet in codelets:
            self._phase(entity, codelet, "tick")


def _always_ready(now):
    return READY, None  # an entity with no terms: combine([]) says READY too


def _hooks(terms, name):
    return [getattr(t, name) for t in terms if getattr(type(t), name) is not getattr(SchedulingTerm, name)]

