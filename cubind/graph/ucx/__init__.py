"""Across processes: GXF's UCX components (``components.py``), what of a
message crosses and how (``wire.py``), the transport on RAPIDS' ucxx
(``transport.py``, the one module that imports ucxx, on first use, and
what both ends share; ``outlink.py`` a transmitter's connection,
``inlink.py`` a receiver's) and the
device copies UCX cannot send by CUDA IPC (``staging.py``). It imports the
model and scheduling (the run's external-source protocol)."""
