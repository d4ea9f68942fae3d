"""What tests/fake_driver recorded of the CUDA graphs built on it, read by the
snippets the compute and CUDAGraph tests run in fresh interpreters (the
library is the one CUBIND_CUDA_LIBRARY names there): its counters, its node
table and a float's bits as the fake stores a kernel argument."""

import ctypes
import os
import struct

fake = ctypes.CDLL(os.environ["CUBIND_CUDA_LIBRARY"])


def count(name):
    return ctypes.c_int.in_dll(fake, name).value


def setint(name, value):
    ctypes.c_int.in_dll(fake, name).value = value


class Node(ctypes.Structure):
    _fields_ = [("handle", ctypes.c_ulonglong), ("graph", ctypes.c_ulonglong), ("kind", ctypes.c_int),
                ("ndeps", ctypes.c_int), ("deps", ctypes.c_ulonglong * 16), ("grid", ctypes.c_uint * 3),
                ("block", ctypes.c_uint * 3), ("args", ctypes.c_ulonglong * 8), ("func", ctypes.c_ulonglong),
                ("kern", ctypes.c_ulonglong), ("src_type", ctypes.c_int), ("dst_type", ctypes.c_int),
                ("src", ctypes.c_ulonglong), ("dst", ctypes.c_ulonglong), ("bytes", ctypes.c_ulonglong)]


KIND = {1: "kernel", 2: "copy", 3: "empty", 4: "memset", 5: "mem_alloc", 6: "mem_free", 7: "host", 8: "graph"}


def nodes(nargs=8):
    """Every node made so far, in order; a kernel's first ``nargs`` arguments."""
    table = (Node * 4096).in_dll(fake, "fake_nodes")
    return [{"handle": n.handle, "kind": KIND[n.kind], "deps": list(n.deps[:n.ndeps]), "grid": list(n.grid),
             "block": list(n.block), "args": list(n.args[:nargs]), "src": n.src, "dst": n.dst, "bytes": n.bytes,
             "src_host": n.src_type == 1, "dst_host": n.dst_type == 1}
            for n in table[:count("fake_node_count")]]


def f32(value):
    return struct.unpack("<I", struct.pack("<f", value))[0]
