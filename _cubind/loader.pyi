"""Types of _cubind/loader.pyx: its exception, which ``import cubind`` re-exports
(the rest of the module is the generated packages' runtime, untyped here)."""

from typing import Any

from _cubind.errors import CUDAError

class LibraryNotFoundError(OSError, CUDAError):
    """A CUDA library could not be found or opened; the message says where we looked."""
    message: str  # a property at runtime: the exception's text

def __getattr__(name: str) -> Any: ...
