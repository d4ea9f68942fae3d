"""Clocks: the scheduler's time and the codelets' timestamps, in nanoseconds."""

import threading
import time

from .component import Component
from .errors import ParameterError
from .parameters import Parameter


class Clock(Component):
    """``time()`` in seconds, ``timestamp()`` in nanoseconds."""

    jumps = False  # True: waiting moves the time to the target at once

    def time(self):
        return self.timestamp() / 1e9

    def timestamp(self):
        raise NotImplementedError

    def monotonic_origin_ns(self):
        """None, or ``origin`` where ``timestamp()`` is exactly
        ``time.monotonic_ns() - origin``: the scheduler's compiled loop then
        reads the clock itself (CLOCK_MONOTONIC) on every step, without a call."""
        return None

    def wait_until(self, condition, target_ns, limit_s):
        """Waits on ``condition`` (held) until ``target_ns`` or a notification,
        at most ``limit_s`` seconds."""
        raise NotImplementedError


class RealtimeClock(Clock, gxf_type="RealtimeClock"):
    """The host's monotonic clock (or the time since the epoch), scaled and
    offset as GXF's ``RealtimeClock`` is."""

    initial_time_offset = Parameter(float, 0.0, "seconds added to the time")
    initial_time_scale = Parameter(float, 1.0, "how fast the clock runs")
    use_time_since_epoch = Parameter(bool, False, "count from 1970 instead of from the start")

    def on_bind(self):
        if self.initial_time_scale <= 0:
            raise ParameterError(f"{self.path}/initial_time_scale: must be above 0, got {self.initial_time_scale}")
        self._origin = 0 if self.use_time_since_epoch else time.monotonic_ns()
        self._source = time.time_ns if self.use_time_since_epoch else time.monotonic_ns
        # Read on every scheduling step (three times a tick): plain attributes,
        # and no float arithmetic where the clock is neither scaled nor offset.
        self._scale, self._offset_ns = self.initial_time_scale, self.initial_time_offset * 1e9
        self._plain = self._scale == 1.0 and self._offset_ns == 0.0

    def timestamp(self):
        elapsed = self._source() - self._origin
        if self._plain:
            return elapsed
        return int(elapsed * self._scale + self._offset_ns)

    def monotonic_origin_ns(self):
        plain = self._plain and not self.use_time_since_epoch and type(self).timestamp is RealtimeClock.timestamp
        return self._origin if plain else None

    def wait_until(self, condition, target_ns, limit_s):
        delay = (target_ns - self.timestamp()) / 1e9 / self.initial_time_scale if target_ns is not None else limit_s
        condition.wait(max(0.0, min(delay, limit_s)))


class ManualClock(Clock, gxf_type="ManualClock"):
    """Time moves only when the scheduler has nothing to run before the next
    target: it jumps there. Runs of periodic graphs are then instant and
    deterministic (the tests use it)."""

    initial_timestamp = Parameter(int, 0, "nanoseconds at the start")
    jumps = True

    def on_bind(self):
        self._now = self.initial_timestamp
        self._lock = threading.Lock()

    def timestamp(self):
        with self._lock:
            return self._now

    def wait_until(self, condition, target_ns, limit_s):
        if target_ns is None:
            condition.wait(limit_s)
            return
        with self._lock:
            self._now = max(self._now, target_ns)
