"""Raw handle values from the many objects users hold for one thing.

A stream may come from cubind, from the 1:1 modules, or from another library
(CuPy, PyTorch, cuda.core); the layer accepts each wherever a stream is taken.
"""

from __future__ import annotations

import threading

__all__ = ["stream_handle", "current", "open_blocks", "or_current", "int_streams"]


class _Current(threading.local):
    """Per thread: the streams entered with ``with stream:``, innermost last
    (``top`` is the innermost, None outside any)."""

    top = None

    def __init__(self):
        self.stack = []

    def push(self, stream):
        self.stack.append(stream)
        self.top = stream
        open_blocks.append(None)

    def pop(self, stream):
        stack = self.stack
        if stack and stack[-1] is stream:  # blocks close in order: the usual case
            del stack[-1]
        else:
            # Exits out of order (a generator's block closed late) remove the
            # right entry: the innermost entry of this stream.
            for i in range(len(stack) - 2, -1, -1):
                if stack[i] is stream:
                    del stack[i]
                    break
            else:
                return
        open_blocks.pop()
        self.top = stack[-1] if stack else None


current = _Current()
# `with stream:` blocks open in all threads together, one entry each (its
# length is the count: list.append and list.pop are atomic, so no lock). The
# launch and array paths read the thread-local `current` (about 15 ns) only
# where it is not empty: a thread's own entry is visible to it, so a stale
# read from another thread's change only costs that lookup, never a wrong
# stream.
open_blocks = []


# Stream types whose int() is their raw handle (or raises, closed): cubind.Stream
# adds itself. The layer's own streams are most of what its calls are handed (an
# array, its memory and an event record each read one), and int() skips the
# protocol's lookups.
int_streams: set = set()


def or_current(stream):
    """``stream``, or where it is None, this thread's current stream (None
    where no ``with stream:`` block is open)."""
    if stream is None and open_blocks:
        return current.top
    return stream


def stream_handle(stream, param="stream"):
    """The raw ``CUstream`` value (an int) of ``stream``: ``None`` (0, the
    default stream), an int, a ``CUstream``/``cudaStream_t``, any object with
    the ``__cuda_stream__`` protocol (cubind, cuda.core), a PyTorch stream
    (``.cuda_stream``) or a CuPy stream (``.ptr``)."""
    if stream is None:
        return 0
    if type(stream) is int:
        return stream
    if type(stream) in int_streams:
        return int(stream)
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        value = protocol() if callable(protocol) else protocol
        if isinstance(value, tuple):  # (version, handle)
            value = value[1]
        return int(value)
    for attr in ("cuda_stream", "ptr"):  # PyTorch, CuPy
        value = getattr(stream, attr, None)
        if value is not None and not callable(value):
            return int(value)
    try:
        return stream.__index__()  # CUstream, cudaStream_t, numpy ints
    except AttributeError:
        raise TypeError(
            f"{param}: expected a stream (cubind.Stream, CUstream, cudaStream_t, an object with "
            f"__cuda_stream__, a CuPy or PyTorch stream, an int or None), not {type(stream).__name__}"
        ) from None
