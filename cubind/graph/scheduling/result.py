"""What a run returns."""

import dataclasses


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
