"""cuFile (``import cufile``, generated from bindings/cufile.toml alone): the
status is the ``err`` of the C ``CUfileError_t`` (a struct returned by value),
a ``CUfileOpError`` first in every tuple as every module's status; cuda.h's
types it names (``CUstream``, ``CUresult``) and the platform's (``timespec``);
without a driver a call is a status, not a crash; the library is found in its
wheel; coverage of cufile.h (the type-fuzz of every package is in
test_bad_input.py). On a GPU, 1 MiB written from device memory to a file and
read back into other device memory (compatibility mode where the nvidia-fs
kernel module is not loaded)."""

import ctypes
import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

from tests._toolkit import pythonpath
from tests.generator_integration.test_generator_cuda_h import ROOT, run_generator

cufile = pytest.importorskip("cufile", reason="cubind's cufile package is not built (cufile.h missing)")

E = cufile.CUfileOpError


def loadable(soname):
    try:
        ctypes.CDLL(soname)
    except OSError:
        return False
    return True


def run_fresh(code, cwd, **env):
    """``code`` in a fresh interpreter run in ``cwd`` (the library is opened
    and configured once per process; it writes its cufile.log in the working
    directory); its stdout, the last line parsed as JSON."""
    full = dict(os.environ, PYTHONPATH=pythonpath(), **env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, capture_output=True, text=True,
                          cwd=cwd, timeout=300)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- the status: CUfileError_t's err ---------------------------------------------------------


def test_the_status_is_a_cufileoperror_and_its_text_is_the_headers():
    # cufile.h's CUfileOpError: 0, then CUFILEOP_BASE_ERR (5000) + n.
    assert E.CU_FILE_SUCCESS == 0 and E.CU_FILE_INVALID_VALUE == 5022 and E(5033) is E.CU_FILE_NVFS_SETUP_ERROR
    # The header's own text (its static inline cufileop_status_error,
    # compiled in: libcufile has no such symbol), which CUDAError shows.
    assert cufile.cufileop_status_error(E.CU_FILE_INVALID_VALUE) == (E.CU_FILE_SUCCESS, b"invalid arguments")
    assert E.CU_FILE_DRIVER_ALREADY_OPEN._describe_()[1] == b"driver is already open"
    from _cubind.errors import CUDAError

    err = CUDAError(E.CU_FILE_INVALID_VALUE, "cuFileBufRegister")
    assert str(err) == "cuFileBufRegister: CU_FILE_INVALID_VALUE (5022): invalid arguments", str(err)
    # The struct itself stays bound (the C level returns it whole): err and
    # cu_err, cuda.h's CUresult as its integer (cuda.CUresult(e.cu_err)).
    e = cufile.CUfileError_t()
    e.cu_err = 700
    assert (e.err, e.cu_err) == (E.CU_FILE_SUCCESS, 700) and cufile.sizeof(cufile.CUfileError_t) == 8


def test_a_call_returns_its_status_first_then_its_outputs(tmp_path):
    # Calls that need no driver: cuFile's version (1.15.x is 1150) and the
    # staged parameters; every first element a CUfileOpError.
    got = run_fresh("""
        import json, cufile
        P = cufile.CUFileBoolConfigParameter_t
        version = cufile.cuFileGetVersion()
        count = cufile.cuFileUseCount()
        allow = cufile.cuFileGetParameterBool(P.CUFILE_PARAM_PROPERTIES_ALLOW_COMPAT_MODE)
        print(json.dumps([[type(r[0]).__name__, int(r[0]), *r[1:]] for r in (version, count, allow)]))
    """, tmp_path)
    version, count, allow = got
    assert version[:2] == ["CUfileOpError", 0] and version[2] >= 1140, version
    assert count == ["CUfileOpError", 0, 0]   # cuFileUseCount's long: (CU_FILE_SUCCESS, value)
    assert allow[:2] == ["CUfileOpError", 0] and allow[2] in (0, 1), allow


@pytest.mark.skipif(loadable("libcuda.so.1"), reason="this machine has the CUDA driver's libcuda.so.1")
def test_without_a_driver_opening_cufile_is_a_status_not_a_crash(tmp_path):
    # libcufile loads libcuda.so.1 when it opens: without one, cuFile 1.15
    # logs "dlopen error libcuda.so.1 ... cuFile initialization failed" and
    # cuFileDriverOpen returns CU_FILE_NVFS_SETUP_ERROR; closing what never
    # opened is CU_FILE_DRIVER_NOT_INITIALIZED. Earlier versions (1.14, CUDA
    # 12.9's) are held to a failing status only.
    got = run_fresh("""
        import json, cufile
        version = cufile.cuFileGetVersion()[1]
        opened = cufile.cuFileDriverOpen()
        closed = cufile.cuFileDriverClose()
        print(json.dumps([version, opened[0].name, len(opened), closed[0].name, cufile.cuFileUseCount()[1]]))
    """, tmp_path)
    version, opened, outputs, closed, count = got
    assert outputs == 1 and count == 0, got
    if version >= 1150:
        assert (opened, closed) == ("CU_FILE_NVFS_SETUP_ERROR", "CU_FILE_DRIVER_NOT_INITIALIZED"), got
    else:
        assert opened != "CU_FILE_SUCCESS", got


# -- types of the headers cufile.h includes -----------------------------------------------


def test_cudas_types_are_declared_as_cuda_declares_them():
    cuda = pytest.importorskip("cuda")
    # CUstream: a handle class of cufile's whose C type is cuda.h's struct, the
    # tag by which cuda.CUstream objects pass to cuFileStreamRegister.
    assert cufile.CUstream._c_struct == "CUstream_st"
    if hasattr(cuda, "CUstream"):
        assert cuda.CUstream._c_struct == cufile.CUstream._c_struct
    assert int(cufile.CUstream(0x1000)) == 0x1000
    # <time.h>'s timespec: opaque, of its C size (cuFileBatchIOGetStatus's timeout).
    assert cufile.sizeof(cufile.timespec) == 16
    # Handles of cufile.h's void* typedefs, each its own class.
    assert int(cufile.CUfileHandle_t(5)) == 5 and cufile.CUfileBatchHandle_t is not cufile.CUfileHandle_t


def test_a_file_descriptor_goes_in_the_descriptors_union():
    descr = cufile.CUfileDescr_t()
    descr.type = cufile.CUfileFileHandleType.CU_FILE_HANDLE_TYPE_OPAQUE_FD
    descr.handle.fd = 7
    assert (descr.type, descr.handle.fd, descr.fs_ops) == (1, 7, 0)


# -- the library: found in its wheel, the override obeyed -------------------------------------


def test_the_library_is_found_in_the_wheel_and_its_override_is_obeyed(tmp_path):
    code = """
        import json, cufile
        from _cubind.loader import LibraryNotFoundError
        try:
            print(json.dumps(["version", cufile.cuFileGetVersion()[1]]))
        except LibraryNotFoundError as exc:
            print(json.dumps(["LibraryNotFoundError", str(exc)]))
    """
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUFILE_LIBRARY"}
    found = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                           cwd=tmp_path, env=dict(env, PYTHONPATH=pythonpath()))
    assert found.returncode == 0 and json.loads(found.stdout)[0] == "version", found
    missing = tmp_path / "libcufile.so.0"
    kind, message = run_fresh(code, tmp_path, CUBIND_CUFILE_LIBRARY=str(missing))
    assert kind == "LibraryNotFoundError" and "CUBIND_CUFILE_LIBRARY" in message and str(missing) in message


# -- coverage ----------------------------------------------------------------------------------


# What the generator cannot bind, each for its reason (report.txt's lines).
SKIPPED = {
    "cuFileReadAsync": "read and written when the stream runs, after the call returns",
    "cuFileWriteAsync": "read and written when the stream runs, after the call returns",
    "cuFileGetParameterPosixPoolSlabArray": "two output arrays counted by an input (len) without a count query",
    "cuFileGetParameterGpuBounceBufferSlabArray": "two output arrays counted by an input (len) without a count query",
}


def test_every_function_is_bound_or_skipped_with_its_reason():
    report = run_generator("--spec", str(ROOT / "bindings" / "cufile.toml"), "--report")
    (total,) = re.findall(r"cufile.h: (\d+)/(\d+) functions bound", report)
    bound, declared = map(int, total)
    skipped = dict(re.findall(r"  skipped  (\w+): (.+)", report))
    assert bound + len(skipped) == declared, report[-2000:]
    bound_names = re.findall(r"  bound    (\w+)", report)
    # Each skip expected where the header declares the function (cuFile 1.14,
    # CUDA 12.9's, has no cuFileGetParameterPosixPoolSlabArray), none else.
    assert set(skipped) <= set(SKIPPED) and not set(SKIPPED) & set(bound_names), skipped
    assert {"cuFileReadAsync", "cuFileWriteAsync"} <= set(skipped), skipped
    for name, reason in skipped.items():
        assert SKIPPED[name] in reason, (name, reason)
    for name in bound_names:
        assert callable(getattr(cufile, name)), name
    for name in ["cuFileDriverOpen", "cuFileDriverClose", "cuFileHandleRegister", "cuFileHandleDeregister",
                 "cuFileBufRegister", "cuFileBufDeregister", "cuFileRead", "cuFileWrite", "cuFileDriverGetProperties",
                 "cuFileBatchIOSetUp", "cuFileBatchIOSubmit", "cuFileBatchIOGetStatus", "cuFileBatchIODestroy",
                 "cuFileStreamRegister"]:  # the statistics (cuFileGetStatsL1...) came with cuFile 1.15
        assert name in re.findall(r"  bound    (\w+)", report), name


# -- on a GPU: 1 MiB through a file and back ---------------------------------------------------

GPU_ROUND_TRIP = """
    import json, os, sys
    import numpy as np
    import cuda, cufile

    def ok(result, what):
        status, *outputs = result
        assert status == 0, f"{what} returned {status!r}"
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    path, size = sys.argv[1], 1 << 20
    ok(cuda.cuInit(0), "cuInit")
    device = ok(cuda.cuDeviceGet(0), "cuDeviceGet")
    context = ok(cuda.cuDevicePrimaryCtxRetain(device), "cuDevicePrimaryCtxRetain")
    ok(cuda.cuCtxSetCurrent(context), "cuCtxSetCurrent")
    ok(cufile.cuFileDriverOpen(), "cuFileDriverOpen")
    props = ok(cufile.cuFileDriverGetProperties(), "cuFileDriverGetProperties")
    allow = ok(cufile.cuFileGetParameterBool(
        cufile.CUFileBoolConfigParameter_t.CUFILE_PARAM_PROPERTIES_ALLOW_COMPAT_MODE), "cuFileGetParameterBool")
    # GPUDirect Storage proper needs the nvidia-fs kernel module (and O_DIRECT
    # on the file); without it cuFile does POSIX I/O through host bounce
    # buffers, what cufile.json's allow_compat_mode allows.
    mode = "gds" if os.path.isdir("/sys/module/nvidia_fs") else "compat"
    try:
        fd = os.open(path, os.O_CREAT | os.O_RDWR | (os.O_DIRECT if mode == "gds" else 0), 0o644)
    except OSError:   # a file system without O_DIRECT (tmpfs): compatibility mode after all
        mode = "compat (no O_DIRECT here)"
        fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    src = ok(cuda.cuMemAlloc(size), "cuMemAlloc")
    dst = ok(cuda.cuMemAlloc(size), "cuMemAlloc")
    ok(cufile.cuFileBufRegister(int(src), size, 0), "cuFileBufRegister")
    ok(cufile.cuFileBufRegister(int(dst), size, 0), "cuFileBufRegister")
    descr = cufile.CUfileDescr_t()
    descr.type = cufile.CUfileFileHandleType.CU_FILE_HANDLE_TYPE_OPAQUE_FD
    descr.handle.fd = fd
    status, fh = cufile.cuFileHandleRegister(descr)
    if status == cufile.CUfileOpError.CU_FILE_HANDLE_NOT_REGISTERED and not os.path.isdir("/run/udev"):
        # cuFile reads the file's volume from udev's database, compatibility
        # mode too ("unable to get volume attributes for fd" in its log): a
        # container without /run/udev registers no file at all.
        ok(cufile.cuFileBufDeregister(int(src)), "cuFileBufDeregister")
        ok(cufile.cuFileBufDeregister(int(dst)), "cuFileBufDeregister")
        ok(cufile.cuFileDriverClose(), "cuFileDriverClose")
        print(json.dumps({"mode": mode, "allow_compat_mode": allow, "no_udev": True, "buffers_registered": True}))
        sys.exit(0)
    assert status == 0, f"cuFileHandleRegister returned {status!r}"
    data = ((np.arange(size, dtype=np.uint64) * 2654435761) >> 13).astype(np.uint8)
    ok(cuda.cuMemcpyHtoD(src, data, size), "cuMemcpyHtoD")
    ok(cuda.cuMemsetD8(dst, 0, size), "cuMemsetD8")
    status, written = cufile.cuFileWrite(fh, int(src), size, 0, 0)
    assert status == 0 and written == size, (status, written)
    status, read = cufile.cuFileRead(fh, int(dst), size, 0, 0)
    assert status == 0 and read == size, (status, read)
    back = np.empty(size, np.uint8)
    ok(cuda.cuMemcpyDtoH(back, dst, size), "cuMemcpyDtoH")
    ok(cufile.cuFileBufDeregister(int(src)), "cuFileBufDeregister")
    ok(cufile.cuFileBufDeregister(int(dst)), "cuFileBufDeregister")
    assert cufile.cuFileHandleDeregister(fh) == (cufile.CUfileOpError.CU_FILE_SUCCESS, None)
    os.close(fd)
    with open(path, "rb") as f:
        on_disk = f.read()
    ok(cufile.cuFileDriverClose(), "cuFileDriverClose")
    ok(cuda.cuMemFree(src), "cuMemFree")
    ok(cuda.cuMemFree(dst), "cuMemFree")
    ok(cuda.cuDevicePrimaryCtxRelease(device), "cuDevicePrimaryCtxRelease")
    print(json.dumps({"mode": mode, "allow_compat_mode": allow, "written": written, "read": read,
                      "same_on_device": bool(np.array_equal(back, data)), "same_on_disk": on_disk == data.tobytes(),
                      "nvfs": [props.nvfs.major_version, props.nvfs.minor_version],
                      "dcontrolflags": props.nvfs.dcontrolflags}))
"""


@pytest.mark.gpu
@pytest.mark.foreign_code("libcufile's own CUDA calls: under compute-sanitizer (H200, cuFile 1.15) its "
                          "cuFileDriverOpen leaks 64 KiB and frees an address the driver refuses")
def test_a_mebibyte_goes_from_device_memory_to_a_file_and_back(tmp_path, driver):
    # cufile.json read from CUFILE_ENV_PATH_JSON when cuFile opens: set before
    # the first call, so in a fresh interpreter.
    config = tmp_path / "cufile.json"
    config.write_text(json.dumps({"logging": {"dir": str(tmp_path), "level": "ERROR"},
                                  "properties": {"allow_compat_mode": True}}))
    code = textwrap.dedent(GPU_ROUND_TRIP)
    done = subprocess.run([sys.executable, "-c", code, str(tmp_path / "data.bin")], capture_output=True, text=True,
                          cwd=tmp_path, timeout=300,
                          env=dict(os.environ, PYTHONPATH=pythonpath(), CUFILE_ENV_PATH_JSON=str(config)))
    assert done.returncode == 0, (done.stdout, done.stderr)
    got = json.loads(done.stdout.strip().splitlines()[-1])
    print("cuFile ran in", got["mode"], "mode:", got)   # pytest -s shows which
    assert got["allow_compat_mode"] == 1, got   # the config was read
    if got.get("no_udev"):
        pytest.skip("the driver opened and both device buffers registered, but cuFile registers no file here: it "
                    "reads a file's volume from udev's database (/run/udev), which this machine (a container) lacks")
    assert got["written"] == got["read"] == 1 << 20 and got["same_on_device"] and got["same_on_disk"], got
