"""Devices, contexts, streams and events (cubind/_core/device_stream_event.py): device
attributes by name and ordinals checked before the driver; against
tests/fake_driver, other libraries' streams wrapped unowned, what closes,
a device out of range and ``with stream:`` current per thread and nested;
and on a real GPU (the tests marked ``gpu``) devices against the 1:1
values, primary contexts, stream queries, event timing, priorities, waits
across streams and the default stream.
"""

import pytest

import cubind
from cubind._core.device_stream_event import _attribute_enum
from tests._helpers import ok
from tests.pythonic._core_fixtures import (  # noqa: F401  (fixtures)
    compiled_gpu_module,
    compiled_module,
    device_0,
    device_memory,
    own_cache_dir,
    ptx_file_of_module,
    run_fake,
    spin_cycles,
)

np = pytest.importorskip("numpy")


# -- devices and attributes without a driver -------------------------------------


def test_device_attribute_names():

    member = _attribute_enum("max_threads_per_block")
    assert member.name == "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"
    assert _attribute_enum("CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK") is member
    assert _attribute_enum(int(member)) is member and _attribute_enum(member) is member
    with pytest.raises(ValueError, match="did you mean one of"):
        _attribute_enum("max_threads")
    with pytest.raises(ValueError, match="not a CUdevice_attribute value"):
        _attribute_enum(123456)
    with pytest.raises(TypeError, match="attribute: expected"):
        _attribute_enum(1.5)


def test_device_rejects_non_ordinals_before_asking_the_driver():
    with pytest.raises(TypeError, match="device: expected a device ordinal"):
        cubind.Device("0")


# -- through the fake driver ----------------------------------------------


def test_foreign_streams_pass_their_handles(fake_driver, ptx_file):
    # The fake does not record the stream; what is checked is that each kind
    # of stream object is accepted and wrapped without being owned.
    got = run_fake(fake_driver, ptx_file, """
        import cuda
        class TorchLike:
            cuda_stream = 0x55
        class CoreLike:
            def __cuda_stream__(self):
                return (0, 0x66)
        saxpy = module.get_kernel("saxpy")
        for s in (TorchLike(), CoreLike(), cuda.CUstream(0x77), 0x88, cubind.Stream()):
            saxpy(1, 1, 1.0, 0, 0, 0, 0, stream=s)
        wrapped = [cubind.Stream.from_handle(s) for s in (TorchLike(), CoreLike(), cuda.CUstream(0x77))]
        print(json.dumps([launches(), [int(w) for w in wrapped], [w.owned for w in wrapped],
                          list(wrapped[1].__cuda_stream__())]))
    """)
    assert got == [5, [0x55, 0x66, 0x77], [False, False, False], [0, 0x66]]


def test_streams_events_and_modules_close(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        saxpy = module.get_kernel("saxpy")
        with cubind.Stream(non_blocking=True, priority=0) as s:
            e = s.record()
            owned = s.owned
        s.close()  # leaving `with` made it current for the block; it does not close it
        with cubind.Event(timing=False) as plain:
            pass
        module.close()
        print(json.dumps([owned, s.closed, repr(s), repr(plain), error(lambda: s.synchronize()),
                          error(lambda: plain.query()), error(lambda: e.elapsed_time(plain)),
                          error(lambda: saxpy(1, 1, 1.0, 0, 0, 0, 0)), error(lambda: s.wait(e)),
                          error(lambda: e - 1)]))
    """)
    assert got[:4] == [True, True, "<cubind.Stream (closed)>", "<cubind.Event (closed)>"]
    assert got[4] == "ValueError: stream: the stream is closed"
    assert got[5] == "ValueError: event: the event is closed"
    assert got[6] == "ValueError: end: the event is closed"
    assert got[7] == "ValueError: saxpy: its module was closed"
    assert got[8] == "ValueError: stream: the stream is closed"
    assert got[9].startswith("TypeError: unsupported operand")


def test_device_out_of_range_is_a_value_error(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        print(json.dumps([cubind.Device.count(), error(lambda: cubind.Device(0)), cubind.ensure_context()]))
    """)
    assert got == [0, "ValueError: device: ordinal 0 is out of range (0 devices present)", 0]


def test_with_stream_makes_it_current_per_thread_and_nested(fake_driver, ptx_file):
    # CuPy's meaning of `with stream:`: the layer's calls given no stream use
    # it; blocks nest, belong to their thread, and leave the stream open.
    got = run_fake(fake_driver, ptx_file, """
        import threading
        saxpy = module.get_kernel("saxpy")
        config = cubind.LaunchConfig(1, 32)
        a, b = cubind.Stream(), cubind.Stream()
        seen = []
        def launch_both():
            saxpy(1, 1, 1.0, 0, 0, 0, 0)
            seen.append(last_stream())
            cubind.launch(None, config, saxpy, 1.0, 0, 0, 0, 0)
            seen.append(last_stream())
        launch_both()
        with a:
            launch_both()
            with b:
                launch_both()
                saxpy(1, 1, 1.0, 0, 0, 0, 0, stream=a)  # an explicit stream wins
                seen.append(last_stream())
                other = []
                t = threading.Thread(target=lambda: other.append(cubind.current_stream()))
                t.start(); t.join()
            inner_left = cubind.current_stream() is a
        from cubind._core.handles import open_blocks
        print(json.dumps([seen, [int(a), int(b)], other == [None], inner_left, open_blocks == [],
                          a.closed, b.closed, error(lambda: a.close() or a.__enter__())]))
    """)
    seen, (a, b) = got[0], got[1]
    assert seen == [0, 0, a, a, b, b, a]
    assert got[2:7] == [True, True, True, False, False]
    assert got[7] == "ValueError: stream: the stream is closed"


def test_with_stream_blocks_on_many_threads_at_once_keep_each_threads_stream_and_the_count(fake_driver, ptx_file):
    # The count of open blocks (cubind._core.handles.open_blocks) is shared
    # by every thread and kept without a lock: eight threads entering and
    # leaving their own streams, nested, switched as often as CPython allows,
    # each see their own stream current throughout, and none is left open.
    got = run_fake(fake_driver, ptx_file, """
        import sys, threading
        from cubind._core.handles import open_blocks
        sys.setswitchinterval(1e-6)
        wrong, start = [], threading.Barrier(8)

        def work():
            mine, inner = cubind.Stream(), cubind.Stream()
            start.wait()
            for _ in range(2000):
                with mine:
                    if cubind.current_stream() is not mine or not open_blocks:
                        wrong.append("outer")
                    with inner:
                        if cubind.current_stream() is not inner:
                            wrong.append("inner")
                    if cubind.current_stream() is not mine:
                        wrong.append("after inner")
                if cubind.current_stream() is not None:
                    wrong.append("after outer")

        threads = [threading.Thread(target=work) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        print(json.dumps([wrong[:3], len(open_blocks)]))
    """)
    assert got == [[], 0]


# == on a real GPU (each test marked gpu) ===========================================================


# -- devices and contexts -------------------------------------------------------------


@pytest.mark.gpu
def test_device_properties_match_the_1to1_values(driver, cu_device, device):
    A = driver.CUdevice_attribute
    name = ok(driver.cuDeviceGetName, 256, cu_device).split(b"\0")[0].decode()
    major = ok(driver.cuDeviceGetAttribute, A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu_device)
    minor = ok(driver.cuDeviceGetAttribute, A.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu_device)
    sms = ok(driver.cuDeviceGetAttribute, A.CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, cu_device)
    threads = ok(driver.cuDeviceGetAttribute, A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, cu_device)
    assert device.name == name and device.compute_capability == (major, minor)
    assert device.arch == f"sm_{major}{minor}" and device.multiprocessor_count == sms
    for spelling in ("max_threads_per_block", "MAX_THREADS_PER_BLOCK", "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
                     A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, int(A.CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)):
        assert device.attribute(spelling) == threads
    assert device.total_memory == ok(driver.cuDeviceTotalMem, cu_device)
    free, total = device.mem_info()
    assert 0 < free <= total == device.total_memory
    assert cubind.Device.count() == ok(driver.cuDeviceGetCount)
    assert cubind.Device(0) is device and cubind.Device(device) is device and device == cubind.Device(0)
    assert hash(device) == hash(cubind.Device(0)) and int(device) == 0 and name in repr(device)
    assert len(device.uuid) == 16
    with pytest.raises(ValueError, match="out of range"):
        cubind.Device(cubind.Device.count())


@pytest.mark.gpu
def test_primary_context_set_current_and_with_restores(driver, cu_device, device):
    own = ok(driver.cuCtxCreate, None, 0, cu_device)  # current now
    try:
        with device:
            assert int(ok(driver.cuCtxGetCurrent)) == int(device.context)
            device.synchronize()
        assert int(ok(driver.cuCtxGetCurrent)) == int(own)
        device.set_current()
        assert int(ok(driver.cuCtxGetCurrent)) == int(device.context)
    finally:
        ok(driver.cuCtxDestroy, own)
    ok(driver.cuCtxSetCurrent, None)
    assert cubind.ensure_context() == 0  # none current: device 0's primary context is made current
    assert int(ok(driver.cuCtxGetCurrent)) == int(device.context)
    assert cubind.current_device() is device
    primary = ok(driver.cuDevicePrimaryCtxRetain, cu_device)
    assert int(primary) == int(device.context)
    ok(driver.cuDevicePrimaryCtxRelease, cu_device)


# -- streams and events ----------------------------------------------------------------


@pytest.mark.gpu
def test_stream_query_event_timing_and_subtraction(gpu_module, device):
    spin = gpu_module.get_kernel("spin")
    with cubind.Stream() as stream:
        start = stream.record()
        spin(1, 1, spin_cycles(device, 30), stream=stream)
        end = stream.record()
        assert stream.query() is False and end.query() is False
        end.synchronize()
        assert stream.query() is True and end.query() is True
        elapsed = start.elapsed_time(end)
        assert 20 < elapsed < 2000
        assert end - start == elapsed
        assert cubind.current_stream() is stream
    # Leaving the block ends its being current (CuPy's meaning), not the stream.
    assert cubind.current_stream() is None and not stream.closed
    stream.close()
    assert stream.closed


@pytest.mark.gpu
def test_stream_flags_priority_and_untimed_events(driver, cu_context, device):
    low, high = ok(driver.cuCtxGetStreamPriorityRange)
    with cubind.Stream(non_blocking=True, priority=high) as stream:
        assert stream.flags == 1 and stream.priority == high and stream.device == device
        plain = cubind.Event(timing=False).record(stream)
        plain.synchronize()
        with pytest.raises(ValueError, match="timing=False"):
            plain.elapsed_time(cubind.Event().record(stream))
    assert cubind.Stream(device=0).device == device


@pytest.mark.gpu
def test_stream_wait_orders_work_across_streams(gpu_module, device, dmem):
    spin, set_int, copy_int = (gpu_module.get_kernel(n) for n in ("spin", "set_int", "copy_int"))
    src, dst = dmem(np.zeros(1, np.int32)), dmem(np.zeros(1, np.int32))
    with cubind.Stream(non_blocking=True) as first, cubind.Stream(non_blocking=True) as second:
        spin(1, 1, spin_cycles(device, 20), stream=first)
        set_int(1, 1, src, 7, stream=first)
        second.wait(first)  # a stream: waits on its work so far
        copy_int(1, 1, src, dst, stream=second)
        second.synchronize()
        assert dmem.get(dst, np.zeros(1, np.int32))[0] == 7
        set_int(1, 1, src, 9, stream=first)
        event = first.record()
        second.wait(event)
        copy_int(1, 1, src, dst, stream=second)
        second.synchronize()
        assert dmem.get(dst, np.zeros(1, np.int32))[0] == 9


@pytest.mark.gpu
def test_default_stream_and_device_synchronize(gpu_module, device, dmem):
    fill = gpu_module.get_kernel("fill<int>")
    out = dmem(np.zeros(64, np.int32))
    fill(1, 64, out, 3, 64, stream=device.default_stream)
    device.default_stream.synchronize()
    device.synchronize()
    assert device.default_stream.query() and not device.default_stream.owned
    assert (dmem.get(out, np.zeros(64, np.int32)) == 3).all()
