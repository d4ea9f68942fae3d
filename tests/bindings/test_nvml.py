"""NVML (``import nvml``, generated from bindings/nvml.toml alone): without a
driver every call is the loader's clear error; versioned structs come stamped
with their version; strings are the classic size-in/string-out; lists take a
capacity; coverage of nvml.h (the type-fuzz of every package is in
test_bad_input.py). On a GPU, NVML's readings agree with the driver's (memory,
UUID, name) and nvidia-smi's."""

import inspect
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests._helpers import ok
from tests._toolkit import pythonpath
from tests.generator_integration.test_generator_cuda_h import ROOT, run_generator

nvml = pytest.importorskip("nvml", reason="cubind's nvml package is not built (nvml.h missing)")

R = nvml.nvmlReturn_t


def driver_has_nvml():
    import ctypes

    try:
        ctypes.CDLL("libnvidia-ml.so.1")
    except OSError:
        return False
    return True


def run_fresh(code, **env):
    """``code`` in a fresh interpreter (the library is opened once per process); its stdout."""
    full = dict(os.environ, PYTHONPATH=pythonpath(), **env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.skipif(driver_has_nvml(), reason="this machine has the NVIDIA driver's libnvidia-ml.so.1")
def test_without_a_driver_every_call_is_the_loaders_clear_error():
    out = run_fresh("""
        import nvml
        from _cubind.loader import LibraryNotFoundError
        for call in (nvml.nvmlInit, nvml.nvmlDeviceGetCount, lambda: nvml.nvmlSystemGetDriverVersion(80),
                     lambda: nvml.nvmlDeviceGetName(None, 96)):
            try:
                call()
            except LibraryNotFoundError as exc:
                first, second = str(exc).splitlines()[:2]
                print(first, "| driver:", second.startswith("It comes with the NVIDIA GPU driver"))
    """, CUBIND_NVML_LIBRARY="")
    lines = out.splitlines()
    assert len(lines) == 4, out
    # The driver's library: the message points at the NVIDIA driver, not at a toolkit.
    assert set(lines) == {"cubind: cannot find the nvml library (libnvidia-ml.so.1). | driver: True"}


def test_versioned_structs_come_stamped_with_their_version():
    memory = nvml.nvmlMemory_v2_t()
    assert memory.version == nvml.nvmlMemory_v2 == nvml.sizeof(nvml.nvmlMemory_v2_t) | 2 << 24
    # Every struct of the header with a version field and its constant: the
    # rule of the spec, not a list.
    stamped = 0
    for name in dir(nvml):
        match = re.fullmatch(r"(nvml\w+_v(\d+))_t", name)
        cls = getattr(nvml, name)
        if not match or not isinstance(cls, type) or "version" not in getattr(cls, "_fields", ()):
            continue
        constant = getattr(nvml, match.group(1), None)
        if isinstance(constant, int):
            assert cls().version == constant == nvml.sizeof(cls) | int(match.group(2)) << 24, name
            stamped += 1
    assert stamped >= 20, stamped


def test_strings_are_size_in_string_out_and_lists_take_a_capacity():
    assert list(inspect.signature(nvml.nvmlDeviceGetName).parameters) == ["device", "length"]
    assert list(inspect.signature(nvml.nvmlSystemGetDriverVersion).parameters) == ["length"]
    processes = inspect.signature(nvml.nvmlDeviceGetComputeRunningProcesses).parameters
    assert list(processes) == ["device", "infoCount"] and processes["infoCount"].default == 0
    with open(ROOT / "nvml" / "__init__.pyi") as f:
        stubs = f.read()
    assert re.search(r"def nvmlDeviceGetName\(.*\) -> tuple\[nvmlReturn_t, bytes\]", stubs)
    assert re.search(r"def nvmlDeviceGetComputeRunningProcesses\(.*\) -> "
                     r"tuple\[nvmlReturn_t, int, list\[nvmlProcessInfo_v2_t\]\]", stubs)
    assert re.search(r"def nvmlDeviceGetMemoryInfo_v2\(device: .*\) -> tuple\[nvmlReturn_t, nvmlMemory_v2_t\]", stubs)


def test_every_function_is_bound_or_skipped_with_its_reason():
    report = run_generator("--spec", str(ROOT / "bindings" / "nvml.toml"), "--report")
    total, = re.findall(r"nvml.h: (\d+)/(\d+) functions bound", report)
    bound, declared = map(int, total)
    skipped = re.findall(r"  skipped  (\w+): (.+)", report)
    assert bound + len(skipped) == declared and bound >= 0.98 * declared, report[-2000:]
    assert all(reason for _name, reason in skipped)
    for name in ["nvmlInit", "nvmlDeviceGetCount", "nvmlDeviceGetHandleByIndex", "nvmlDeviceGetName",
                 "nvmlDeviceGetUUID", "nvmlDeviceGetMemoryInfo_v2", "nvmlDeviceGetUtilizationRates",
                 "nvmlDeviceGetTemperature", "nvmlDeviceGetPowerUsage", "nvmlDeviceGetEnforcedPowerLimit",
                 "nvmlDeviceGetClockInfo", "nvmlDeviceGetPciInfo", "nvmlDeviceGetComputeRunningProcesses",
                 "nvmlDeviceGetMigMode", "nvmlSystemGetDriverVersion", "nvmlShutdown"]:
        assert callable(getattr(nvml, name)), name


# -- on a GPU: NVML's readings against the driver's and nvidia-smi's ----------------------


@pytest.fixture(scope="module")
def nvml_ready():
    if not driver_has_nvml():
        pytest.skip("no NVIDIA driver: libnvidia-ml.so.1 not loadable")
    ok(nvml.nvmlInit())
    yield
    nvml.nvmlShutdown()


def uuid_text(raw):
    """cuDeviceGetUuid's 16 bytes as NVML writes a GPU's UUID."""
    h = bytes(raw).hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


@pytest.mark.gpu
def test_nvml_agrees_with_the_driver(nvml_ready, driver, cu_device):
    uuid = ok(driver.cuDeviceGetUuid, cu_device)
    raw = bytes(uuid.bytes) if hasattr(uuid, "bytes") else bytes(uuid)
    handle = ok(nvml.nvmlDeviceGetHandleByUUID(uuid_text(raw)))
    assert ok(nvml.nvmlDeviceGetUUID(handle, nvml.NVML_DEVICE_UUID_V2_BUFFER_SIZE)).decode() == uuid_text(raw)
    name = ok(driver.cuDeviceGetName, 256, cu_device)
    name = bytes(name).split(b"\0")[0]
    assert ok(nvml.nvmlDeviceGetName(handle, nvml.NVML_DEVICE_NAME_V2_BUFFER_SIZE)) == name
    memory = ok(nvml.nvmlDeviceGetMemoryInfo_v2(handle))
    # NVML's total (nvidia-smi's) is the card's; cuDeviceTotalMem leaves out
    # what the driver reserves for itself, which NVML reports (on an H200:
    # 150754820096 - 644939776 = 150109880320).
    driver_total = ok(driver.cuDeviceTotalMem, cu_device)
    print(f"nvml total {memory.total}, reserved {memory.reserved}; cuDeviceTotalMem {driver_total}")
    assert memory.total - memory.reserved == driver_total
    assert memory.used + memory.free + memory.reserved == memory.total
    assert ok(nvml.nvmlDeviceGetMemoryInfo(handle)).total == memory.total


@pytest.mark.gpu
def test_nvml_agrees_with_nvidia_smi(nvml_ready):
    smi = shutil.which("nvidia-smi")
    if smi is None:
        pytest.skip("nvidia-smi is not on PATH")
    fields = "index,name,uuid,memory.total,pci.bus_id,driver_version,enforced.power.limit,mig.mode.current"
    out = subprocess.run([smi, f"--query-gpu={fields}", "--format=csv,noheader,nounits"], capture_output=True,
                         text=True, check=True).stdout
    rows = [[c.strip() for c in line.split(",")] for line in out.strip().splitlines()]
    assert len(rows) == ok(nvml.nvmlDeviceGetCount())
    version = ok(nvml.nvmlSystemGetDriverVersion(nvml.NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE)).decode()
    for index, name, uuid, total_mib, bus_id, driver_version, power_limit, mig in rows:
        handle = ok(nvml.nvmlDeviceGetHandleByIndex(int(index)))
        got = {
            "name": ok(nvml.nvmlDeviceGetName(handle, nvml.NVML_DEVICE_NAME_V2_BUFFER_SIZE)).decode(),
            "uuid": ok(nvml.nvmlDeviceGetUUID(handle, nvml.NVML_DEVICE_UUID_V2_BUFFER_SIZE)).decode(),
            "memory.total MiB": ok(nvml.nvmlDeviceGetMemoryInfo_v2(handle)).total // (1 << 20),
            "pci.bus_id": ok(nvml.nvmlDeviceGetPciInfo(handle)).busId.decode(),
            "driver_version": version,
        }
        print(f"nvml vs nvidia-smi, GPU {index}: {got} | smi: {name}, {uuid}, {total_mib} MiB, {bus_id}, "
              f"{driver_version}, enforced.power.limit {power_limit} W, mig {mig}")
        assert (got["name"], got["uuid"], got["driver_version"]) == (name, uuid, driver_version)
        assert got["memory.total MiB"] == int(total_mib)
        assert got["pci.bus_id"].lower() == bus_id.lower()
        if power_limit not in ("[N/A]", "[Not Supported]"):
            limit = ok(nvml.nvmlDeviceGetEnforcedPowerLimit(handle))
            assert abs(limit / 1000 - float(power_limit)) < 1.0


@pytest.mark.gpu
def test_the_process_list_grows_to_its_count(nvml_ready, driver, cu_device):
    # Capacity 0: NVML says how many (NVML_ERROR_INSUFFICIENT_SIZE where any);
    # that capacity returns them all, each with its pid.
    from tests._toolkit import ctx_create_args

    ctx = ok(driver.cuCtxCreate, *ctx_create_args(driver, 0, cu_device))
    try:
        handle = ok(nvml.nvmlDeviceGetHandleByIndex(0))
        err, count, infos = nvml.nvmlDeviceGetComputeRunningProcesses(handle, 0)
        assert err in (R.NVML_SUCCESS, R.NVML_ERROR_INSUFFICIENT_SIZE)
        err, count, infos = nvml.nvmlDeviceGetComputeRunningProcesses(handle, 64)
        assert err == R.NVML_SUCCESS and len(infos) == count
        assert all(info.pid > 0 for info in infos)
    finally:
        ok(driver.cuCtxDestroy, ctx)
