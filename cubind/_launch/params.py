"""A kernel's parameter list: what each argument must become.

The PTX ``.entry`` declaration is the most precise source the layer has: it
says float from integer (``.f32`` vs ``.u32``), the width of each value and
the size of each by-value struct (``.align 8 .b8 p[24]``). NVRTC writes the
PTX next to the CUBIN in the same compile, so a program compiled by cubind
always has it. Where no PTX exists (a CUBIN or fatbin loaded from a file),
``cuKernelGetParamInfo`` gives sizes only, and a parameter is typed by its
size (:data:`ANY`).

The C++ signature is not used: an ``extern "C"`` kernel's name carries none,
and a mangled name says no more than the PTX does.
"""

import re
from collections import namedtuple

__all__ = ["Param", "parse_ptx_entries", "ptx_globals", "params_from_sizes", "F32", "F64", "INT", "BYTES", "ANY"]

# Kinds, shared with cubind/_launch/launch.pyx (same numbers there).
F32, F64, INT, BYTES, ANY = 0, 1, 2, 3, 4

_SCALARS = {
    ".f32": (F32, 4), ".f64": (F64, 8),
    ".u8": (INT, 1), ".u16": (INT, 2), ".u32": (INT, 4), ".u64": (INT, 8),
    ".s8": (INT, 1), ".s16": (INT, 2), ".s32": (INT, 4), ".s64": (INT, 8),
    ".b8": (INT, 1), ".b16": (INT, 2), ".b32": (INT, 4), ".b64": (INT, 8),
    ".f16": (BYTES, 2), ".bf16": (BYTES, 2), ".pred": (INT, 1),
}
_ENTRY = re.compile(r"\.entry\s+([\w$.]+)\s*\(([^)]*)\)", re.S)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_NAME = re.compile(r"^([\w$.%]+)(?:\[(\d+)\])?$")
# A variable in the global or constant state space: its name is the last
# identifier before the array bounds, the initializer or the semicolon.
_GLOBAL = re.compile(r"^[ \t]*(?:\.(?:visible|weak|extern|common)\s+)*\.(?:global|const)\s+[^;={]*?([\w$.%]+)"
                     r"\s*(?:\[[^\]]*\]\s*)*(?:=|;)", re.M)


# (typing.NamedTuple would double the import time of `import cubind`.)
class Param(namedtuple("Param", "index kind size signed pointer text", defaults=(False, False, ""))):
    # The fields' types, for type checkers (annotations only: no class attribute).
    index: int  # type: ignore[assignment]  # shadows tuple.index, as the field does
    kind: int  # F32, F64, INT, BYTES or ANY
    size: int
    signed: bool
    pointer: bool
    text: str
    __slots__ = ()

    @property
    def takes_address(self) -> bool:
        """Whether a device address (an array's pointer) may be passed: an
        8-byte integer parameter, or an 8-byte one typed by its size only."""
        return self.size == 8 and self.kind in (INT, ANY)

    @property
    def float_width(self) -> int:
        """The bytes a Python float is packed into: 4 (float32) or 8
        (float64), by the PTX type or, for a parameter typed by its size
        only, by that size; 0 where the parameter takes no float as one (an
        integer one takes a whole float as an int, others refuse it).
        Decided here alone: the launch path's plan copies it per parameter
        and args.convert reads it, so the two paths cannot disagree."""
        if self.kind == F32 or (self.kind == ANY and self.size == 4):
            return 4
        if self.kind == F64 or (self.kind == ANY and self.size == 8):
            return 8
        return 0


Param.__doc__ = """One kernel parameter: ``kind`` (F32, F64, INT, BYTES or ANY), ``size``
in bytes, ``signed`` (for INT: a ``.sN`` type), ``pointer`` (PTX marks it
``.ptr``), and ``text``, how error messages show its type."""


def parse_ptx_entries(ptx):
    """``{entry name: [Param, ...]}`` for every ``.entry`` in ``ptx`` (str or bytes)."""
    if isinstance(ptx, (bytes, bytearray, memoryview)):
        ptx = bytes(ptx).rstrip(b"\0").decode("utf-8", errors="replace")
    ptx = _COMMENT.sub("", ptx)
    entries = {}
    for match in _ENTRY.finditer(ptx):
        decls = [d.strip() for d in match.group(2).split(",") if d.strip()]
        entries[match.group(1)] = [_parse_param(i, d) for i, d in enumerate(decls)]
    return entries


def ptx_globals(ptx):
    """The names of the ``__device__``/``__constant__`` variables ``ptx`` declares."""
    if isinstance(ptx, (bytes, bytearray, memoryview)):
        ptx = bytes(ptx).rstrip(b"\0").decode("utf-8", errors="replace")
    return {m.group(1) for m in _GLOBAL.finditer(_COMMENT.sub("", ptx))}


def _parse_param(index, decl):
    tokens = decl.split()
    if not tokens or tokens[0] != ".param":
        raise ValueError(f"unexpected PTX parameter declaration: {decl!r}")
    name = _NAME.match(tokens[-1])
    if name is None:
        raise ValueError(f"unexpected PTX parameter name in {decl!r}")
    count = int(name.group(2)) if name.group(2) else None
    align, scalar, pointer = None, None, False
    i = 1
    while i < len(tokens) - 1:
        token = tokens[i]
        if token == ".align":
            align = int(tokens[i + 1])
            i += 2
            continue
        if token == ".ptr":
            pointer = True
        elif token in _SCALARS:
            scalar = token
        i += 1
    if scalar is None:
        raise ValueError(f"no type in PTX parameter declaration: {decl!r}")
    kind, size = _SCALARS[scalar]
    if count is not None:  # a by-value struct, vector or array: its bytes
        text = f".align {align or size} {scalar}[{count}]"
        return Param(index, BYTES, size * count, text=text)
    return Param(index, kind, size, signed=scalar.startswith(".s"), pointer=pointer,
                 text=scalar + (" .ptr" if pointer else ""))


def params_from_sizes(sizes):
    """Params typed by size alone, from ``cuKernelGetParamInfo``."""
    return [Param(i, ANY, size, text=f"{size}-byte parameter") for i, size in enumerate(sizes)]
