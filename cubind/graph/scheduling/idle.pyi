"""Types of cubind/graph/scheduling/idle.pyx: where the multi-thread scheduler's idle workers wait."""

class IdleWorkers:
    """The idle workers' waiting room of one run (its methods are C-level, for loop.pyx)."""
    def __init__(self, handoff_ms: float, poll_ms: float) -> None: ...
