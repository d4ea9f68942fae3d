"""The emulated driver (tests/fake_driver/fake_libcuda.c and its emulated_*.c
parts) seen from Python, through ctypes: its switches and what it recorded,
for tests that run in the process that loaded it (tests/conftest.py's
``emulated_gpu`` fixture). The C sources' comments tell what each does.

Everything is counted from the view's making (``allocs``, ``events``), so
that what earlier tests of the session left alive does not show."""

import ctypes

_u64 = ctypes.c_ulonglong
_LIMIT = 1 << 16


class EmulatedDriver:
    """The loaded emulated driver at ``path`` (the library cubind loaded, so
    that ctypes reaches the same tables)."""

    real = False
    name = "emulated"

    def __init__(self, path):
        self.lib = lib = ctypes.CDLL(str(path))
        lib.emu_call_name.restype = ctypes.c_char_p
        lib.emu_violation_text.restype = ctypes.c_char_p
        lib.emu_launch_name.restype = ctypes.c_char_p
        lib.emu_launch_stream.restype = _u64
        lib.emu_inject.argtypes = (ctypes.c_char_p, ctypes.c_int)
        self._allocs_before = set(self._allocations())
        self._events_before = set(self._live_events())

    # -- switches (module docstrings of emulated_events.c, emulated_record.c, emulated_kernels.c)

    def _int(self, name):
        return ctypes.c_int.in_dll(self.lib, name)

    @property
    def events_done(self):
        return bool(self._int("emu_events_done").value)

    @events_done.setter
    def events_done(self, done):
        self._int("emu_events_done").value = int(done)

    def configure(self, *, event_queries=0, latency=None, kernels=True, record_calls=True):
        """``event_queries``: NOT_READY answers before a new event is done (a
        count, or "random" for 0 to 3 each); ``latency``: seconds before each
        use of an event (0 yields the thread, None goes on at once);
        ``kernels``: False makes a launch of the array's kernels a violation;
        ``record_calls``: keep each call in ``calls``."""
        if event_queries != "random" and not (isinstance(event_queries, int) and event_queries >= 0):
            raise ValueError(f"event_queries must be a count or 'random', not {event_queries!r}")
        self._int("emu_event_queries").value = -1 if event_queries == "random" else event_queries
        self._int("emu_latency_us").value = -1 if latency is None else int(latency * 1e6)
        self._int("emu_refuse_kernels").value = int(not kernels)
        self._int("emu_record_calls").value = int(record_calls)
        return self

    def fail(self, name, status):
        """Every later call of ``name`` answers ``status`` (until ``reset``)."""
        self.lib.emu_inject(name.encode(), status)

    def reset(self):
        """The defaults again, and the record forgotten."""
        self.configure(record_calls=False)
        self.events_done = True
        self.lib.emu_clear()

    # -- the record

    @property
    def calls(self):
        """Each recorded call as (name, args): the arguments in the C
        function's order without its outputs, as ints."""
        out, args = [], (_u64 * 8)()
        for i in range(self.lib.emu_call_count()):
            n = self.lib.emu_call_args(i, args)
            out.append((self.lib.emu_call_name(i).decode(), tuple(args[:n])))
        return out

    def clear_calls(self):
        self.lib.emu_clear_calls()

    def names(self):
        return [name for name, _ in self.calls]

    @property
    def launches(self):
        """Each launch of an array kernel: (name, stream)."""
        lib = self.lib
        return [(lib.emu_launch_name(i).decode(), lib.emu_launch_stream(i)) for i in range(lib.emu_launch_count())]

    @property
    def violations(self):
        return [self.lib.emu_violation_text(i).decode() for i in range(self.lib.emu_violation_count())]

    def _allocations(self):
        bases, sizes = (_u64 * _LIMIT)(), (_u64 * _LIMIT)()
        n = self.lib.emu_allocations(bases, sizes, _LIMIT)
        return {bases[i]: sizes[i] for i in range(min(n, _LIMIT))}

    @property
    def allocs(self):
        """The live allocations made since this view: {address: bytes}."""
        return {base: size for base, size in self._allocations().items() if base not in self._allocs_before}

    def _live_events(self):
        handles = (_u64 * _LIMIT)()
        n = self.lib.emu_live_events(handles, _LIMIT)
        return [handles[i] for i in range(min(n, _LIMIT))]

    @property
    def events(self):
        """The live events made since this view."""
        return [e for e in self._live_events() if e not in self._events_before]

    def finish(self, event):
        """The work recorded on a live ``event`` is done: the next query says so."""
        if self.lib.emu_event_finish(_u64(int(event))) != 0:
            raise KeyError(f"no live event {int(event):#x}")
