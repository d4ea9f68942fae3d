"""One CUDA graph per recorded sequence: nodes added as operations are
recorded, ordered by the tensors they share, instantiated once, launched
per evaluation, and its kernel nodes' arguments updated in place.

Ordering inside a graph: a node waits for the last node that used any of its
tensors (every use counts as a write: a kernel may write any tensor it is
given), so operations on disjoint tensors may run concurrently while those
sharing a tensor run in recorded order. A full ``OpMemoryBarrier`` (no
tensors) is an empty node that every earlier node precedes and every later
node follows.
"""

import ctypes

from .calls import check, cuda, log, quietly


class KernelNode:
    """A kernel node and what its arguments are made of: one buffer per
    parameter, pointed to by the array the driver reads (kept for the
    graph's life so that an update only rewrites bytes)."""

    __slots__ = ("handle", "params", "slots", "pointers", "push", "graph_push", "dispatch")

    def __init__(self, kernel, grid, block, packed, push, dispatch):
        driver = cuda()
        self.slots = [ctypes.create_string_buffer(value, max(len(value), 1)) for value in packed]
        self.pointers = (ctypes.c_void_p * max(len(packed), 1))(*[ctypes.addressof(s) for s in self.slots])
        params = driver.CUDA_KERNEL_NODE_PARAMS()
        params.func = kernel.function()
        params.gridDimX, params.gridDimY, params.gridDimZ = grid
        params.blockDimX, params.blockDimY, params.blockDimZ = block
        params.sharedMemBytes = 0
        params.kernelParams = ctypes.addressof(self.pointers)
        self.params, self.push, self.dispatch, self.handle = params, push, dispatch, None
        self.graph_push = push  # what the graph's node (not the executable one) holds

    def rewrite(self, packed, push):
        for slot, value in zip(self.slots, packed):
            ctypes.memmove(slot, value, len(value))
        self.push = push


class Graph:
    """A CUDA graph being recorded, then instantiated and launched."""

    def __init__(self, device):
        self.device = device
        with device:
            self.handle = check(cuda().cuGraphCreate(0), "cuGraphCreate")
        self.exec = None
        self.kernel_nodes = []
        self.instantiations = 0
        self._last = {}            # id(tensor) -> the last node that used it
        self._barrier = None       # the last full barrier's node
        self._since_barrier = []   # nodes added after it
        log.debug("graph 0x%x created", int(self.handle))

    # -- recording ----------------------------------------------------------------------

    def _deps(self, tensors):
        deps, unseen = [], False
        for tensor in tensors:
            node = self._last.get(id(tensor))
            if node is None:
                unseen = True
            elif node not in deps:
                deps.append(node)
        if (unseen or not tensors) and self._barrier is not None and self._barrier not in deps:
            deps.append(self._barrier)
        return deps

    def _added(self, node, tensors):
        for tensor in tensors:
            self._last[id(tensor)] = node
        self._since_barrier.append(node)
        self._drop_exec()  # the graph changed: the next evaluation instantiates it again
        return node

    def add_kernel(self, tensors, kernel_node):
        deps = self._deps(tensors)
        with self.device:
            node = check(cuda().cuGraphAddKernelNode(self.handle, deps, len(deps), kernel_node.params),
                         "cuGraphAddKernelNode")
        kernel_node.handle = int(node)
        self.kernel_nodes.append(kernel_node)
        return self._added(int(node), tensors)

    def add_copy(self, tensors, src, src_on_host, dst, dst_on_host, nbytes):
        """A 1-D copy of ``nbytes`` between host or device addresses."""
        driver = cuda()
        kind = driver.CUmemorytype
        copy = driver.CUDA_MEMCPY3D()
        copy.srcMemoryType = kind.CU_MEMORYTYPE_HOST if src_on_host else kind.CU_MEMORYTYPE_DEVICE
        copy.dstMemoryType = kind.CU_MEMORYTYPE_HOST if dst_on_host else kind.CU_MEMORYTYPE_DEVICE
        if src_on_host:
            copy.srcHost = src
        else:
            copy.srcDevice = src
        if dst_on_host:
            copy.dstHost = dst
        else:
            copy.dstDevice = dst
        copy.WidthInBytes, copy.Height, copy.Depth = nbytes, 1, 1
        deps = self._deps(tensors)
        with self.device:
            node = check(driver.cuGraphAddMemcpyNode(self.handle, deps, len(deps), copy, self.device.context),
                         "cuGraphAddMemcpyNode")
        return self._added(int(node), tensors)

    def add_barrier(self, tensors):
        """An empty node after the last use of ``tensors``, or after every
        node so far when ``tensors`` is empty (then every later node waits)."""
        deps = self._deps(tensors) if tensors else list(self._since_barrier or
                                                        ([self._barrier] if self._barrier else []))
        with self.device:
            node = int(check(cuda().cuGraphAddEmptyNode(self.handle, deps, len(deps)), "cuGraphAddEmptyNode"))
        if tensors:
            return self._added(node, tensors)
        self._drop_exec()
        self._barrier, self._since_barrier, self._last = node, [], {}
        return node

    # -- evaluating ------------------------------------------------------------------------

    def instantiate(self):
        driver = cuda()
        with self.device:
            for node in self.kernel_nodes:
                if node.push != node.graph_push:  # updated in an earlier executable graph only
                    check(driver.cuGraphKernelNodeSetParams(node.handle, node.params), "cuGraphKernelNodeSetParams")
                    node.graph_push = node.push
            self.exec = check(driver.cuGraphInstantiate(self.handle, 0), "cuGraphInstantiate")
        self.instantiations += 1
        log.debug("graph 0x%x instantiated (%d nodes)", int(self.handle), len(self._since_barrier))

    def launch(self, stream_handle):
        check(cuda().cuGraphLaunch(self.exec, stream_handle), "cuGraphLaunch")

    def update_kernel(self, kernel_node, packed, push):
        """New argument bytes for one kernel node of the instantiated graph
        (the next launch uses them; one in flight is not affected)."""
        kernel_node.rewrite(packed, push)
        if self.exec is None:
            return  # instantiate() hands the graph's node the new values
        check(cuda().cuGraphExecKernelNodeSetParams(self.exec, kernel_node.handle, kernel_node.params),
              "cuGraphExecKernelNodeSetParams")

    # -- release ------------------------------------------------------------------------------

    def _drop_exec(self):
        if self.exec is not None:
            exec_, self.exec = self.exec, None
            with self.device:
                quietly(cuda().cuGraphExecDestroy, exec_)

    def destroy(self):
        """Frees the executable graph and the graph (the caller has waited
        for any launch of it)."""
        if self.handle is None:
            return
        self._drop_exec()
        with self.device:
            quietly(cuda().cuGraphDestroy, self.handle)
        log.debug("graph 0x%x destroyed", int(self.handle))
        self.handle, self.kernel_nodes = None, []
