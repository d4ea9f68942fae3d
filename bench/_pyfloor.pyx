# cython: language_level=3
"""The Python-call floor: C-level functions with the shapes of the benchmarked
calls (same positional arguments, a tuple of the same length back) that do
nothing else. The loop calling them costs what any binding's call must cost;
what a binding adds above this row is its own work."""


def args0_ret2():
    return (0, None)


def args0_ret3():
    return (0, None, None)


def args1_ret1(a):
    return (0,)


def args1_ret2(a):
    return (0, None)


def args2_ret1(a, b):
    return (0,)


def args2_ret2(a, b):
    return (0, None)


def args3_ret1(a, b, c):
    return (0,)


def args4_ret1(a, b, c, d):
    return (0,)


def args11_ret1(a, b, c, d, e, f, g, h, i, j, k):
    return (0,)
