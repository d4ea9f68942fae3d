"""Types of cubind/graph/model/buffer.pyx: a queue's two stages, compiled."""

class MessageBuffer:
    """The main and back stages of one queue, under one lock."""
    @property
    def capacity(self) -> int: ...
    @property
    def policy(self) -> int: ...
    dropped: int
    def __init__(self, capacity: int, policy: int) -> None: ...
    def size(self) -> int:
        """Messages in the main stage."""
    def back_size(self) -> int: ...
    def free(self) -> int:
        """Room left, both stages counted."""
    def push(self, message: object) -> int:
        """Into the back stage by the policy: 0 pushed, 1 dropped, 2 refused (full, policy 2)."""
    def pop(self) -> object | None:
        """The oldest message of the main stage, or None."""
    def put_front(self, message: object) -> None: ...
    def sync_in(self) -> None:
        """Back stage to main stage."""
    def snapshot(self) -> tuple[list[object], list[object]]: ...
    def take_all(self) -> list[object]:
        """Every message (back stage first); both stages emptied."""
