"""Types of cubind/graph/ucx/recvpath.pyx: a UcxReceiver's per-message
path (what arrived, into the queue; the room given back), compiled."""

import threading
from typing import Any

from cubind.graph.model.message import Message

from .pump import Channel

def assemble(entries: list[dict[str, Any]], arrays: list[Any]) -> Message: ...

class ReceivePath:
    lock: threading.Lock
    delivering: threading.Lock
    failure: BaseException | None
    peer_ended: bool
    conn: Any
    allocator: Any
    allocator_asked: bool
    held: int
    received: int
    def grant(self, count: int) -> None: ...
    def pump_ready(self, channel: Channel) -> None: ...
