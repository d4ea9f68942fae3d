"""cubind.Program and cubind.Module (cubind/_compile/program.py): compiling
to PTX, CUBIN and LTO-IR, architectures spelled every way, headers by name,
compile errors with their log and options, bad input naming the parameter,
the default architecture (NVRTC's oldest without a driver, the device's on a
GPU), Module.load finding the kind; on a real GPU a module's globals.
"""

import os
import struct
import subprocess
import sys

import pytest

import cubind
import cubind._compile.program as _program
from tests._helpers import ok
from tests._toolkit import pythonpath
from tests.pythonic._core_fixtures import (  # noqa: F401  (fixtures)
    KERNELS,
    ROOT,
    SRC,
    compiled_gpu_module,
    compiled_module,
    device_0,
    own_cache_dir,
)

np = pytest.importorskip("numpy")


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


# == on a real GPU (each test marked gpu) ===========================================================


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
def test_compile_targets_the_device_by_default(device):
    import nvrtc

    archs = nvrtc.nvrtcGetSupportedArchs()[1]
    major, minor = device.compute_capability
    assert cubind.default_arch() == max(a for a in archs if a <= 10 * major + minor)
    gpu_module = cubind.Program(KERNELS).compile("ptx")
    assert f".target sm_{cubind.default_arch()}".encode() in gpu_module.code
