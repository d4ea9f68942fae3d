"""CUDAError, the one exception class of every CUDA failure cubind reports.

It lives at the lowest layer so that the loader's ``LibraryNotFoundError``
(no libcuda.so.1, no NVRTC...) can be one too: a user catches a missing
library and a failed call with one ``except cubind.CUDAError``. The Pythonic
layer raises it (``cubind._core.errors.check``). Its message holds the
library's own description of the status, which the status gives itself: a
generated status enum whose spec names ``status_description`` has
``_describe_()`` (``cuGetErrorString``'s result for ``CUresult``), so this
layer asks the status, importing no generated module and registered into by
none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # The status enums (cuda.CUresult, cudart.cudaError_t) are CEnums: named
    # by their base here, since the floor imports no generated package.
    from _cubind.enum import CEnum

__all__ = ["CUDAError", "STICKY"]

# Errors after which the context cannot be used again (cuda.h: "any further
# CUDA work will return the same error"): illegal address, launch timeout,
# device assert, hardware stack error, illegal instruction, misaligned
# address, invalid address space, invalid PC, launch failure, tensor memory
# leak. The runtime's codes have the same values.
STICKY = frozenset((700, 702, 710, 714, 715, 716, 717, 718, 719, 721))
_STICKY_ADVICE = ("the context is unusable after this error, and CUDA keeps the error for the life of the process: "
                  "every later call fails. Start a new process: cubind.Device(n).reset() does not recover it (the "
                  "driver refuses a new context in this process after such an error). Run work that may fault in a "
                  "subprocess (multiprocessing with the 'spawn' start method) and start another after it fails")


def _description(code):
    """The library's text of the status ``code``, or "" where it has none (a
    plain int, a library without a describing function, a failed look-up)."""
    describe = getattr(code, "_describe_", None)
    if describe is None:
        return ""
    try:
        status, text = describe()  # the classic (status, text) of cuGetErrorString and its kin
        if int(status) != 0 or text is None:
            return ""
        return text.decode() if isinstance(text, bytes) else str(text)
    except Exception:  # a description is a courtesy: never mask the real error
        return ""


class CUDAError(RuntimeError):
    """A CUDA driver or runtime call failed, or a CUDA library was not found.

    ``code`` is the status enum member (``cuda.CUresult`` or
    ``cudart.cudaError_t``), ``name`` its name, ``message`` the library's own
    description of it, ``call`` the C function that returned it. ``sticky``
    says the error poisoned the context (see :data:`STICKY`) for the rest of
    the process: ``Device.reset()`` does not clear it; end the process (run
    work that may fault in a subprocess, e.g. ``multiprocessing`` with the
    'spawn' start method, and start a new one). The message says so too.
    ``LibraryNotFoundError`` (also an ``OSError``) is one, with ``code`` None.
    """

    # A subclass raised without a status (LibraryNotFoundError) keeps these.
    code: CEnum | int | None = None
    call: str | None = None
    name: str = ""
    message: str = ""
    sticky: bool = False

    def __init__(self, code: CEnum | int, call: str | None = None) -> None:
        self.code = code
        self.call = call
        self.name = getattr(code, "name", str(int(code)))
        self.message = _description(code)
        self.sticky = int(code) in STICKY
        where = f"{call}: " if call else ""
        advice = f"; {_STICKY_ADVICE}" if self.sticky else ""
        super().__init__(f"{where}{self.name} ({int(code)}): {self.message}{advice}")
