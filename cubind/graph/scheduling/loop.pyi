"""Types of cubind/graph/scheduling/loop.pyx: a scheduler's run, compiled."""

from typing import Any

from .result import RunResult

class Run:
    """One run of a graph by a scheduler (``Scheduler.run``)."""
    def __init__(self, graph: Any, scheduler: Any) -> None: ...
    def execute(self) -> RunResult: ...
    def work(self) -> None:
        """A worker's loop: pick under the lock, tick without it, finish under it."""
