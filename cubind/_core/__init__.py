"""The core objects: devices and their contexts, streams and events,
errors, and what outlives them (pending work, exit-time release).
Importing it loads no CUDA library."""
