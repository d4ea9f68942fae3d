"""The core objects: devices and their contexts, streams and events,
errors, and what outlives them (pending work, exit-time release). Importing it loads no CUDA library."""

# Device.default_stream is installed by the stream module (which imports the
# context module, not the reverse): importing any core module sets it.
from cubind._core import stream as _stream  # noqa: F401
