"""How a graph runs: the ``Graph`` (entities wired by connections, handed to
a scheduler by ``run()``), scheduling terms, the greedy and multi-thread
schedulers, GPU-resident chains (captured into a CUDA graph, replayed per
message) and the protocol of a component fed from outside the run
(``external.py``). It imports the model only."""
