"""The GL and VDPAU interop (cudaGL.h and cudaVDPAU.h in ``cuda``,
cuda_gl_interop.h and cuda_vdpau_interop.h in ``cuda.cudart``), bound as
NVIDIA's classic modules bind them: the platform's integer types (GLuint,
GLenum, EGLint, VdpDevice, VdpVideoSurface, VdpOutputSurface) as value
classes an int stands in for, VdpGetProcAddress as a class holding the entry
point's address, each argument reaching the driver (tests/fake_driver answers
from them) (the stand-ins for GL/gl.h and vdpau/vdpau.h where the platform
lacks them: tests/packaging/test_platform_stand_ins.py).
"""

import pytest

from tests._helpers import import_cubind_driver, run_on_fake

cuda = import_cubind_driver()
if cuda is None:
    pytest.skip("cubind's cuda package is not built", allow_module_level=True)
cudart = pytest.importorskip("cuda.cudart", reason="cubind's cuda.cudart is not built")

VALUE_CLASSES = ["GLenum", "GLuint", "EGLint", "VdpDevice", "VdpVideoSurface", "VdpOutputSurface"]
DRIVER_FUNCTIONS = ["cuGLGetDevices", "cuGraphicsGLRegisterBuffer", "cuGraphicsGLRegisterImage", "cuVDPAUGetDevice",
                    "cuVDPAUCtxCreate", "cuGraphicsVDPAURegisterVideoSurface", "cuGraphicsVDPAURegisterOutputSurface"]
RUNTIME_FUNCTIONS = ["cudaGLGetDevices", "cudaGraphicsGLRegisterBuffer", "cudaGraphicsGLRegisterImage",
                     "cudaVDPAUGetDevice", "cudaVDPAUSetVDPAUDevice", "cudaGraphicsVDPAURegisterVideoSurface",
                     "cudaGraphicsVDPAURegisterOutputSurface"]


@pytest.mark.parametrize("module, name", [(m, n) for m in ("cuda", "cudart") for n in VALUE_CLASSES]
                         + [("cuda", n) for n in DRIVER_FUNCTIONS + ["CUGLDeviceList", "CUGLmap_flags"]]
                         + [("cudart", n) for n in RUNTIME_FUNCTIONS + ["cudaGLDeviceList", "cudaGLMapFlags"]])
def test_classic_names_exist(module, name):
    assert hasattr({"cuda": cuda, "cudart": cudart}[module], name)


@pytest.mark.parametrize("name", VALUE_CLASSES)
def test_platform_integers_are_value_classes(name):
    import ctypes

    cls = getattr(cuda, name)
    value = cls(7)
    assert int(value) == 7 and value == cls(7) and repr(value) == f"<{name} 7>"
    # The classic constructor: with _ptr it reads and writes the value there.
    ctype = ctypes.c_int32 if name == "EGLint" else ctypes.c_uint32
    cell = ctype(41)
    ref = cls(_ptr=ctypes.addressof(cell))
    assert int(ref) == 41 and ref.getPtr() == ctypes.addressof(cell)
    with pytest.raises(TypeError, match="init_value"):
        cls("seven")


def test_vdp_get_proc_address_holds_an_address():
    entry = cuda.VdpGetProcAddress(0x1234)
    assert int(entry) == 0x1234 and entry == cuda.VdpGetProcAddress(0x1234)
    # One C type in both modules: each takes the other's.
    assert int(cudart.VdpGetProcAddress(entry)) == 0x1234
    with pytest.raises(TypeError, match="vdpGetProcAddress"):
        cuda.cuVDPAUGetDevice(1, "entry")


def test_bad_arguments_name_the_parameter():
    with pytest.raises(TypeError, match="buffer"):
        cuda.cuGraphicsGLRegisterBuffer("buffer", 0)
    with pytest.raises(OverflowError, match="image"):
        cuda.cuGraphicsGLRegisterImage(1 << 40, 0x0DE1, 0)
    with pytest.raises(TypeError, match="deviceList"):
        cuda.cuGLGetDevices(1, cuda.CUGLmap_flags.CU_GL_MAP_RESOURCE_FLAGS_NONE)
    with pytest.raises(TypeError, match="vdpDevice"):
        cudart.cudaVDPAUGetDevice("device", 0x10)


def test_gl_and_vdpau_arguments_reach_the_driver(fake_driver):
    out = run_on_fake(fake_driver, """
        err, res = cuda.cuGraphicsGLRegisterBuffer(cuda.GLuint(5), 0)
        print(err.name, hex(int(res)))
        err, res = cuda.cuGraphicsGLRegisterImage(9, cuda.GLenum(0x0DE1), 0)
        print(err.name, hex(int(res)))
        err, count, devices = cuda.cuGLGetDevices(4, cuda.CUGLDeviceList.CU_GL_DEVICE_LIST_ALL)
        print(err.name, count, [int(d) for d in devices])
        err, count, devices = cuda.cuGLGetDevices(0, cuda.CUGLDeviceList.CU_GL_DEVICE_LIST_ALL)
        print(err.name, count, devices)
        err, dev = cuda.cuVDPAUGetDevice(cuda.VdpDevice(3), cuda.VdpGetProcAddress(0x1234))
        print(err.name, type(dev).__name__, int(dev))
        err, res = cuda.cuGraphicsVDPAURegisterVideoSurface(cuda.VdpVideoSurface(2), 0)
        print(err.name, hex(int(res)))
        err, res = cuda.cuGraphicsVDPAURegisterOutputSurface(4, 0)
        print(err.name, hex(int(res)))
    """)
    assert out == ["CUDA_SUCCESS", "0x61000005", "CUDA_SUCCESS", "0x61000009",
                   "CUDA_SUCCESS", "1", "[0]", "CUDA_SUCCESS", "1", "[]",
                   "CUDA_SUCCESS", "CUdevice", "0",
                   "CUDA_SUCCESS", "0x62000002", "CUDA_SUCCESS", "0x63000004"]


@pytest.mark.provokes_api_error
def test_driver_refusals_are_returned_as_its_status(fake_driver):
    out = run_on_fake(fake_driver, """
        err, res = cuda.cuGraphicsGLRegisterBuffer(0, 0)
        print(err.name, res)
        err, dev = cuda.cuVDPAUGetDevice(1, None)
        print(err.name, dev)
    """)
    assert out == ["CUDA_ERROR_INVALID_VALUE", "None"] * 2


def test_luid_is_eight_bytes_as_written(fake_driver):
    # A LUID is binary: a NUL inside it is kept (the fake writes 0x10..0x17
    # with byte 3 zero).
    out = run_on_fake(fake_driver, """
        err, luid, mask = cuda.cuDeviceGetLuid(0)
        print(err.name, luid.hex(), mask)
    """)
    assert out == ["CUDA_SUCCESS", "1011120014151617", "1"]


def test_logs_dump_into_a_buffer_and_advance_the_iterator(fake_driver, tmp_path):
    out = run_on_fake(fake_driver, """
        buf = bytearray(64)
        err, it, size = cuda.cuLogsDumpToMemory(None, buf, len(buf), 0)
        print(err.name, it, size, bytes(buf[:size]).decode().strip().replace(" ", "_"))
        it = cuda.CUlogIterator(5)
        err, same, size = cuda.cuLogsDumpToMemory(it, buf, 64, 0)
        print(err.name, same is it, int(it))
        err, new, size = cuda.cuLogsDumpToMemory(7, buf, 64, 0)
        print(err.name, type(new).__name__, int(new))
        err, it2 = cuda.cuLogsDumpToFile(it, PATH, 0)
        print(err.name, it2 is it, int(it))
        err, none = cuda.cuLogsDumpToFile(None, PATH, 0)
        print(err.name, none)
    """.replace("PATH", repr(str(tmp_path / "log.txt"))))
    assert out == ["CUDA_SUCCESS", "None", "20", "[fake]_one_log_line",
                   "CUDA_SUCCESS", "True", "6", "CUDA_SUCCESS", "CUlogIterator", "8",
                   "CUDA_SUCCESS", "True", "7", "CUDA_SUCCESS", "None"]


@pytest.mark.provokes_api_error
def test_a_log_buffer_without_room_is_the_drivers_error(fake_driver):
    out = run_on_fake(fake_driver, """
        err, it, size = cuda.cuLogsDumpToMemory(None, bytearray(8), 8, 0)
        print(err.name, it, size)
    """)
    assert out == ["CUDA_ERROR_INVALID_VALUE", "None", "None"]


@pytest.mark.parametrize("module, name", [("cuda", "cuLogsDumpToMemory"), ("cudart", "cudaLogsDumpToMemory")])
def test_a_log_size_beyond_the_buffer_is_refused_before_the_call(module, name):
    dump = getattr({"cuda": cuda, "cudart": cudart}[module], name, None)
    if dump is None:
        pytest.skip(f"{name} is not in these headers (the runtime's log API came with CUDA 13.0)")
    with pytest.raises(ValueError, match="buffer"):
        dump(None, bytearray(8), 64, 0)
    with pytest.raises(TypeError, match="buffer"):
        dump(None, memoryview(b"read-only"), 4, 0)
    with pytest.raises(TypeError, match="iterator"):
        dump("first", bytearray(8), 8, 0)


@pytest.mark.gpu
def test_logs_dump_on_the_driver(driver, cu_context):
    buf = bytearray(25600)
    err, iterator, size = driver.cuLogsDumpToMemory(None, buf, len(buf), 0)
    assert err == driver.CUresult.CUDA_SUCCESS, err
    assert 0 <= size < len(buf) and buf[size] == 0


@pytest.mark.gpu
@pytest.mark.provokes_api_error
def test_registering_gl_without_a_context_is_a_driver_error(driver, cu_context):
    # No GL context here: the driver must refuse, not crash.
    err, resource = driver.cuGraphicsGLRegisterBuffer(1, 0)
    assert isinstance(err, driver.CUresult) and err != driver.CUresult.CUDA_SUCCESS
    assert resource is None
