"""How many parameters a kernel of a CUBIN has, read from its ELF.

A CUBIN loaded without its PTX is typed by ``cuKernelGetParamInfo``, which
the driver of CUDA 13.0 answers only for indices below the parameter count
and has no call for the count itself: asking past the end fails, and a
sanitizer reports that failure as an error of the user's program. The count
is in the CUBIN: each kernel's ``.nv.info.<name>`` section holds one
``EIATTR_KPARAM_INFO`` record per parameter.
"""

import struct

__all__ = ["param_count"]

_ELF64_LE = b"\x7fELF\x02\x01"
_KPARAM_INFO = 0x17
# Record formats: no value, a byte, a half-word, a sized value.
_NVAL, _BVAL, _HVAL, _SVAL = 1, 2, 3, 4


def _sections(code):
    """``{name: bytes}`` of an ELF64 little-endian image; {} where it is not one."""
    if not code.startswith(_ELF64_LE) or len(code) < 64:
        return {}
    shoff, = struct.unpack_from("<Q", code, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", code, 0x3A)
    if shentsize < 0x40 or shoff + shnum * shentsize > len(code) or shstrndx >= shnum:
        return {}
    headers = []
    for i in range(shnum):
        name, _type, _flags, _addr, offset, size = struct.unpack_from("<IIQQQQ", code, shoff + i * shentsize)
        if offset + size > len(code):
            return {}
        headers.append((name, offset, size))
    _n, str_offset, str_size = headers[shstrndx]
    strings = code[str_offset:str_offset + str_size]
    out = {}
    for name, offset, size in headers:
        end = strings.find(b"\0", name)
        if 0 <= name < len(strings) and end >= 0:
            out[strings[name:end].decode("ascii", "replace")] = code[offset:offset + size]
    return out


def _records(info):
    """``(attribute, value bytes)`` of an .nv.info section; None where a
    record's format is not one this reader knows."""
    pos, out = 0, []
    while pos + 2 <= len(info):
        fmt, attr = info[pos], info[pos + 1]
        if fmt == _SVAL and pos + 4 <= len(info):
            size, = struct.unpack_from("<H", info, pos + 2)
            out.append((attr, info[pos + 4:pos + 4 + size]))
            pos += 4 + size
        elif fmt == _HVAL:
            out.append((attr, info[pos + 2:pos + 4]))
            pos += 4
        else:
            return None
    return out if pos == len(info) else None


def param_count(code, name):
    """The number of parameters of kernel ``name`` in the CUBIN ``code``, or
    None where ``code`` is no CUBIN or its records are not understood."""
    info = _sections(bytes(code)).get(f".nv.info.{name}")
    if info is None:
        return None
    records = _records(info)
    if records is None:
        return None
    ordinals = sorted(struct.unpack_from("<H", value, 4)[0] for attr, value in records
                      if attr == _KPARAM_INFO and len(value) >= 12)
    return len(ordinals) if ordinals == list(range(len(ordinals))) else None
