"""What a sequence records into its CUDA graph (a :class:`cubind.CUDAGraph`),
and in what order: nodes added as operations are recorded, ordered by the
tensors they share.

Ordering inside a graph: a node waits for the last node that used any of its
tensors (every use counts as a write: a kernel may write any tensor it is
given), so operations on disjoint tensors may run concurrently while those
sharing a tensor run in recorded order. A full ``OpMemoryBarrier`` (no
tensors) is an empty node that every earlier node precedes and every later
node follows.
"""

import logging

import cubind

log = logging.getLogger("cubind.compute")


class Dispatch:
    """A kernel node of the graph and the dispatch it runs, with the push
    constants its executable node holds (``push``)."""

    __slots__ = ("node", "dispatch", "push")

    def __init__(self, node, dispatch, push):
        self.node, self.dispatch, self.push = node, dispatch, push


class Recording:
    """A sequence's graph being recorded, then instantiated and launched."""

    def __init__(self, device):
        self.device = device
        self.graph = cubind.CUDAGraph(device)
        self.kernel_nodes = []     # Dispatch, in record order
        # id(dispatch) and id(algorithm) -> the Dispatch entries reading their
        # push constants: a change updates those nodes only, not a scan of all
        # (the sequence keeps both alive while recorded: their ids stay theirs).
        self.readers = {}
        self._last = {}            # id(tensor) -> the last node that used it
        self._barrier = None       # the last full barrier's node
        self._since_barrier = []   # nodes added after it

    @property
    def instantiated(self):
        return self.graph.instantiated

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
        return node

    def add_kernel(self, tensors, dispatch, algorithm, push):
        node = self.graph.add_kernel(algorithm.kernel, algorithm.workgroup, algorithm.block,
                                     *algorithm._kernel_args(push), after=self._deps(tensors))
        entry = Dispatch(node, dispatch, push)
        self.kernel_nodes.append(entry)
        self.readers.setdefault(id(dispatch), []).append(entry)
        self.readers.setdefault(id(algorithm), []).append(entry)
        return self._added(node, tensors)

    def add_copy(self, tensors, src, src_on_host, dst, dst_on_host, nbytes):
        """A 1-D copy of ``nbytes`` between host or device addresses."""
        node = self.graph.add_copy(dst, src, nbytes, after=self._deps(tensors), dst_host=dst_on_host,
                                   src_host=src_on_host)
        return self._added(node, tensors)

    def add_barrier(self, tensors):
        """An empty node after the last use of ``tensors``, or after every
        node so far when ``tensors`` is empty (then every later node waits)."""
        deps = self._deps(tensors) if tensors else list(self._since_barrier or
                                                        ([self._barrier] if self._barrier else []))
        node = self.graph.add_empty(after=deps)
        if tensors:
            return self._added(node, tensors)
        self._barrier, self._since_barrier, self._last = node, [], {}
        return node

    # -- evaluating ------------------------------------------------------------------------

    def instantiate(self):
        self.graph.instantiate()
        log.debug("graph 0x%x instantiated (%d nodes)", int(self.graph.handle), len(self._since_barrier))

    def update_kernel(self, entry, args, push):
        """New arguments for one kernel node (the next launch uses them; one
        in flight is not affected)."""
        entry.node.set_args(*args)
        entry.push = push

    # -- release ------------------------------------------------------------------------------

    def destroy(self):
        """Frees the executable graph and the graph (the caller has waited
        for any launch of it)."""
        self.graph.close()
        self.kernel_nodes, self.readers = [], {}
