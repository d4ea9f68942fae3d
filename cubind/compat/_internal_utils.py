"""``cuda.bindings._internal.utils``'s exceptions, which callers catch around
the probes (numba-cuda's ``_have_nvjitlink``): both are ``RuntimeError``s, as
NVIDIA's are. cubind's probes return 0 rather than raise them.
``FunctionNotFoundError`` is the loader's, the one every generated module
raises for a function its library lacks."""

from _cubind.loader import FunctionNotFoundError

__all__ = ["FunctionNotFoundError", "NotSupportedError"]


class NotSupportedError(RuntimeError):
    """The operation is not supported on this platform or library."""
