"""cuda.core 0.3.2 cases for tests/bindings/test_cuda_core.py, through its public API
only (``cuda.core.experimental``). Each ``case_*`` function runs in a fresh
interpreter (``python -m tests.bindings.cuda_core_cases.cases NAME``), on cubind's
``cuda.bindings`` (CUBIND_CUDA_BINDINGS=1) or NVIDIA's, checks its results
against numpy itself, and returns a dict of plain values that must come out
the same on both bindings (nothing that names a handle or an address).

Cases that NVRTC and nvJitLink answer alone still need a driver: cuda.core
asks ``cuDriverGetVersion`` whenever it makes an ObjectCode (and before
compiling to PTX), so without a GPU they run against tests/fake_driver."""

import ctypes
import io
import json
import os
import sys
import tempfile

import numpy as np

ARCH = os.environ.get("CUDA_CORE_CASE_ARCH", "sm_90")

SAXPY = r"""
extern "C" __global__
void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) out[tid] = a * x[tid] + y[tid];
}
"""

ADD = r"""
extern "C" __global__ void add_value(int *x, int value) { x[threadIdx.x] += value; }
"""

# cuda.core's own tests declare the device-side setter this way (NVRTC has
# no device-runtime header to include).
SET_CONDITIONAL = r"""
extern "C" __device__ __cudart_builtin__ void CUDARTAPI cudaGraphSetConditional(cudaGraphConditionalHandle handle,
                                                                                  unsigned int value);
extern "C" __global__ void set_handle(cudaGraphConditionalHandle handle, int value)
{
    cudaGraphSetConditional(handle, value);
}
extern "C" __global__ void count_down(cudaGraphConditionalHandle handle, int *counter)
{
    *counter -= 1;
    cudaGraphSetConditional(handle, *counter > 0);
}
""" + ADD

PTX_ONLY = """
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p) { ret; }
"""


def _core():
    import cuda.core.experimental as core

    return core


def _options(**kw):
    return _core().ProgramOptions(arch=ARCH, **kw)


def _compile(code, target, **kw):
    core = _core()
    return core.Program(code, "c++", _options(**kw)).compile(target)


def _device():
    core = _core()
    dev = core.Device(0)
    dev.set_current()
    return dev


def _arch_of(dev):
    # cuda.core 0.3.2's Device has no ``arch`` (later versions do).
    cc = dev.compute_capability
    return f"sm_{cc.major}{cc.minor}"


def _host_view(buf, dtype, count):
    """A numpy array over a pinned (host-accessible) Buffer's memory."""
    assert buf.is_host_accessible
    dtype = np.dtype(dtype)
    raw = (ctypes.c_char * (dtype.itemsize * count)).from_address(int(buf.handle))
    return np.frombuffer(raw, dtype=dtype, count=count)


def _pinned(dev, array):
    core = _core()
    buf = core.LegacyPinnedMemoryResource().allocate(array.nbytes)
    _host_view(buf, array.dtype, array.size)[:] = array.ravel()
    return buf


def _saxpy_with(kernel, dev, n=1000, a=2.5):
    """Launches ``kernel`` (saxpy) on device buffers filled from pinned ones;
    returns the maximum error against numpy."""
    core = _core()
    stream = dev.create_stream()
    rng = np.random.default_rng(7)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    hx, hy = _pinned(dev, x), _pinned(dev, y)
    hout = _pinned(dev, np.zeros(n, np.float32))
    dx, dy, dout = (dev.allocate(n * 4, stream=stream) for _ in range(3))
    dx.copy_from(hx, stream=stream)
    dy.copy_from(hy, stream=stream)
    config = core.LaunchConfig(grid=(n + 127) // 128, block=128)
    core.launch(stream, config, kernel, np.float32(a), dx, dy, dout, np.uint64(n))
    dout.copy_to(hout, stream=stream)
    stream.sync()
    got = _host_view(hout, np.float32, n).copy()
    for buf in (dx, dy, dout):
        buf.close(stream)
    stream.sync()
    np.testing.assert_allclose(got, a * x + y, rtol=1e-6)
    return True


# --------------------------------------------------------------------------
# Without a GPU (against tests/fake_driver there)
# --------------------------------------------------------------------------


def case_import():
    core = _core()
    from cuda.bindings import driver

    names = ["Device", "Stream", "Event", "Program", "ProgramOptions", "Linker", "LinkerOptions", "ObjectCode",
             "Kernel", "LaunchConfig", "launch", "Buffer", "DeviceMemoryResource", "LegacyPinnedMemoryResource",
             "GraphBuilder", "Graph", "system"]
    return {"names": [name for name in names if hasattr(core, name)],
            "b2d": hasattr(driver, "CUoccupancyB2DSize")}


def case_compile_cubin():
    obj = _compile(SAXPY, "cubin")
    assert obj.code[:4] == b"\x7fELF", obj.code[:16]
    return {"elf": True}


def case_compile_ltoir():
    obj = _compile(SAXPY, "ltoir", link_time_optimization=True)
    assert isinstance(obj.code, bytes) and len(obj.code) > 100
    return {"ltoir": True}


def case_compile_ptx():
    obj = _compile(SAXPY, "ptx")
    text = obj.code.decode() if isinstance(obj.code, bytes) else obj.code
    assert ".visible .entry saxpy(" in text, text[:400]
    return {"ptx": True, "target": f".target {ARCH}" in text}


def case_compile_name_expressions_and_logs():
    core = _core()
    logs = io.StringIO()
    code = "template <typename T> __global__ void twice(T *x) { int unused; x[threadIdx.x] *= 2; }"
    obj = core.Program(code, "c++", _options()).compile("cubin", name_expressions=("twice<float>",), logs=logs)
    return {"lowered": obj._sym_map["twice<float>"].decode() if isinstance(obj._sym_map["twice<float>"], bytes)
            else obj._sym_map["twice<float>"], "warned": "unused" in logs.getvalue()}


def case_compile_error():
    core = _core()
    try:
        core.Program("garbage", "c++", _options()).compile("cubin")
    except Exception as exc:  # cuda.core raises cuda.bindings' nvrtcError wrapped as its NVRTCError
        text = str(exc)
        return {"raised": type(exc).__name__, "log": "this declaration has no storage class" in text}
    raise AssertionError("an invalid program compiled")


def case_link_ltoir_nvjitlink():
    core = _core()
    ltoir = _compile(SAXPY, "ltoir", link_time_optimization=True)
    linker = core.Linker(ltoir, options=core.LinkerOptions(arch=ARCH, link_time_optimization=True))
    cubin = linker.link("cubin")
    assert cubin.code[:4] == b"\x7fELF"
    return {"backend": linker.backend}


def case_link_ptx_nvjitlink():
    core = _core()
    ptx = core.ObjectCode.from_ptx(PTX_ONLY.encode())
    linker = core.Linker(ptx, options=core.LinkerOptions(arch=ARCH))
    cubin = linker.link("cubin")
    assert cubin.code[:4] == b"\x7fELF"
    return {"backend": linker.backend}


def case_program_from_ptx():
    # Program(ptx, "ptx") links through the Linker, nvJitLink here.
    core = _core()
    program = core.Program(PTX_ONLY, "ptx", _options())
    cubin = program.compile("cubin")
    assert cubin.code[:4] == b"\x7fELF"
    return {"backend": program.backend}


def case_object_code_from_bytes_and_files():
    core = _core()
    cubin = _compile(SAXPY, "cubin").code
    ltoir = _compile(SAXPY, "ltoir", link_time_optimization=True).code
    made = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, data in (("cubin", cubin), ("ptx", PTX_ONLY.encode()), ("ltoir", ltoir)):
            path = os.path.join(tmp, f"k.{kind}")
            with open(path, "wb") as f:
                f.write(data)
            from_bytes = getattr(core.ObjectCode, f"from_{kind}")(data, name=f"b-{kind}")
            from_file = getattr(core.ObjectCode, f"from_{kind}")(path)
            assert from_bytes.code == data and from_file.code == path, kind
            made[kind] = from_bytes.name
    return made


def case_launch_config_and_strided_view_numpy():
    core = _core()
    from cuda.core.experimental.utils import StridedMemoryView, args_viewable_as_strided_memory

    config = core.LaunchConfig(grid=(4, 2), block=64, shmem_size=128)
    array = np.arange(24, dtype=np.float32).reshape(4, 6)[:, ::2]
    view = StridedMemoryView(array, stream_ptr=-1)

    @args_viewable_as_strided_memory((0,))
    def inspect(arr):
        v = arr.view(-1)
        return [list(v.shape), None if v.strides is None else list(v.strides), str(v.dtype), v.ptr == array.ctypes.data]

    return {"grid": list(config.grid), "block": list(config.block), "shape": list(view.shape),
            "strides": list(view.strides), "dtype": str(view.dtype), "ptr": view.ptr == array.ctypes.data,
            "device_accessible": view.is_device_accessible, "decorated": inspect(array)}


# --------------------------------------------------------------------------
# On a GPU
# --------------------------------------------------------------------------


def case_device_properties():
    core = _core()
    dev = _device()
    props = dev.properties
    from cuda.bindings import driver

    major = driver.cuDeviceGetAttribute(driver.CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                        dev.device_id)[1]
    assert dev.compute_capability.major == major
    assert core.system.num_devices >= 1 and core.Device() is dev
    return {"name": dev.name, "cc": list(dev.compute_capability), "uuid": dev.uuid, "pci": dev.pci_bus_id,
            "sms": props.multiprocessor_count, "max_threads": props.max_threads_per_block,
            "warp": props.warp_size, "cooperative": bool(props.cooperative_launch),
            "driver": list(core.system.driver_version), "mr_device": dev.memory_resource.device_id}


def case_stream_event():
    core = _core()
    dev = _device()
    s1 = dev.create_stream()
    s2 = dev.create_stream(options=core.StreamOptions(nonblocking=True, priority=0))
    start = s1.record(options=core.EventOptions(enable_timing=True))
    cubin = core.Program(ADD, "c++", core.ProgramOptions(arch=_arch_of(dev))).compile("cubin").code
    kernel = core.ObjectCode.from_cubin(cubin).get_kernel("add_value")
    host = _pinned(dev, np.zeros(32, np.int32))
    for _ in range(10):
        core.launch(s1, core.LaunchConfig(grid=1, block=32), kernel, host, np.int32(1))
    end = s1.record(options=core.EventOptions(enable_timing=True))
    s2.wait(end)
    s2.wait(s1)
    s2.sync()
    end.sync()
    assert end.is_done and (end - start) >= 0
    assert (_host_view(host, np.int32, 32) == 10).all()
    dev.sync()
    return {"done": end.is_done, "default": isinstance(dev.default_stream, core.Stream),
            "priority": s2.priority, "device": s1.device.device_id}


def case_saxpy_cubin():
    core = _core()
    dev = _device()
    obj = core.Program(SAXPY, "c++", core.ProgramOptions(arch=_arch_of(dev))).compile("cubin")
    return {"ok": _saxpy_with(obj.get_kernel("saxpy"), dev)}


def case_saxpy_ptx_through_linker():
    core = _core()
    dev = _device()
    ptx = core.Program(SAXPY, "c++", core.ProgramOptions(arch=_arch_of(dev))).compile("ptx")
    linker = core.Linker(ptx, options=core.LinkerOptions(arch=_arch_of(dev)))
    cubin = linker.link("cubin")
    return {"ok": _saxpy_with(cubin.get_kernel("saxpy"), dev), "backend": linker.backend}


def case_saxpy_ltoir_through_linker():
    core = _core()
    dev = _device()
    ltoir = core.Program(SAXPY, "c++", core.ProgramOptions(arch=_arch_of(dev), link_time_optimization=True)) \
        .compile("ltoir")
    linker = core.Linker(ltoir, options=core.LinkerOptions(arch=_arch_of(dev), link_time_optimization=True))
    return {"ok": _saxpy_with(linker.link("cubin").get_kernel("saxpy"), dev), "backend": linker.backend}


def case_saxpy_driver_linker():
    # cuda.core falls back to the driver's cuLink* where cuda.bindings.nvjitlink
    # cannot be imported (_linker._decide_nvjitlink_or_driver): block it.
    import warnings

    sys.modules["cuda.bindings.nvjitlink"] = None
    core = _core()
    dev = _device()
    ptx = core.Program(SAXPY, "c++", core.ProgramOptions(arch=_arch_of(dev))).compile("ptx")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        linker = core.Linker(ptx, options=core.LinkerOptions(arch=_arch_of(dev), verbose=True))
    cubin = linker.link("cubin")
    info = linker.get_info_log()
    return {"ok": _saxpy_with(cubin.get_kernel("saxpy"), dev), "backend": linker.backend,
            "warned": any("culink" in str(w.message) for w in caught), "info_log": isinstance(info, str)}


def case_object_code_load_and_launch():
    core = _core()
    dev = _device()
    arch = _arch_of(dev)
    cubin = core.Program(SAXPY, "c++", core.ProgramOptions(arch=arch)).compile("cubin").code
    ptx = core.Program(SAXPY, "c++", core.ProgramOptions(arch=arch)).compile("ptx").code
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, data in (("cubin", cubin), ("ptx", ptx)):
            path = os.path.join(tmp, f"saxpy.{kind}")
            with open(path, "wb") as f:
                f.write(data)
            for source, arg in (("bytes", data), ("file", path)):
                obj = getattr(core.ObjectCode, f"from_{kind}")(arg)
                results[f"{kind}-{source}"] = _saxpy_with(obj.get_kernel("saxpy"), dev)
    return results


def case_kernel_attributes_and_occupancy():
    core = _core()
    from cuda.bindings import driver

    dev = _device()
    kernel = core.Program(SAXPY, "c++", core.ProgramOptions(arch=_arch_of(dev))).compile("cubin") \
        .get_kernel("saxpy")
    attrs = kernel.attributes
    occ = kernel.occupancy
    asked = []

    @ctypes.CFUNCTYPE(ctypes.c_size_t, ctypes.c_int)
    def smem_per_block(block_size):
        asked.append(block_size)
        return 4 * block_size

    # cuda.core passes b2d.getPtr() to the driver as the function: made with
    # _ptr, that is the function's address (init_value would pass the
    # address where the object stores it).
    b2d = driver.CUoccupancyB2DSize(_ptr=ctypes.cast(smem_per_block, ctypes.c_void_p).value)
    by_function = occ.max_potential_block_size(b2d, 0)
    by_constant = occ.max_potential_block_size(0, 256)
    assert asked and all(0 < b <= attrs.max_threads_per_block() for b in asked)
    assert 0 < by_constant.max_block_size <= 256 and by_constant.min_grid_size > 0
    assert 0 < by_function.max_block_size <= attrs.max_threads_per_block()
    config = core.LaunchConfig(grid=dev.properties.multiprocessor_count, block=128)
    info = kernel.arguments_info
    return {"max_threads": attrs.max_threads_per_block(), "num_regs": attrs.num_regs() > 0,
            "ptx_version": attrs.ptx_version() > 0, "binary_version": attrs.binary_version(),
            "local": attrs.local_size_bytes(), "const": attrs.const_size_bytes() >= 0,
            "num_arguments": kernel.num_arguments, "sizes": [p.size for p in info],
            "blocks_per_sm": occ.max_active_blocks_per_multiprocessor(128, 0),
            "by_constant": list(by_constant), "by_function": list(by_function),
            "smem": occ.available_dynamic_shared_memory_per_block(1, 128) > 0,
            "cluster": occ.max_potential_cluster_size(config) > 0}


CLUSTER = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void ranks(unsigned int *out)
{
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) out[blockIdx.x] = cluster.block_rank() * 1000 + cluster.num_blocks();
}
"""


def case_launch_cluster():
    core = _core()
    dev = _device()
    if dev.compute_capability < (9, 0):
        return {"skipped": "thread block clusters need compute capability 9.0"}
    kernel = core.Program(CLUSTER, "c++", core.ProgramOptions(arch=_arch_of(dev), std="c++17")) \
        .compile("cubin").get_kernel("ranks")
    grid, cluster = 8, 2
    out = _pinned(dev, np.zeros(grid, np.uint32))
    config = core.LaunchConfig(grid=grid, cluster=cluster, block=32)
    stream = dev.create_stream()
    core.launch(stream, config, kernel, out)
    stream.sync()
    got = _host_view(out, np.uint32, grid)
    expect = (np.arange(grid) % cluster) * 1000 + cluster
    np.testing.assert_array_equal(got, expect)
    clusters = kernel.occupancy.max_active_clusters(config, stream)
    return {"ranks": got.tolist(), "active_clusters": clusters > 0}


COOPERATIVE = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void rotate(int *a, int *b, int n)
{
    cg::grid_group grid = cg::this_grid();
    int tid = grid.thread_rank();
    if (tid < n) a[tid] = tid * 3;
    grid.sync();
    if (tid < n) b[tid] = a[(tid + 1) % n];
}
"""


def case_launch_cooperative():
    core = _core()
    dev = _device()
    kernel = core.Program(COOPERATIVE, "c++", core.ProgramOptions(arch=_arch_of(dev), std="c++17")) \
        .compile("cubin").get_kernel("rotate")
    blocks, threads = 4, 64
    n = blocks * threads
    a, b = _pinned(dev, np.zeros(n, np.int32)), _pinned(dev, np.zeros(n, np.int32))
    stream = dev.create_stream()
    core.launch(stream, core.LaunchConfig(grid=blocks, block=threads, cooperative_launch=True), kernel, a, b,
                np.int32(n))
    stream.sync()
    np.testing.assert_array_equal(_host_view(b, np.int32, n), np.roll(np.arange(n) * 3, -1))
    return {"ok": True}


def case_memory_resources():
    core = _core()
    dev = _device()
    stream = dev.create_stream()
    device_mr = core.DeviceMemoryResource(dev.device_id)  # the device's memory pool, stream-ordered
    pinned_mr = core.LegacyPinnedMemoryResource()
    data = np.arange(4096, dtype=np.uint8)
    src = _pinned(dev, data)
    on_device = device_mr.allocate(data.nbytes, stream=stream)
    second = dev.allocate(data.nbytes, stream=stream)
    back = pinned_mr.allocate(data.nbytes)
    on_device.copy_from(src, stream=stream)
    on_device.copy_to(second, stream=stream)
    fresh = second.copy_to(stream=stream)  # a new buffer from the same resource
    fresh.copy_to(back, stream=stream)
    stream.sync()
    np.testing.assert_array_equal(_host_view(back, np.uint8, data.nbytes), data)
    facts = {"device": [on_device.is_device_accessible, on_device.is_host_accessible, on_device.device_id,
                        on_device.size],
             "pinned": [back.is_device_accessible, back.is_host_accessible, back.size],
             "dlpack": list(on_device.__dlpack_device__()), "same_mr": fresh.memory_resource is second.memory_resource}
    wrapped = core.Buffer.from_handle(int(on_device.handle), data.nbytes)
    assert int(wrapped.handle) == int(on_device.handle)
    for buf in (on_device, second, fresh):
        buf.close(stream)
    back.close()
    src.close()
    stream.sync()
    return facts


def _graph_kernels(dev):
    core = _core()
    obj = core.Program(SET_CONDITIONAL, "c++", core.ProgramOptions(arch=_arch_of(dev), std="c++17")).compile("cubin")
    return {name: obj.get_kernel(name) for name in ("set_handle", "count_down", "add_value")}


def _run_graph(dev, build, slots=4):
    """Builds a graph with ``build(builder, kernels, host_buffer)``, launches it
    and returns the host buffer's ints."""
    kernels = _graph_kernels(dev)
    host = _pinned(dev, np.zeros(slots, np.int32))
    builder = dev.create_graph_builder().begin_building()
    build(builder, kernels, host)
    graph = builder.end_building().complete()
    stream = dev.create_stream()
    graph.upload(stream)
    graph.launch(stream)
    stream.sync()
    return _host_view(host, np.int32, slots).tolist()


def _add(builder, kernels, host, value, threads=1):
    core = _core()
    core.launch(builder, core.LaunchConfig(grid=1, block=threads), kernels["add_value"], host, np.int32(value))


def case_graph_basic_and_dot():
    dev = _device()
    path = os.path.join(tempfile.mkdtemp(), "graph.dot")

    core = _core()
    kernels = _graph_kernels(dev)
    host = _pinned(dev, np.zeros(4, np.int32))
    builder = dev.create_graph_builder().begin_building()
    for value in (1, 2, 3):
        _add(builder, kernels, host, value, threads=4)
    builder.end_building()
    builder.debug_dot_print(path, core.GraphDebugPrintOptions(verbose=True))
    graph = builder.complete()
    stream = dev.create_stream()
    graph.launch(stream)
    graph.launch(stream)
    stream.sync()
    with open(path) as f:
        dot = f.read()
    return {"values": _host_view(host, np.int32, 4).tolist(), "dot": dot.lstrip().startswith("digraph")}


def _conditional(kind, value):
    dev = _device()
    core = _core()

    def build(builder, kernels, host):
        handle = builder.create_conditional_handle()
        core.launch(builder, core.LaunchConfig(grid=1, block=1), kernels["set_handle"], handle, np.int32(value))
        if kind == "if":
            branches = [builder.if_cond(handle)]
        elif kind == "if_else":
            branches = list(builder.if_else(handle))
        else:
            branches = list(builder.switch(handle, 3))
        for i, branch in enumerate(branches):
            branch.begin_building()
            _add(branch, kernels, host, 10 ** i)
            branch.end_building()
        _add(builder, kernels, host, 1000)  # after the conditional node, always

    return _run_graph(dev, build, slots=1)[0]


def case_graph_if():
    got = {str(v): _conditional("if", v) for v in (0, 1)}
    assert got == {"0": 1000, "1": 1001}, got
    return got


def case_graph_if_else():
    got = {str(v): _conditional("if_else", v) for v in (0, 1)}
    assert got == {"0": 1010, "1": 1001}, got
    return got


def case_graph_switch():
    got = {str(v): _conditional("switch", v) for v in (0, 1, 2, 5)}
    assert got == {"0": 1001, "1": 1010, "2": 1100, "5": 1000}, got
    return got


def case_graph_while():
    dev = _device()
    core = _core()

    def build(builder, kernels, host):
        handle = builder.create_conditional_handle(default_value=1)
        body = builder.while_loop(handle)
        body.begin_building()
        _add(body, kernels, host, 1)
        core.launch(body, core.LaunchConfig(grid=1, block=1), kernels["count_down"], handle,
                    int(host.handle) + 4)  # slot 1 counts down from 5
        body.end_building()

    def build_with_counter(builder, kernels, host):
        _host_view(host, np.int32, 2)[1] = 5
        build(builder, kernels, host)

    got = _run_graph(dev, build_with_counter, slots=2)
    assert got == [5, 0], got
    return {"values": got}


def case_graph_child_and_update():
    dev = _device()
    kernels = _graph_kernels(dev)
    host = _pinned(dev, np.zeros(1, np.int32))

    def builder_adding(value):
        child = dev.create_graph_builder().begin_building()
        _add(child, kernels, host, value)
        child.end_building()
        parent = dev.create_graph_builder().begin_building()
        _add(parent, kernels, host, 1)
        parent.add_child(child)
        return parent.end_building()

    graph = builder_adding(10).complete()
    stream = dev.create_stream()
    graph.launch(stream)
    stream.sync()
    first = int(_host_view(host, np.int32, 1)[0])
    graph.update(builder_adding(100))  # same topology, another argument
    graph.launch(stream)
    stream.sync()
    return {"values": [first, int(_host_view(host, np.int32, 1)[0])]}


def _view_facts(view, ptr, shape, device_id):
    return {"ptr": view.ptr == ptr, "shape": list(view.shape) == list(shape), "device": view.device_id == device_id,
            "accessible": view.is_device_accessible, "dtype": str(view.dtype)}


def case_strided_view_cupy():
    try:
        import cupy as cp
    except ImportError:
        return {"skipped": "CuPy is not installed"}
    from cuda.core.experimental.utils import StridedMemoryView

    dev = _device()
    stream = dev.create_stream()
    array = cp.arange(12, dtype=cp.float32).reshape(3, 4)
    view = StridedMemoryView(array, stream_ptr=int(stream.handle))
    return _view_facts(view, array.data.ptr, array.shape, dev.device_id)


def case_strided_view_torch():
    try:
        import torch
    except ImportError:
        return {"skipped": "PyTorch is not installed"}
    from cuda.core.experimental.utils import StridedMemoryView

    dev = _device()
    stream = dev.create_stream()
    tensor = torch.arange(12, dtype=torch.float32, device="cuda:0").reshape(3, 4).t()
    view = StridedMemoryView(tensor, stream_ptr=int(stream.handle))
    facts = _view_facts(view, tensor.data_ptr(), tensor.shape, dev.device_id)
    facts["strides"] = list(view.strides) == list(tensor.stride())
    return facts


def main(name):
    result = globals()[f"case_{name}"]()
    print("CUDA_CORE_CASE " + json.dumps(result, sort_keys=True))


if __name__ == "__main__":
    main(sys.argv[1])
