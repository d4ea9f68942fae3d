"""The driver binding against tests/fake_driver (a libcuda.so.1 that succeeds
at everything and records what it was handed), so that what reaches C is
checked without a GPU: the bytes of packed kernelParams, and the symbol,
version and flags each function is resolved with.

Each test runs its snippet in a fresh interpreter: the driver is opened once
per process, and the other tests need it missing."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]


PRELUDE = """
import ctypes, json, struct, sys
import cuda
fake = ctypes.CDLL({lib!r})
def recorded(n):
    return list((ctypes.c_ulonglong * n).in_dll(fake, "fake_args"))
def launch(params, n):
    ctypes.c_int.in_dll(fake, "fake_record_args").value = n
    err, = cuda.cuLaunchKernel(1, 1, 1, 1, 1, 1, 1, 0, None, params, None)
    assert err == 0, err
    return recorded(n)
def requests():
    class Request(ctypes.Structure):
        _fields_ = [("symbol", ctypes.c_char * 64), ("version", ctypes.c_int), ("flags", ctypes.c_ulonglong),
                    ("rc", ctypes.c_int)]
    count = ctypes.c_int.in_dll(fake, "fake_request_count").value
    table = (Request * 4096).in_dll(fake, "fake_requests")
    return [(r.symbol.decode(), r.version, r.flags) for r in table[:count]]
"""


def run(fake_driver, body, env=None):
    code = PRELUDE.format(lib=str(fake_driver)) + textwrap.dedent(body)
    full_env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath(), **(env or {}))
    done = subprocess.run([sys.executable, "-c", code], env=full_env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def low_bytes(fmt, value):
    """The 8-byte slot the fake reads: the value's bytes, zero-padded."""
    import struct
    return int.from_bytes(struct.pack("<" + fmt, value).ljust(8, b"\0"), "little")


SCALARS = [
    ("c_bool", True, "?"), ("c_byte", -5, "b"), ("c_ubyte", 250, "B"), ("c_short", -30000, "h"),
    ("c_ushort", 65535, "H"), ("c_int", -2**31, "i"), ("c_uint", 2**32 - 1, "I"), ("c_long", -2**63, "q"),
    ("c_ulong", 2**64 - 1, "Q"), ("c_longlong", 2**63 - 1, "q"), ("c_ulonglong", 2**64 - 1, "Q"),
    ("c_size_t", 12345, "Q"), ("c_int8", -128, "b"), ("c_uint16", 7, "H"), ("c_int32", 42, "i"),
    ("c_float", 1.5, "f"), ("c_double", -2.25, "d"), ("c_void_p", 0xDEADBEEF000, "Q"), ("c_void_p", None, "Q"),
]


def test_values_and_types_reach_c_as_their_c_bytes(fake_driver):
    values = [v for _, v, _ in SCALARS]
    types = [t for t, _, _ in SCALARS]
    got = run(fake_driver, f"""
        types = tuple(getattr(ctypes, t) for t in {types!r})
        print(json.dumps(launch(({values!r}, types), {len(values)})))
    """)
    want = [low_bytes(fmt, 0 if v is None else v) for _, v, fmt in SCALARS]
    assert got == want


def test_handles_and_structs_pass_their_storage(fake_driver):
    got = run(fake_driver, """
        ptr = cuda.CUdeviceptr(0x7000)
        stream = cuda.CUstream(0x1234)
        dim = cuda.CUlaunchAttributeValue()
        dim.clusterDim.x = 3
        print(json.dumps(launch(((ptr, stream, dim), (None, None, None)), 3)))
    """)
    assert got[:2] == [0x7000, 0x1234]
    assert got[2] & 0xFFFFFFFF == 3


def test_many_arguments_go_to_the_heap(fake_driver):
    got = run(fake_driver, """
        print(json.dumps(launch((list(range(300)), [ctypes.c_int] * 300), 300)))
    """)
    assert got == list(range(300))


def test_runs_of_one_integer_type_pack_each_value_at_its_size(fake_driver):
    # A run of one integer type is packed by its own loop: small negative
    # ints keep only their `size` bytes, a run ends where the type changes,
    # and a value out of range inside a run is refused by its index.
    got = run(fake_driver, """
        values = [-1, -2, 3] * 10 + [-1, 2**40, 7] + [-1] * 3 + [-5]
        types = [ctypes.c_int] * 30 + [ctypes.c_short, ctypes.c_longlong, ctypes.c_ubyte] + [ctypes.c_int8] * 3 + [
            ctypes.c_longlong]
        packed = launch((values, types), len(values))
        try:
            launch(([1] * 40 + [2**31] + [1], [ctypes.c_int] * 42), 42)
        except OverflowError as e:
            refused = str(e)
        print(json.dumps([packed, refused]))
    """)
    packed, refused = got
    assert packed[:30] == [low_bytes("i", v) for v in [-1, -2, 3] * 10]
    assert packed[30:33] == [low_bytes("h", -1), 2**40, 7]
    assert packed[33:] == [low_bytes("b", -1)] * 3 + [low_bytes("q", -5)]
    assert "[40]" in refused, refused


def test_arguments_either_side_of_the_frame_space_limit(fake_driver):
    # Up to 24 values are packed in the calling function's frame, more on the
    # heap; a list of handles is copied, and the copy keeps them alive.
    got = run(fake_driver, """
        handles = [cuda.CUdeviceptr(0x1000 + i) for i in range(25)]
        print(json.dumps([launch((handles[:24], [None] * 24), 24), launch((handles, [None] * 25), 25),
                          launch((list(range(24)), [ctypes.c_int] * 24), 24)]))
    """)
    assert got == [[0x1000 + i for i in range(24)], [0x1000 + i for i in range(25)], list(range(24))]


def test_numpy_scalars_and_int_subclasses_convert(fake_driver):
    pytest.importorskip("numpy")
    got = run(fake_driver, """
        import numpy as np
        class MyInt(ctypes.c_int):
            pass
        values = (np.int32(-7), np.float32(0.5), True, cuda.CUresult.CUDA_ERROR_INVALID_VALUE)
        print(json.dumps(launch((values, (MyInt, ctypes.c_float, ctypes.c_int, ctypes.c_uint)), 4)))
    """)
    assert got == [low_bytes("i", -7), low_bytes("f", 0.5), 1, 1]


def test_character_types_ctypes_instances_enums_and_ctypes_structs(fake_driver):
    got = run(fake_driver, """
        class Pair(ctypes.Structure):
            _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_float)]
        values = (b"A", 200, -1, "Z", ctypes.c_int(-9), ctypes.c_double(0.25), ctypes.c_bool(True),
                  cuda.CUresult.CUDA_ERROR_INVALID_VALUE, Pair(7, 1.5))
        types = (ctypes.c_char, ctypes.c_char, ctypes.c_char, ctypes.c_wchar, ctypes.c_int, ctypes.c_double,
                 ctypes.c_bool, None, None)
        print(json.dumps(launch((values, types), 9)))
    """)
    assert got[:4] == [ord("A"), 200, 0xFF, ord("Z")]
    assert got[4:7] == [low_bytes("i", -9), low_bytes("d", 0.25), 1]
    assert got[7] == 1   # the enum's value, 4 bytes
    assert got[8] == low_bytes("i", 7) | low_bytes("f", 1.5) << 32


def test_bad_character_and_none_typed_values_name_the_argument(fake_driver):
    got = run(fake_driver, """
        out = []
        for values, types in (((b"AB",), (ctypes.c_char,)), ((256,), (ctypes.c_char,)), (("ab",), (ctypes.c_wchar,)),
                              ((1.5,), (None,)), ((ctypes.c_int(1),), (ctypes.c_float,))):
            try:
                launch((values, types), 1)
                out.append("accepted")
            except (TypeError, ValueError, OverflowError) as exc:
                out.append(type(exc).__name__ + ": " + str(exc))
        print(json.dumps(out))
    """)
    assert got[0] == "ValueError: kernelParams[0]: c_char takes 1 byte, got 2"
    assert got[1].startswith("OverflowError: kernelParams[0]: 256 is out of range")
    assert got[2] == "ValueError: kernelParams[0]: c_wchar takes 1 character, got 2"
    assert got[3].startswith("TypeError: kernelParams[0]: type None needs an enum member")
    assert got[4] == "accepted"   # a c_int instance where a float goes: its value, as C would convert


def test_prepacked_array_as_buffer_and_as_address(fake_driver):
    pytest.importorskip("numpy")
    got = run(fake_driver, """
        import numpy as np
        a = np.array([11], dtype=np.int64)
        b = np.array([2.5], dtype=np.float64)
        args = np.array([a.ctypes.data, b.ctypes.data], dtype=np.uint64)
        print(json.dumps([launch(args, 2), launch(args.ctypes.data, 2), launch(None, 0)]))
    """)
    assert got[0] == got[1] == [11, low_bytes("d", 2.5)]


def test_functions_resolve_at_their_abi_version_with_legacy_stream(fake_driver):
    got = run(fake_driver, """
        cuda.cuCtxSynchronize()
        cuda.cuMemAlloc(16)
        cuda.cuStreamQuery(None)
        cuda.cuProfilerStart()
        print(json.dumps(requests()))
    """)
    table = {symbol: (version, flags) for symbol, version, flags in got}
    assert table["cuCtxSynchronize"] == (2000, 1)   # not 13.0's cuCtxSynchronize(CUcontext)
    assert table["cuProfilerStart"] == (4000, 1)     # from cudaProfilerTypedefs.h, not the header's 13000
    assert table["cuMemAlloc"] == (3020, 1)          # cuMemAlloc_v2
    assert table["cuStreamQuery"][1] == 1             # CU_GET_PROC_ADDRESS_LEGACY_STREAM


def test_a_function_renamed_by_the_header_is_asked_for_by_its_abi_name(fake_driver):
    """cuda.h's `#define cuGraphInstantiate cuGraphInstantiateWithFlags`: the
    driver's cuGetProcAddress("cuGraphInstantiate") is the 10.0/11.0 ABI with
    an error node and a log buffer. Asked for that, the call lost its flags
    and the driver was handed a garbage log buffer: a crash, at times."""
    got = run(fake_driver, """
        err, graph = cuda.cuGraphCreate(0)
        flags = cuda.CUgraphInstantiate_flags.CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH
        err, exe = cuda.cuGraphInstantiate(graph, flags)
        err2, got_flags = cuda.cuGraphExecGetFlags(exe)
        legacy = ctypes.c_int.in_dll(fake, "fake_legacy_instantiate_count").value
        asked = [r[:2] for r in requests() if r[0].startswith("cuGraphInstantiate")]
        print(json.dumps([int(err), int(err2), int(got_flags), int(flags), legacy, asked]))
    """)
    err, err2, got_flags, flags, legacy, asked = got
    assert (err, err2, legacy) == (0, 0, 0)
    assert got_flags == flags
    assert asked == [["cuGraphInstantiateWithFlags", 11040]]


def test_per_thread_default_stream_is_an_opt_in(fake_driver):
    got = run(fake_driver, """
        cuda.cuStreamQuery(None)
        print(json.dumps(requests()))
    """, env={"CUBIND_DEFAULT_STREAM": "per-thread"})
    flags = {flags for symbol, _, flags in got}
    assert flags == {2}   # CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM


def test_unknown_default_stream_mode_is_a_clear_error(fake_driver):
    got = run(fake_driver, """
        try:
            cuda.cuStreamQuery(None)
        except ValueError as exc:
            print(json.dumps(str(exc)))
    """, env={"CUBIND_DEFAULT_STREAM": "sometimes"})
    assert "CUBIND_DEFAULT_STREAM" in got and "per-thread" in got


def test_driver_and_runtime_are_separate_libraries(fake_driver):
    # Both live in the `cuda` package; the loader once cached them under one
    # name, so a runtime call after a driver call looked in libcuda.
    out = run(fake_driver, """
        from cuda import cudart
        err, = cuda.cuInit(0)
        _, name = cudart.cudaGetErrorName(cudart.cudaError_t.cudaErrorInvalidValue)
        print(json.dumps([int(err), name.decode()]))
    """)
    assert out == [0, "cudaErrorInvalidValue"]


def test_a_function_the_driver_lacks_returns_not_found_when_called(fake_driver):
    # Headers newer than the driver: importing and every other call work; the
    # missing one returns CUDA_ERROR_NOT_FOUND (bindings/driver.toml
    # missing_function_status), asked for at the header's ABI version.
    got = run(fake_driver, """
        err_init, = cuda.cuInit(0)
        err_missing, = cuda.cuCtxSynchronize()
        err_again, = cuda.cuCtxSynchronize()
        err_other, = cuda.cuStreamQuery(None)
        asked = [r for r in requests() if r[0] == "cuCtxSynchronize"]
        print(json.dumps([int(err_init), err_missing.name, err_again.name, int(err_other), asked[:1]]))
    """, env={"FAKE_MISSING": "cuCtxSynchronize"})
    assert got[:4] == [0, "CUDA_ERROR_NOT_FOUND", "CUDA_ERROR_NOT_FOUND", 0]
    assert got[4][0][0] == "cuCtxSynchronize" and got[4][0][1] >= 2000


def test_sixteen_threads_resolving_their_first_functions_at_once(fake_driver):
    """The loader opened and cuGetProcAddress set up by 16 threads at the same
    instant: every function is resolved with the per-thread flags asked for
    (the flags were set after the resolver was published, so a thread could
    resolve the legacy variants), and every call succeeds."""
    got = run(fake_driver, """
        import threading
        names = ["cuInit", "cuDeviceGetCount", "cuDriverGetVersion", "cuCtxGetCurrent", "cuCtxSynchronize",
                 "cuStreamQuery", "cuStreamSynchronize", "cuDeviceGet", "cuDeviceTotalMem", "cuMemGetInfo",
                 "cuCtxGetFlags", "cuCtxGetApiVersion", "cuProfilerStart", "cuProfilerStop", "cuCtxPopCurrent",
                 "cuCtxPushCurrent"]
        args = {"cuInit": (0,), "cuStreamQuery": (0,), "cuStreamSynchronize": (0,), "cuDeviceGet": (0,),
                "cuDeviceTotalMem": (0,), "cuCtxGetApiVersion": (0,), "cuCtxPushCurrent": (0,)}
        start, results = threading.Barrier(len(names)), {}
        def call(name):
            start.wait()
            results[name] = int(getattr(cuda, name)(*args.get(name, ()))[0])
        threads = [threading.Thread(target=call, args=(n,)) for n in names]
        for t in threads: t.start()
        for t in threads: t.join()
        print(json.dumps({"results": results, "requests": requests()}))
    """, env={"CUBIND_DEFAULT_STREAM": "per-thread"})
    assert set(got["results"].values()) == {0}, got["results"]
    assert len(got["results"]) == 16
    assert {flags for _, _, flags in got["requests"]} == {2}


def test_streams_made_and_destroyed_on_many_threads_each_get_a_handle_of_their_own(fake_driver):
    """Stress: the stand-in hands out handles and records destroyed streams
    on whichever threads call it at once (the binding lets the GIL go around
    each call); two streams made at the same instant once got one handle,
    and the second's destroy was refused as of a dead stream (a suite test of
    eight threads' streams failed so, now and then)."""
    got = run(fake_driver, """
        import threading
        sys.setswitchinterval(1e-6)
        threads, each = 8, 20000
        start, made, refused = threading.Barrier(threads), [[] for _ in range(threads)], []
        def work(k):
            start.wait()
            for _ in range(each):
                err, stream = cuda.cuStreamCreateWithPriority(0, 0)
                assert err == 0, err
                made[k].append(stream)
            for stream in made[k]:
                err, = cuda.cuStreamDestroy(stream)
                if err:
                    refused.append(int(err))
            made[k] = [int(s) for s in made[k]]
        pool = [threading.Thread(target=work, args=(k,)) for k in range(threads)]
        for t in pool: t.start()
        for t in pool: t.join()
        handles = [h for hs in made for h in hs]
        print(json.dumps({"made": len(handles), "distinct": len(set(handles)), "refused": refused[:5]}))
    """)
    assert got == {"made": 160000, "distinct": 160000, "refused": []}
