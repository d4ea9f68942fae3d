"""The Pythonic layer's exceptions, and the one place status tuples end.

Every call into the 1:1 modules from the layer goes through :func:`check`, so
no status tuple reaches a user and every failure names the C call that failed.
"""

__all__ = ["CUDAError", "CompileError", "check", "STICKY"]

# Errors after which the context cannot be used again (cuda.h: "any further
# CUDA work will return the same error"): illegal address, launch timeout,
# device assert, hardware stack error, illegal instruction, misaligned
# address, invalid address space, invalid PC, launch failure, tensor memory
# leak. The runtime's codes have the same values.
STICKY = frozenset((700, 702, 710, 714, 715, 716, 717, 718, 719, 721))
_STICKY_ADVICE = ("the context is unusable after this error, and CUDA keeps the error for the life of the process: "
                  "every later call fails. Start a new process (cubind.Device(n).reset() destroys the context, but "
                  "the driver refuses a new one in this process after such an error)")


class CUDAError(RuntimeError):
    """A CUDA driver or runtime call failed.

    ``code`` is the status enum member (``cuda.CUresult`` or
    ``cudart.cudaError_t``), ``name`` its name, ``message`` the library's own
    description of it, ``call`` the C function that returned it. ``sticky``
    says the error poisoned the context (see :data:`STICKY`): the message then
    says what to do.
    """

    def __init__(self, code, call=None):
        self.code = code
        self.call = call
        self.name = getattr(code, "name", str(int(code)))
        self.message = _describe(code)
        self.sticky = int(code) in STICKY
        where = f"{call}: " if call else ""
        advice = f"; {_STICKY_ADVICE}" if self.sticky else ""
        super().__init__(f"{where}{self.name} ({int(code)}): {self.message}{advice}")


class CompileError(RuntimeError):
    """NVRTC could not compile a program; ``log`` is its full log and
    ``options`` the options it was given."""

    def __init__(self, name, log, options, code=None):
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
        if type(code).__name__ == "cudaError_t" or module.endswith("cudart"):
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


def check(result, call=None):
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
