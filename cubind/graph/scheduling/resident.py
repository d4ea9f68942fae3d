"""GPU-resident chains: entities in a line whose ticks only queue device
work on their stream, captured once into a CUDA graph
(``cubind.CUDAGraph.capture``) and replayed per message, as Holoscan 4.0
runs its GPU-resident operator chains.

``graph.gpu_resident("saxpy1", "saxpy2")`` names the chain; each codelet in
it says what it is by ``gpu_resident`` (True: its tick only queues work on
its stream; False: never capture it; None, the default: it is tried, and
the capture decides). Nothing is guessed: the first message is ticked
through the chain as usual (on the chain's stream, in one step), which
shows the tensors its codelets make; the second is ticked under a stream
capture, with those tensors made beforehand; the others replay the graph.
A tick that does what a capture forbids (a synchronisation, reading a
result back, ``cuMemAlloc``, an allocation on the stream outside the
codelet's allocator, tensors other than the first tick's) stops the graph
with a :class:`CodeletError` or :class:`GraphError` naming the codelet or
the chain, never a half-made graph.

Buffers (a captured graph reads and writes fixed addresses):

- the chain's input: each device tensor of the message reaching the first
  entity is copied, on the chain's stream after the producer's event, into
  a buffer of the chain made at the capture (same name, shape and dtype;
  a later message whose tensors differ is a ``GraphError``); a chain that
  begins with a source (no receiver) has none;
- inside: the tensors the codelets made through their allocator in the
  first tick are made again before the capture, on the chain's stream, and
  handed out in the same order during it; the chain keeps them for its life,
  so every replay writes the same memory;
- the chain's output: each message the last entity published at the capture
  is published again per replay, its device tensors copied out of the
  chain's buffers into new arrays (so a consumer may keep them while the
  next message runs). Every output message (the first tick's too) carries
  the input message's other components (timestamps, objects) where it has
  none of that name.

The chain runs on a non-blocking stream of its own. After the capture a
message is one launch of a second graph: copy nodes from the message's
tensors into the chain's input buffers, the captured chain as a child, copy
nodes out into the new arrays; no host synchronisation. A stream-ordered
pool hands the same blocks out again (on the H200 every message of a
3 000-message run had the same input and output addresses), so the chain
keeps up to ``REPLAY_GRAPHS`` such graphs by the addresses they copy from
and to: a message at addresses seen before launches its graph as it is;
one at new addresses gets a graph of its own while fewer are kept, else
the least recently used one's copy nodes are retargeted
(``CopyNode.set``), or, where the driver refuses an address of another
kind of allocation, a graph is made again around it. The consumers wait for an
event, as for any edge; the input tensors' memory is freed after the
chain's work (the receive records the chain's stream on it)."""

import contextlib
from collections import OrderedDict

import numpy as np

import cubind
from cubind.graph.model.codelet import Codelet
from cubind.graph.model.component import Component
from cubind.graph.model.errors import CodeletError, GraphError
from cubind.graph.model.errors import add_note as _note
from cubind.graph.model.message import Message, Tensor
from cubind.graph.model.parameters import Parameter
from cubind.graph.model.queues import Receiver, Transmitter
from cubind.graph.model.resources import device_scope

from .terms import DownstreamReceptiveSchedulingTerm, MessageAvailableSchedulingTerm, SchedulingTerm

# Replay graphs a chain keeps, each for one set of input and output
# addresses: enough for a pool that alternates between a few blocks, few
# enough that chains of ever new addresses instantiate little (they then
# retarget the least recently used one per message, as with one graph).
REPLAY_GRAPHS = 4


class GPUResidentChain(Component, gxf_type="GPUResidentChain"):
    """A YAML app's way to ``graph.gpu_resident(...)``: a component (in any
    entity) whose ``entities`` names the chain's entities in line, or, left
    out, asks for the lines of codelets declaring ``gpu_resident = True``."""

    entities = Parameter(list, None, "the chain's entities by name, in line (none: the declared lines)")


class ResidentChain:
    """A line of entities captured once and replayed per message; made by
    :meth:`Graph.gpu_resident`. ``replays`` counts the messages replayed
    (not the first, ticked as usual, nor the second, captured), ``buffers``
    the tensors made for the capture (the chain's fixed inner buffers),
    ``node_types`` what the capture recorded."""

    def __init__(self, graph, names):
        if not names:
            raise GraphError("gpu_resident: name at least one entity")
        self.graph = graph
        self.names = [n if isinstance(n, str) else n.name for n in names]
        self.replays = 0
        self.buffers = 0
        self.cuda_graph = None
        self.node_types = []

    def __repr__(self):
        return f"<ResidentChain {' -> '.join(self.names)}>"

    @property
    def label(self):
        return f"GPU-resident chain {' -> '.join(self.names)}"

    # -- checked when the graph runs

    def bind(self):
        try:
            entities = [self.graph[n] for n in self.names]
        except KeyError as exc:
            raise GraphError(f"{self.label}: {exc.args[0]}") from None
        if len(set(map(id, entities))) != len(entities):
            raise GraphError(f"{self.label}: an entity is named twice")
        for entity in entities:
            for codelet in entity.of_type(Codelet):
                if getattr(codelet, "gpu_resident", None) is False:
                    raise GraphError(f"{self.label}: codelet {codelet.path} says gpu_resident = False: "
                                     f"its ticks cannot be captured")
            if entity.device != entities[0].device:
                raise GraphError(f"{self.label}: entity {entity.name!r} is on device {entity.device}, "
                                 f"the chain's first on {entities[0].device}: a chain runs on one device")
        for a, b in zip(entities, entities[1:]):
            txs, rxs = a.of_type(Transmitter), b.of_type(Receiver)
            if len(txs) != 1 or len(rxs) != 1 or txs[0].targets != [rxs[0]] or _fed(rxs[0]) != [txs[0]]:
                raise GraphError(f"{self.label}: {a.name!r} must feed {b.name!r} alone, through one transmitter "
                                 f"connected to {b.name!r}'s one receiver (a chain is a line)")
        inputs = entities[0].of_type(Receiver)
        if len(inputs) > 1:
            raise GraphError(f"{self.label}: the first entity {entities[0].name!r} has {len(inputs)} receivers; "
                             f"a chain takes one input")
        self.entities = entities
        self.input = inputs[0] if inputs else None
        self.outputs = entities[-1].of_type(Transmitter)
        internal = {id(q) for e in entities[1:] for q in e.of_type(Receiver)}
        internal |= {id(q) for e in entities[:-1] for q in e.of_type(Transmitter)}
        # Inside the chain a message goes through every entity in one step:
        # the terms on its inner queues are met by construction.
        self.terms = [t for e in entities for t in e.of_type(SchedulingTerm) if not _on_queue(t, internal)]
        self.codelets = [(e, c) for e in entities for c in e.of_type(Codelet)]
        return self

    # -- the run's side

    def start(self):
        device = self.entities[0].device
        with device_scope(device):
            self.stream = cubind.Stream(non_blocking=True)
        self.cuda_graph = None
        # Replay graphs by (input addresses, output addresses), least recently
        # used first: (graph, copies in by name, copies out); see _build_replay.
        self.replay_graphs = OrderedDict()
        self.inputs = {}
        self.kept = []
        self.templates = []
        self.replays = 0
        self.buffers = 0  # made by the codelets' allocators for the capture
        self.recorded = None  # what the allocators made in the first tick: [(allocator, description)]
        self._capturing = False

    def stop(self):
        stream, graph = getattr(self, "stream", None), self.cuda_graph
        if stream is None:
            return
        try:
            stream.synchronize()
        finally:
            if graph is not None:
                graph.close()
            for replay, _, _ in self.replay_graphs.values():
                replay.close()
            self.replay_graphs = OrderedDict()
            # Not closed: the chain's buffers and the outputs it handed out
            # (which consumers may keep) are freed in its order, and each
            # keeps it alive until then; the last one's release destroys it.
            self.stream = None
            self.kept, self.inputs, self.templates = [], {}, []

    def tick(self, phase):
        """One message through the chain (the run's worker, without its
        lock): ticked as usual the first time, captured the second, replayed
        after. ``phase(entity, codelet, name, stream)`` runs a codelet's phase
        as the scheduler does, on ``stream`` (errors as CodeletError)."""
        with device_scope(self.entities[0].device), self.stream:
            message = None
            if self.input is not None:
                self.input.sync()
                message = self.input.receive()  # the chain's stream waits for the producer's event
                if message is None:
                    raise GraphError(f"{self.label}: ticked without a message on {self.input.path}")
            if self.recorded is None:
                self._first(message, phase)
                return
            if self.cuda_graph is None:
                self._capture(message, phase)
                self._publish(message)
            elif not self.replay_graphs:  # outputs a replay graph cannot copy (strided, empty)
                self._copy_in(message)
                self.cuda_graph.launch(self.stream)
                self.replays += 1
                self._publish(message)
            else:
                self._publish(message, self._replay(message))
                self.replays += 1

    # -- capture

    def _capture(self, message, phase):
        inner = None
        if message is not None:
            inner = message.copy()
            inner.ready_event = None  # the copy into the chain's buffers is ordered on the stream already
            for name, tensor in message.tensors().items():
                if not tensor.is_device:
                    raise GraphError(f"{self.label}: the input message's tensor {name!r} is on the host; a "
                                     f"captured chain reads device tensors only (a replay cannot see new host "
                                     f"values)")
                fixed = cubind.empty(tensor.shape, tensor.dtype, stream=self.stream)
                fixed.copy_from(tensor.data, stream=self.stream)
                self.inputs[name] = fixed
                inner.replace(name, Tensor(name, fixed))
        # The first tick's tensors, made again outside the capture on the
        # chain's stream: inside it they are used on that stream only, so no
        # ordering event is recorded for them (a captured event cannot be
        # queried after).
        self.kept = [allocator.make(description, self.stream) for allocator, description in self.recorded]
        self.buffers = len(self.kept)
        graph = cubind.CUDAGraph()
        self._capturing, self._next = True, 0
        try:
            with self._allocators_fixed(), graph.capture(self.stream):
                self._tick_through(inner, phase)
                if self._next != len(self.kept):
                    raise GraphError(f"{self.label}: the codelets made {self._next} tensors in the captured tick, "
                                     f"{len(self.kept)} in the first: a captured chain makes the same ones each tick")
        except CodeletError as exc:
            _note(exc, f"while {self.label} was being captured into a CUDA graph: a codelet in it may queue "
                         f"only asynchronous work on its stream (gpu_resident = False keeps it out)")
            raise
        except cubind.CUDAError as exc:
            raise GraphError(f"{self.label}: the capture failed: {exc}") from exc
        finally:
            self._capturing = False
        for _, m in self.templates:
            for name, value in m:
                if isinstance(value, Tensor) and not value.is_device:
                    graph.close()
                    raise GraphError(f"{self.label}: {self.entities[-1].name!r} published the host tensor "
                                     f"{name!r}; a captured chain hands out device tensors only (a replay does "
                                     f"not run the host code that filled it)")
        types = graph.node_types()
        if "mem_alloc" in types or "mem_free" in types:
            graph.close()
            raise GraphError(f"{self.label}: a codelet allocated or freed device memory on its stream during the "
                             f"capture (not through its allocator): a replay cannot hand out new memory; make "
                             f"tensors with self.allocator")
        self.cuda_graph, self.node_types = graph, types
        graph.launch(self.stream)  # the captured message's own work
        self._build_replay(self._sources(message), None)

    def _allocators_fixed(self):
        """Every allocator the chain's codelets use (their own entity's or
        another's, by name) makes the chain's tensors while this thread is
        inside (``fixed_tensor``)."""
        stack = contextlib.ExitStack()
        for allocator in {id(a): a for _, c in self.codelets for a in c.allocators}.values():
            stack.enter_context(allocator.fixed_for(self))
        return stack

    def _first(self, message, phase):
        """The first message, ticked through the chain as usual (on the
        chain's stream); what the allocators make is noted for the capture."""
        self.recorded = []
        with self._allocators_fixed():
            self._tick_through(message, phase)
        for tx, m in self.templates:
            for name, value in _passed_on(message):
                if name not in m:
                    m.add(name, value)
            tx.publish(m)
        self.templates = []

    def _tick_through(self, message, phase):
        stream = self.stream
        for i, entity in enumerate(self.entities):
            receivers = entity.of_type(Receiver)
            if message is not None and receivers:
                receivers[0].put_next(message)
            for codelet in entity.of_type(Codelet):
                phase(entity, codelet, "tick", stream)  # every tick of the chain queues on its stream
            published = [(tx, m) for tx in entity.of_type(Transmitter) for m in tx.sync()]
            if i < len(self.entities) - 1:
                if len(published) != 1:
                    raise GraphError(f"{self.label}: {entity.name!r} published {len(published)} messages in a "
                                     f"tick; inside a chain each entity passes one on")
                message = published[0][1]
                continue
            self.templates = published

    def fixed_tensor(self, allocator, description):
        """A tensor an allocator of the chain is asked for in the first tick
        (made, and noted) or in the captured one (the one made before it for
        that place, which must be asked for alike)."""
        if not self._capturing:
            self.recorded.append((allocator, description))
            return allocator.make(description)
        index = self._next
        if index >= len(self.kept) or self.recorded[index] != (allocator, description):
            first = self.recorded[index] if index < len(self.recorded) else None
            raise GraphError(f"{self.label}: {allocator.path} was asked for {description} in the captured tick; "
                             f"the first tick asked for {first and first[1]} there: a captured chain makes the "
                             f"same tensors each tick")
        self._next += 1
        return self.kept[index]

    # -- replay

    def _build_replay(self, sources, targets):
        """A graph a later message launches: a copy node per input (from the
        message's tensor into the chain's buffer), the captured chain as a
        child, a copy node per output tensor (into the new array handed
        out); kept under the addresses it copies from and to. Made from
        ``sources`` (by input name) and ``targets`` (per output tensor; None:
        arrays made here, of the kind each message's are, never launched
        into). Nothing where an output cannot be one copy (strided or empty):
        the chain then copies with arrays' copy_from around the launch."""
        fixed_out = [value.data for _, m in self.templates for _, value in m if isinstance(value, Tensor)]
        if any(not a.c_contiguous or not a.nbytes for a in fixed_out) or \
                any(not a.nbytes for a in self.inputs.values()):
            return
        self._out_layouts = [(a.shape, a.dtype) for a in fixed_out]
        if targets is None:
            targets = [cubind.empty(shape, dtype, stream=self.stream) for shape, dtype in self._out_layouts]
        graph = cubind.CUDAGraph()
        ins = {name: graph.add_copy(fixed, sources[name], fixed.nbytes) for name, fixed in self.inputs.items()}
        body = graph.add_graph(self.cuda_graph, after=list(ins.values()))
        outs = [graph.add_copy(target, data, data.nbytes, after=body) for target, data in zip(targets, fixed_out)]
        try:
            graph.instantiate()
        except BaseException:
            graph.close()
            raise
        self.replay_graphs[_addresses(sources, targets)] = (graph, ins, outs)

    def _replay(self, message):
        """Launches a replay graph for ``message``; returns the new arrays
        its output copies fill (in the templates' order). The graph made for
        these addresses where there is one; else a new one while fewer than
        REPLAY_GRAPHS are kept, else the least recently used one retargeted."""
        sources = self._sources(message)
        targets = [cubind.empty(shape, dtype, stream=self.stream) for shape, dtype in self._out_layouts]
        key = _addresses(sources, targets)
        graphs = self.replay_graphs
        replay = graphs.get(key)
        if replay is not None:
            graphs.move_to_end(key)
        elif len(graphs) < REPLAY_GRAPHS:
            self._build_replay(sources, targets)
            replay = graphs[key]
        else:
            _, replay = graphs.popitem(last=False)
            _, ins, outs = replay
            try:
                for name, src in sources.items():
                    ins[name].set(src=src)
                for node, target in zip(outs, targets):
                    node.set(dst=target)
            except cubind.CUDAError:
                # Another kind of memory than the graph was made with (a pool's
                # for cuMemAlloc's, a foreign array): made again around it.
                replay[0].close()
                self._build_replay(sources, targets)
                replay = graphs[key]
            else:
                graphs[key] = replay
        replay[0].launch(self.stream)
        return targets

    def _matched(self, message):
        """(name, chain buffer, message's array) per input tensor, checked
        against the captured message's: same names, device, shape, dtype."""
        if message is None:
            return []
        tensors = message.tensors()
        if set(tensors) != set(self.inputs):
            raise GraphError(f"{self.label}: the input message carries tensors {sorted(tensors)}, the captured "
                             f"one carried {sorted(self.inputs)}")
        matched = []
        for name, fixed in self.inputs.items():
            data = tensors[name].data
            if not tensors[name].is_device or data.shape != fixed.shape or np.dtype(data.dtype) != fixed.dtype:
                raise GraphError(f"{self.label}: tensor {name!r} is {tensors[name]!r}; the captured chain reads "
                                 f"device {fixed.dtype}{list(fixed.shape)}")
            matched.append((name, fixed, data))
        return matched

    def _sources(self, message):
        """The input message's tensors by name; a strided one as a contiguous
        copy on the chain's stream (the copy node copies bytes)."""
        sources = self._as_captured(message)
        if sources is not None:
            return sources
        return {name: data if data.c_contiguous else data.copy(stream=self.stream)
                for name, _, data in self._matched(message)}

    def _as_captured(self, message):
        """The input's contiguous device arrays by name where the message is
        exactly as the captured one was (the same names, shapes and dtypes),
        else None (``_matched`` then says what differs): the check every
        replayed message passes, in as few steps as it can be made."""
        if message is None:  # a chain that begins with a source
            return {}
        tensors = message.tensors()
        if len(tensors) != len(self.inputs):
            return None
        sources = {}
        for name, fixed in self.inputs.items():
            tensor = tensors.get(name)
            if tensor is None or not tensor.is_device:
                return None
            data = tensor.data
            if data.shape != fixed.shape or data.dtype != fixed.dtype or not data.c_contiguous:
                return None
            sources[name] = data
        return sources

    def _copy_in(self, message):
        for _, fixed, data in self._matched(message):
            fixed.copy_from(data, stream=self.stream)

    def _publish(self, message, filled=None):
        """Publishes the chain's output messages: each device tensor a new
        array, ``filled`` by the replay graph's copies where given."""
        extra = _passed_on(message)
        filled = iter(filled) if filled is not None else None
        for tx, template in self.templates:
            out = Message()
            for name, value in template:
                if isinstance(value, Tensor):
                    if filled is not None:
                        data = next(filled)
                    else:
                        data = cubind.empty(value.shape, value.dtype, stream=self.stream)
                        data.copy_from(value.data, stream=self.stream)
                    out.add_tensor(name, data)
            for name, value in extra:
                if name not in out:
                    out.add(name, value)
            tx.publish(out)


def declared_lines(graph, taken=()):
    """The longest lines of entities (by name) whose codelets all declare
    ``gpu_resident = True``, each entity feeding the next alone, leaving out
    those named in ``taken``: what ``graph.gpu_resident()`` makes chains of."""
    def ok(e):
        codelets = e.of_type(Codelet)
        return (e.name not in taken and codelets and all(c.gpu_resident is True for c in codelets)
                and len(e.of_type(Receiver)) <= 1)

    candidates = [e for e in graph.entities if ok(e)]
    following = {}
    for a in candidates:
        txs = a.of_type(Transmitter)
        if len(txs) != 1 or len(txs[0].targets) != 1:
            continue
        b = txs[0].targets[0].entity
        if b in candidates and b.of_type(Receiver) == [txs[0].targets[0]] and _fed(txs[0].targets[0]) == txs:
            following[a] = b
    followed = set(following.values())
    lines = []
    for head in candidates:
        if head in followed:
            continue
        line = [head]
        while line[-1] in following:
            line.append(following[line[-1]])
        lines.append([e.name for e in line])
    return lines


def _addresses(sources, targets):
    """A replay graph's key: the addresses its copies read and write."""
    key = [a.ptr for a in sources.values()]
    key += [a.ptr for a in targets]
    return tuple(key)


def _passed_on(message):
    """The input's components other than tensors (timestamps, objects): every
    output message of the chain carries them where its own lack the name."""
    return [(k, v) for k, v in message if not isinstance(v, Tensor)] if message is not None else []



def _fed(receiver):
    return [tx for e in receiver.entity.graph.entities for tx in e.of_type(Transmitter) if receiver in tx.targets]


def _on_queue(term, internal):
    if isinstance(term, MessageAvailableSchedulingTerm):
        return id(term.receiver) in internal
    if isinstance(term, DownstreamReceptiveSchedulingTerm):
        return id(term.transmitter) in internal
    return False
