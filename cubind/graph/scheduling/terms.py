"""Scheduling terms: each says whether its entity may tick now. An entity
ticks when every term is READY; one NEVER ends it; WAIT_TIME carries the
clock time after which it may be ready; WAIT_EVENT waits for something
another entity does (a message, room downstream, a flag)."""

import re
import threading

from cubind.graph.model.component import Component
from cubind.graph.model.errors import ParameterError
from cubind.graph.model.parameters import Parameter, Ref
from cubind.graph.model.queues import Receiver, Transmitter

READY, WAIT_TIME, WAIT_EVENT, NEVER = "ready", "wait_time", "wait_event", "never"


class SchedulingTerm(Component):
    def check(self, now):
        """``(state, target_ns)`` at clock time ``now`` (ns)."""
        raise NotImplementedError

    def before_tick(self, now):
        """The entity is about to tick (the scheduler's lock held)."""

    def after_tick(self, now):
        """The entity ticked (the scheduler's lock held)."""


class CountSchedulingTerm(SchedulingTerm, gxf_type="CountSchedulingTerm"):
    """Ready ``count`` times, then never."""

    count = Parameter(int, doc="how many ticks")

    def on_bind(self):
        if self.count < 0:
            raise ParameterError(f"{self.path}/count: must be 0 or more, got {self.count}")
        self.done = 0

    def check(self, now):
        return (READY if self.done < self.count else NEVER), None

    def after_tick(self, now):
        self.done += 1


_UNITS = {"ns": 1, "us": 1_000, "ms": 1_000_000, "s": 1_000_000_000}


def period_ns(where, value):
    """GXF's period forms: an int (ns), or a string ``"10ms"``, ``"2.5s"``, ``"100Hz"``."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        ns = int(value)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ns|us|ms|s|hz|Hz)\s*", str(value))
        if not m:
            raise ParameterError(f"{where}: {value!r} is not a period (an int of ns, or '10ms', '2s', '100Hz')")
        number, unit = float(m.group(1)), m.group(2)
        ns = int(1e9 / number) if unit.lower() == "hz" else int(number * _UNITS[unit])
    if ns <= 0:
        raise ParameterError(f"{where}: the period must be above 0, got {value!r}")
    return ns


class PeriodicSchedulingTerm(SchedulingTerm, gxf_type="PeriodicSchedulingTerm"):
    """Ready at once, then ``recess_period`` after each tick's start."""

    recess_period = Parameter(lambda v: v, doc="ns as an int, or '10ms', '2s', '100Hz'")

    def on_bind(self):
        self.period = period_ns(f"{self.path}/recess_period", self.recess_period)
        self.next_time = None

    def check(self, now):
        if self.next_time is None or now >= self.next_time:
            return READY, None
        return WAIT_TIME, self.next_time

    def before_tick(self, now):
        self.next_time = now + self.period


class BooleanSchedulingTerm(SchedulingTerm, gxf_type="BooleanSchedulingTerm"):
    """Ready while enabled; ``disable_tick()`` (from a codelet) ends the entity."""

    initially_enabled = Parameter(bool, True, key="enable_tick")

    # The flag is set by a codelet on its worker thread and read by the
    # scheduler on another: a lock, not the GIL's timing, orders them.
    def on_bind(self):
        self._lock = threading.Lock()
        self._enabled = self._params["enable_tick"]

    def check(self, now):
        return (READY if self.checkTickEnabled() else NEVER), None

    def enable_tick(self):
        with self._lock:
            self._enabled = True

    def disable_tick(self):
        with self._lock:
            self._enabled = False

    def checkTickEnabled(self):  # noqa: N802 - GXF's name
        with self._lock:
            return self._enabled


class MessageAvailableSchedulingTerm(SchedulingTerm, gxf_type="MessageAvailableSchedulingTerm"):
    """Ready when ``receiver`` holds at least ``min_size`` messages (both stages)."""

    receiver = Parameter(Ref(Receiver))
    min_size = Parameter(int, 1)
    front_stage_max_size = Parameter(int, None, "not ready while the main stage holds more than this")

    def on_bind(self):
        if self.min_size < 1:
            raise ParameterError(f"{self.path}/min_size: must be at least 1, got {self.min_size}")

    def check(self, now):
        rx = self.receiver
        if self.front_stage_max_size is not None and rx.size() > self.front_stage_max_size:
            return WAIT_EVENT, None
        return (READY if rx.size() + rx.back_size() >= self.min_size else WAIT_EVENT), None


class DownstreamReceptiveSchedulingTerm(SchedulingTerm, gxf_type="DownstreamReceptiveSchedulingTerm"):
    """Ready when every receiver ``transmitter`` feeds has room for ``min_size``
    more messages (GXF's "downstream message affordable")."""

    transmitter = Parameter(Ref(Transmitter))
    min_size = Parameter(int, 1)

    def check(self, now):
        ok = all(rx.free() >= self.min_size for rx in self.transmitter.targets)
        return (READY if ok else WAIT_EVENT), None


Component.types["DownstreamMessageAffordableSchedulingTerm"] = DownstreamReceptiveSchedulingTerm


class TargetTimeSchedulingTerm(SchedulingTerm, gxf_type="TargetTimeSchedulingTerm"):
    """Ready once the clock reaches the time the codelet set with
    ``set_next_target_time(ns)``; waits for a new one after each tick."""

    clock = Parameter(Ref(Component), None, "accepted for GXF's shape; the graph's clock is used")

    def on_bind(self):
        self._lock = threading.Lock()  # set by the codelet's thread, read by the scheduler's
        self._target = None

    def set_next_target_time(self, ns):
        with self._lock:
            self._target = int(ns)

    def check(self, now):
        with self._lock:
            target = self._target
        if target is None:
            return WAIT_EVENT, None
        return (READY if now >= target else WAIT_TIME), target

    def before_tick(self, now):
        with self._lock:
            self._target = None
