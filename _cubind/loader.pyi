"""Types of _cubind/loader.pyx: its exceptions, which ``import cubind`` re-exports
(the rest of the module is the generated packages' runtime, untyped here)."""

from typing import Any

from _cubind.errors import CUDAError

class LibraryNotFoundError(OSError, CUDAError):
    """A CUDA library could not be found or opened; the message says where we looked."""
    message: str  # a property at runtime: the exception's text

class FunctionNotFoundError(CUDAError):
    """A CUDA library was found but lacks a function: it is older than the headers cubind was generated from."""
    message: str  # a property at runtime: the exception's text
    def __init__(self, message: str) -> None: ...

def __getattr__(name: str) -> Any: ...
