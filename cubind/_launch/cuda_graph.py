"""CUDA graphs built node by node: kernel, copy, memset and empty nodes with
their dependencies, instantiated, launched on a stream, and kernel nodes'
arguments rewritten in place.

A :class:`CUDAGraph` owns its ``CUgraph`` and the executable graph made from
it, with the lifetime rules of the other core objects: :meth:`CUDAGraph.close`
or collection destroys both, the exit hook does before the contexts go, and
:meth:`cubind.Device.reset` drops them (the graph then refuses use).

A kernel node's arguments live in buffers the node owns, typed by the
kernel's parameter list as ``kernel(...)`` types them; :meth:`KernelNode.set_args`
rewrites those bytes and hands them to the executable graph
(``cuGraphExecKernelNodeSetParams``), so new arguments never need a new
instantiation. The graph's own node is brought up to date at the next
:meth:`CUDAGraph.instantiate`.

A graph can instead be recorded from a stream (:meth:`CUDAGraph.capture`):
the work queued on it inside the block becomes the graph's nodes instead of
running; the block always ends the capture, so a call capture forbids (a
synchronisation, ``cuMemAlloc``, the legacy stream) is an error there, never
a stream left capturing or a half-made graph.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
from typing import TYPE_CHECKING

from cubind._core import allocations as _allocations
from cubind._core import lifetime as _lifetime
from cubind._core.device_stream_event import Device, Stream, current_context, ensure_context
from cubind._core.driver import initialized as _cuda
from cubind._core.errors import CUDAError, check
from cubind._core.handles import stream_handle
from cubind._launch.launch import KernelBase, dims, shared_mem_bytes

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator, Sequence
    from typing import Any, Literal

    import cuda
    from cubind._core.device_stream_event import _StreamLike
    from cubind._launch.kernel import Kernel

__all__ = ["CUDAGraph", "CopyNode", "GraphNode", "KernelNode"]

log = logging.getLogger("cubind")

_calls: dict[str, Any] = {}  # the driver functions of the hot path (launch, update), looked up once

_LOST = "graph: its context was destroyed by Device.reset(); make a new CUDAGraph"

# CUstreamCaptureMode by name. thread_local is the default: it refuses what
# capture forbids on the capturing thread only, so other threads' allocations
# and synchronisations (a scheduler's other workers) go on while one captures.
CAPTURE_MODES = {"global": 0, "thread_local": 1, "relaxed": 2}
# CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED .. _WRONG_THREAD: what a forbidden call
# during a capture is answered with.
_CAPTURE_ERRORS = range(900, 909)
_CAPTURE_ADVICE = ("the call was made while the stream was being captured into a CUDA graph, which forbids it "
                   "(a synchronisation, reading results back, cuMemAlloc, the legacy default stream, waiting for "
                   "work queued outside the capture: an array of another stream is ordered by such a wait); queue "
                   "only asynchronous work on the capturing stream, on arrays allocated there before the capture")
# CUgraphNodeType by value, as node_types() names them.
NODE_TYPES = {0: "kernel", 1: "memcpy", 2: "memset", 3: "host", 4: "graph", 5: "empty", 6: "wait_event",
              7: "event_record", 8: "ext_semaphore_signal", 9: "ext_semaphore_wait", 10: "mem_alloc",
              11: "mem_free", 12: "batch_mem_op", 13: "conditional"}


def _release(state):
    """Destroys the executable graph and the graph in ``state`` ([graph,
    exec]); quiet, as every release at collection or exit is."""
    cuda = _cuda()
    graph, exec_ = state
    state[:] = [None, None]
    for fn, handle in ((cuda.cuGraphExecDestroy, exec_), (cuda.cuGraphDestroy, graph)):
        if handle is not None:
            try:
                fn(handle)
            except Exception:  # a finalizer has no caller to tell; at exit the driver may be gone
                pass


class GraphNode:
    """A node of a :class:`CUDAGraph`: what later nodes name in ``after=``."""
    handle: cuda.CUgraphNode
    graph: CUDAGraph

    __slots__ = ("handle", "graph", "__weakref__")

    def __init__(self, graph, handle):
        self.graph = graph
        self.handle = handle

    def __int__(self) -> int:
        return int(self.handle)

    def __repr__(self):
        return f"<cubind.{type(self).__name__} 0x{int(self.handle):x}>"


class KernelNode(GraphNode):
    """A kernel node: ``set_args(*args)`` gives it new arguments (the next
    launch of the instantiated graph uses them; one in flight is not affected)."""
    kernel: Kernel

    __slots__ = ("kernel", "params", "_slots", "_pointers", "_stale")

    def __init__(self, graph, kernel, params, slots, pointers):
        super().__init__(graph, None)
        self.kernel, self.params, self._slots, self._pointers = kernel, params, slots, pointers
        self._stale = False  # the graph's node (not the executable one) holds older arguments

    def set_args(self, *args: Any) -> None:
        """New arguments, typed and checked as ``kernel(...)`` checks them."""
        exec_ = self.graph._state[1]
        # Packed straight into the node's slots (one C call, no bytes per parameter): a refused argument leaves
        # them as they were, as the plan packs into its own buffer first.
        self.kernel.plan.pack_to_slots(ctypes.addressof(self._pointers), *args)
        self._hand_over(exec_)

    def set_packed(self, packed: Sequence[bytes]) -> None:
        """New arguments as the kernel's packing plan made them (a list of
        bytes per parameter, ``kernel.plan.pack_bytes(*args)``)."""
        exec_ = self.graph._state[1]
        for slot, value in zip(self._slots, packed):
            ctypes.memmove(slot, value, len(value))
        self._hand_over(exec_)

    def _hand_over(self, exec_):
        """The slots' new values to the executable graph (or, before it is
        instantiated, to instantiate(), which gives the graph's node them)."""
        graph = self.graph
        if exec_ is None:
            graph._check_open()
            self._stale = True  # instantiate() hands the graph's node the new values
            return
        err = _calls["update"](exec_, self.handle, self.params)[0]
        if err:
            raise CUDAError(err, "cuGraphExecKernelNodeSetParams")
        self._stale = True


class CopyNode(GraphNode):
    """A copy node: ``set(dst=, src=)`` gives it new device addresses (same
    byte count; the next launch of the instantiated graph uses them)."""
    nbytes: int

    __slots__ = ("params", "nbytes", "_ctx", "_host", "_stale")

    def __init__(self, graph, handle, params, nbytes, ctx, host):
        super().__init__(graph, handle)
        self.params, self.nbytes, self._ctx, self._host = params, nbytes, ctx, host  # host: (dst, src)
        self._stale = False

    def set(self, dst: Any = None, src: Any = None) -> None:
        """New device addresses for either end (a host end keeps its own).
        The driver refuses (a CUDAError) an address of another kind of
        allocation than the one the graph was instantiated with (memory of
        a stream-ordered pool for ``cuMemAlloc``'s, or the other way round);
        the node then keeps its old addresses."""
        params = self.params
        for value, host, name in ((dst, self._host[0], "dst"), (src, self._host[1], "src")):
            if value is not None and host:
                raise ValueError(f"{name}: the node's {name} is host memory; set() changes device addresses")
        old = params.dstDevice, params.srcDevice
        if dst is not None:
            params.dstDevice = _address(dst, "dst")
        if src is not None:
            params.srcDevice = _address(src, "src")
        graph = self.graph
        exec_ = graph._state[1]
        if exec_ is None:
            graph._check_open()
            self._stale = True  # instantiate() hands the graph's node the new addresses
            return
        err = _calls["copy"](exec_, self.handle, params, self._ctx)[0]
        if err:
            params.dstDevice, params.srcDevice = old
            raise CUDAError(err, "cuGraphExecMemcpyNodeSetParams")
        self._stale = True


class CUDAGraph:
    """A CUDA graph: add nodes (each after the nodes named in ``after``),
    :meth:`instantiate`, :meth:`launch` on any stream as often as wanted.

    ``CUDAGraph(device=None)``: nodes are made in ``device``'s primary
    context, or in the current context (device 0's primary context where none
    is). Adding a node after instantiation drops the executable graph; the
    next :meth:`launch` (or :meth:`instantiate`) makes a new one.
    """

    __slots__ = ("_device", "_state", "_finalizer", "_kernel_nodes", "_copy_nodes", "_instantiations", "_nodes",
                 "_captured", "__weakref__")

    def __init__(self, device: Device | int | None = None) -> None:
        self._device = Device(device) if device is not None else None
        with self._in_context():
            if self._device is None:
                ensure_context()
            handle = check(_cuda().cuGraphCreate(0), "cuGraphCreate")
            context = current_context()
        if not _calls:
            cuda = _cuda()
            _calls.update(launch=cuda.cuGraphLaunch, update=cuda.cuGraphExecKernelNodeSetParams,
                          copy=cuda.cuGraphExecMemcpyNodeSetParams)
        self._state = [handle, None]
        self._kernel_nodes: list[KernelNode] = []
        self._copy_nodes: list[CopyNode] = []
        self._instantiations = 0
        self._nodes = 0  # added one by one
        self._captured = False
        self._finalizer = _lifetime.track(self, context, _release, self._state)
        log.debug("graph 0x%x created", int(handle))

    # -- what it is -----------------------------------------------------------------

    @property
    def handle(self) -> cuda.CUgraph:
        """The ``cuda.CUgraph``."""
        self._check_open()
        return self._state[0]

    @property
    def exec_handle(self) -> cuda.CUgraphExec | None:
        """The ``cuda.CUgraphExec`` of the last instantiation, or None."""
        self._check_open()
        return self._state[1]

    @property
    def instantiated(self) -> bool:
        """Whether an executable graph of the current nodes exists."""
        return self._state[1] is not None

    @property
    def instantiations(self) -> int:
        """How many times the graph was instantiated."""
        return self._instantiations

    @property
    def kernel_nodes(self) -> list[KernelNode]:
        """The kernel nodes, in the order they were added."""
        return list(self._kernel_nodes)

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` (or a reset) ended the graph: it then refuses use."""
        return self._state[0] is None

    def __repr__(self):
        if self._state[0] is None:
            return "<cubind.CUDAGraph (closed)>"
        return f"<cubind.CUDAGraph 0x{int(self._state[0]):x}{' (instantiated)' if self.instantiated else ''}>"

    def _check_open(self):
        if self._state[0] is None:
            raise ValueError(_LOST if self._finalizer is None else "graph: the graph is closed")

    def _context_lost(self):
        self._state[:] = [None, None]
        self._finalizer = None

    def _in_context(self):
        return self._device if self._device is not None else _NoContext

    # -- building -------------------------------------------------------------------

    def _deps(self, after):
        if isinstance(after, GraphNode):
            after = (after,)
        deps = []
        for i, node in enumerate(after):
            if not isinstance(node, GraphNode):
                raise TypeError(f"after[{i}]: expected a node of this graph, not {type(node).__name__}")
            if node.graph is not self:
                raise ValueError(f"after[{i}]: the node belongs to another graph")
            deps.append(node.handle)
        return deps

    def _added(self, node):
        self._drop_exec()  # the graph changed: the next launch instantiates it again
        self._nodes += 1
        return node

    @contextlib.contextmanager
    def capture(self, stream: _StreamLike, *, mode: str = "thread_local") -> Iterator[Stream]:
        """Records the work queued on ``stream`` inside the block as this
        graph's nodes (``cuStreamBeginCapture`` .. ``cuStreamEndCapture``)
        instead of running it; the stream is the current one in the block,
        so cubind's launches, copies and memsets given no stream go there.
        Then :meth:`launch` replays it. The graph must be empty (a new one).

        ``stream``: a stream of its own (a :class:`cubind.Stream`; the
        default, legacy or per-thread stream cannot be captured). ``mode``:
        ``"thread_local"`` (calls capture forbids are refused on this thread),
        ``"global"`` (on every thread) or ``"relaxed"`` (none refused).

        The block always ends the capture. A call capture forbids raises
        :class:`cubind.CUDAError` where it is made (its note says why), and a
        capture it invalidated without raising raises
        ``CUDA_ERROR_STREAM_CAPTURE_INVALIDATED`` at the end of the block; the
        graph then stays empty."""
        if mode not in CAPTURE_MODES:
            raise ValueError(f"mode: expected one of {', '.join(map(repr, CAPTURE_MODES))}, got {mode!r}")
        stream = Stream.from_handle(stream)
        self._check_open()
        if int(stream) in (0, 1, 2):
            raise ValueError("stream: the default (legacy or per-thread) stream cannot be captured; "
                             "capture on a cubind.Stream() of its own")
        if self._nodes or self._captured:
            raise ValueError("graph: capture records into an empty graph; this one has nodes: make a new CUDAGraph")
        cuda = _cuda()
        check(cuda.cuStreamBeginCapture(stream.handle, CAPTURE_MODES[mode]), "cuStreamBeginCapture")
        try:
            with stream:
                yield stream
        except BaseException as exc:
            err, graph = cuda.cuStreamEndCapture(stream.handle)  # the stream is usable again either way
            _allocations.release_waiting()
            if graph is not None and int(graph):
                cuda.cuGraphDestroy(graph)
            if isinstance(exc, CUDAError) and int(exc.code or 0) in _CAPTURE_ERRORS:
                _note(exc, _CAPTURE_ADVICE)
            raise
        err, graph = cuda.cuStreamEndCapture(stream.handle)
        # Memory let go on the stream during the capture was kept out of it: freed now.
        _allocations.release_waiting()
        if err:
            error = CUDAError(err, "cuStreamEndCapture")
            _note(error, _CAPTURE_ADVICE if int(err) in _CAPTURE_ERRORS else "the capture could not end")
            raise error
        empty, self._state[0] = self._state[0], graph
        self._captured = True
        self._drop_exec()
        with self._in_context():
            check(cuda.cuGraphDestroy(empty), "cuGraphDestroy")
        log.debug("graph 0x%x captured from stream 0x%x", int(graph), int(stream))

    @property
    def captured(self) -> bool:
        """Whether the graph's nodes were recorded by :meth:`capture`."""
        return self._captured

    def node_types(self) -> list[str]:
        """The type of each node of the graph (``"kernel"``, ``"memcpy"``,
        ``"memset"``, ``"host"``, ``"mem_alloc"``, ``"mem_free"``, ``"empty"``,
        ...; ``cuGraphNodeGetType``), in the driver's order: what a capture
        recorded, for code that refuses some (an allocation made inside)."""
        self._check_open()
        cuda = _cuda()
        with self._in_context():
            count = check(cuda.cuGraphGetNodes(self._state[0]), "cuGraphGetNodes")[1]
            nodes = check(cuda.cuGraphGetNodes(self._state[0], count), "cuGraphGetNodes")[0] if count else []
            kinds = [int(check(cuda.cuGraphNodeGetType(node), "cuGraphNodeGetType")) for node in nodes[:count]]
        return [NODE_TYPES.get(kind, f"type {kind}") for kind in kinds]

    def add_kernel(self, kernel: Kernel, grid: int | Sequence[int], block: int | Sequence[int], *args: Any,
                   shared_mem: int = 0, after: GraphNode | Iterable[GraphNode] = ()) -> KernelNode:
        """A kernel node launching ``kernel`` (a :class:`cubind.Kernel`) with
        ``args``, typed as ``kernel(grid, block, *args)`` types them."""
        if not isinstance(kernel, KernelBase) or kernel.plan is None:
            raise TypeError(f"kernel: expected a cubind.Kernel, not {type(kernel).__name__}")
        grid, block, smem = dims(grid, "grid"), dims(block, "block"), shared_mem_bytes(shared_mem)
        packed = kernel.plan.pack_bytes(*args)
        self._check_open()
        deps = self._deps(after)
        cuda = _cuda()
        slots = [ctypes.create_string_buffer(value, max(len(value), 1)) for value in packed]
        pointers = (ctypes.c_void_p * max(len(packed), 1))(*[ctypes.addressof(s) for s in slots])
        params = cuda.CUDA_KERNEL_NODE_PARAMS()
        params.gridDimX, params.gridDimY, params.gridDimZ = grid
        params.blockDimX, params.blockDimY, params.blockDimZ = block
        params.sharedMemBytes = smem
        params.kernelParams = ctypes.addressof(pointers)
        node = KernelNode(self, kernel, params, slots, pointers)
        with self._in_context():
            params.func = kernel.function()
            node.handle = check(cuda.cuGraphAddKernelNode(self._state[0], deps, len(deps), params),
                                "cuGraphAddKernelNode")
        self._kernel_nodes.append(node)
        return self._added(node)

    def add_copy(self, dst: Any, src: Any, nbytes: int, *, after: GraphNode | Iterable[GraphNode] = (),
                 dst_host: bool = False, src_host: bool = False) -> CopyNode:
        """A copy of ``nbytes`` from ``src`` to ``dst`` (addresses: device
        addresses, or host ones where ``src_host``/``dst_host``)."""
        nbytes = _count(nbytes, "nbytes")
        dst, src = _address(dst, "dst"), _address(src, "src")
        self._check_open()
        deps = self._deps(after)
        cuda = _cuda()
        kind = cuda.CUmemorytype
        copy = cuda.CUDA_MEMCPY3D()
        copy.srcMemoryType = kind.CU_MEMORYTYPE_HOST if src_host else kind.CU_MEMORYTYPE_DEVICE
        copy.dstMemoryType = kind.CU_MEMORYTYPE_HOST if dst_host else kind.CU_MEMORYTYPE_DEVICE
        if src_host:
            copy.srcHost = src
        else:
            copy.srcDevice = src
        if dst_host:
            copy.dstHost = dst
        else:
            copy.dstDevice = dst
        copy.WidthInBytes, copy.Height, copy.Depth = nbytes, 1, 1
        with self._in_context():
            ctx = current_context()
            handle = check(cuda.cuGraphAddMemcpyNode(self._state[0], deps, len(deps), copy, ctx),
                           "cuGraphAddMemcpyNode")
        node = CopyNode(self, handle, copy, nbytes, ctx, (dst_host, src_host))
        self._copy_nodes.append(node)
        return self._added(node)

    def add_graph(self, graph: CUDAGraph, *, after: GraphNode | Iterable[GraphNode] = ()) -> GraphNode:
        """A node running a copy of ``graph`` (``cuGraphAddChildGraphNode``:
        later changes to ``graph`` do not reach it)."""
        if not isinstance(graph, CUDAGraph):
            raise TypeError(f"graph: expected a cubind.CUDAGraph, not {type(graph).__name__}")
        if graph is self:
            raise ValueError("graph: a graph cannot contain itself")
        child = graph.handle  # refuses a closed graph
        self._check_open()
        deps = self._deps(after)
        with self._in_context():
            handle = check(_cuda().cuGraphAddChildGraphNode(self._state[0], deps, len(deps), child),
                           "cuGraphAddChildGraphNode")
        return self._added(GraphNode(self, handle))

    def add_memset(self, dst: Any, value: int, count: int, *, element_size: int = 1,
                   after: GraphNode | Iterable[GraphNode] = ()) -> GraphNode:
        """Sets ``count`` elements of ``element_size`` bytes (1, 2 or 4) at
        the device address ``dst`` to ``value``."""
        dst, count = _address(dst, "dst"), _count(count, "count")
        if element_size not in (1, 2, 4):
            raise ValueError(f"element_size: expected 1, 2 or 4, got {element_size!r}")
        value = _count(value, "value")
        if value >= 1 << (8 * element_size):
            raise OverflowError(f"value: {value} does not fit {element_size} bytes")
        self._check_open()
        deps = self._deps(after)
        cuda = _cuda()
        params = cuda.CUDA_MEMSET_NODE_PARAMS()
        params.dst, params.value, params.elementSize = dst, value, element_size
        params.width, params.height, params.pitch = count, 1, 0
        with self._in_context():
            handle = check(cuda.cuGraphAddMemsetNode(self._state[0], deps, len(deps), params, current_context()),
                           "cuGraphAddMemsetNode")
        return self._added(GraphNode(self, handle))

    def add_empty(self, after: GraphNode | Iterable[GraphNode] = ()) -> GraphNode:
        """An empty node: a join point that later nodes may wait for."""
        self._check_open()
        deps = self._deps(after)
        with self._in_context():
            handle = check(_cuda().cuGraphAddEmptyNode(self._state[0], deps, len(deps)), "cuGraphAddEmptyNode")
        return self._added(GraphNode(self, handle))

    # -- running --------------------------------------------------------------------

    def instantiate(self) -> CUDAGraph:
        """Makes the executable graph (again, where nodes were added since)."""
        self._check_open()
        if self._state[1] is not None:
            return self
        cuda = _cuda()
        with self._in_context():
            for node in self._kernel_nodes:
                if node._stale:  # new arguments reached an earlier executable graph only
                    check(cuda.cuGraphKernelNodeSetParams(node.handle, node.params), "cuGraphKernelNodeSetParams")
                    node._stale = False
            for node in self._copy_nodes:
                if node._stale:
                    check(cuda.cuGraphMemcpyNodeSetParams(node.handle, node.params), "cuGraphMemcpyNodeSetParams")
                    node._stale = False
            self._state[1] = check(cuda.cuGraphInstantiate(self._state[0], 0), "cuGraphInstantiate")
        self._instantiations += 1
        log.debug("graph 0x%x instantiated", int(self._state[0]))
        return self

    def launch(self, stream: _StreamLike = None) -> None:
        """Launches the executable graph (made first where there is none) on
        ``stream`` (any stream; None: the default stream)."""
        exec_ = self._state[1]
        if exec_ is None:
            exec_ = self.instantiate()._state[1]
        err = _calls["launch"](exec_, stream if type(stream) is int else stream_handle(stream, "stream"))[0]
        if err:
            raise CUDAError(err, "cuGraphLaunch")

    # -- release --------------------------------------------------------------------

    def _drop_exec(self):
        exec_ = self._state[1]
        if exec_ is not None:
            self._state[1] = None
            with self._in_context():
                try:
                    check(_cuda().cuGraphExecDestroy(exec_), "cuGraphExecDestroy")
                except Exception:  # noqa: BLE001 - a release: the old executable graph is gone either way
                    log.debug("cuGraphExecDestroy failed quietly", exc_info=True)

    def close(self) -> None:
        """Destroys the executable graph and the graph now (idempotent); the
        caller has waited for any launch of it. A closed graph refuses use."""
        if self._finalizer is not None and self._state[0] is not None:
            handle = self._state[0]
            with self._in_context():
                self._finalizer()
            self._kernel_nodes = []
            log.debug("graph 0x%x destroyed", int(handle))

    def __enter__(self) -> CUDAGraph:
        return self

    def __exit__(self, *exc: object) -> Literal[False]:
        self.close()
        return False


class _NoContextType:
    """``with`` for a graph made in whatever context was current: nothing to push."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


_NoContext = _NoContextType()


def _note(exc, text):
    if hasattr(exc, "add_note"):
        exc.add_note(text)
    else:  # Python 3.10: the same attribute, which its tracebacks do not print
        exc.__notes__ = [*getattr(exc, "__notes__", []), text]


def _address(value, what):
    if type(value) is int:
        return value
    ptr = getattr(value, "ptr", None)  # a cubind.Array, PinnedMemory, ...
    try:
        return int(ptr if ptr is not None else value.__index__())
    except (AttributeError, TypeError):
        raise TypeError(f"{what}: expected an address (an int, or an object with .ptr), "
                        f"not {type(value).__name__}") from None


def _count(value, what):
    try:
        value = value.__index__()
    except AttributeError:
        raise TypeError(f"{what}: expected an int, not {type(value).__name__}") from None
    if value < 0:
        raise ValueError(f"{what}: {value} is negative")
    return value
