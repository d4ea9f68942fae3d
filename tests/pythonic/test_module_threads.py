"""A Module's first use from 16 threads at once, on a real GPU (marked ``gpu``).

Before the load lock each racing thread loaded its own CUlibrary: a
``__device__`` variable written through one thread's kernel was not the one
another thread's kernel read, and ``get_kernel`` gave threads different
Kernel objects for one name.
"""

import threading

import numpy as np
import pytest

import cubind

THREADS = 16

SOURCE = r"""
__device__ unsigned int counter;
extern "C" __global__ void bump() { atomicAdd(&counter, 1u); }
extern "C" __global__ void read(unsigned int *out) { *out = counter; }
"""


@pytest.mark.gpu
def test_first_use_from_16_threads_loads_the_module_once():
    module = cubind.Program(SOURCE, name="module_threads.cu").compile()
    barrier = threading.Barrier(THREADS)
    handles, kernels, globals_, errors = [], [], [], []

    def first_use():
        try:
            barrier.wait()
            handles.append(int(module.handle))
            kernel = module.get_kernel("bump")
            kernels.append(kernel)
            globals_.append(int(module.get_global("counter")[0]))
            kernel(1, 1)  # the legacy default stream: every thread's bump is ordered with the others
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=first_use) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors[:3]
    assert len(set(handles)) == 1, "each racing thread loaded its own library"
    assert len({id(k) for k in kernels}) == 1
    assert len(set(globals_)) == 1
    out = cubind.empty(1, np.uint32)
    module.get_kernel("read")(1, 1, out)
    assert int(out.get()[0]) == THREADS  # every bump landed in the one counter
    module.close()
