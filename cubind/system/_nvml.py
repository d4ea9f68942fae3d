"""The one way cubind.system reaches NVML: the ``nvml`` module, initialised
once per process (``nvmlInit``, under a lock: threads asking first at once
initialise it once), and status tuples ended by :func:`cubind.check`, whose
``CUDAError`` carries NVML's ``nvmlReturn_t`` and its own description."""

from __future__ import annotations

import threading
from typing import Any

from cubind._core.errors import check

_lock = threading.Lock()
_module: Any = None


def nvml() -> Any:
    """The ``nvml`` module, NVML initialised: the first call opens
    libnvidia-ml.so.1 (``LibraryNotFoundError`` without the NVIDIA driver)."""
    global _module
    if _module is None:
        with _lock:
            if _module is None:
                import nvml as module

                check(module.nvmlInit(), "nvmlInit")
                _module = module
    return _module


def call(name: str, *args: Any) -> Any:
    """``nvml.<name>(*args)``, its status checked: the outputs."""
    return check(getattr(nvml(), name)(*args), name)


def text(name: str, *args: Any) -> str:
    """A string output (NVML writes bytes padded with NULs)."""
    return call(name, *args).split(b"\0", 1)[0].decode(errors="replace")
