# cython: language_level=3
"""A run of the scheduler, compiled: the pick-run-finish cycle every worker
loops on (scheduler.py says what it does; GXF's schedulers are C++ too).
Python runs only where a graph's own code does: a codelet's start, tick and
stop, a scheduling term's check that is not one of the built-in ones below,
and the hooks a term overrides. It reads the graph's objects through their
public attributes (a queue's ``stages``, a term's parameters, a codelet's
``stream`` and ``stamp``), and a tick's timestamps where the codelet keeps
``Codelet.stamp``, whose three attributes it sets itself.

Per entity, what a step needs is laid out once (an ``_Entry``): its
codelets, the compiled stages of its receivers and transmitters, its terms
as kinds the loop checks itself (count, message available, downstream
receptive) or calls (any other), and the terms' hooks. A codelet with no
device is ticked directly (``stamp``, then ``tick`` inside ``with stream:``
where it has a stream); one with a device goes through ``run_phase``, which
makes it current."""

import threading
import time

from cpython.exc cimport PyErr_CheckSignals
from cpython.pythread cimport PyThread_get_thread_ident
from posix.time cimport CLOCK_MONOTONIC, clock_gettime, timespec

from cubind.graph.model.buffer cimport MessageBuffer

from .idle cimport IdleWorkers
from .idle cimport monotonic_ns as _monotonic_ns

from cubind.graph.model.codelet import Codelet
from cubind.graph.model.errors import CodeletError
from cubind.graph.model.errors import add_note as _note
from cubind.graph.model.queues import Receiver, Transmitter

from .external import ExternalSource
from .result import RunResult
from .terms import NEVER, READY, WAIT_EVENT, WAIT_TIME
from .terms import CountSchedulingTerm, DownstreamReceptiveSchedulingTerm, MessageAvailableSchedulingTerm, SchedulingTerm

# Term states and entity states as the loop keeps them.
cdef enum:
    S_READY = 0
    S_WAIT_TIME = 1
    S_WAIT_EVENT = 2
    S_NEVER = 3
cdef enum:
    E_IDLE = 0
    E_RUNNING = 1
    E_DONE = 2
# Term kinds the loop checks itself.
cdef enum:
    T_CALL = 0
    T_COUNT = 1
    T_AVAILABLE = 2
    T_DOWNSTREAM = 3

# How long an idle run lets an external source (the UCX data path) take its news on the run's own
# thread before it waits on its condition (woken from the transport's thread): messages a few tens of
# microseconds apart then cost no thread's wake-up.
cdef double SOURCE_WAIT_S = 0.0003

cdef dict _STATES = {READY: S_READY, WAIT_TIME: S_WAIT_TIME, WAIT_EVENT: S_WAIT_EVENT, NEVER: S_NEVER}


cdef inline double _monotonic() noexcept nogil:
    """time.monotonic() without a Python call (its clock: CLOCK_MONOTONIC)."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9


cdef class _Term:
    """One scheduling term as the loop checks it."""
    cdef int kind
    cdef object term         # the component (T_CALL: its bound check)
    cdef MessageBuffer rx    # T_AVAILABLE: the receiver's stages
    cdef long long min_size
    cdef object front_max    # T_AVAILABLE: front_stage_max_size (None: no bound)
    cdef object at           # T_CALL: the target time of its last answer

    cdef int check(self, object now) except -1:
        cdef long long n
        if self.kind == T_COUNT:
            return S_READY if self.term.done < self.term.count else S_NEVER
        if self.kind == T_AVAILABLE:
            if self.front_max is not None and self.rx.size() > self.front_max:
                return S_WAIT_EVENT
            n = self.rx.size() + self.rx.back_size()
            return S_READY if n >= self.min_size else S_WAIT_EVENT
        if self.kind == T_DOWNSTREAM:
            for target in self.term.transmitter.targets:
                if target.free() < self.min_size:
                    return S_WAIT_EVENT
            return S_READY
        state, self.at = self.term(now)
        return _STATES[state]


cdef _Term _term(object term):
    cdef _Term t = _Term()
    cls = type(term)
    t.term = term
    if cls is CountSchedulingTerm:
        t.kind = T_COUNT
    elif cls is MessageAvailableSchedulingTerm and _plain(term.receiver, Receiver, ("size", "back_size")):
        t.kind, t.rx, t.min_size = T_AVAILABLE, term.receiver.stages, term.min_size
        t.front_max = term.front_stage_max_size
    elif cls is DownstreamReceptiveSchedulingTerm:
        t.kind, t.min_size = T_DOWNSTREAM, term.min_size
    else:
        t.kind, t.term = T_CALL, term.check
    return t


cdef bint _plain(object queue, object base, tuple methods) except -1:
    """Whether ``queue`` keeps ``base``'s ``methods`` (its stages are then its buffer's)."""
    cls = type(queue)
    for m in methods:
        if getattr(cls, m) is not getattr(base, m):
            return False
    return True


cdef class _Entry:
    """What a step needs of one scheduled entity (a GPU-resident chain's first entity stands for the chain)."""
    cdef object entity
    cdef list codelets
    cdef list terms            # [_Term]
    cdef list befores, afters  # the terms' overridden hooks
    cdef list rx_buffers       # receivers whose stages are their buffer's
    cdef list rx_others        # receivers that sync themselves
    cdef list transmitters     # [(transmitter, its buffer or None)]
    cdef object chain
    cdef int state
    cdef long long started     # its tick's start (CLOCK_MONOTONIC ns; several workers only)


cdef class Run:
    """One run of a graph by a scheduler (scheduler.py's ``Scheduler.run``)."""

    cdef object graph, clock, lock, cond, watcher, reason, error
    cdef object caller         # the thread that called run (several workers: the first of them)
    cdef object _picked_at     # the clock time of the entry _next returned
    cdef int workers, running, cursor
    cdef bint stop_on_deadlock, jumps
    cdef bint monotonic        # the clock is CLOCK_MONOTONIC less clock_origin (Clock.monotonic_origin_ns)
    cdef long long clock_origin
    cdef double poll_s
    cdef IdleWorkers idle      # where idle workers wait (several workers; None for one)
    cdef object wall_end
    cdef list order            # [_Entry], in scheduling order
    cdef dict chains           # first entity -> chain
    cdef dict ticks            # entity -> ticks
    cdef list sources
    cdef unsigned long long wakes  # the _wake calls, under the lock: one during a source's wait is not lost
    cdef int sleepers  # threads in the condition's wait (_wait), under the lock: a wake with none notifies none

    def __init__(self, graph, scheduler):
        self.graph, self.clock = graph, scheduler.clock
        self.jumps = bool(getattr(self.clock, "jumps", False))
        origin = self.clock.monotonic_origin_ns()
        self.monotonic = origin is not None
        self.clock_origin = origin if origin is not None else 0
        self.workers = scheduler.workers
        self.stop_on_deadlock = scheduler.stop_on_deadlock
        self.poll_s = scheduler.check_recession_period_ms / 1000
        limit = scheduler.max_duration_ms
        self.wall_end = None if limit is None else time.monotonic() + limit / 1000
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        if self.workers > 1:
            self.idle = IdleWorkers(scheduler.handoff_ms, scheduler.check_recession_period_ms)
        every = [e for e in graph.entities if e.of_type(Codelet)]
        self.chains = {}
        for chain in graph.resident_chains:
            chain.bind()
            self.chains[chain.entities[0]] = chain
        inner = {e for chain in self.chains.values() for e in chain.entities[1:]}
        self.order = [self._entry(e) for e in every if e not in inner]
        self.ticks = dict.fromkeys(every, 0)
        self.sources = graph.components(ExternalSource)

    cdef _Entry _entry(self, entity):
        cdef _Entry en = _Entry()
        chain = self.chains.get(entity)
        en.entity, en.chain, en.state = entity, chain, E_IDLE
        if chain is not None:
            en.codelets, terms, receivers, transmitters = [c for _, c in chain.codelets], chain.terms, [], chain.outputs
        else:
            en.codelets, terms = entity.of_type(Codelet), entity.of_type(SchedulingTerm)
            receivers, transmitters = entity.of_type(Receiver), entity.of_type(Transmitter)
        en.terms = [_term(t) for t in terms]
        en.befores, en.afters = _hooks(terms, "before_tick"), _hooks(terms, "after_tick")
        en.rx_buffers = [rx.stages for rx in receivers if _plain(rx, Receiver, ("sync",))]
        en.rx_others = [rx for rx in receivers if not _plain(rx, Receiver, ("sync",))]
        en.transmitters = [(tx, tx.stages if _plain(tx, Transmitter, ("sync",)) else None) for tx in transmitters]
        return en

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
        # A source's news (every UCX message and credit) wakes the run, mostly from the thread that
        # runs it (in the source's wait): Condition.notify_all's Python cost 0.3 us there for nobody.
        lock = self.lock
        lock.acquire()  # not ``with``: twice as costly (``work``)
        try:
            self.wakes += 1
            if self.sleepers:
                self.cond.notify_all()
            self._idle_look()
        finally:
            lock.release()

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
            codelet.run_phase(phase, self._now(), stream)
        except Exception as exc:
            raise CodeletError(entity.name, codelet.name, phase, exc) from exc

    def _work_on_pool(self):
        """The workers' loops: the calling thread is the first worker, and
        the one that picks first. Short ticks stay on the thread that
        finished the last one (_defer_to_active), so a pipeline of them runs
        on the calling thread as on the greedy scheduler. When every tick ran
        on a new thread instead, four workers ran the 1 MiB pipeline at 0.64
        to 0.77x one worker on the H200, with no tick moving between threads
        and none at once: the same ticks cost more on the new thread."""
        if self.workers == 1:
            self.work()
            return
        self.caller = PyThread_get_thread_ident()
        with self.lock:
            self.idle.handed_to(self.caller, _monotonic_ns())  # the others defer to it from the start
        threads = [threading.Thread(target=self.work, name=f"cubind.graph worker {i}", daemon=True)
                   for i in range(1, self.workers)]
        for t in threads:
            t.start()
        try:
            self.work()
            for t in threads:
                while t.is_alive():
                    t.join(0.1)  # a timeout keeps the calling thread able to take signals
        except BaseException:
            self.graph.interrupt()
            with self.lock:
                self._stop("interrupted")
            for t in threads:
                t.join()
            raise

    def work(self):
        """A worker's loop: pick under the lock, tick without it, finish under it."""
        cdef _Entry en
        cdef object now
        # The lock by acquire and release in try/finally, as ``with`` takes it: its __enter__ and
        # __exit__ calls cost twice as much (185 ns against 90 here), twice a tick.
        lock = self.lock
        while True:
            lock.acquire()
            try:
                try:
                    en = self._next()
                except BaseException as exc:
                    if self.workers == 1 or self.caller == PyThread_get_thread_ident():
                        raise  # on the calling thread, as a tick's error: _work_on_pool stops the others
                    # A term's check or a clock raised on a worker thread:
                    # the run ends with it (run() raises it), as on the
                    # greedy scheduler, and the other workers stop.
                    self.error = self.error or exc
                    self._stop("error")
                    return
                if en is None:
                    return
                now = self._picked_at
            finally:
                lock.release()
            error = None
            try:
                self._tick(en, now)
            except CodeletError as exc:
                error = exc
            except BaseException as exc:  # KeyboardInterrupt in the greedy one: stop cleanly, then raise
                with self.lock:
                    self._finish(en, None)
                    self._stop("interrupted")
                raise exc
            lock.acquire()
            try:
                self._finish(en, error)
            finally:
                lock.release()

    # -- under the lock

    cdef void _stop(self, reason) except *:
        if self.reason is None:
            self.reason = reason
        self.cond.notify_all()
        self._idle_look()

    cdef void _idle_look(self) noexcept:
        """Wakes the idle workers (under the run's lock) to look again."""
        if self.idle is not None:
            self.idle.look()

    cdef object _now(self):
        """The clock's timestamp: read here where it is the monotonic clock
        less an origin (a step reads it once or twice), else asked."""
        cdef timespec ts
        if self.monotonic:
            clock_gettime(CLOCK_MONOTONIC, &ts)
            return ts.tv_sec * 1000000000LL + ts.tv_nsec - self.clock_origin
        return self.clock.timestamp()

    cdef _Entry _next(self):
        """The next entry to tick (its time in _picked_at), marked running; None to stop. Waits as needed."""
        cdef _Entry en
        cdef bint ended = False  # the sources were seen ended after a pick that found nothing
        while True:
            if self.reason is not None:
                return None
            if self.graph._interrupted:  # Graph.interrupted's flag, without the property's call
                self._stop("interrupted")
                return None
            if self.sources and self._source_failed():
                return None
            if self.wall_end is not None and _monotonic() >= self.wall_end:
                self._stop("max_duration")
                return None
            if self.workers > 1 and (self._gate() if self.running else self._defer_to_active()):
                continue
            now = self._now()
            target = []
            en = self._pick(now, target)
            if en is not None:
                if self.workers > 1:  # what _gate and the idle workers read
                    self._started(en)
                    if self.watcher is not None:  # a watcher that ticks watches no more
                        self._end_watch(PyThread_get_thread_ident())
                self._picked_at = now
                return en
            at = target[0] if target else None
            if self.running == 0 and at is None and not self._sources_active():
                if self.sources and not ended:
                    # A source's last messages come before its end (a peer's goodbye follows
                    # them), on the transport's thread, maybe after the pick above: picked
                    # again, now that nothing more can come (a stress run on 8 workers ended
                    # "done" with a queue's last 3 messages unread).
                    ended = True
                    continue
                # Nothing can fire again. Entities that ended and others left
                # waiting for their messages is the usual end ("done"), as is
                # a part of a split app whose remote peers all ended; waiting
                # with none ended is a deadlock.
                if self.sources or self._any_done():
                    self._stop("done")
                    return None
                if self.stop_on_deadlock:
                    self._stop("deadlock")
                    return None
            ended = False
            self._wait(at)

    cdef bint _source_wait(self, double seconds) except -1:
        """Lets an external source take what arrives for a short while on
        this thread (``ExternalSource.external_wait``), the lock let go as
        the condition's wait does; whether the run was woken meanwhile."""
        cdef unsigned long long seen = self.wakes
        self.lock.release()
        try:
            for source in self.sources:
                if source.external_wait(seconds):
                    break
        finally:
            self.lock.acquire()
        return self.wakes != seen

    cdef bint _sources_active(self) except -1:
        for source in self.sources:
            if source.external_active():
                return True
        return False

    cdef bint _any_done(self) except -1:
        cdef _Entry en
        for en in self.order:
            if en.state == E_DONE:
                return True
        return False

    cdef bint _source_failed(self) except -1:
        for source in self.sources:
            failure = source.external_failure()
            if failure is not None:
                self.error = self.error or failure
                self._stop("error")
                return True
        return False

    cdef bint _gate(self) except -1:
        """Whether this worker must wait (it has waited): while a tick runs,
        another starts only once every running tick has run ``handoff_ms``
        (scheduler.py's MultiThreadScheduler says why). One waiting worker
        (the watcher) wakes when the youngest tick reaches the limit; the
        others sleep until the run ends or the watcher leaves."""
        me = PyThread_get_thread_ident()
        if _monotonic_ns() - self.idle.youngest >= self.idle.handoff_ns:
            self._end_watch(me)
            return False
        self._idle_wait(me)
        return True

    cdef bint _defer_to_active(self) except -1:
        """Whether this worker must wait (it has waited): with nothing
        running, the worker that finished the last tick is about to pick the
        next one; another taking it instead moves the ticks between threads,
        and each move hands the GIL over (four workers ran a pipeline of
        short ticks at 0.83x one worker on the H200). So another waits until
        the active one has been away for ``handoff_ms``."""
        cdef unsigned long me = PyThread_get_thread_ident()
        if self.idle.active == 0 or self.idle.active == me:  # the active worker: no Python int made
            return False
        if _monotonic_ns() - self.idle.finished >= self.idle.handoff_ns:
            self._end_watch(me)
            return False
        self._idle_wait(me)
        return True

    cdef void _end_watch(self, object me) except *:
        if self.watcher == me:
            self.watcher = None
            self._idle_look()  # another waiting worker becomes the watcher

    cdef void _idle_wait(self, object me) except *:
        """Waits in the idle workers' room (idle.pyx says why without the GIL
        and the run's lock), the lock let go meanwhile: the watcher (the
        first waiting worker) until a running tick or the active worker's
        absence reaches ``handoff_ms``, or the poll period passes; the others
        until the run ends or no watcher is left."""
        if self.watcher is None:
            self.watcher = me
        cdef bint watching = self.watcher == me
        cdef unsigned long ident = me
        cdef long long events = self.idle.events  # under the run's lock, as every change is made
        cdef IdleWorkers idle = self.idle
        # The calling thread looks at least every poll period, watching or
        # not: it is the one that takes signals (KeyboardInterrupt).
        cdef bint calling = self.caller == me
        cdef bint polls = watching or calling
        self.lock.release()
        try:
            with nogil:
                idle.wait(watching, polls, ident, events)
        finally:
            self.lock.acquire()
        if calling:
            PyErr_CheckSignals()

    cdef void _started(self, _Entry en) noexcept:
        en.started = _monotonic_ns()
        self.idle.started(en.started)

    cdef void _finished(self) noexcept:
        """A tick ended on this worker (after ``running`` fell): the youngest
        running tick again, and this worker the active one."""
        cdef _Entry en
        cdef long long youngest = 0
        if self.running > 0:  # else none runs: no scan (one thread ticking, the usual case)
            for en in self.order:
                if en.state == E_RUNNING and en.started > youngest:
                    youngest = en.started
        self.idle.ended(youngest, _monotonic_ns(), PyThread_get_thread_ident())

    cdef _Entry _pick(self, object now, list target):
        """The first ready idle entry after the cursor, marked running; None
        (and the earliest time one may be ready, in ``target``) otherwise."""
        cdef Py_ssize_t count = len(self.order), i, index
        cdef _Entry en
        cdef int state
        cdef object earliest = None
        for i in range(count):
            index = (self.cursor + i) % count
            en = <_Entry>self.order[index]
            if en.state != E_IDLE:
                continue
            state, at = self._state(en, now)
            if state == S_NEVER:
                en.state = E_DONE
                for source in self.sources:
                    source.entity_done(en.entity)
            elif state == S_READY:
                self.cursor = index + 1
                en.state = E_RUNNING
                self.running += 1
                for before in en.befores:
                    before(now)
                return en
            elif state == S_WAIT_TIME:
                earliest = at if earliest is None else min(earliest, at)
        if earliest is not None:
            target.append(earliest)
        return None

    cdef tuple _state(self, _Entry en, object now):
        """The entry's state from its terms (GXF's rule): NEVER wins, then
        WAIT_EVENT, then WAIT_TIME at the latest of the targets, else READY."""
        cdef int worst = S_READY, state
        cdef object target = None
        cdef _Term term
        for term in en.terms:
            state = term.check(now)
            if state == S_NEVER:
                return S_NEVER, None
            if state == S_WAIT_EVENT:
                worst = S_WAIT_EVENT
            elif state == S_WAIT_TIME:
                if worst == S_READY:
                    worst = S_WAIT_TIME
                target = term.at if target is None else max(target, term.at)
        return worst, target

    cdef void _wait(self, object target) except *:
        cdef double limit = self.poll_s
        if self.wall_end is not None:
            limit = max(0.0, min(limit, self.wall_end - time.monotonic()))
        if self.sources and self._source_wait(min(limit, SOURCE_WAIT_S)):
            return
        # A manual clock jumps to the target: only once nothing runs, whose
        # messages could make an entity ready sooner.
        self.sleepers += 1
        try:
            if target is not None and (self.running == 0 or not self.jumps):
                self.clock.wait_until(self.cond, target, limit)
            else:
                self.cond.wait(limit)
        finally:
            self.sleepers -= 1

    cdef void _finish(self, _Entry en, object error) except *:
        try:
            self._hand_over(en)
        except Exception as exc:
            error = error or CodeletError(en.entity.name, en.codelets[0].name, "tick", exc)
            error.__cause__ = error.__cause__ or exc
        if en.afters:
            now = self._now()
            for after in en.afters:
                after(now)
        en.state = E_IDLE
        self.running -= 1
        if self.workers > 1:  # what _gate, _defer_to_active and the idle workers read
            self._finished()
        if en.chain is not None:
            for member in en.chain.entities:
                self.ticks[member] += 1
        else:
            self.ticks[en.entity] += 1
        if error is not None:
            self.error = self.error or error
            self._stop("error")
        # No worker is woken: this one picks again at once, and the others
        # start a tick only where every running one has stalled (_gate).

    cdef void _hand_over(self, _Entry en) except *:
        """The messages the entry's tick published, to each connected receiver."""
        cdef MessageBuffer rx_buffer
        for tx, buffer in en.transmitters:
            messages = tx.sync() if buffer is None else (<MessageBuffer>buffer).take_all()
            if not messages:
                continue
            for message in messages:
                for rx in tx.targets:
                    if type(rx).deliver is _RECEIVER_DELIVER:
                        rx_buffer = rx.stages
                        if rx_buffer.push(message) == 2:
                            raise rx.full_error()
                    else:
                        rx.deliver(message)

    # -- without the lock

    cdef void _tick(self, _Entry en, object now) except *:
        cdef MessageBuffer rx_buffer
        if en.chain is not None:
            try:
                en.chain.tick(self._phase)
            except CodeletError:
                raise
            except Exception as exc:  # the chain's own work (its copies, the graph launch): named by the chain
                raise CodeletError(en.entity.name, en.chain.label, "tick", exc) from exc
            return
        for rx_buffer in en.rx_buffers:
            rx_buffer.sync_in()
        for rx in en.rx_others:
            rx.sync()
        for codelet in en.codelets:
            try:
                if type(codelet).run_phase is _RUN_PHASE and en.entity.device is None:
                    # run_phase's work for a tick without a device to make
                    # current, here without its Python frame (nor stamp's,
                    # where the codelet keeps Codelet's).
                    if type(codelet).stamp is _STAMP:
                        _stamp_tick(codelet, now)
                    else:
                        codelet.stamp("tick", now)
                    stream = codelet.stream
                    if stream is None:
                        codelet.tick()
                    else:
                        with stream:
                            codelet.tick()
                else:
                    codelet.run_phase("tick", now, None)
            except Exception as exc:
                raise CodeletError(en.entity.name, codelet.name, "tick", exc) from exc


cdef object _RUN_PHASE = Codelet.run_phase
cdef object _STAMP = Codelet.stamp


cdef inline void _stamp_tick(object codelet, object now) except *:
    # Codelet.stamp("tick", now): a tick's timestamps and count (codelet.py
    # keeps them in these three attributes).
    last = codelet._last
    if last is not None:
        codelet._delta = now - last
    codelet._last = now
    codelet._count += 1


cdef object _RECEIVER_DELIVER = Receiver.deliver


cdef list _hooks(terms, name):
    return [getattr(t, name) for t in terms if getattr(type(t), name) is not getattr(SchedulingTerm, name)]
