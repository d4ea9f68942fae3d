"""Shared pytest configuration: the markers, the backend a test's CUDA calls go
to, and the NVRTC and driver fixtures.

One suite for every machine. A test that checks a behaviour the emulated
driver can show takes the ``backend`` fixture (or ``array_gpu`` for
cubind.Array): it runs against the real GPU where there is one and against the
emulation otherwise (CUBIND_TEST_BACKEND=emulated forces the emulation on a
GPU machine). A test that needs what only hardware does (a kernel's results,
real memory, timing) is marked ``gpu`` and skips without one, naming why.

Nothing heavy is imported at module level: the ``nvrtc`` package is imported
inside the fixtures that need it, and GPU detection uses plain ctypes.
"""

import ctypes
import functools
import gc
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from tests._helpers import import_cubind_driver, ok

SAXPY_SRC = r"""
extern "C" __global__
void saxpy(float a, float *x, float *y, float *out, size_t n)
{
    size_t tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        out[tid] = a * x[tid] + y[tid];
    }
}
"""


# --------------------------------------------------------------------------
# GPU detection and the ``gpu`` marker
# --------------------------------------------------------------------------


@functools.cache
def gpu_unavailable_reason():
    """None when a usable GPU and driver are present, else why not (cached)."""
    try:
        libcuda = ctypes.CDLL("libcuda.so.1")
    except OSError as exc:
        return f"no GPU: libcuda.so.1 not loadable ({exc})"
    rc = libcuda.cuInit(0)
    if rc != 0:
        return f"no GPU: cuInit returned {rc}"
    count = ctypes.c_int(0)
    rc = libcuda.cuDeviceGetCount(ctypes.byref(count))
    if rc != 0:
        return f"no GPU: cuDeviceGetCount returned {rc}"
    if count.value < 1:
        return "no GPU: cuDeviceGetCount reported 0 devices"
    return None


# Caches the suite would otherwise fill in the user's home: cubind's compile
# cache (~/.cache/cubind) and the driver's JIT cache (~/.nv/ComputeCache).
# Set at configure time, not in a fixture: collection already calls cuInit
# (gpu_unavailable_reason), and subprocesses the tests start inherit them.
_CACHE_VARIABLES = {"CUBIND_CACHE_DIR": "cubind-cache", "CUDA_CACHE_PATH": "cuda-jit-cache"}
_session_caches: dict = {}


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "gpu: the test needs a usable GPU and driver (skipped otherwise)"
    )
    config.addinivalue_line(
        "markers", "backend: the test runs against the real GPU where there is one, else the emulated driver "
        "(added to every test that takes the backend or array_gpu fixture)"
    )
    config.addinivalue_line(
        "markers", "provokes_api_error: the test makes a CUDA call fail on purpose (scripts/gpu-check.sh deselects "
        "it: a sanitizer reports every failed call)"
    )
    config.addinivalue_line(
        "markers", "foreign_allocator: the test hands memory to CuPy's or PyTorch's caching allocator, which keeps "
        "it to the process's exit (scripts/gpu-check.sh deselects it: the sanitizer counts that memory as leaked)"
    )
    config.addinivalue_line(
        "markers", "foreign_code(reason): the test runs another library's CUDA code (NVIDIA's bindings, JAX) whose "
        "own failed calls or allocations the sanitizer would count against cubind (scripts/gpu-check.sh deselects it)"
    )
    root = tempfile.mkdtemp(prefix="cubind-tests-")
    _session_caches["root"] = root
    for variable, name in _CACHE_VARIABLES.items():
        _session_caches[variable] = os.environ.get(variable)
        os.environ[variable] = os.path.join(root, name)
    if _use_emulation():
        _load_emulated_driver(root)


# The emulated driver this process loaded (pytest_configure), where it did.
_emulated = {}


def _load_emulated_driver(root):
    """Without a GPU (or with CUBIND_TEST_BACKEND=emulated), this process's
    cubind runs on the emulated driver: tests/fake_driver built once for the
    session and loaded here, before any test can load the machine's driver.
    The variable that names it is set only for the load, so that the child
    interpreters a test starts choose their driver themselves (Backend.env)."""
    from tests.fake_driver import build

    cuda = import_cubind_driver()
    if cuda is None or build.compiler() is None:
        return
    library = build.build(os.path.join(root, "emulated-driver"))["cuda"]
    previous = os.environ.get("CUBIND_CUDA_LIBRARY")
    os.environ["CUBIND_CUDA_LIBRARY"] = library
    try:
        cuda.cuInit(0)
    finally:
        if previous is None:
            os.environ.pop("CUBIND_CUDA_LIBRARY")
        else:
            os.environ["CUBIND_CUDA_LIBRARY"] = previous
    # A GPU of compute capability 9.0 for what this process compiles for it
    # (cubind.Array's kernels), as FAKE_COMPUTE_CAPABILITY does for a child.
    ctypes.c_int.in_dll(ctypes.CDLL(library), "fake_compute_capability_set").value = 90
    _emulated["library"] = library


def pytest_unconfigure(config):
    root = _session_caches.pop("root", None)
    if root is None:
        return
    for variable in _CACHE_VARIABLES:
        previous = _session_caches.pop(variable)
        if previous is None:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = previous
    shutil.rmtree(root, ignore_errors=True)


_BACKEND_FIXTURES = ("backend", "array_gpu")

# --------------------------------------------------------------------------
# Failed driver calls must be meant: the emulated driver's record
# --------------------------------------------------------------------------

# Markers under which a failed driver call is expected (the sanitizer run
# deselects them: on a GPU it reports every failed call as an error).
_FAILURES_EXPECTED = ("provokes_api_error", "foreign_code")


@pytest.fixture(autouse=True)
def _failed_calls_are_marked(request, tmp_path_factory):
    """Fails a test whose calls the emulated driver answered with an error
    (in this process or in the child interpreters it started) unless it is
    marked as expecting them: on a GPU, scripts/gpu-check.sh would report
    each of them and only its markers keep such a test out."""
    log = tmp_path_factory.mktemp("failed-calls") / "log"
    previous = os.environ.get("FAKE_FAILED_LOG")
    os.environ["FAKE_FAILED_LOG"] = str(log)
    try:
        yield
    finally:
        if previous is None:
            os.environ.pop("FAKE_FAILED_LOG", None)
        else:
            os.environ["FAKE_FAILED_LOG"] = previous
    failed = [line for line in (log.read_text().split("\n") if log.exists() else []) if line]
    if failed and not any(request.node.get_closest_marker(m) for m in _FAILURES_EXPECTED):
        shown = ", ".join(sorted(set(failed))[:8])
        pytest.fail(f"{len(failed)} driver call(s) failed ({shown}) in a test not marked provokes_api_error: "
                    "mark it if the failure is the point (the sanitizer run leaves it out), else fix the call",
                    pytrace=False)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if any(name in getattr(item, "fixturenames", ()) for name in _BACKEND_FIXTURES):
            item.add_marker(pytest.mark.backend)
    gpu_items = [item for item in items if item.get_closest_marker("gpu")]
    if not gpu_items:
        return
    reason = gpu_unavailable_reason()
    if reason is None:
        return
    for item in gpu_items:
        item.add_marker(pytest.mark.skip(reason=reason))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """The skipped tests counted by reason, a line each: without a GPU they
    are a hundred and more, nearly all for one reason (scripts/test.sh asks
    pytest to list failures and errors only, -rfE). -rs (or -ra) lists every
    skipped test instead, as pytest does."""
    skipped = terminalreporter.stats.get("skipped", [])
    if not skipped or set(config.getoption("reportchars") or "") & set("saA"):
        return
    reasons = {}
    for report in skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        reason = reason.removeprefix("Skipped: ")
        reasons[reason] = reasons.get(reason, 0) + 1
    terminalreporter.write_sep("=", f"{len(skipped)} skipped, by reason (-rs lists each test)")
    for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
        terminalreporter.write_line(f"{count:5d}  {reason}")


# --------------------------------------------------------------------------
# Toolkit files
# --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def nvrtc_header():
    """Text of the nvrtc.h the bindings were generated from (skip if absent)."""
    from tests._toolkit import cuda_include, header

    path = header("nvrtc.h")
    if path is None:
        pytest.skip(f"nvrtc.h not found in {cuda_include()} (CUBIND_CUDA_INCLUDE, CUDA_HOME, CUDA_PATH, nvcc, "
                    "/usr/local/cuda)")
    return path.read_text()


# --------------------------------------------------------------------------
# NVRTC helpers
# --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def saxpy_src():
    return SAXPY_SRC


@pytest.fixture
def make_program():
    """Factory: create an NVRTC program (asserting success), destroyed at teardown."""
    import nvrtc

    created = []

    def make(src, name="prog.cu", headers=None, include_names=None):
        num_headers = len(headers) if headers else 0
        err, prog = nvrtc.nvrtcCreateProgram(
            src, name, num_headers, headers, include_names
        )
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
        created.append(prog)
        return prog

    yield make
    for prog in created:
        if int(prog) != 0:
            nvrtc.nvrtcDestroyProgram(prog)


@pytest.fixture
def program_log():
    """Callable: the program log via nvrtcGetProgramLogSize + nvrtcGetProgramLog."""
    import nvrtc

    def get_log(prog):
        err, size = nvrtc.nvrtcGetProgramLogSize(prog)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
        buf = bytearray(size)
        (err,) = nvrtc.nvrtcGetProgramLog(prog, buf)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
        return bytes(buf).rstrip(b"\0").decode(errors="replace")

    return get_log


@pytest.fixture
def compile_program(make_program, program_log):
    """Factory: create + compile; returns the program, asserting success (with the log)."""
    import nvrtc

    def compile_(src, options=(), name="prog.cu", headers=None, include_names=None):
        prog = make_program(src, name, headers, include_names)
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), list(options))
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, f"{err!r}\n{program_log(prog)}"
        return prog

    return compile_


@pytest.fixture
def get_output():
    """Callable: fetch one compiled artefact ("PTX", "CUBIN", "LTOIR", "OptiXIR")."""
    import nvrtc

    def get(prog, kind="PTX"):
        err, size = getattr(nvrtc, f"nvrtcGet{kind}Size")(prog)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
        buf = bytearray(size)
        (err,) = getattr(nvrtc, f"nvrtcGet{kind}")(prog, buf)
        assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
        return bytes(buf)

    return get


@pytest.fixture
def compile_to_ptx(compile_program, get_output):
    """Callable: compile ``src`` with ``options`` and return the PTX text (no NUL)."""

    def to_ptx(src, options=(), **program_kwargs):
        ptx = get_output(compile_program(src, options, **program_kwargs), "PTX")
        return ptx.rstrip(b"\0").decode()

    return to_ptx


@pytest.fixture
def saxpy_program(compile_program, saxpy_src):
    """The saxpy kernel compiled to PTX for compute_75."""
    return compile_program(saxpy_src, ["--gpu-architecture=compute_75"])


@pytest.fixture
def restore_pch_heap_size():
    """Put the process-wide PCH heap size back after a test changes it."""
    import nvrtc

    err, size = nvrtc.nvrtcGetPCHHeapSize()
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    yield size
    nvrtc.nvrtcSetPCHHeapSize(size)


# --------------------------------------------------------------------------
# Driver API (cubind's ``cuda`` package) fixtures, for the GPU tests
# --------------------------------------------------------------------------


@pytest.fixture(scope="session")
def gpu_reason():
    """None when a GPU and driver are usable, else why not (for tests that check the no-GPU path)."""
    return gpu_unavailable_reason()


@pytest.fixture(scope="session")
def driver():
    """cubind's driver module after cuInit(0); skips where the package is not built."""
    cuda = import_cubind_driver()
    if cuda is None:
        pytest.skip("cubind's cuda driver package is not built (import cuda has no cuInit)")
    ok(cuda.cuInit, 0)
    return cuda


@pytest.fixture(scope="session")
def cu_device(driver):
    """CUdevice 0."""
    return ok(driver.cuDeviceGet, 0)


@pytest.fixture(scope="session")
def compute_capability(driver, cu_device):
    """(major, minor) of device 0."""
    attr = driver.CUdevice_attribute
    major = ok(driver.cuDeviceGetAttribute, attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, cu_device)
    minor = ok(driver.cuDeviceGetAttribute, attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, cu_device)
    return major, minor


@pytest.fixture(scope="session")
def device_arch(compute_capability):
    """The newest NVRTC architecture (e.g. 90) the device runs: its compute capability, capped."""
    import nvrtc

    major, minor = compute_capability
    err, archs = nvrtc.nvrtcGetSupportedArchs()
    assert err == nvrtc.nvrtcResult.NVRTC_SUCCESS, err
    usable = [a for a in archs if a <= 10 * major + minor]
    if not usable:
        pytest.skip(f"compute capability {major}.{minor} is older than every NVRTC architecture")
    return max(usable)


@pytest.fixture(scope="session")
def _cu_primary_context(driver, cu_device):
    ctx = ok(driver.cuDevicePrimaryCtxRetain, cu_device)
    yield ctx
    driver.cuDevicePrimaryCtxRelease(cu_device)


@pytest.fixture
def cu_context(driver, _cu_primary_context):
    """The primary context of device 0, made current; at teardown it must synchronize cleanly."""
    ok(driver.cuCtxSetCurrent, _cu_primary_context)
    yield _cu_primary_context
    ok(driver.cuCtxSetCurrent, _cu_primary_context)
    ok(driver.cuCtxSynchronize)


@pytest.fixture
def cu_stream(driver, cu_context):
    """A new stream in the current context, destroyed at teardown."""
    stream = ok(driver.cuStreamCreate, 0)
    yield stream
    driver.cuStreamDestroy(stream)


@pytest.fixture
def device_alloc(driver, cu_context):
    """Factory: cuMemAlloc(nbytes) -> CUdeviceptr, freed at teardown."""
    allocated = []

    def alloc(nbytes):
        dptr = ok(driver.cuMemAlloc, nbytes)
        allocated.append(dptr)
        return dptr

    yield alloc
    driver.cuCtxSynchronize()
    for dptr in allocated:
        driver.cuMemFree(dptr)


@pytest.fixture
def compile_for_device(compile_program, get_output, device_arch):
    """Factory: NVRTC-compile ``src`` for the device; kind "PTX" (compute_XX) or "CUBIN" (sm_XX)."""

    def compile_(src, kind="PTX", options=()):
        arch = f"compute_{device_arch}" if kind == "PTX" else f"sm_{device_arch}"
        prog = compile_program(src, [f"--gpu-architecture={arch}", *options])
        return get_output(prog, kind)

    return compile_


@pytest.fixture
def load_module(driver, cu_context, compile_for_device):
    """Factory: compile ``src`` for the device, cuModuleLoadData it; unloaded at teardown."""
    modules = []

    def load(src, kind="PTX", options=()):
        module = ok(driver.cuModuleLoadData, compile_for_device(src, kind, options))
        modules.append(module)
        return module

    yield load
    driver.cuCtxSynchronize()
    for module in modules:
        driver.cuModuleUnload(module)


@pytest.fixture(scope="session")
def fake_driver(tmp_path_factory):
    """tests/fake_driver/fake_libcuda.c built as libcuda.so.1 (a recording
    stand-in for the driver) by tests/fake_driver/build.py, the builder the
    benchmark uses too; skips where there is no C compiler."""
    from tests.fake_driver import build

    if "library" in _emulated:
        return Path(_emulated["library"])
    if build.compiler() is None:
        pytest.skip("no C compiler to build tests/fake_driver")
    return Path(build.build(tmp_path_factory.mktemp("fake_driver"))["cuda"])


@pytest.fixture(scope="session")
def fake_nvml(tmp_path_factory):
    """tests/fake_driver/fake_libnvml.c built as libnvidia-ml.so.1 (two GPUs
    of fixed readings) against the real nvml.h; skips where there is no C
    compiler or no nvml.h (NVIDIA's wheel nvidia-nvml-dev)."""
    from tests._toolkit import header
    from tests.fake_driver import build

    if build.compiler() is None:
        pytest.skip("no C compiler to build tests/fake_driver")
    nvml_h = header("nvml.h")
    if nvml_h is None:
        pytest.skip("no nvml.h (pip install nvidia-nvml-dev)")
    built = build.build(tmp_path_factory.mktemp("fake_nvml"), ("nvml",), include_dirs=[str(nvml_h.parent)])
    return Path(built["nvml"])


# --------------------------------------------------------------------------
# The backend: the real GPU where there is one, the emulated driver otherwise
# --------------------------------------------------------------------------


class Backend:
    """Where a test's CUDA calls go. ``real``: the machine's driver and GPU;
    otherwise tests/fake_driver, the emulated driver: a libcuda.so.1 that keeps
    device memory on the host, runs the array's kernels, records what it was
    handed and refuses what a real driver would crash on (``library`` is its
    path; this process runs on it too, loaded at configure time). Code that must load
    the driver runs in a fresh interpreter (the driver is opened once per
    process, and NVRTC must not compile in one that loaded the fake)."""

    def __init__(self, library=None):
        self.library = library
        self.real = library is None
        self.name = "real" if self.real else "emulated"

    def __repr__(self):
        return f"<Backend {self.name}>"

    def env(self, **extra):
        """Environment for a child interpreter on this backend (the repository first on PYTHONPATH)."""
        from tests._toolkit import pythonpath

        env = dict(os.environ, PYTHONPATH=pythonpath(), **extra)
        if not self.real:
            env["CUBIND_CUDA_LIBRARY"] = str(self.library)
        return env

    def run(self, code, timeout=300, **extra_env):
        """Run ``code`` in a fresh interpreter on this backend; the finished process (not checked)."""
        import subprocess
        import sys

        root = Path(__file__).resolve().parent.parent
        return subprocess.run([sys.executable, "-c", code], cwd=root, env=self.env(**extra_env),
                              capture_output=True, text=True, timeout=timeout)


def _use_emulation():
    return os.environ.get("CUBIND_TEST_BACKEND") == "emulated" or gpu_unavailable_reason() is not None


@pytest.fixture(scope="session")
def backend(request):
    """The real GPU where there is one, else the emulated driver (tests/fake_driver)."""
    if _use_emulation():
        return Backend(request.getfixturevalue("fake_driver"))
    return Backend()


@pytest.fixture
def array_gpu(request):
    """What cubind.Array runs on: the real GPU where there is one, else the
    emulated driver this process loaded (the ``emulated_gpu`` fixture, for
    tests that look at the calls made)."""
    if _use_emulation():
        return request.getfixturevalue("emulated_gpu")
    return Backend()


@pytest.fixture
def emulated_gpu():
    """The emulated driver this process runs on, recording the calls and the
    array kernels' launches (tests/fake_driver/controls.py), for a test that
    checks which calls or kernels were used; skipped where the process runs
    on a real driver (a GPU machine, unless CUBIND_TEST_BACKEND=emulated)."""
    from tests.fake_driver.controls import EmulatedDriver

    if "library" not in _emulated:
        pytest.skip("looks at the emulated driver's record: runs where the suite has no GPU "
                    "(or CUBIND_TEST_BACKEND=emulated)")
    driver = EmulatedDriver(_emulated["library"])
    driver.reset()
    driver.configure()
    try:
        yield driver
    finally:
        driver.reset()
        gc.collect()  # what the test dropped is freed while its driver's record is still its own
