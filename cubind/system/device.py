"""One GPU as NVML sees it: its identity (index, name, UUID, PCI bus id) and
its readings (memory, utilization, temperature, power, clocks, processes, MIG
mode), each a property read from the driver when asked, never cached: a
reading is of the moment it is taken."""

from __future__ import annotations

from typing import Any, NamedTuple

from cubind._core.errors import check
from cubind.system._nvml import call, nvml, text


class Memory(NamedTuple):
    """Device memory in bytes (``nvmlDeviceGetMemoryInfo_v2``): ``reserved``
    is what the driver and firmware hold, counted in ``used``."""
    total: int
    used: int
    free: int
    reserved: int


class Utilization(NamedTuple):
    """Percent of the last sample period (``nvmlDeviceGetUtilizationRates``):
    ``gpu`` of time a kernel ran, ``memory`` of time memory was read or written."""
    gpu: int
    memory: int


class Clocks(NamedTuple):
    """Clocks in MHz (``nvmlDeviceGetClockInfo`` or ``...GetMaxClockInfo``)."""
    graphics: int
    sm: int
    memory: int
    video: int


class Process(NamedTuple):
    """A process using the GPU (``nvmlDeviceGet{Compute,Graphics}RunningProcesses``):
    ``used_memory`` in bytes, None where NVML cannot tell (NVML_VALUE_NOT_AVAILABLE,
    as under Windows' WDDM or in a container without the rights)."""
    pid: int
    used_memory: int | None
    kind: str   # "compute" or "graphics"


class MigMode(NamedTuple):
    """Whether MIG is enabled now and after the next GPU reset."""
    current: bool
    pending: bool


_NOT_AVAILABLE = (1 << 64) - 1   # NVML_VALUE_NOT_AVAILABLE as an unsigned long long


class Device:
    """A GPU of the NVML view: ``Device(0)`` (NVML's index, which need not be
    CUDA's ordinal: CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER reorder those),
    ``Device(cubind.Device(0))`` (the same GPU as that CUDA device, found by
    its UUID), ``Device(uuid="GPU-...")`` or ``Device(pci_bus_id="0000:...")``.
    Failures raise :class:`cubind.CUDAError` with NVML's ``nvmlReturn_t``
    (``NVML_ERROR_NOT_SUPPORTED`` where the GPU has no such reading)."""

    __slots__ = ("_handle", "_index")

    def __init__(self, device: Any = None, *, uuid: str | None = None, pci_bus_id: str | None = None) -> None:
        given = [name for name, v in (("device", device), ("uuid", uuid), ("pci_bus_id", pci_bus_id))
                 if v is not None]
        if len(given) != 1:
            raise TypeError(f"Device: give one of device, uuid, pci_bus_id (got {', '.join(given) or 'none'})")
        if uuid is not None:
            self._handle = call("nvmlDeviceGetHandleByUUID", _string(uuid, "uuid"))
        elif pci_bus_id is not None:
            self._handle = call("nvmlDeviceGetHandleByPciBusId", _string(pci_bus_id, "pci_bus_id"))
        elif isinstance(device, int) and not isinstance(device, bool):
            count = call("nvmlDeviceGetCount")
            if not 0 <= device < count:
                raise ValueError(f"device: NVML index {device} out of range: {count} device(s)")
            self._handle = call("nvmlDeviceGetHandleByIndex", device)
        elif isinstance(getattr(type(device), "uuid", None), property):
            # A CUDA device (cubind.Device): its 16-byte UUID names the same GPU.
            self._handle = call("nvmlDeviceGetHandleByUUID", _uuid_text(device.uuid))
        else:
            raise TypeError(f"device: expected an NVML index (int) or a cubind.Device, got {type(device).__name__}")
        self._index = call("nvmlDeviceGetIndex", self._handle)

    def __repr__(self) -> str:
        try:
            return f"<cubind.system.Device {self._index}: {self.name}>"
        except Exception:  # a repr must not fail because the driver did
            return f"<cubind.system.Device {self._index}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and int(other._handle) == int(self._handle)

    def __hash__(self) -> int:
        return hash(int(self._handle))

    @property
    def handle(self) -> Any:
        """The ``nvml.nvmlDevice_t``, for the 1:1 ``nvml`` module's other functions."""
        return self._handle

    @property
    def index(self) -> int:
        """NVML's index of the GPU (``nvidia-smi``'s)."""
        return self._index

    @property
    def name(self) -> str:
        return text("nvmlDeviceGetName", self._handle, nvml().NVML_DEVICE_NAME_V2_BUFFER_SIZE)

    @property
    def uuid(self) -> str:
        """``"GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"``, as nvidia-smi shows it."""
        return text("nvmlDeviceGetUUID", self._handle, nvml().NVML_DEVICE_UUID_V2_BUFFER_SIZE)

    @property
    def uuid_bytes(self) -> bytes:
        """The UUID's 16 bytes: ``cubind.Device(n).uuid`` of the same GPU."""
        return bytes.fromhex(self.uuid.split("-", 1)[1].replace("-", ""))

    @property
    def pci_bus_id(self) -> str:
        """``"00000000:1B:00.0"`` (domain:bus:device.function)."""
        return call("nvmlDeviceGetPciInfo", self._handle).busId.decode()

    @property
    def memory(self) -> Memory:
        info = call("nvmlDeviceGetMemoryInfo_v2", self._handle)
        return Memory(info.total, info.used, info.free, info.reserved)

    @property
    def utilization(self) -> Utilization:
        rates = call("nvmlDeviceGetUtilizationRates", self._handle)
        return Utilization(rates.gpu, rates.memory)

    @property
    def temperature(self) -> int:
        """The GPU die's temperature in °C."""
        return call("nvmlDeviceGetTemperature", self._handle, nvml().nvmlTemperatureSensors_t.NVML_TEMPERATURE_GPU)

    @property
    def power_draw(self) -> float:
        """Watts drawn now by the board."""
        return call("nvmlDeviceGetPowerUsage", self._handle) / 1000

    @property
    def power_limit(self) -> float:
        """Watts the board is held to (the enforced limit)."""
        return call("nvmlDeviceGetEnforcedPowerLimit", self._handle) / 1000

    @property
    def clocks(self) -> Clocks:
        """The clocks now, in MHz."""
        return self._clocks("nvmlDeviceGetClockInfo")

    @property
    def max_clocks(self) -> Clocks:
        return self._clocks("nvmlDeviceGetMaxClockInfo")

    def _clocks(self, getter: str) -> Clocks:
        kinds = nvml().nvmlClockType_t
        return Clocks(*(call(getter, self._handle, kind) for kind in
                        (kinds.NVML_CLOCK_GRAPHICS, kinds.NVML_CLOCK_SM, kinds.NVML_CLOCK_MEM, kinds.NVML_CLOCK_VIDEO)))

    @property
    def processes(self) -> list[Process]:
        """The processes with a context on the GPU, compute then graphics."""
        found = []
        for kind, getter in (("compute", "nvmlDeviceGetComputeRunningProcesses"),
                             ("graphics", "nvmlDeviceGetGraphicsRunningProcesses")):
            found += [Process(p.pid, None if p.usedGpuMemory == _NOT_AVAILABLE else p.usedGpuMemory, kind)
                      for p in _grown_list(getter, self._handle)]
        return found

    @property
    def mig_mode(self) -> MigMode:
        """MIG's mode; ``MigMode(False, False)`` on a GPU without MIG."""
        module = nvml()
        err, current, pending = module.nvmlDeviceGetMigMode(self._handle)
        if err == module.nvmlReturn_t.NVML_ERROR_NOT_SUPPORTED:
            return MigMode(False, False)
        check((err,), "nvmlDeviceGetMigMode")
        enabled = module.NVML_DEVICE_MIG_ENABLE
        return MigMode(current == enabled, pending == enabled)


def _grown_list(getter: str, handle: Any) -> list[Any]:
    """A list NVML fills up to a capacity: asked with room for a few, again
    with room for as many as NVML said where that was short (the count can
    grow between the calls: asked again until it fits)."""
    module = nvml()
    capacity = 16
    while True:
        err, count, items = getattr(module, getter)(handle, capacity)
        if err != module.nvmlReturn_t.NVML_ERROR_INSUFFICIENT_SIZE:
            check((err,), getter)
            return items
        capacity = max(2 * capacity, (count or 0) + 4)


def _string(value: object, name: str) -> bytes:
    if isinstance(value, str):
        return value.encode()
    if isinstance(value, bytes):
        return value
    raise TypeError(f"{name}: expected str, got {type(value).__name__}")


def _uuid_text(raw: bytes) -> str:
    """16 UUID bytes as NVML writes them: GPU-8-4-4-4-12 hex digits."""
    h = bytes(raw).hex()
    return f"GPU-{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"
