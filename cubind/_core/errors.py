"""The Pythonic layer's exceptions, and the one place status tuples end.

Every call into the 1:1 modules from the layer goes through :func:`check`, so
no status tuple reaches a user and every failure names the C call that failed.
"""

from __future__ import annotations

__all__ = ["CUDAError", "CompileError", "check", "STICKY"]

# CUDAError is defined with the loader (_cubind.errors), whose
# LibraryNotFoundError is one; this layer raises it and describes its codes.
from typing import TYPE_CHECKING

from _cubind.errors import STICKY, CUDAError, set_describer

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    import nvrtc


class CompileError(RuntimeError):
    """NVRTC could not compile a program; ``log`` is its full log and
    ``options`` the options it was given."""
    log: str
    options: list[str]
    code: nvrtc.nvrtcResult | None
    program_name: str

    def __init__(self, name: str, log: str, options: Iterable[str], code: nvrtc.nvrtcResult | None = None) -> None:
        self.log = log
        self.options = list(options)
        self.code = code
        self.program_name = name
        shown = " ".join(o.decode() if isinstance(o, bytes) else str(o) for o in self.options)
        super().__init__(f"compiling {name} failed (options: {shown or 'none'}):\n{log}")


def _describe(code):
    """The library's description of a status, or "" where it has none."""
    module = type(code).__module__
    try:
        if type(code).__name__ == "nvmlReturn_t":   # cubind.system's failures
            import nvml

            err, text = nvml.nvmlErrorString(code)
        elif type(code).__name__ == "cudaError_t" or module.endswith("cudart"):
            from cuda import cudart

            err, text = cudart.cudaGetErrorString(code)
        else:
            import cuda

            err, text = cuda.cuGetErrorString(code)
            if int(err) != 0:
                return ""
    except Exception:  # a description is a courtesy: never mask the real error
        return ""
    return text.decode() if isinstance(text, bytes) else str(text or "")


set_describer(_describe)


def check(result: tuple[Any, ...], call: str | None = None) -> Any:
    """Ends a status tuple: raises :class:`CUDAError` on a failed status, else
    returns the outputs (``None`` for none, the value for one, else a tuple)."""
    status = result[0]
    if status != 0:
        raise CUDAError(status, call)
    n = len(result)
    if n == 1:
        return None
    if n == 2:
        return result[1]
    return result[1:]
