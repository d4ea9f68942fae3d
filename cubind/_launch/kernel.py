"""Kernels: launching with arguments typed by the kernel's own parameters,
launch configurations with attributes, occupancy and function attributes.

A :class:`Kernel` is a ``CUkernel`` of a context-independent ``CUlibrary``:
it launches in whatever context is current (device 0's primary context is
made current when none is), so one compiled module serves every device.
"""

from __future__ import annotations

import operator
from typing import TYPE_CHECKING

from cubind._core.device_stream_event import Device, ensure_context
from cubind._core.driver import initialized as _cuda
from cubind._core.driver import module as _driver_module
from cubind._core.enums import enum_member
from cubind._core.errors import CUDAError, check
from cubind._launch.args import POINTER_GETTERS
from cubind._launch.cubin import param_count
from cubind._launch.launch import KernelBase, Plan, dims, launch, shared_mem_bytes
from cubind._launch.params import params_from_sizes

if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Any, Literal, Protocol, SupportsIndex, TypeAlias

    import cuda
    from cubind._core.device_stream_event import _Device
    from cubind._launch.params import Param

    class Module(Protocol):
        """What a kernel keeps loaded: cubind.Module (cubind._compile, a layer
        above this one, which this layer names by its shape, not its import)."""
        code: bytes
        kind: Literal["ptx", "cubin", "fatbin", "ltoir"]
        ptx: bytes | None
        log: str
        name: str | None

        @property
        def handle(self) -> cuda.CUlibrary: ...
        @property
        def entries(self) -> dict[str, list[Param]]: ...
        def get_kernel(self, name: str | bytes) -> Kernel: ...

    # An int, or 1 to 3 ints (grid, block, cluster dimensions).
    _Dims: TypeAlias = SupportsIndex | tuple[SupportsIndex, ...] | list[int] | list[SupportsIndex]

__all__ = ["Kernel", "LaunchConfig", "launch"]

def _seed_pointer_getters():
    cuda = _driver_module()
    POINTER_GETTERS.setdefault(cuda.CUdeviceptr, operator.index)


_seed_pointer_getters()
_MAX_PARAMS = 32768  # more than the driver allows (32764 bytes of parameters)
_FUNC_PREFIX = "CU_FUNC_ATTRIBUTE_"
_LAUNCH_PREFIX = "CU_LAUNCH_ATTRIBUTE_"


def _sizes_from_driver(handle, code, name):
    """Parameter sizes from cuKernelGetParamInfo: for as many parameters as
    the CUBIN says the kernel has; where it cannot say (a fatbin), until the
    driver says there are no more (a failed call a sanitizer reports)."""
    cuda = _cuda()
    count = param_count(code, name)
    sizes = []
    for index in range(_MAX_PARAMS if count is None else count):
        err, _offset, size = cuda.cuKernelGetParamInfo(handle, index)
        if err != 0 and count is not None:
            raise CUDAError(err, "cuKernelGetParamInfo")
        if err != 0 or not size:
            break
        sizes.append(int(size))
    return sizes


def _int_arg(value, param):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{param}: expected an int, not {type(value).__name__}") from None


def _block_threads(block):
    x, y, z = dims(block, "block")
    return x * y * z


class Kernel(KernelBase):
    """A kernel of a :class:`cubind.Module` (``module.get_kernel(name)``).

    ``kernel(grid, block, *args, stream=None, shared_mem=0)`` launches it:
    ``grid`` and ``block`` are an int or 1 to 3 ints, each argument becomes
    what the kernel's parameter of that position takes (see
    ``docs/pythonic.md``: a Python float to a ``float`` parameter is a
    float32, a device array its pointer, ...). ``params`` lists the parameters
    as the launch sees them.
    """

    # Set in _from_library: declared here for the type checker only.
    _module: Module
    _handle: cuda.CUkernel
    _name: str
    _typed_by: Literal["PTX", "cuKernelGetParamInfo"]

    @classmethod
    def _from_library(cls, module, handle, name, params):
        self = cls()
        self._module = module
        self._handle = handle
        self._name = name
        if params is None:  # no PTX: sizes from the driver
            params = params_from_sizes(_sizes_from_driver(handle, module.code, name))
            self._typed_by = "cuKernelGetParamInfo"
        else:
            self._typed_by = "PTX"
        self._set_launch(int(handle), Plan(name, params))
        return self

    def __repr__(self):
        if self.plan is None:
            return "<cubind.Kernel (not made by Module.get_kernel)>"
        return f"<cubind.Kernel {self._name} ({len(self.params)} parameters, typed by {self._typed_by})>"

    @property
    def name(self) -> str:
        """The kernel's name in the module (the lowered name for C++)."""
        return self._name

    @property
    def module(self) -> Module:
        """The :class:`Module` the kernel comes from (kept loaded while the kernel lives)."""
        return self._module

    @property
    def handle(self) -> cuda.CUkernel:
        """The ``cuda.CUkernel`` (which ``cuLaunchKernel`` also takes as a function)."""
        return self._handle

    @property
    def params(self) -> list[Param]:
        """The parameters, as :class:`cubind._launch.params.Param` tuples."""
        return list(self.plan.params)

    @property
    def typed_by(self) -> Literal["PTX", "cuKernelGetParamInfo"]:
        """"PTX" (float vs integer known) or "cuKernelGetParamInfo" (sizes only)."""
        return self._typed_by

    def function(self) -> cuda.CUfunction:
        """The ``CUfunction`` of this kernel in the current context."""
        ensure_context()
        return check(_cuda().cuKernelGetFunction(self._handle), "cuKernelGetFunction")

    # -- attributes -------------------------------------------------------------

    def attribute(self, attribute: cuda.CUfunction_attribute | SupportsIndex | str,
                  device: _Device | None = None) -> int:
        """A ``CUfunction_attribute`` by member, value or name (``"num_regs"``)
        on ``device`` (default: the current one)."""
        cuda = _driver_module()
        member = enum_member(cuda.CUfunction_attribute, _FUNC_PREFIX, attribute, "attribute")
        dev = Device(device).handle if device is not None else ensure_context()
        return int(check(cuda.cuKernelGetAttribute(member, self._handle, dev), "cuKernelGetAttribute"))

    def set_attribute(self, attribute: cuda.CUfunction_attribute | SupportsIndex | str, value: SupportsIndex,
                      device: _Device | None = None) -> None:
        """Sets a ``CUfunction_attribute`` (e.g. ``"max_dynamic_shared_size_bytes"``)."""
        cuda = _driver_module()
        member = enum_member(cuda.CUfunction_attribute, _FUNC_PREFIX, attribute, "attribute")
        value = _int_arg(value, "value")
        dev = Device(device).handle if device is not None else ensure_context()
        check(cuda.cuKernelSetAttribute(member, value, self._handle, dev), "cuKernelSetAttribute")

    @property
    def num_regs(self) -> int:
        """Registers per thread."""
        return self.attribute("NUM_REGS")

    @property
    def max_threads_per_block(self) -> int:
        """The most threads a block of this kernel may have."""
        return self.attribute("MAX_THREADS_PER_BLOCK")

    @property
    def shared_size_bytes(self) -> int:
        """Static shared memory per block."""
        return self.attribute("SHARED_SIZE_BYTES")

    @property
    def local_size_bytes(self) -> int:
        """Local memory per thread."""
        return self.attribute("LOCAL_SIZE_BYTES")

    # -- occupancy ------------------------------------------------------------

    def max_active_blocks(self, block: _Dims, shared_mem: SupportsIndex = 0) -> int:
        """Blocks of ``block`` threads (an int or 1 to 3 ints) that fit on one
        multiprocessor at once with ``shared_mem`` dynamic shared bytes each."""
        threads, shared_mem = _block_threads(block), shared_mem_bytes(shared_mem)
        return int(check(_cuda().cuOccupancyMaxActiveBlocksPerMultiprocessor(
            self.function(), threads, shared_mem), "cuOccupancyMaxActiveBlocksPerMultiprocessor"))

    def suggested_block_size(self, shared_mem: SupportsIndex = 0,
                             block_size_limit: SupportsIndex = 0) -> tuple[int, int]:
        """``(min_grid_size, block_size)``: the block size reaching the highest
        occupancy, and the smallest grid that fills the device with it."""
        shared_mem, limit = shared_mem_bytes(shared_mem), _int_arg(block_size_limit, "block_size_limit")
        grid, block = check(_cuda().cuOccupancyMaxPotentialBlockSize(self.function(), None, shared_mem, limit),
                            "cuOccupancyMaxPotentialBlockSize")
        return int(grid), int(block)

    def max_active_clusters(self, config: LaunchConfig) -> int:
        """Clusters of ``config`` (a :class:`LaunchConfig` with ``cluster``)
        that can be co-resident on the device."""
        if not isinstance(config, LaunchConfig):
            raise TypeError(f"config: expected a cubind.LaunchConfig, not {type(config).__name__}")
        return int(check(_cuda().cuOccupancyMaxActiveClusters(self.function(), config._struct),
                         "cuOccupancyMaxActiveClusters"))


# Launch attributes with a scalar value, and the union field it sets.
_SCALAR_FIELDS = {
    "COOPERATIVE": "cooperative",
    "SYNCHRONIZATION_POLICY": "syncPolicy",
    "CLUSTER_SCHEDULING_POLICY_PREFERENCE": "clusterSchedulingPolicyPreference",
    "PROGRAMMATIC_STREAM_SERIALIZATION": "programmaticStreamSerializationAllowed",
    "PRIORITY": "priority",
    "MEM_SYNC_DOMAIN": "memSyncDomain",
    "PREFERRED_SHARED_MEMORY_CARVEOUT": "sharedMemCarveout",
    "NVLINK_UTIL_CENTRIC_SCHEDULING": "nvlinkUtilCentricScheduling",
}
_DIM_FIELDS = {"CLUSTER_DIMENSION": "clusterDim", "PREFERRED_CLUSTER_DIMENSION": "preferredClusterDim"}


def _attribute(cuda, key, value):
    """A ``CUlaunchAttribute`` for ``key`` (member, value or name) = ``value``."""
    member = enum_member(cuda.CUlaunchAttributeID, _LAUNCH_PREFIX, key, "attributes")
    short = member.name[len(_LAUNCH_PREFIX):]
    attr = cuda.CUlaunchAttribute()
    attr.id = member
    where = f"attributes[{short.lower()!r}]"
    if isinstance(value, cuda.CUlaunchAttributeValue):
        attr.value = value
    elif short in _DIM_FIELDS:
        x, y, z = dims(value, where)
        field = getattr(attr.value, _DIM_FIELDS[short])
        field.x, field.y, field.z = x, y, z
    elif short in _SCALAR_FIELDS:
        try:
            setattr(attr.value, _SCALAR_FIELDS[short], operator.index(value))
        except TypeError:
            raise TypeError(f"{where}: expected an int, not {type(value).__name__}") from None
    else:
        raise TypeError(f"{where}: this attribute takes a cuda.CUlaunchAttributeValue")
    return attr


class LaunchConfig:
    """How to launch a kernel with :func:`launch` (``cuLaunchKernelEx``).

    ``grid``, ``block``: an int or 1 to 3 ints; ``shared_mem``: dynamic shared
    bytes; ``cluster``:
    thread-block cluster dimensions (compute capability 9.0+); ``cooperative``:
    a cooperative launch (grid-wide sync); ``attributes``: any other launch
    attributes, ``{name or CUlaunchAttributeID: value}``, e.g.
    ``{"priority": 1}``.
    """
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    cluster: tuple[int, int, int] | None
    cooperative: bool
    attributes: dict[Any, SupportsIndex | _Dims | cuda.CUlaunchAttributeValue]

    def __init__(self, grid: _Dims, block: _Dims, shared_mem: SupportsIndex = 0, cluster: _Dims | None = None,
                 cooperative: bool = False,
                 attributes: Mapping[Any, SupportsIndex | _Dims | cuda.CUlaunchAttributeValue] | None = None) -> None:
        # Only the driver module's types are used here, never the driver: a
        # configuration is checked and built where there is no GPU too.
        cuda = _driver_module()
        self.grid = dims(grid, "grid")
        self.block = dims(block, "block")
        self.shared_mem = shared_mem_bytes(shared_mem)
        self.cluster = dims(cluster, "cluster") if cluster is not None else None
        self.cooperative = bool(cooperative)
        try:
            items = dict(attributes or {})
        except (TypeError, ValueError):
            raise TypeError(f"attributes: expected a mapping of launch attributes to values, "
                            f"not {type(attributes).__name__}") from None
        attrs = []
        if self.cluster is not None:
            attrs.append(_attribute(cuda, "CLUSTER_DIMENSION", self.cluster))
        if self.cooperative:
            attrs.append(_attribute(cuda, "COOPERATIVE", 1))
        attrs += [_attribute(cuda, key, value) for key, value in items.items()]
        self.attributes = items
        struct = cuda.CUlaunchConfig()
        struct.gridDimX, struct.gridDimY, struct.gridDimZ = self.grid
        struct.blockDimX, struct.blockDimY, struct.blockDimZ = self.block
        struct.sharedMemBytes = self.shared_mem
        if attrs:
            struct.attrs = attrs  # the struct keeps the array alive
        struct.numAttrs = len(attrs)
        self._struct = struct
        self._addr = struct.getPtr()

    def __repr__(self):
        extra = f", cluster={self.cluster!r}" if self.cluster else ""
        if self.cooperative:
            extra += ", cooperative=True"
        if self.attributes:
            extra += f", attributes={self.attributes!r}"
        return f"LaunchConfig(grid={self.grid}, block={self.block}, shared_mem={self.shared_mem}{extra})"
