"""CUDAError, the one exception class of every CUDA failure cubind reports.

It lives at the lowest layer so that the loader's ``LibraryNotFoundError``
(no libcuda.so.1, no NVRTC...) can be one too: a user catches a missing
library and a failed call with one ``except cubind.CUDAError``. The Pythonic
layer raises it (``cubind._core.errors.check``) and gives it the libraries'
own descriptions of a status (``set_describer``), which need the generated
modules this layer must not import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # The status enums (cuda.CUresult, cudart.cudaError_t) are CEnums: named
    # by their base here, since the floor imports no generated package.
    from _cubind.enum import CEnum

__all__ = ["CUDAError", "STICKY", "set_describer"]

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


def _no_description(code):
    return ""


_describer = _no_description


def set_describer(describe):
    """Installs ``describe(code) -> str``, the library's text of a status
    (cubind._core.errors registers cuGetErrorString's and cudaGetErrorString's)."""
    global _describer
    _describer = describe


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
        self.message = _describer(code)
        self.sticky = int(code) in STICKY
        where = f"{call}: " if call else ""
        advice = f"; {_STICKY_ADVICE}" if self.sticky else ""
        super().__init__(f"{where}{self.name} ({int(code)}): {self.message}{advice}")
