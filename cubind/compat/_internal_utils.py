"""``cuda.bindings._internal.utils``'s exceptions, which callers catch around
the probes (numba-cuda's ``_have_nvjitlink``): both are ``RuntimeError``s, as
NVIDIA's are. cubind's probes return 0 rather than raise them."""

__all__ = ["FunctionNotFoundError", "NotSupportedError"]


class FunctionNotFoundError(RuntimeError):
    """A library's entry point is missing."""


class NotSupportedError(RuntimeError):
    """The operation is not supported on this platform or library."""
