"""Schedulers: a greedy one ticking on the calling thread, and a
multi-thread one with a pool of workers. Both run the same loop (loop.pyx,
compiled): under one lock (a condition) a worker picks an idle entity whose
terms are all ready, marks it running (so that no other worker ticks it),
ticks it without the lock, then under the lock hands its published messages
to the connected receivers and updates its terms.

Locks are taken in one order: the scheduler's, then a queue's. A codelet's
tick takes only queue locks (publish, receive), never the scheduler's."""

from cubind.graph.model.clock import Clock
from cubind.graph.model.component import Component
from cubind.graph.model.errors import ParameterError
from cubind.graph.model.parameters import Parameter, Ref

from .loop import Run
from .result import RunResult

__all__ = ["Scheduler", "GreedyScheduler", "MultiThreadScheduler", "RunResult"]


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
        return Run(graph, self).execute()


class GreedyScheduler(Scheduler, gxf_type="GreedyScheduler"):
    """Ticks one entity at a time, on the thread that called ``run``."""


class MultiThreadScheduler(Scheduler, gxf_type="MultiThreadScheduler"):
    """Ticks entities on ``worker_thread_number`` threads; an entity (so each
    of its codelets) is never ticked on two threads at once. While a tick
    runs another starts only once every running tick has run ``handoff_ms``
    (a tick that blocks lets the others go on; short Python ticks, which hold
    the GIL, run one after the other instead of trading it).

    The calling thread is the first worker and picks first; the others
    defer to the worker that finished the last tick, so short ticks run on
    the calling thread, as on the greedy scheduler (on the H200 the same
    ticks cost more on a new thread). One waiting worker (the watcher)
    looks again when the youngest running
    tick reaches ``handoff_ms``, or the worker that finished the last tick
    has been away that long; the others sleep until the run ends or the
    watcher leaves. They wait without the GIL and without the scheduler's
    lock (``idle.pyx``), so a look that finds the ticks going on costs the
    ticking thread nothing, and a tick that blocks is joined within about
    ``handoff_ms``. Looks that took the GIL made four workers run short
    ticks at 0.76 to 0.90x the greedy scheduler (no GPU, 2 cores), and at
    0.77x on the H200 even spaced out; without the GIL and on the calling
    thread, at 0.98 to 1.05x (the bench's rows say the latest)."""

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
