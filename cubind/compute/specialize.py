"""Specialisation constants: compile-time values of an algorithm's kernel.

Kompute's specialisation constants are numbered (``constant_id`` 0, 1, ...);
here they reach CUDA C++ source as preprocessor macros given to NVRTC:

- a list ``[16, 0.5]`` defines ``SPEC_CONST_0`` and ``SPEC_CONST_1``;
- a dict ``{"TILE": 16, "ALPHA": 0.5}`` defines those names.

An int is written as it is, a float as a literal of its type (``0.5f`` for a
float32 or a Python float, as Kompute's constants are 32-bit floats; a numpy
float64 without the suffix), a bool as 1 or 0. Each distinct set of values
compiles once per manager (and once per machine, through cubind's disk
compile cache).
"""

import math
import threading

import numpy as np

import cubind


def defines(spec_consts):
    """The NVRTC ``-D`` options for ``spec_consts`` (a list, tuple, numpy
    array or dict; None for none), in a stable order."""
    if spec_consts is None:
        return ()
    if isinstance(spec_consts, dict):
        items = sorted(spec_consts.items())
        for name, _ in items:
            if not isinstance(name, str) or not name.isidentifier():
                raise ValueError(f"spec_consts: {name!r} is not a C identifier")
    elif isinstance(spec_consts, (list, tuple, np.ndarray)):
        values = spec_consts.tolist() if isinstance(spec_consts, np.ndarray) else spec_consts
        if isinstance(spec_consts, np.ndarray) and spec_consts.dtype == np.float32:
            values = [np.float32(v) for v in values]
        items = [(f"SPEC_CONST_{i}", v) for i, v in enumerate(values)]
    else:
        raise TypeError(f"spec_consts: expected a list or a dict of numbers, not {type(spec_consts).__name__}")
    return tuple(f"-D{name}={_literal(name, value)}" for name, value in items)


def _literal(name, value):
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        if not math.isfinite(value):
            raise ValueError(f"spec_consts[{name!r}]: {value} is not finite")
        if isinstance(value, np.float64):
            return repr(float(value))
        return repr(float(value)) + "f"
    raise TypeError(f"spec_consts[{name!r}]: expected an int, float or bool, not {type(value).__name__}")


class CompileCache:
    """Modules compiled for an algorithm, one per (program, defines): a set
    of specialisation constants seen before is not compiled again. Threads
    may share it: one compile per key at a time, the others wait for it."""

    def __init__(self):
        self._lock = threading.Lock()
        self._modules = {}
        self._building = {}
        self.compiles = 0  # how many compiles this cache ran (the tests read it)

    def module(self, program, options):
        key = (program.source, program.name, tuple(program.options), tuple(program.name_expressions),
               tuple(program.headers), program.include_toolkit, options)
        while True:
            with self._lock:
                if key in self._modules:
                    return self._modules[key]
                building = self._building.get(key)
                if building is None:
                    building = self._building[key] = threading.Event()
                    break
            building.wait()
        try:
            module = cubind.Program(program.source, options=[*program.options, *options],
                                    name_expressions=program.name_expressions, headers=program.headers or None,
                                    name=program.name, include_toolkit=program.include_toolkit).compile()
            with self._lock:
                self._modules[key] = module
                self.compiles += 1
            return module
        finally:
            with self._lock:
                del self._building[key]
            building.set()
