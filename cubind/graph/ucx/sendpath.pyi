"""Types of cubind/graph/ucx/sendpath.pyx: a UcxTransmitter's per-message
path (the room, the delivery, the credits), compiled."""

import asyncio
import collections
import threading
from typing import Any

from .pump import Channel

ENCODED_KEPT: int

def encode_published(
    message: Any, where: str, device_allowed: bool = True, limit: int | None = None
) -> tuple[bytes, list[Any]]: ...

class Connection:
    ep: Any
    channel: Channel
    tasks: list[asyncio.Task[Any]]
    keep: collections.deque[tuple[Any, ...]]
    ended: asyncio.Event
    queued: int
    sent: int
    bye_sent: bool
    cuda: bool
    def __init__(self, ep: Any, channel: Channel) -> None: ...

class SendPath:
    lock: threading.Lock
    failure: BaseException | None
    peer_ended: bool
    reconnecting: bool
    credits: int
    sent: int
    conn: Connection | None
    encoded: collections.deque[tuple[Any, tuple[bytes, list[Any]]]]
    staging: Any
    ordinal: int
    window: int
    def free(self) -> int: ...
    def remember(self, message: Any, encoded: tuple[bytes, list[Any]]) -> None: ...
    def deliver(self, message: Any) -> None: ...
    def _settle_sent(self, conn: Connection) -> None: ...
    def _take_waiting(self, conn: Connection) -> list[tuple[Any, ...]]: ...
    def _discard_waiting(self, conn: Connection) -> int: ...
    def _resend(self, conn: Connection, carried: list[tuple[Any, ...]]) -> None: ...
    def pump_ready(self, channel: Channel) -> None: ...
