"""Apps: YAML apps in GXF's shape (``loader.py``; ``python -m cubind.graph
app.yaml`` runs one), codelet classes found by file or module
(``codelet_classes.py``), and the parts of an app split across processes
started together (``processes.py``: ``python -m cubind.graph.apps.processes``).
It imports the model and scheduling; no other room imports it."""
