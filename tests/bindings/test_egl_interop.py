"""The EGL interop (cudaEGL.h in ``cuda``, cuda_egl_interop.h in
``cuda.cudart``), bound as the rest of each API: the classic names, the
CUeglFrame/cudaEglFrame structs with their union of arrays and pitches, the
connection and resource handles in and out, the driver's error for what an EGL
display would have to give (tests/fake_driver refuses a NULL image, stream or
sync as a driver without one does), a driver lacking the functions, and bad
arguments as Python errors naming the parameter.
"""

import pytest

from tests._helpers import import_cubind_driver, run_on_fake

cuda = import_cubind_driver()
if cuda is None:
    pytest.skip("cubind's cuda package is not built", allow_module_level=True)
cudart = pytest.importorskip("cuda.cudart", reason="cubind's cuda.cudart is not built")

DRIVER_NAMES = [
    "EGLImageKHR", "EGLStreamKHR", "EGLSyncKHR",
    "CUeglFrame", "CUeglFrame_v1", "CUeglStreamConnection", "CUeglColorFormat", "CUeglFrameType",
    "CUeglResourceLocationFlags", "cuGraphicsEGLRegisterImage", "cuEGLStreamConsumerConnect",
    "cuEGLStreamConsumerConnectWithFlags", "cuEGLStreamConsumerDisconnect", "cuEGLStreamConsumerAcquireFrame",
    "cuEGLStreamConsumerReleaseFrame", "cuEGLStreamProducerConnect", "cuEGLStreamProducerDisconnect",
    "cuEGLStreamProducerPresentFrame", "cuEGLStreamProducerReturnFrame", "cuGraphicsResourceGetMappedEglFrame",
    "cuEventCreateFromEGLSync",
]
RUNTIME_NAMES = [
    "EGLImageKHR", "EGLStreamKHR", "EGLSyncKHR",
    "cudaEglFrame", "cudaEglPlaneDesc", "cudaEglStreamConnection", "cudaEglColorFormat", "cudaEglFrameType",
    "cudaEglResourceLocationFlags", "cudaGraphicsEGLRegisterImage", "cudaEGLStreamConsumerConnect",
    "cudaEGLStreamConsumerConnectWithFlags", "cudaEGLStreamConsumerDisconnect", "cudaEGLStreamConsumerAcquireFrame",
    "cudaEGLStreamConsumerReleaseFrame", "cudaEGLStreamProducerConnect", "cudaEGLStreamProducerDisconnect",
    "cudaEGLStreamProducerPresentFrame", "cudaEGLStreamProducerReturnFrame", "cudaGraphicsResourceGetMappedEglFrame",
    "cudaEventCreateFromEGLSync",
]


@pytest.mark.parametrize("module, name", [("cuda", n) for n in DRIVER_NAMES] + [("cudart", n) for n in RUNTIME_NAMES])
def test_classic_names_exist(module, name):
    assert hasattr({"cuda": cuda, "cudart": cudart}[module], name)


def test_enums_keep_the_headers_values():
    assert int(cuda.CUeglFrameType.CU_EGL_FRAME_TYPE_PITCH) == 1
    assert int(cuda.CUeglResourceLocationFlags.CU_EGL_RESOURCE_LOCATION_VIDMEM) == 1
    assert int(cuda.CUeglColorFormat.CU_EGL_COLOR_FORMAT_RGBA) == 0x07
    assert int(cudart.cudaEglFrameType.cudaEglFrameTypePitch) == 1


def test_egl_handles_are_handle_classes_of_an_address():
    image = cuda.EGLImageKHR(0x1234)
    assert int(image) == 0x1234 and image == cuda.EGLImageKHR(0x1234)
    assert repr(cudart.EGLSyncKHR(0x10)) == "<EGLSyncKHR 0x10>"
    # The driver's and the runtime's classes wrap one C type: each module
    # takes the other's (checked before any call, by the conversion).
    with pytest.raises(TypeError, match="image"):
        cuda.cuGraphicsEGLRegisterImage(cuda.EGLStreamKHR(1), 0)
    with pytest.raises(TypeError, match="eglStream"):
        cudart.cudaEGLStreamConsumerConnect(cudart.EGLImageKHR(1))


def test_driver_frame_fields_round_trip():
    frame = cuda.CUeglFrame()
    frame.width, frame.height, frame.planeCount = 640, 480, 2
    frame.frameType = cuda.CUeglFrameType.CU_EGL_FRAME_TYPE_PITCH
    frame.eglColorFormat = cuda.CUeglColorFormat.CU_EGL_COLOR_FORMAT_YUV420_SEMIPLANAR
    frame.cuFormat = cuda.CUarray_format.CU_AD_FORMAT_UNSIGNED_INT8
    assert (frame.width, frame.height, frame.planeCount) == (640, 480, 2)
    assert frame.frameType == cuda.CUeglFrameType.CU_EGL_FRAME_TYPE_PITCH
    assert frame.eglColorFormat == cuda.CUeglColorFormat.CU_EGL_COLOR_FORMAT_YUV420_SEMIPLANAR
    frame.frame.pPitch = [0x1000, 0x2000, 0]
    assert frame.frame.pPitch == [0x1000, 0x2000, 0]
    # One union: the arrays are the pitches' bytes read as CUarray handles.
    arrays = frame.frame.pArray
    assert all(isinstance(a, cuda.CUarray) for a in arrays)
    assert [int(a) for a in arrays] == [0x1000, 0x2000, 0]
    frame.frame.pArray = [cuda.CUarray(0x30), 0x40, None]
    assert frame.frame.pPitch == [0x30, 0x40, 0]


def test_runtime_frame_fields_round_trip():
    frame = cudart.cudaEglFrame()
    frame.planeCount = 3
    frame.frameType = cudart.cudaEglFrameType.cudaEglFrameTypeArray
    assert frame.planeCount == 3 and frame.frameType == cudart.cudaEglFrameType.cudaEglFrameTypeArray
    frame.frame.pArray = [cudart.cudaArray_t(0x10), 0x20, 0x30]
    assert [int(a) for a in frame.frame.pArray] == [0x10, 0x20, 0x30]
    planes = frame.planeDesc   # copies, as NVIDIA's: written by assigning the list back
    planes[1].width, planes[1].pitch = 320, 384
    frame.planeDesc = planes
    assert (frame.planeDesc[1].width, frame.planeDesc[1].pitch) == (320, 384)


def test_bad_arguments_name_the_parameter():
    frame = cuda.CUeglFrame()
    with pytest.raises(TypeError, match="width"):
        frame.width = "wide"
    with pytest.raises(TypeError, match="pArray"):
        frame.frame.pArray = ["a", 0, 0]
    with pytest.raises(TypeError, match="pPitch"):
        frame.frame.pPitch = [1.5, 0, 0]
    with pytest.raises(ValueError, match="pPitch"):
        frame.frame.pPitch = [0, 0]
    with pytest.raises(TypeError, match="image"):
        cuda.cuGraphicsEGLRegisterImage("image", 0)
    with pytest.raises(TypeError, match="conn"):
        cuda.cuEGLStreamConsumerDisconnect("conn")
    with pytest.raises(TypeError, match="eglframe"):
        cuda.cuEGLStreamProducerPresentFrame(cuda.CUeglStreamConnection(0), "frame", None)
    with pytest.raises(TypeError, match="eglSync"):
        cudart.cudaEventCreateFromEGLSync(1.5, 0)
    with pytest.raises(TypeError, match="conn"):
        cudart.cudaEGLStreamProducerDisconnect(cuda.CUevent(1))


@pytest.mark.provokes_api_error
def test_driver_refusals_are_returned_as_its_status(fake_driver):
    out = run_on_fake(fake_driver, """
        err, resource = cuda.cuGraphicsEGLRegisterImage(0, 0)
        print(err.name, resource)
        err, conn = cuda.cuEGLStreamConsumerConnect(None)
        print(err.name, conn)
        err, event = cuda.cuEventCreateFromEGLSync(cuda.EGLSyncKHR(0), 0)
        print(err.name, event)
    """)
    assert out == ["CUDA_ERROR_INVALID_VALUE", "None"] * 3


@pytest.mark.provokes_api_error  # its last call maps no resource, on purpose
def test_registered_image_maps_to_a_frame(fake_driver):
    out = run_on_fake(fake_driver, """
        from cuda import cudart
        err, resource = cuda.cuGraphicsEGLRegisterImage(cudart.EGLImageKHR(0x1234), 0)
        print(err.name, type(resource).__name__, int(resource) != 0)
        err, frame = cuda.cuGraphicsResourceGetMappedEglFrame(resource, 0, 0)
        print(err.name, frame.width, frame.height, frame.planeCount, frame.frameType.name)
        print(*[hex(p) for p in frame.frame.pPitch])
        err, frame = cuda.cuGraphicsResourceGetMappedEglFrame(None, 0, 0)
        print(err.name, frame)
    """)
    assert out == ["CUDA_SUCCESS", "CUgraphicsResource", "True",
                   "CUDA_SUCCESS", "640", "480", "2", "CU_EGL_FRAME_TYPE_PITCH",
                   "0x1000", "0x2000", "0x0",
                   "CUDA_ERROR_INVALID_HANDLE", "None"]


def test_a_driver_without_the_function_says_not_found(fake_driver):
    out = run_on_fake(fake_driver, """
        err, conn = cuda.cuEGLStreamConsumerConnect(0x10)
        print(err.name, conn)
    """, FAKE_MISSING="cuEGLStreamConsumerConnect")
    assert out == ["CUDA_ERROR_NOT_FOUND", "None"]


@pytest.mark.gpu
@pytest.mark.provokes_api_error
def test_registering_no_image_is_a_driver_error(driver, cu_context):
    # No EGL display here: a NULL EGLImage must come back as the driver's
    # error, not crash it.
    err, resource = driver.cuGraphicsEGLRegisterImage(0, 0)
    assert isinstance(err, driver.CUresult) and err != driver.CUresult.CUDA_SUCCESS
    assert resource is None
