"""The Pythonic layer's core: compiling (the compile cache, PTX parameter
parsing), arguments typed by the kernel, launch dimensions and device
attributes without a driver; launches against tests/fake_driver (what reaches
cuLaunchKernel, read back from the fake); and on a real GPU (the tests marked
``gpu``) devices against the 1:1 values, contexts, streams and events,
compiling and launching with arguments typed by the kernel, templates, structs
by value, launch configurations with clusters, occupancy, and streams and
arrays of CuPy and PyTorch.

NVRTC must not compile in a process that has loaded the fake driver (it looks
for the real driver's export table there and crashes), so PTX is compiled here and
the fake-driver snippets run in fresh interpreters that load it. What happens at
exit and after a sticky error is in tests/pythonic/test_lifetime.py.
"""

import ctypes
import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cubind
import cubind._compile.cache as _cache
import cubind._compile.program as _program
import cubind._compile.toolkit as _toolkit
from cubind._core.context import _attribute_enum
from cubind._launch.args import POINTER_GETTERS
from cubind._launch.launch import Plan, dims
from cubind._launch.params import BYTES, F64, INT, Param, params_from_sizes, parse_ptx_entries
from tests._helpers import ok
from tests._toolkit import pythonpath

# == without a GPU: no driver, or the emulated one ==================================================

np = pytest.importorskip("numpy")

ROOT = Path(__file__).resolve().parents[2]

SRC = r"""
struct Pair { int a; double b; };
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
extern "C" __global__ void mix(Pair p, double d, char c, short h, int i, long long q, unsigned char u, bool b) {}
template <typename T> __global__ void fill(T *out, T value) { out[threadIdx.x] = value; }
"""


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    """Every test compiles into its own empty cache."""
    directory = tmp_path / "cache"
    monkeypatch.setenv("CUBIND_CACHE_DIR", str(directory))
    monkeypatch.delenv("CUBIND_NO_COMPILE_CACHE", raising=False)
    return directory


@pytest.fixture(scope="module")
def module():
    return cubind.Program(SRC, name_expressions=["fill<float>", "fill<int>"]).compile("ptx", arch=75)


def entries(tmp_dir):
    return sorted(p for p in Path(tmp_dir).rglob("*.bin"))


# -- compiling ---------------------------------------------------------------------


def test_compile_to_ptx_keeps_the_log_and_lowered_names(module):
    assert module.kind == "ptx" and b".target sm_75" in module.code
    assert module.lowered_names == {"fill<float>": "_Z4fillIfEvPT_S0_", "fill<int>": "_Z4fillIiEvPT_S0_"}
    assert set(module.entries) == {"saxpy", "mix", "_Z4fillIfEvPT_S0_", "_Z4fillIiEvPT_S0_"}
    assert isinstance(module.log, str)


def test_compile_to_cubin_keeps_the_ptx_of_the_same_compile():
    module = cubind.Program(SRC).compile("cubin", arch="sm_90")
    assert module.code.startswith(b"\x7fELF")
    assert b".target sm_90" in module.ptx
    assert [p.text for p in module.entries["saxpy"]] == [".f32", ".u64", ".u64", ".u64", ".u64"]


def test_compile_to_ltoir_cannot_be_loaded_unlinked():
    module = cubind.Program(SRC).compile("ltoir", arch=90)
    assert module.kind == "ltoir" and module.code and module.ptx is None
    with pytest.raises(ValueError, match="link it first"):
        module.handle  # noqa: B018


@pytest.mark.parametrize("arch,option", [(90, "compute_90"), ("sm_90a", "compute_90a"), ("compute_80", "compute_80"),
                                         ("86", "compute_86")])
def test_arch_spellings(arch, option):
    assert _program._arch_option(arch, "ptx") == f"--gpu-architecture={option}"
    assert _program._arch_option(arch, "cubin") == f"--gpu-architecture={option.replace('compute', 'sm')}"


def test_headers_are_included_by_name():
    module = cubind.Program('#include "k.h"\nextern "C" __global__ void k(float *x) { x[0] = SCALE; }',
                           headers={"k.h": "#define SCALE 3.5f"}).compile(arch=75)
    assert "k" in module.entries and str(struct.unpack("<I", struct.pack("<f", 3.5))[0]).encode() in module.code


def test_the_toolkits_headers_are_found_unless_turned_off():
    source = ("#include <cooperative_groups.h>\n#include <cuda_fp16.h>\n"
              'extern "C" __global__ void half_one(__half *x) { *x = __float2half(1.0f); }')
    assert b".entry half_one" in cubind.Program(source).compile("ptx", arch=90).code
    with pytest.raises(cubind.CompileError, match="cooperative_groups.h") as caught:
        cubind.Program(source, include_toolkit=False).compile("ptx", arch=90)
    assert not [o for o in caught.value.options if o.startswith("-I")]


def test_compile_error_has_the_log_and_the_options():
    with pytest.raises(cubind.CompileError) as info:
        cubind.Program('extern "C" __global__ void k() { undefined_thing(); }', options=["-std=c++17"],
                       name="broken.cu").compile(arch=75)
    err = info.value
    assert "undefined_thing" in err.log and "broken.cu" in err.log
    assert err.options[:2] == ["--gpu-architecture=compute_75", "-std=c++17"]
    assert all(o.startswith("-I") for o in err.options[2:])  # the toolkit's headers
    assert "broken.cu" in str(err) and "-std=c++17" in str(err) and "undefined_thing" in str(err)


@pytest.mark.parametrize("call,exc,words", [
    (lambda: cubind.Program("x").compile("sass", arch=75), ValueError, "target"),
    (lambda: cubind.Program("x").compile(arch="turing"), ValueError, "arch"),
    (lambda: cubind.Program("x").compile(arch=True), ValueError, "arch"),
    (lambda: cubind.Program("x", options=["-arch=sm_90"]).compile(arch=80), ValueError, "both"),
    (lambda: cubind.Program("x", options="-std=c++17"), TypeError, "options"),
    (lambda: cubind.Program("x", options=[3]), TypeError, "options[0]"),
    (lambda: cubind.Program(42), TypeError, "source"),
    (lambda: cubind.Program("x", headers=[("a.h",)]), TypeError, "headers[0]"),
])
def test_bad_program_input_names_the_parameter(call, exc, words):
    with pytest.raises(exc, match=words.replace("[", r"\[").replace("]", r"\]")):
        call()


def test_an_architecture_option_wins_over_the_default():
    module = cubind.Program(SRC, options=["-arch=compute_80"]).compile()
    assert b".target sm_80" in module.code


def test_without_a_driver_the_default_is_nvrtcs_oldest_architecture():
    code = "import cubind, nvrtc; print(cubind.default_arch(), min(nvrtc.nvrtcGetSupportedArchs()[1]))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=pythonpath(ROOT),
                                   CUBIND_CUDA_LIBRARY="/nonexistent/libcuda.so.1"))
    assert done.returncode == 0, done.stderr
    default, oldest = done.stdout.split()
    assert default == oldest


def test_module_load_finds_the_kind(tmp_path, module):
    path = tmp_path / "k.ptx"
    path.write_bytes(module.code)
    loaded = cubind.Module.load(path)
    assert loaded.kind == "ptx" and set(loaded.entries) == set(module.entries)
    cubin = cubind.Program(SRC).compile("cubin", arch=75)
    assert cubind.Module.load(cubin.code).kind == "cubin"
    assert cubind.Module.load(cubin.code).entries == {}  # no PTX: typed by size at get_kernel
    assert cubind.Module.load(cubin.code, ptx=cubin.ptx).entries["saxpy"] == module.entries["saxpy"]
    with pytest.raises(ValueError, match="kind="):
        cubind.Module.load(b"not code")
    with pytest.raises(TypeError, match="path_or_bytes"):
        cubind.Module.load(3)


# -- the compile cache -----------------------------------------------------------


def test_second_compile_is_a_cache_hit(cache_dir):
    first = cubind.Program(SRC, name_expressions=["fill<float>"]).compile("cubin", arch=75)
    second = cubind.Program(SRC, name_expressions=["fill<float>"]).compile("cubin", arch=75)
    assert (first.from_cache, second.from_cache) == (False, True)
    assert (second.code, second.ptx, second.lowered_names) == (first.code, first.ptx, first.lowered_names)
    assert len(entries(cache_dir)) == 1


@pytest.mark.parametrize("change", [
    dict(source=SRC + "\n// changed"), dict(options=["-DX=1"]), dict(name_expressions=["fill<int>"]),
    dict(headers={"h.h": "#define Y 2"}), dict(target="cubin"), dict(arch=80), dict(name="other.cu"),
])
def test_each_input_is_part_of_the_key(cache_dir, change):
    base = dict(source=SRC, options=[], name_expressions=["fill<float>"], headers={"h.h": "#define Y 1"},
                target="ptx", arch=75, name="program.cu")

    def compile_(**kw):
        kw = dict(base, **kw)
        return cubind.Program(kw["source"], kw["options"], kw["name_expressions"], kw["headers"],
                              kw["name"]).compile(kw["target"], kw["arch"])

    assert not compile_().from_cache
    assert not compile_(**change).from_cache
    assert compile_(**change).from_cache and compile_().from_cache
    assert len(entries(cache_dir)) == 2


def test_nvrtc_and_driver_versions_are_part_of_the_key(monkeypatch):
    compile_ = lambda: cubind.Program(SRC).compile(arch=75)  # noqa: E731
    assert not compile_().from_cache and compile_().from_cache
    monkeypatch.setattr(_program, "_nvrtc_version", lambda: [99, 9])
    assert not compile_().from_cache
    monkeypatch.setattr(_program, "_driver_version", lambda: 99999)
    assert not compile_().from_cache and compile_().from_cache


def test_opt_out_writes_and_reads_nothing(cache_dir, monkeypatch):
    cubind.Program(SRC).compile(arch=75)
    monkeypatch.setenv("CUBIND_NO_COMPILE_CACHE", "1")
    assert not cubind.Program(SRC).compile(arch=75).from_cache
    assert not cubind.Program(SRC + " ").compile(arch=75).from_cache
    assert len(entries(cache_dir)) == 1


def test_default_location_is_xdg_cache_home(tmp_path, monkeypatch):
    monkeypatch.delenv("CUBIND_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _cache.cache_dir() == str(tmp_path / "xdg" / "cubind")
    cubind.Program(SRC).compile(arch=75)
    assert len(entries(tmp_path / "xdg" / "cubind")) == 1
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert _cache.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "cubind")


def test_a_damaged_entry_is_a_miss_and_is_rewritten(cache_dir):
    good = cubind.Program(SRC).compile(arch=75)
    (path,) = entries(cache_dir)
    data = path.read_bytes()
    for damaged in (data[:-10], b"garbage", data[:40], data + b"extra"):
        path.write_bytes(damaged)
        again = cubind.Program(SRC).compile(arch=75)
        assert not again.from_cache and again.code == good.code
        assert path.read_bytes() == data


def test_an_unwritable_cache_only_costs_time(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("CUBIND_CACHE_DIR", str(blocker / "cache"))
    assert not cubind.Program(SRC).compile(arch=75).from_cache


def test_concurrent_processes_share_the_cache_safely(cache_dir):
    code = textwrap.dedent("""
        import hashlib, sys, cubind
        src = sys.stdin.read()
        outs = [cubind.Program(src).compile("cubin", arch=75) for _ in range(3)]
        print(hashlib.sha256(outs[-1].code).hexdigest(), outs[-1].from_cache)
    """)
    env = dict(os.environ, PYTHONPATH=pythonpath(ROOT), CUBIND_CACHE_DIR=str(cache_dir))
    procs = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, text=True) for _ in range(4)]
    results = [p.communicate(SRC) for p in procs]
    assert all(p.returncode == 0 for p in procs), [r[1] for r in results]
    digests = {r[0].split()[0] for r in results}
    assert len(digests) == 1 and all(r[0].split()[1] == "True" for r in results)
    assert len(entries(cache_dir)) == 1
    assert not [p for p in Path(cache_dir).rglob(".tmp-*")]


# -- PTX parameter lists ---------------------------------------------------------------


def test_ptx_parameters_of_every_shape(module):
    mix = module.entries["mix"]
    assert [(p.kind, p.size) for p in mix] == [(BYTES, 16), (F64, 8), (INT, 1), (INT, 2), (INT, 4), (INT, 8),
                                               (INT, 1), (INT, 1)]
    assert mix[0].text == ".align 8 .b8[16]"


def test_ptx_declarations_with_pointer_annotations_and_comments():
    ptx = """
    .visible .entry k(  // a comment, with a comma
        .param .u64 .ptr .global .align 4 k_param_0,
        .param .s32 k_param_1, /* another */
        .param .align 16 .b8 k_param_2[32],
        .param .f16 k_param_3
    )
    .entry empty()
    """
    got = parse_ptx_entries(ptx.encode() + b"\0")
    assert got["empty"] == []
    k = got["k"]
    assert k[0] == Param(0, INT, 8, False, True, ".u64 .ptr")
    assert (k[1].kind, k[1].size, k[1].signed) == (INT, 4, True)
    assert (k[2].kind, k[2].size, k[2].text) == (BYTES, 32, ".align 16 .b8[32]")
    assert (k[3].kind, k[3].size) == (BYTES, 2)


def test_unparseable_declaration_is_a_clear_error():
    with pytest.raises(ValueError, match="PTX parameter"):
        parse_ptx_entries(".entry k(.param k_param_0)")


# -- argument typing (the packing plan, no driver needed) --------------------------


def plan_for(params, name="k"):

    return Plan(name, params)


def ptx_plan(module, name):
    return plan_for(module.entries[module.lowered_names.get(name, name)], name)


class CAIArray:
    """An array library's device array, as far as a launch can tell."""

    def __init__(self, ptr):
        self.__cuda_array_interface__ = {"shape": (4,), "typestr": "<f4", "data": (ptr, False), "version": 3}


class PtrArray:
    """cubind.Array's shape: __cuda_array_interface__ and an int .ptr."""

    __cuda_array_interface__ = property(lambda self: {"data": (self.ptr, False)})

    def __init__(self, ptr):
        self.ptr = ptr


def test_python_values_take_the_parameters_types(module):
    import cuda

    got = ptx_plan(module, "saxpy").pack_bytes(2.5, CAIArray(0x1000), PtrArray(0x2000), cuda.CUdeviceptr(0x3000), 7)
    assert got == [struct.pack("<f", 2.5), struct.pack("<Q", 0x1000), struct.pack("<Q", 0x2000),
                   struct.pack("<Q", 0x3000), struct.pack("<Q", 7)]


def test_every_scalar_width(module):
    class Pair(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double)]

    got = ptx_plan(module, "mix").pack_bytes(Pair(3, 0.5), 1.25, 65, -2, -3, -(2**63), 255, True)
    assert got == [bytes(Pair(3, 0.5)), struct.pack("<d", 1.25), b"A", struct.pack("<h", -2),
                   struct.pack("<i", -3), struct.pack("<q", -(2**63)), b"\xff", b"\x01"]


def test_ints_to_float_parameters_and_integral_floats_to_int_parameters(module):
    got = ptx_plan(module, "saxpy").pack_bytes(3, 0, 0, 0, 4.0)
    assert got[0] == struct.pack("<f", 3.0) and got[4] == struct.pack("<Q", 4)


def test_numpy_scalars_and_ctypes_values_pass_their_own_bytes(module):
    plan = ptx_plan(module, "saxpy")
    got = plan.pack_bytes(np.int32(-1), np.uint64(5), ctypes.c_void_p(9), np.float64(1.5), ctypes.c_size_t(3))
    assert got == [struct.pack("<i", -1), struct.pack("<Q", 5), struct.pack("<Q", 9), struct.pack("<d", 1.5),
                   struct.pack("<Q", 3)]


def test_struct_parameters_take_bytes_buffers_and_structured_scalars(module):
    plan = ptx_plan(module, "mix")
    rest = (0.0, 0, 0, 0, 0, 0, False)
    raw = struct.pack("<i4xd", 7, 2.5)
    records = np.zeros(1, dtype=np.dtype([("a", "<i4"), ("b", "<f8")], align=True))
    records[0] = (7, 2.5)
    record = records[0]
    for value in (raw, bytearray(raw), memoryview(raw), record, np.frombuffer(raw, dtype=np.uint8)):
        assert plan.pack_bytes(value, *rest)[0] == raw, type(value)


def test_templated_kernel_parameters(module):
    assert ptx_plan(module, "fill<float>").pack_bytes(0x10, 1)[1] == struct.pack("<f", 1.0)
    assert ptx_plan(module, "fill<int>").pack_bytes(0x10, -1)[1] == struct.pack("<i", -1)


@pytest.mark.parametrize("args,exc,message", [
    ((1.0, 0, 0, 0), TypeError, "k takes 5 arguments (.f32, .u64, .u64, .u64, .u64), got 4"),
    ((1.0, 0, 0, 0, 0, 0), TypeError, "k takes 5 arguments"),
    ((np.float64(1.0), 0, 0, 0, 0), TypeError, "k: parameter 0 (.f32): numpy.float64 is 8 bytes, the parameter 4"),
    ((ctypes.c_int(1), 0, 0, 0, ctypes.c_int(1)), TypeError,
     "k: parameter 4 (.u64): ctypes.c_int is 4 bytes, the parameter 8"),
    ((1e39, 0, 0, 0, 0), OverflowError, "k: parameter 0 (.f32): 1e+39 is out of range for a float32"),
    ((1.0, 0, 0, 0, 2**64), OverflowError, "k: parameter 4 (.u64): 18446744073709551616 is out of range"),
    ((1.0, -(2**63) - 1, 0, 0, 0), OverflowError, "k: parameter 1 (.u64)"),
    ((1.0, 1.5, 0, 0, 0), TypeError, "k: parameter 1 (.u64): expected an int, got float 1.5"),
    ((1.0, "x", 0, 0, 0), TypeError, "k: parameter 1 (.u64): cannot pass str"),
    ((1.0, np.zeros(4, np.float32), 0, 0, 0), TypeError, "host memory: copy it to the device first"),
    ((1.0, [1, 2], 0, 0, 0), TypeError, "k: parameter 1 (.u64): cannot pass list"),
    (("2.0", 0, 0, 0, 0), TypeError, "k: parameter 0 (.f32): cannot pass str"),
    ((None, 0, 0, 0, 0), TypeError, "k: parameter 0 (.f32): cannot pass NoneType"),
])
def test_bad_arguments_name_the_parameter_and_its_type(module, args, exc, message):
    with pytest.raises(exc) as info:
        ptx_plan(module, "saxpy").__class__("k", module.entries["saxpy"]).pack_bytes(*args)
    assert message in str(info.value)


@pytest.mark.parametrize("index,value,exc,message", [
    (2, 256, OverflowError, "k: parameter 2 (.u8): 256 is out of range [-128, 255]"),
    (2, -129, OverflowError, "[-128, 255]"),
    (3, 70000, OverflowError, "k: parameter 3 (.u16)"),
    (4, 2**32, OverflowError, "k: parameter 4 (.u32)"),
    (0, b"short", TypeError, "k: parameter 0 (.align 8 .b8[16]): bytes is 5 bytes, the parameter 16"),
    (0, 3, TypeError, "a 16-byte struct by value takes bytes"),
    (0, np.zeros((4, 4), np.float32)[:, 0], TypeError, "not contiguous"),
    (1, "1.0", TypeError, "k: parameter 1 (.f64): cannot pass str"),
])
def test_bad_arguments_for_narrow_and_struct_parameters(module, index, value, exc, message):
    args = [bytes(16), 0.0, 0, 0, 0, 0, 0, False]
    args[index] = value
    with pytest.raises(exc) as info:
        plan_for(module.entries["mix"]).pack_bytes(*args)
    assert message in str(info.value)


def test_parameters_known_by_size_only():
    plan = plan_for(params_from_sizes([4, 8, 4, 8, 2, 12]))
    got = plan.pack_bytes(1.5, 2.5, 7, CAIArray(0x40), np.float16(1.0), bytes(range(12)))
    assert got == [struct.pack("<f", 1.5), struct.pack("<d", 2.5), struct.pack("<I", 7), struct.pack("<Q", 0x40),
                   np.float16(1.0).tobytes(), bytes(range(12))]
    with pytest.raises(TypeError, match=r"k: parameter 4 \(2-byte parameter\): expected an int, got float"):
        plan.pack_bytes(1.5, 2.5, 7, 0, 1.5, bytes(12))
    with pytest.raises(OverflowError, match=r"parameter 2 \(4-byte parameter\)"):
        plan.pack_bytes(1.5, 2.5, 2**32, 0, 0, bytes(12))


def test_many_parameters_and_large_structs_leave_the_stack_buffer():
    params = [Param(i, INT, 4, text=".u32") for i in range(300)] + [Param(300, BYTES, 5000, text=".b8[5000]")]
    got = plan_for(params).pack_bytes(*range(300), bytes(5000))
    assert got[:300] == [struct.pack("<I", i) for i in range(300)] and got[300] == bytes(5000)


def test_a_new_array_type_is_learned_once(module):

    class Fresh(CAIArray):
        pass

    plan = ptx_plan(module, "saxpy")
    assert Fresh not in POINTER_GETTERS
    plan.pack_bytes(0.0, Fresh(0x10), 0, 0, 0)
    assert Fresh in POINTER_GETTERS
    assert plan.pack_bytes(0.0, Fresh(0x20), 0, 0, 0)[1] == struct.pack("<Q", 0x20)


def test_an_array_that_refuses_its_pointer_is_a_type_error(module):
    class Tensorish:  # PyTorch's shape: a CPU tensor's __cuda_array_interface__ raises
        def __init__(self, ptr, on_device):
            self.ptr_value, self.on_device = ptr, on_device

        @property
        def __cuda_array_interface__(self):
            if not self.on_device:
                raise RuntimeError("not a CUDA tensor")
            return {"data": (self.ptr_value, False)}

    plan = ptx_plan(module, "saxpy")
    with pytest.raises(TypeError, match=r"saxpy: parameter 1 \(.u64\): cannot pass"):
        plan.pack_bytes(0.0, Tensorish(0, False), 0, 0, 0)
    assert plan.pack_bytes(0.0, Tensorish(0x40, True), 0, 0, 0)[1] == struct.pack("<Q", 0x40)
    with pytest.raises(TypeError, match=r"parameter 1 \(.u64\): .*Tensorish is not device memory \(not a CUDA"):
        plan.pack_bytes(0.0, Tensorish(0, False), 0, 0, 0)


def test_launch_dimensions():

    assert dims(4, "grid") == (4, 1, 1) and dims((2, 3), "grid") == (2, 3, 1) and dims([1, 2, 3], "b") == (1, 2, 3)
    assert dims(np.int64(5), "grid") == (5, 1, 1)
    for value, exc, message in [(0, ValueError, "grid: each dimension must be at least 1, got 0"),
                                ((1, 2, 3, 4), ValueError, "grid: expected 1 to 3 dimensions, got 4"),
                                ((), ValueError, "got 0"), (2**32, OverflowError, "grid: 4294967296 does not fit"),
                                ("8", TypeError, "grid: expected an int, not str"),
                                ((1, 0), ValueError, r"grid\[1\]: each dimension"), (2.5, TypeError, "float")]:
        with pytest.raises(exc, match=message):
            dims(value, "grid")


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


def test_import_opens_no_library_and_stays_light():
    code = ("import sys, cubind; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('cuda', 'nvrtc', 'numpy', 'nvjitlink')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=pythonpath(ROOT)))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_public_names():
    for name in ("Device", "Stream", "Event", "Program", "Module", "Kernel", "LaunchConfig", "launch",
                 "CUDAError", "CompileError", "Array", "current_stream", "to_gpu", "empty", "zeros", "from_dlpack"):
        assert hasattr(cubind, name), name
        assert name in dir(cubind)
    with pytest.raises(AttributeError):
        cubind.no_such_thing  # noqa: B018


# -- launches through the fake driver ----------------------------------------------

PRELUDE = """
import ctypes, json, struct, sys
import cubind
fake = ctypes.CDLL({lib!r})
module = cubind.Module.load(open({ptx!r}, "rb").read())
def record(n):
    ctypes.c_int.in_dll(fake, "fake_record_args").value = n
def recorded(n):
    return list((ctypes.c_ulonglong * n).in_dll(fake, "fake_args"))
def launches():
    return ctypes.c_int.in_dll(fake, "fake_launch_count").value
def last_stream():
    return ctypes.c_ulonglong.in_dll(fake, "fake_last_stream").value
from tests._helpers import error
"""


@pytest.fixture(scope="module")
def ptx_file(tmp_path_factory, module):
    path = tmp_path_factory.mktemp("ptx") / "k.ptx"
    path.write_bytes(module.code)
    return path


def run_fake(fake_driver, ptx_file, body, env=None):
    code = PRELUDE.format(lib=str(fake_driver), ptx=str(ptx_file)) + textwrap.dedent(body)
    full_env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath(ROOT), **(env or {}))
    done = subprocess.run([sys.executable, "-c", code], env=full_env, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def low(value_bytes):
    return int.from_bytes(value_bytes.ljust(8, b"\0"), "little")


def test_a_launch_hands_the_driver_the_typed_arguments(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        import cuda
        saxpy = module.get_kernel("saxpy")
        record(5)
        saxpy(4, 256, 2.0, cuda.CUdeviceptr(0x1000), 0x2000, 0x3000, 1 << 20)
        first = recorded(5)
        saxpy((2, 2), (16, 16), 0.5, 1, 2, 3, 4, stream=None, shared_mem=128)
        print(json.dumps([first, recorded(5), launches()]))
    """)
    first, second, count = got
    assert first[0] & 0xFFFFFFFF == low(struct.pack("<f", 2.0)) and first[1:] == [0x1000, 0x2000, 0x3000, 1 << 20]
    assert second[0] & 0xFFFFFFFF == low(struct.pack("<f", 0.5)) and second[1:] == [1, 2, 3, 4]
    assert count == 2


def test_narrow_and_struct_arguments_reach_the_driver(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        mix = module.get_kernel("mix")
        record(8)
        mix(1, 1, struct.pack("<i4xd", 7, 2.5), -1.5, 65, -2, -3, 2**63, 200, True)
        print(json.dumps(recorded(8)))
    """)
    assert got[0] == 7  # the struct's first 8 bytes: int 7 and padding
    assert got[1] == low(struct.pack("<d", -1.5))
    assert got[2] & 0xFF == 65 and got[3] & 0xFFFF == 0xFFFE and got[4] & 0xFFFFFFFF == 0xFFFFFFFD
    assert got[5] == 2**63 and got[6] & 0xFF == 200 and got[7] & 0xFF == 1


def test_launch_errors_are_exceptions_before_the_driver(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        saxpy = module.get_kernel("saxpy")
        s = cubind.Stream()
        s.close()
        out = [error(lambda: saxpy(1, 1, 1.0, 0, 0, 0)),
               error(lambda: saxpy(1, 1, 1.0, 0, 0, 0, 0, streem=None)),
               error(lambda: saxpy(1, 1, 1.0, 0, 0, 0, 0, stream="s")),
               error(lambda: saxpy(1, 1, 1.0, 0, 0, 0, 0, stream=s)),
               error(lambda: saxpy(1, 1, 1.0, 0, 0, 0, 0, shared_mem=-1)),
               error(lambda: saxpy(0, 1, 1.0, 0, 0, 0, 0)),
               error(lambda: saxpy(1)),
               error(lambda: module.get_kernel("sxapy")),
               error(lambda: module.get_kernel("fill<double>")),
               launches()]
        print(json.dumps(out))
    """)
    assert got[0] == "TypeError: saxpy takes 5 arguments (.f32, .u64, .u64, .u64, .u64), got 4"
    assert got[1].startswith("TypeError: saxpy: unexpected keyword argument 'streem'")
    assert got[2].startswith("TypeError: stream: expected a stream")
    assert got[3] == "ValueError: stream: the stream is closed"
    assert got[4].startswith("OverflowError: shared_mem: -1")
    assert got[5] == "ValueError: grid: each dimension must be at least 1, got 0"
    assert got[6].startswith("TypeError: saxpy: a launch takes grid and block first")
    assert got[7].startswith("ValueError: kernel 'sxapy' is not in the module; it has ")
    assert "fill<double>" in got[8] and "name_expressions" in got[8]
    assert got[9] == 0


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


def test_launch_config_and_launch_ex(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        saxpy = module.get_kernel("saxpy")
        config = cubind.LaunchConfig((4, 1), 128, shared_mem=64, cluster=2, cooperative=True,
                                     attributes={"priority": 1})
        s = config._struct
        attrs = [(a.id.name, a.value.clusterDim.x) for a in s.attrs]
        cubind.launch(0x99, config, saxpy, 1.0, 0, 0, 0, 0)
        out = [[s.gridDimX, s.gridDimY, s.blockDimX, s.sharedMemBytes, s.numAttrs, last_stream()], attrs, repr(config),
               error(lambda: cubind.launch(None, config, saxpy, 1.0)),
               error(lambda: cubind.launch(None, saxpy, config)),
               error(lambda: cubind.LaunchConfig(1, 1, attributes={"no_such": 1})),
               error(lambda: cubind.LaunchConfig(1, 1, attributes={"priority": "high"})),
               error(lambda: cubind.LaunchConfig(1, 1, cluster=(1, 0))),
               error(lambda: cubind.LaunchConfig(1, 1, attributes={"access_policy_window": 1}))]
        print(json.dumps(out))
    """)
    assert got[0] == [4, 1, 128, 64, 3, 0x99]
    assert got[1] == [["CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION", 2], ["CU_LAUNCH_ATTRIBUTE_COOPERATIVE", 1],
                      ["CU_LAUNCH_ATTRIBUTE_PRIORITY", 1]]
    assert "cluster=(2, 1, 1)" in got[2] and "cooperative=True" in got[2]
    assert got[3].startswith("TypeError: saxpy takes 5 arguments")
    assert got[4].startswith("TypeError: config: expected a cubind.LaunchConfig")
    assert got[5].startswith("ValueError: attributes: 'no_such' is not a CUlaunchAttributeID")
    assert got[6] == "TypeError: attributes['priority']: expected an int, not str"
    assert got[7].startswith("ValueError: cluster[1]: each dimension must be at least 1")
    assert "CUlaunchAttributeValue" in got[8]


def test_driver_failures_are_cuda_errors_naming_the_call(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        out = []
        for fn in (lambda: cubind.Stream(), lambda: module.get_kernel("saxpy")):
            try:
                fn()
                out.append("no error")
            except cubind.CUDAError as exc:
                out.append([exc.name, exc.call, int(exc.code), str(exc)])
        print(json.dumps(out))
    """, env={"FAKE_MISSING": "cuStreamCreateWithPriority"})
    assert got[0][:3] == ["CUDA_ERROR_NOT_FOUND", "cuStreamCreateWithPriority", 500]
    assert got[0][3].startswith("cuStreamCreateWithPriority: CUDA_ERROR_NOT_FOUND (500)")
    assert got[1] == "no error"


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


def test_the_cache_key_has_the_real_nvrtc_version():
    import nvrtc

    assert _program._nvrtc_version() == list(nvrtc.nvrtcVersion()[1:]) and _program._nvrtc_version()[0] >= 12


def test_the_toolkit_headers_match_nvrtcs_major(tmp_path, monkeypatch):

    other = tmp_path / "include"  # a toolkit of another major, named by CUDA_HOME
    other.mkdir(parents=True)
    (other / "cooperative_groups.h").write_text("")
    (other / "cuda.h").write_text("#define CUDA_VERSION 99000\n")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path))
    _toolkit.toolkit_include_options.cache_clear()
    try:
        assert f"-I{other}" not in _toolkit.toolkit_include_options(13)
        assert _toolkit.toolkit_include_options(99)[0] == f"-I{other}"
    finally:
        _toolkit.toolkit_include_options.cache_clear()


def test_cubind_arrays_pass_their_pointers_and_a_freed_one_is_refused(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        import numpy as np
        saxpy = module.get_kernel("saxpy")
        a = cubind.empty(64, np.float32)
        view = a[4:]  # read from the array's slots in the launch path: the offset counts
        record(5)
        saxpy(1, 32, 2.0, a, view, a, 64)
        first = recorded(5)
        a.free()
        try:
            saxpy(1, 32, 2.0, a, view, a, 64)
            refused = None
        except ValueError as exc:
            refused = str(exc)
        print(json.dumps([first, a.memory.ptr, refused]))
    """)
    first, ptr_after_free, refused = got
    assert first[2] - first[1] == 16 and first[3] == first[1]  # 4 float32s in, and the same array again
    assert ptr_after_free is None and "released" in refused


# == on a real GPU (each test marked gpu) ===========================================================

KERNELS = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

struct Item { int a; double b; char c; };

extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
extern "C" __global__ void spin(long long cycles)
{
    long long start = clock64();
    while (clock64() - start < cycles) {}
}
extern "C" __global__ void set_int(int *p, int value) { *p = value; }
extern "C" __global__ void copy_int(const int *src, int *dst) { *dst = *src; }
extern "C" __global__ void item_sum(Item item, double *out) { *out = item.a + item.b + item.c; }
extern "C" __global__ void narrow(char c, short s, unsigned char u, long long q, double d, double *out)
{
    out[0] = c; out[1] = s; out[2] = u; out[3] = (double)q; out[4] = d;
}
template <typename T> __global__ void fill(T *out, T value, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = value;
}
__device__ int counter = 41;
"""

CLUSTER = r"""
#include <cooperative_groups.h>
namespace cg = cooperative_groups;
extern "C" __global__ void cluster_info(unsigned *out)
{
    cg::cluster_group cluster = cg::this_cluster();
    if (threadIdx.x == 0) {
        out[2 * blockIdx.x] = cluster.num_blocks();
        out[2 * blockIdx.x + 1] = cluster.block_rank();
    }
}
"""


@pytest.fixture(scope="module")
def device():
    return cubind.Device(0)


@pytest.fixture(scope="module")
def gpu_module(device):
    device.set_current()
    return cubind.Program(KERNELS, name_expressions=["fill<float>", "fill<int>", "fill<double>"]).compile("cubin")


@pytest.fixture
def dmem(driver, cu_context):
    """Factory: cuMemAlloc'd device memory holding a copy of a numpy array (or
    ``nbytes`` zeros); read back with ``dmem.get``."""
    allocated = []

    def alloc(host):
        host = np.ascontiguousarray(host)
        ptr = ok(driver.cuMemAlloc, max(host.nbytes, 1))
        allocated.append(ptr)
        ok(driver.cuMemcpyHtoD, ptr, host, host.nbytes)
        return ptr

    def get(ptr, like):
        out = np.empty_like(like)
        ok(driver.cuCtxSynchronize)
        ok(driver.cuMemcpyDtoH, out, ptr, out.nbytes)
        return out

    alloc.get = get
    yield alloc
    driver.cuCtxSynchronize()
    for ptr in allocated:
        driver.cuMemFree(ptr)


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


def spin_cycles(device, ms):
    clock_khz = device.attribute("clock_rate")
    return int(clock_khz * ms)


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
def test_a_launch_waits_for_the_stream_of_an_interface(gpu_module, device, dmem):
    # CAI v3: the launch on `second` orders itself after the "stream" the
    # producer names; without it the copy reads src before `first` sets it.
    spin, set_int, copy_int = (gpu_module.get_kernel(n) for n in ("spin", "set_int", "copy_int"))
    src, dst = dmem(np.zeros(1, np.int32)), dmem(np.zeros(1, np.int32))

    class Produced:
        def __init__(self, ptr, stream):
            self.__cuda_array_interface__ = {"shape": (1,), "typestr": "<i4", "data": (int(ptr), False),
                                             "version": 3, "stream": int(stream.handle)}

    with cubind.Stream(non_blocking=True) as first, cubind.Stream(non_blocking=True) as second:
        for value in (7, 9):
            spin(1, 1, spin_cycles(device, 20), stream=first)
            set_int(1, 1, src, value, stream=first)
            copy_int(1, 1, Produced(src, first), dst, stream=second)
            second.synchronize()
            assert dmem.get(dst, np.zeros(1, np.int32))[0] == value


class _DLPackAlone:
    """An array seen through DLPack only (as a library without
    __cuda_array_interface__ offers its arrays)."""

    def __init__(self, array):
        self.array = array

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    def __dlpack__(self, stream=None, max_version=None):
        if max_version is None:
            return self.array.__dlpack__(stream=stream)
        return self.array.__dlpack__(stream=stream, max_version=max_version)


@pytest.mark.gpu
def test_a_dlpack_argument_is_ordered_by_its_producer(gpu_module, device, dmem):
    # An object known by DLPack alone: the launch asks its producer (here a
    # cubind.Array of stream `first`) for a capsule with its own stream.
    spin, set_int, copy_int = (gpu_module.get_kernel(n) for n in ("spin", "set_int", "copy_int"))
    dst = dmem(np.zeros(1, np.int32))

    with cubind.Stream(non_blocking=True) as first, cubind.Stream(non_blocking=True) as second:
        src = cubind.empty(1, np.int32, stream=first)
        for value in (7, 9):
            spin(1, 1, spin_cycles(device, 20), stream=first)
            set_int(1, 1, src, value, stream=first)
            copy_int(1, 1, _DLPackAlone(src), dst, stream=second)
            second.synchronize()
            assert dmem.get(dst, np.zeros(1, np.int32))[0] == value


@pytest.mark.gpu
def test_default_stream_and_device_synchronize(gpu_module, device, dmem):
    fill = gpu_module.get_kernel("fill<int>")
    out = dmem(np.zeros(64, np.int32))
    fill(1, 64, out, 3, 64, stream=device.default_stream)
    device.default_stream.synchronize()
    device.synchronize()
    assert device.default_stream.query() and not device.default_stream.owned
    assert (dmem.get(out, np.zeros(64, np.int32)) == 3).all()


# -- kernels: typing, templates, structs, errors ---------------------------------------


@pytest.mark.gpu
def test_saxpy_with_numpy_inputs_copied_by_1to1_calls(gpu_module, dmem):
    n = 100_000
    rng = np.random.default_rng(1)
    x, y = rng.random(n, dtype=np.float32), rng.random(n, dtype=np.float32)
    dx, dy, dout = dmem(x), dmem(y), dmem(np.zeros(n, np.float32))
    saxpy = gpu_module.get_kernel("saxpy")
    assert saxpy.typed_by == "PTX"
    saxpy((n + 255) // 256, 256, 2.5, dx, int(dy), dout, n)
    assert np.allclose(dmem.get(dout, x), np.float32(2.5) * x + y)


@pytest.mark.gpu
def test_saxpy_with_cubind_arrays(gpu_module):
    n = 4096
    x, y = np.arange(n, dtype=np.float32), np.ones(n, dtype=np.float32)
    out = cubind.empty(n, np.float32)
    gpu_module.get_kernel("saxpy")(n // 128, 128, 0.5, cubind.to_gpu(x), cubind.to_gpu(y), out, n)
    assert np.array_equal(out.get(), 0.5 * x + y)


@pytest.mark.gpu
def test_templated_kernels_by_name_expression(gpu_module, dmem):
    for expression, dtype, value in (("fill<float>", np.float32, 1.5), ("fill<int>", np.int32, -7),
                                     ("fill<double>", np.float64, 2.25)):
        out = dmem(np.zeros(300, dtype))
        gpu_module.get_kernel(expression)(3, 128, out, value, 300)
        assert (dmem.get(out, np.zeros(300, dtype)) == value).all(), expression


@pytest.mark.gpu
def test_struct_by_value_and_narrow_scalars(gpu_module, dmem):
    class Item(ctypes.Structure):
        _fields_ = [("a", ctypes.c_int), ("b", ctypes.c_double), ("c", ctypes.c_char)]

    item_sum = gpu_module.get_kernel("item_sum")
    out = dmem(np.zeros(1, np.float64))
    dtype = np.dtype([("a", "<i4"), ("b", "<f8"), ("c", "i1")], align=True)
    record = np.zeros(1, dtype)
    record[0] = (3, 0.25, 2)
    for value in (Item(3, 0.25, b"\x02"), bytes(Item(3, 0.25, b"\x02")), record[0]):
        item_sum(1, 1, value, out)
        assert dmem.get(out, np.zeros(1, np.float64))[0] == 5.25, type(value)
    narrow = gpu_module.get_kernel("narrow")
    out5 = dmem(np.zeros(5, np.float64))
    narrow(1, 1, -3, -30000, 250, -(2**40), 1.5, out5)
    assert list(dmem.get(out5, np.zeros(5, np.float64))) == [-3, -30000, 250, -(2.0**40), 1.5]


@pytest.mark.gpu
def test_cubin_without_ptx_is_typed_by_param_info(gpu_module, dmem):
    bare = cubind.Module.load(gpu_module.code)  # the CUBIN alone
    saxpy = bare.get_kernel("saxpy")
    assert saxpy.typed_by == "cuKernelGetParamInfo"
    assert [p.size for p in saxpy.params] == [4, 8, 8, 8, 8]
    x = np.arange(256, dtype=np.float32)
    dx, dout = dmem(x), dmem(np.zeros(256, np.float32))
    saxpy(2, 128, 3.0, dx, dx, dout, 256)  # 3.0 to a 4-byte parameter: a float32
    assert np.array_equal(dmem.get(dout, x), 4 * x)


@pytest.mark.gpu
def test_globals_and_lowered_names(gpu_module, driver):
    ptr, size = gpu_module.get_global("counter")
    assert size == 4
    value = np.zeros(1, np.int32)
    ok(driver.cuMemcpyDtoH, value, ptr, 4)
    assert value[0] == 41
    with pytest.raises(ValueError, match="not in the module"):
        gpu_module.get_global("no_such_variable")


@pytest.mark.gpu
@pytest.mark.provokes_api_error
def test_driver_refusals_are_cuda_errors(gpu_module):
    fill = gpu_module.get_kernel("fill<int>")
    with pytest.raises(cubind.CUDAError) as info:
        fill(1, 4096, 0, 0, 0)  # more threads per block than any device allows
    assert info.value.name == "CUDA_ERROR_INVALID_VALUE" and info.value.call == "cuLaunchKernel"
    assert info.value.message


@pytest.mark.gpu
def test_compile_targets_the_device_by_default(device):
    import nvrtc

    archs = nvrtc.nvrtcGetSupportedArchs()[1]
    major, minor = device.compute_capability
    assert cubind.default_arch() == max(a for a in archs if a <= 10 * major + minor)
    gpu_module = cubind.Program(KERNELS).compile("ptx")
    assert f".target sm_{cubind.default_arch()}".encode() in gpu_module.code


# -- launch configurations, clusters, occupancy ----------------------------------------


@pytest.mark.gpu
def test_launch_config_with_cluster_dims(device, dmem):
    if device.compute_capability < (9, 0):
        pytest.skip("thread-block clusters need compute capability 9.0")
    gpu_module = cubind.Program(CLUSTER).compile("cubin")
    kernel = gpu_module.get_kernel("cluster_info")
    out = dmem(np.zeros(16, np.uint32))
    with cubind.Stream() as stream:
        config = cubind.LaunchConfig(8, 64, cluster=2, attributes={"priority": 0})
        cubind.launch(stream, config, kernel, out)
        stream.synchronize()
    got = dmem.get(out, np.zeros(16, np.uint32)).reshape(8, 2)
    assert list(got[:, 0]) == [2] * 8
    assert list(got[:, 1]) == [b % 2 for b in range(8)]
    assert kernel.max_active_clusters(config) >= 1


@pytest.mark.gpu
def test_launch_config_without_attributes_matches_the_call_form(gpu_module, dmem):
    fill = gpu_module.get_kernel("fill<float>")
    out = dmem(np.zeros(1000, np.float32))
    cubind.launch(None, cubind.LaunchConfig((4, 1, 1), (256,)), fill, out, 4.5, 1000)
    assert (dmem.get(out, np.zeros(1000, np.float32)) == 4.5).all()


@pytest.mark.gpu
def test_occupancy_and_function_attributes(gpu_module, device):
    saxpy = gpu_module.get_kernel("saxpy")
    min_grid, block = saxpy.suggested_block_size()
    assert 32 <= block <= device.attribute("max_threads_per_block") and block % 32 == 0
    assert min_grid >= device.multiprocessor_count
    per_sm = saxpy.max_active_blocks(block)
    assert 1 <= per_sm <= device.attribute("max_blocks_per_multiprocessor")
    assert saxpy.max_active_blocks((block, 1, 1), shared_mem=0) == per_sm
    assert saxpy.num_regs > 0 and saxpy.max_threads_per_block <= 1024
    assert saxpy.attribute("num_regs") == saxpy.num_regs
    with pytest.raises(ValueError, match="CUfunction_attribute"):
        saxpy.attribute("no_such")


# -- other libraries' streams and arrays -------------------------------------------------


@pytest.mark.gpu
@pytest.mark.foreign_allocator
def test_cupy_streams_and_arrays(gpu_module):
    cupy = pytest.importorskip("cupy")
    saxpy = gpu_module.get_kernel("saxpy")
    n = 10_000
    x = cupy.arange(n, dtype=cupy.float32)
    y = cupy.ones(n, dtype=cupy.float32)
    out = cupy.empty(n, dtype=cupy.float32)
    theirs = cupy.cuda.Stream(non_blocking=True)
    saxpy((n + 255) // 256, 256, 2.0, x, y, out, n, stream=theirs)
    theirs.synchronize()
    assert cupy.allclose(out, 2 * x + y)
    with cubind.Stream() as ours:
        external = cupy.cuda.ExternalStream(int(ours))
        with external:
            z = out * 2
        saxpy((n + 255) // 256, 256, 1.0, z, y, out, n, stream=ours)
        ours.synchronize()
    assert cupy.allclose(out, 4 * x + 3)
    wrapped = cubind.Stream.from_handle(theirs)
    assert int(wrapped) == theirs.ptr and not wrapped.owned


@pytest.mark.gpu
@pytest.mark.foreign_allocator
def test_torch_streams_and_tensors(gpu_module):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA")
    saxpy = gpu_module.get_kernel("saxpy")
    n = 10_000
    x = torch.arange(n, dtype=torch.float32, device="cuda")
    y = torch.ones(n, dtype=torch.float32, device="cuda")
    out = torch.empty(n, dtype=torch.float32, device="cuda")
    theirs = torch.cuda.Stream()
    saxpy((n + 255) // 256, 256, 2.0, x, y, out, n, stream=theirs)
    theirs.synchronize()
    assert torch.allclose(out, 2 * x + y)
    with cubind.Stream() as ours:
        external = torch.cuda.ExternalStream(int(ours))
        with torch.cuda.stream(external):
            z = out * 2
        saxpy((n + 255) // 256, 256, 1.0, z, y, out, n, stream=ours)
        ours.synchronize()
    assert torch.allclose(out, 4 * x + 3)
    with pytest.raises(TypeError, match="host memory"):
        saxpy(1, 1, 1.0, x.cpu().numpy(), y, out, n)
    # Tensors are read by data_ptr() (a view's address includes its offset);
    # a CPU tensor is refused as its __cuda_array_interface__ refuses it.
    with pytest.raises(TypeError, match="not device memory"):
        saxpy(1, 1, 1.0, x.cpu(), y, out, n)
    saxpy((n + 255) // 256, 256, 1.0, x[1:], x[:-1], out[1:], n - 1)
    torch.cuda.synchronize()
    assert torch.equal(out[1:], x[1:] + x[:-1])
    # The same views known by DLPack alone: a capsule per argument, asked with
    # our stream; its byte offset, if any, is added to its data pointer.
    with cubind.Stream() as ours:
        saxpy((n + 255) // 256, 256, 2.0, _DLPackAlone(x[1:]), _DLPackAlone(y[1:]), _DLPackAlone(out[1:]), n - 1,
              stream=ours)
        ours.synchronize()
    assert torch.equal(out[1:], 2 * x[1:] + 1)
    with pytest.raises(TypeError, match="not device memory .*DLPack device type is 1, not CUDA"):
        saxpy(1, 1, 1.0, _DLPackAlone(x.cpu()), y, out, n)


@pytest.mark.gpu
def test_packing_is_exact_for_every_width(gpu_module, dmem):
    # The argument bytes, as the kernel reads them: a double[] echo of mixed
    # widths, passed as numpy scalars and as plain Python values alike.
    narrow = gpu_module.get_kernel("narrow")
    out = dmem(np.zeros(5, np.float64))
    narrow(1, 1, np.int8(-1), np.int16(2), np.uint8(3), np.int64(4), np.float64(5.0), out)
    assert list(dmem.get(out, np.zeros(5, np.float64))) == [-1, 2, 3, 4, 5]


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
        print(json.dumps([seen, [int(a), int(b)], other == [None], inner_left, open_blocks == [0],
                          a.closed, b.closed, error(lambda: a.close() or a.__enter__())]))
    """)
    seen, (a, b) = got[0], got[1]
    assert seen == [0, 0, a, a, b, b, a]
    assert got[2:7] == [True, True, True, False, False]
    assert got[7] == "ValueError: stream: the stream is closed"


# -- cubind.check, the public end of a status tuple ------------------------------------


def test_check_returns_the_outputs_or_raises_naming_the_call():
    assert cubind.check((0,)) is None
    assert cubind.check((0, 5)) == 5
    assert cubind.check((0, 1, 2)) == (1, 2)
    with pytest.raises(cubind.CUDAError) as info:
        cubind.check((1, None), "cuMemAlloc")
    assert info.value.call == "cuMemAlloc" and int(info.value.code) == 1


# -- the parameter kinds, written once ------------------------------------------------------


def test_the_kinds_are_written_in_params_only():
    # launch.pyx reads them from params.py at import; no other module spells
    # their numbers, and Param answers the question code above asks of them.
    launch = (Path(cubind.__file__).parent / "_launch" / "launch.pyx").read_text()
    assert "K_F32 = _params.F32" in launch and "K_F32 = 0" not in launch
    assert Param(0, INT, 8).takes_address and Param(0, 4, 8).takes_address
    assert not Param(0, F64, 8).takes_address and not Param(0, BYTES, 8).takes_address
    assert not Param(0, INT, 4).takes_address


def test_a_subclass_of_array_takes_the_slot_path():
    from cubind._launch.launch import SlotAddressed

    assert issubclass(cubind.Array, SlotAddressed)
