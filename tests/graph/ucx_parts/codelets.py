"""Codelets of the UCX fault tests: a part that dies (SIGKILL, no goodbye,
as a crashed process) at a given tick, and a slow consumer."""

import os
import signal
import time

import numpy as np

from cubind.graph import Codelet, Message, Parameter


class PingOrDie(Codelet):
    """Publishes a message each tick (empty, or with a host tensor of
    ``nbytes``); at tick ``die_at`` the process is killed."""

    die_at = Parameter(int, 0, "the tick at which the process dies (0: never)")
    nbytes = Parameter(int, 0, "a host tensor of this many bytes in each message (0: none)")

    def tick(self):
        if self.die_at and self.get_execution_count() == self.die_at:
            self._wait_sent(self.die_at - 1)
            os.kill(os.getpid(), signal.SIGKILL)
        message = Message()
        if self.nbytes:
            message.add_tensor("payload", np.full(self.nbytes, self.get_execution_count() % 251, np.uint8))
        self.get_transmitters()[0].publish(message)

    def _wait_sent(self, count, timeout_s=10.0):
        """Until the data path has sent ``count`` messages (or ``timeout_s``):
        a tick that kills the process at once could beat the previous
        tick's message out of it (a loaded machine's run saw 2 of 3 arrive),
        where the tests mean a crash after those were sent."""
        link = self.get_transmitters()[0].link
        deadline = time.monotonic() + timeout_s
        while link.counts()["sent"] < count and time.monotonic() < deadline:
            time.sleep(0.001)


class ReceiveOrDie(Codelet):
    """Receives a message each tick; at tick ``die_at`` the process is killed."""

    die_at = Parameter(int, 0)
    pause_s = Parameter(float, 0.0, "sleep per tick (a slow consumer)")

    def tick(self):
        if self.die_at and self.get_execution_count() == self.die_at:
            os.kill(os.getpid(), signal.SIGKILL)
        if self.get_receivers()[0].receive() is None:
            raise RuntimeError("ticked without a message")
        time.sleep(self.pause_s)
