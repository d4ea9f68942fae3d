# cython: language_level=3, binding=False
"""The Python-call floor: C-level functions with the shapes of the benchmarked
calls that do nothing else. A shape is what any binding of the call must do:
take the same positional arguments, release the GIL around the C call where
cubind does (the calls that may wait on the device), and return a tuple of
the same length; a tuple holding outputs is new on every call, a bare status
tuple can be made once. What a binding adds above this row is its own work."""

cdef object _output = None   # a C global: Cython cannot fold the tuples below


cdef void _nothing() noexcept nogil:
    pass


def args0_ret2():
    return (0, _output)


def args0_ret3():
    return (0, _output, _output)


def args1_ret2(a):
    return (0, _output)


def args2_ret2(a, b):
    return (0, _output)


def args3_ret1(a, b, c):
    return (0,)


def args1_ret1_nogil(a):
    with nogil:
        _nothing()
    return (0,)


def args2_ret1_nogil(a, b):
    with nogil:
        _nothing()
    return (0,)


def args4_ret1_nogil(a, b, c, d):
    with nogil:
        _nothing()
    return (0,)


def args11_ret1_nogil(a, b, c, d, e, f, g, h, i, j, k):
    with nogil:
        _nothing()
    return (0,)


def args6_ret1_nogil(a, b, c, d, e, f):
    with nogil:
        _nothing()
    return (0,)
