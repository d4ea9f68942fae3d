"""Sequence: operations recorded once into one CUDA graph, evaluated many
times, in Kompute's terms.

- ``record(op)`` adds the operation's nodes to the sequence's graph.
- The first evaluation after recording instantiates the graph; every
  evaluation launches that executable graph (one ``cuGraphLaunch``) on the
  sequence's stream and records the sequence's event after it.
- Push constants changed since the last evaluation (on an algorithm or a
  dispatch) are written into the executable graph's kernel nodes with
  ``cuGraphExecKernelNodeSetParams`` before the launch: never a new
  recording or instantiation.
- Before its launch, the stream waits for the last evaluation of any other
  sequence on another stream that used one of its tensors (its event), so
  sequences on several streams run at once where they share no tensor.
"""

from __future__ import annotations

import ctypes
import logging
import threading
import weakref
from typing import TYPE_CHECKING

import cubind

from .ops import OpAlgoDispatch, OpBase, check_op_tensors
from .recording import Recording
from .waiting import notify_when_reached, wait

if TYPE_CHECKING:
    from collections.abc import Generator
    from typing import Any

    from .manager import Manager

log = logging.getLogger("cubind.compute")


class Sequence:
    """One sequence of a :class:`Manager` (``mgr.sequence()``)."""

    def __init__(self, manager, stream):
        self._manager = manager
        self._stream = stream
        self._stream_handle = int(stream)
        with manager.device:
            self._event = cubind.Event(timing=False)
        self._lock = threading.RLock()
        self._ops = []
        self._tensors = []        # each tensor its operations use, once
        self._subscribed = []     # tensors, algorithms and dispatches that know of this sequence
        self._graph = None
        self._finalizer = None
        self._in_flight = False
        # Kompute's postEval: host-data copies OpTensorCopy asks for, made in
        # record order once an evaluation is seen finished (the host data of
        # the source is then what the whole sequence left there).
        self._post_copies = []    # (source tensor, destination tensor)
        self._invalid = None      # why it may not be evaluated (a tensor or algorithm was destroyed)
        # ids of the dispatches and algorithms whose push constants changed
        # since the last evaluation (kept alive by _subscribed while recorded).
        self._dirty = set()
        self._destroyed = False
        self._instantiations = 0
        log.debug("sequence created on stream 0x%x", self._stream_handle)

    # -- what it is -------------------------------------------------------------------

    @property
    def manager(self) -> Manager:
        return self._manager

    @property
    def stream(self) -> cubind.Stream:
        return self._stream

    @property
    def event(self) -> cubind.Event:
        """Recorded after each evaluation's graph launch."""
        return self._event

    @property
    def graph_instantiations(self) -> int:
        """How many times this sequence instantiated a graph: once per
        recording, however many evaluations and push-constant changes."""
        return self._instantiations

    def ops(self) -> list[OpBase]:
        return list(self._ops)

    def is_init(self) -> bool:
        return not self._destroyed

    def is_recording(self) -> bool:
        """True while it has recorded operations not yet evaluated."""
        with self._lock:
            return self._graph is not None and not self._graph.instantiated and bool(self._ops)

    def is_running(self) -> bool:
        """True from ``eval_async`` until the device has finished it."""
        with self._lock:
            if self._in_flight and self._event.query():
                self._finished()
            return self._in_flight

    def __repr__(self):
        state = "destroyed" if self._destroyed else f"{len(self._ops)} operations"
        return f"<cubind.compute.Sequence ({state})>"

    # -- recording ------------------------------------------------------------------------

    def record(self, op: OpBase) -> Sequence:
        """Adds ``op``'s nodes to the graph; returns the sequence (chaining)."""
        if not isinstance(op, OpBase):
            raise TypeError(f"record: expected an operation (cubind.compute.Op...), not {type(op).__name__}")
        with self._lock:
            self._check_alive("record")
            if self.is_running():
                raise RuntimeError("record: the sequence is running (eval_async without a finished eval_await); "
                                   "eval_await() first")
            check_op_tensors(op, self._manager)
            if self._graph is None:
                self._graph = Recording(self._manager.device)
                self._finalizer = weakref.finalize(self, self._graph.destroy)
            try:
                op._record(self, self._graph)
            except BaseException:
                self._rebuild()  # the failed operation may have added some nodes
                raise
            self._ops.append(op)
            self._track(op)
        return self

    def _track(self, op):
        for tensor in op.tensors():
            if not any(t is tensor for t in self._tensors):
                self._tensors.append(tensor)
                self._subscribe(tensor)
        if isinstance(op, OpAlgoDispatch):  # told of push-constant changes and of its destruction
            self._subscribe(op.algorithm)
            self._subscribe(op)

    def _subscribe(self, owner):
        with owner._lock:
            owner._users.add(self)
        self._subscribed.append(owner)

    def _rebuild(self):
        ops = self._ops
        self._reset()
        for op in ops:
            self.record(op)

    def _reset(self):
        """Back to empty: graph freed, no longer told of its old resources."""
        for owner in self._subscribed:
            with owner._lock:
                owner._users.discard(self)
        with self._manager._lock:
            for tensor in self._tensors:
                if tensor._last is not None and tensor._last[1] is self._event:
                    tensor._last = None
        if self._finalizer is not None:
            self._finalizer()  # destroys the graph
        self._graph = self._finalizer = None
        self._ops, self._tensors, self._subscribed, self._post_copies = [], [], [], []
        self._invalid, self._dirty = None, set()

    def clear(self) -> Sequence:
        """Forgets every operation and frees the graph."""
        with self._lock:
            if self.is_running():
                raise RuntimeError("clear: the sequence is running; eval_await() first")
            self._reset()
        return self

    def rerecord(self) -> Sequence:
        """Records the same operations again into a new graph (after tensors
        were remade, for one): the next evaluation instantiates it."""
        with self._lock:
            self._check_alive("rerecord")
            if self.is_running():
                raise RuntimeError("rerecord: the sequence is running; eval_await() first")
            self._rebuild()
        return self

    # -- evaluating --------------------------------------------------------------------------

    def eval(self, op: OpBase | None = None) -> Sequence:
        """Evaluates and waits. With ``op``: clears, records ``op`` alone,
        then evaluates (Kompute's one-shot form, ``mgr.sequence().eval(op)``)."""
        return self.eval_async(op).eval_await()

    def eval_async(self, op: OpBase | None = None) -> Sequence:
        """Launches the graph and returns at once (the sequence, which
        ``await`` and ``eval_await`` wait for)."""
        if op is not None:
            self.clear()
            self.record(op)
        with self._lock:
            self._check_alive("eval")
            if self._invalid is not None:
                raise ValueError(f"eval: {self._invalid}; clear() and record again")
            if self.is_running():
                raise RuntimeError("eval: the sequence is still running from eval_async; eval_await() first")
            if self._graph is None:
                return self  # nothing recorded: nothing to run
            if not self._graph.instantiated:
                if self._dirty:
                    self._update_push()  # into the graph's nodes (no driver call): instantiate() takes them
                self._graph.instantiate()
                self._instantiations += 1
            # Changed push constants go to the executable graph inside the launch's own device scope
            # (one context push an evaluation, not two).
            self._manager._launch(self, self._update_push if self._dirty else None)
            self._in_flight = True
        return self

    def _update_push(self):
        """Kernel nodes whose push constants changed get their new arguments,
        in the executable graph (or the graph, before it is instantiated):
        only the nodes of the dispatches and algorithms that changed, so that
        one change costs one node's update however long the sequence."""
        # Taken before reading the values: a change made meanwhile marks it again.
        changed, self._dirty = self._dirty, set()
        graph = self._graph
        readers = graph.readers
        entries = [entry for source in changed for entry in readers.get(source, ())]
        if not entries:
            return
        seen = set()
        for entry in entries:  # before instantiation, or in the manager's device scope (its _launch calls this)
            if id(entry) in seen:  # a dispatch and its algorithm both changed
                continue
            seen.add(id(entry))
            push = entry.dispatch.push_consts()
            if push != entry.push:
                graph.update_kernel(entry, entry.dispatch.algorithm._kernel_args(push), push)

    def _push_changed(self, source):
        """``source`` (an OpAlgoDispatch or an Algorithm this sequence
        records) has new push constants."""
        with self._lock:
            self._dirty.add(id(source))

    def _launch_on_stream(self):
        """The launch and the event after it (the manager orders it first)."""
        self._graph.graph.launch(self._stream_handle)
        err = self._manager._cuda.cuEventRecord(self._event.handle, self._stream_handle)[0]
        if err:
            raise cubind.CUDAError(err, "cuEventRecord")

    def eval_await(self, timeout: float | None = None) -> Sequence:
        """Waits for the evaluation in flight (if any); TimeoutError after
        ``timeout`` seconds, leaving it running. Returns the sequence."""
        with self._lock:
            if not self._in_flight:
                return self
        wait(self._event, timeout, "eval_await")
        with self._lock:
            if self._in_flight:
                self._finished()
        return self

    def __await__(self) -> Generator[Any, None, Sequence]:
        """``await seq.eval_async()``: waits without blocking the event loop."""
        return self._await_async().__await__()

    async def _await_async(self):
        with self._lock:
            if not self._in_flight:
                return self
        if not self._event.query():
            await notify_when_reached(self._event, self._manager._notifier(), self._manager.device)
        with self._lock:
            if self._in_flight:
                self._finished()
        return self

    def _finished(self):
        """The evaluation is done: the host-data copies, then not running.
        Called with the lock held."""
        for src, dst in self._post_copies:
            if src.is_init() and dst.is_init():
                ctypes.memmove(dst.host_ptr, src.host_ptr, src.nbytes)
        self._in_flight = False

    # -- release -------------------------------------------------------------------------------

    def _check_alive(self, what):
        if self._destroyed:
            raise ValueError(f"{what}: the sequence was destroyed (Sequence.destroy() or Manager.destroy())")
        self._manager._check_alive(what)

    def _await_quietly(self):
        """Waits for an evaluation in flight before its resources go; an error
        here (a sticky one) is the evaluation's, already past helping."""
        try:
            self.eval_await()
        except cubind.CUDAError:
            log.debug("waiting for a sequence before a release failed", exc_info=True)
            with self._lock:
                self._in_flight = False

    def _invalidate(self, reason):
        with self._lock:
            self._invalid = reason

    def destroy(self) -> None:
        """Waits for an evaluation in flight, then frees the graph and the event."""
        with self._lock:
            if self._destroyed:
                return
            self._await_quietly()
            self._reset()
            self._destroyed = True
            self._event.close()
        log.debug("sequence destroyed")
