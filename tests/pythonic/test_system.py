"""cubind.system, NVML's Pythonic face: without a GPU against
tests/fake_driver/fake_libnvml.c (two GPUs of fixed readings, built against
the real nvml.h) in fresh interpreters (the library is opened once per
process); on a GPU, the NVML view of a CUDA device is that device."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from tests._toolkit import pythonpath

pytest.importorskip("nvml", reason="cubind's nvml package is not built (nvml.h missing)")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def on_fake(fake_nvml, body):
    """``body`` run with cubind.system on the fake NVML; what it prints, as JSON."""
    code = "import json\nimport cubind\nfrom cubind import system\n" + textwrap.dedent(body)
    env = dict(os.environ, CUBIND_NVML_LIBRARY=str(fake_nvml), PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_every_reading_is_nvmls(fake_nvml):
    got = on_fake(fake_nvml, """
        gpu = system.Device(0)
        print(json.dumps({
            "system": [system.driver_version, system.nvml_version, system.cuda_driver_version, system.device_count],
            "names": [d.name for d in system.devices()],
            "index": gpu.index, "uuid": gpu.uuid, "uuid_bytes": gpu.uuid_bytes.hex(), "pci": gpu.pci_bus_id,
            "memory": gpu.memory._asdict(), "utilization": list(gpu.utilization), "temperature": gpu.temperature,
            "power": [gpu.power_draw, gpu.power_limit], "clocks": gpu.clocks._asdict(),
            "max_clocks": list(system.Device(1).max_clocks), "processes": [list(p) for p in gpu.processes],
            "mig": [list(gpu.mig_mode), list(system.Device(1).mig_mode)],
        }))
    """)
    assert got["system"] == ["999.12.34", "13.999.12.34", 13000, 2]
    assert got["names"] == ["NVIDIA Fake H100", "NVIDIA Fake A100"]
    assert got["index"] == 0 and got["uuid"] == "GPU-01234567-89ab-cdef-0123-456789abcdef"
    assert got["uuid_bytes"] == "0123456789abcdef0123456789abcdef" and got["pci"] == "00000000:1B:00.0"
    # The versioned struct reached the library stamped (it refuses another version).
    assert got["memory"] == {"total": 80 << 30, "used": 1 << 30, "free": (80 << 30) - (1 << 30),
                             "reserved": 512 << 20}
    assert got["utilization"] == [37, 12] and got["temperature"] == 41
    assert got["power"] == [123.456, 700.0]
    assert got["clocks"] == {"graphics": 1980, "sm": 1980, "memory": 2619, "video": 1755}
    assert got["max_clocks"] == [1410, 1410, 1215, 1275]
    # Three processes, more than nothing: the list grew to NVML's count; NVML's
    # "not available" memory is None.
    assert got["processes"] == [[101, 100 << 20, "compute"], [202, None, "compute"], [303, 300 << 20, "compute"]]
    # A GPU without MIG (NVML_ERROR_NOT_SUPPORTED) reads as disabled.
    assert got["mig"] == [[False, False], [True, True]]


def test_a_device_is_chosen_by_index_uuid_bus_id_or_cuda_device(fake_nvml):
    got = on_fake(fake_nvml, """
        class CudaDevice:   # cubind.Device's shape: a 16-byte uuid property
            uuid = property(lambda self: bytes.fromhex("fedcba9876543210fedcba9876543210"))
        chosen = [system.Device(1), system.Device(uuid="GPU-fedcba98-7654-3210-fedc-ba9876543210"),
                  system.Device(pci_bus_id="00000000:3d:00.0"), system.Device(CudaDevice())]
        print(json.dumps([[d.index for d in chosen], len(set(chosen)), repr(chosen[0])]))
    """)
    assert got == [[1, 1, 1, 1], 1, "<cubind.system.Device 1: NVIDIA Fake A100>"]


def test_bad_arguments_name_the_parameter(fake_nvml):
    got = on_fake(fake_nvml, """
        out = []
        for make in (lambda: system.Device(), lambda: system.Device(0, uuid="GPU-x"), lambda: system.Device(2),
                     lambda: system.Device(-1), lambda: system.Device("0"), lambda: system.Device(True),
                     lambda: system.Device(uuid=5), lambda: system.Device(pci_bus_id=1.5)):
            try:
                make()
                out.append("no error")
            except (TypeError, ValueError) as exc:
                out.append(f"{type(exc).__name__}: {exc}")
        print(json.dumps(out))
    """)
    assert got[0] == "TypeError: Device: give one of device, uuid, pci_bus_id (got none)"
    assert got[1] == "TypeError: Device: give one of device, uuid, pci_bus_id (got device, uuid)"
    assert got[2] == got[3].replace("-1", "2") == "ValueError: device: NVML index 2 out of range: 2 device(s)"
    assert got[4].startswith("TypeError: device: expected an NVML index") and got[5].startswith("TypeError: device:")
    assert got[6] == "TypeError: uuid: expected str, got int"
    assert got[7] == "TypeError: pci_bus_id: expected str, got float"


def test_nvmls_failures_are_cudaerrors_with_its_status(fake_nvml):
    got = on_fake(fake_nvml, """
        import nvml
        try:
            system.Device(uuid="GPU-00000000-0000-0000-0000-000000000000")
        except cubind.CUDAError as exc:
            print(json.dumps([exc.code is nvml.nvmlReturn_t.NVML_ERROR_NOT_FOUND, exc.call, exc.name, exc.message,
                              exc.sticky]))
    """)
    assert got == [True, "nvmlDeviceGetHandleByUUID", "NVML_ERROR_NOT_FOUND", "Fake Error", False]


def test_threads_asking_first_at_once_initialise_nvml_once(fake_nvml):
    # The fake's nvmlInit takes 2 ms and counts its calls without a lock:
    # two initialisations at once would count 2.
    got = on_fake(fake_nvml, """
        import ctypes, os, threading
        barrier = threading.Barrier(16)
        counts = []
        def first_touch():
            barrier.wait()
            counts.append(system.device_count)
        threads = [threading.Thread(target=first_touch) for _ in range(16)]
        for t in threads: t.start()
        for t in threads: t.join()
        fake = ctypes.CDLL(os.environ["CUBIND_NVML_LIBRARY"])   # the handle the loader holds
        print(json.dumps([counts, ctypes.c_int.in_dll(fake, "fake_nvml_init_calls").value]))
    """)
    assert got == [[2] * 16, 1]


def test_without_the_driver_the_loaders_error(tmp_path):
    code = textwrap.dedent("""
        import cubind
        from cubind import system
        try:
            system.driver_version
        except cubind.LibraryNotFoundError as exc:
            print(isinstance(exc, cubind.CUDAError), str(exc).splitlines()[0])
    """)
    env = dict(os.environ, CUBIND_NVML_LIBRARY=str(tmp_path / "libnvidia-ml.so.1"), PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True cubind: cannot open the nvml library given by CUBIND_NVML_LIBRARY")


def test_importing_cubind_system_opens_no_library(fake_nvml):
    got = on_fake(fake_nvml, """
        import ctypes, sys
        try:
            ctypes.CDLL("libnvidia-ml.so.1", mode=ctypes.RTLD_GLOBAL | 4)   # RTLD_NOLOAD: only if loaded
            loaded = True
        except OSError:
            loaded = False
        print(json.dumps([loaded, "nvml" in sys.modules]))
    """)
    assert got == [False, False]


@pytest.mark.gpu
def test_the_nvml_view_of_a_cuda_device_is_that_device():
    import cubind
    from cubind import system

    cuda_device = cubind.Device(0)
    gpu = system.Device(cuda_device)
    assert gpu.uuid_bytes == cuda_device.uuid
    assert gpu.name == cuda_device.name
    # NVML's total (nvidia-smi's) is the card's; the driver's (cuDeviceTotalMem)
    # leaves out what the driver reserves for itself (615 MiB on an H200).
    assert gpu.memory.total - gpu.memory.reserved == cuda_device.total_memory
    assert gpu in system.devices()
    assert 0 <= gpu.utilization.gpu <= 100 and gpu.temperature > 0 and gpu.power_limit > 0
    assert gpu.clocks.sm <= gpu.max_clocks.sm
