"""What a graph is made of: components with typed parameters, entities,
codelets, double-buffer queues, messages of host and device tensors (and the
events that order device tensors across an edge), clocks, allocators and
stream pools, and the graph's exceptions. It imports no other room of
``cubind.graph`` (ARCHITECTURE.md, "cubind.graph's rooms")."""
