"""``cuda.bindings`` served by cubind's modules, on request.

Libraries written against NVIDIA's classic modules (``from cuda.bindings
import driver, runtime, nvrtc``; cuda.core 0.3 is one) run on cubind after::

    import cubind.compat
    cubind.compat.install()

or with ``CUBIND_CUDA_BINDINGS=1`` in the environment, read when cubind is
first imported (``import cuda``, ``nvrtc``, ... import it first). Nothing
changes by default: cubind's modules and NVIDIA's ``cuda.bindings`` coexist in
one process.

``install()`` puts a finder first on ``sys.meta_path`` that answers the
names below with cubind's modules, imported when first asked for:

- ``cuda.bindings.driver``: ``cuda`` (the driver API);
- ``cuda.bindings.runtime``: ``cuda.cudart``;
- ``cuda.bindings.nvrtc``: ``nvrtc``;
- ``cuda.bindings.nvjitlink`` and ``cuda.bindings.nvvm``: NVIDIA's
  exception-raising API for those two libraries (``create``, ``add_data``,
  ...: no tuple convention ever existed for them), over cubind's ``nvjitlink``
  and ``nvvm`` (:mod:`cubind.compat.nvjitlink`, :mod:`cubind.compat.nvvm`);
- ``cuda.bindings._internal.nvjitlink`` / ``.nvvm``: the symbol probe those
  libraries' users call.

Where no ``cuda-bindings`` distribution is installed, its metadata (the
version, which cuda.core reads) is served too, as the CUDA version cubind's
modules were generated from.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import sys
import threading

__all__ = ["install", "installed", "ENVIRONMENT_VARIABLE"]

ENVIRONMENT_VARIABLE = "CUBIND_CUDA_BINDINGS"

# Each served name and the module that serves it.
_TARGETS = {
    "cuda.bindings.driver": "cuda",
    "cuda.bindings.runtime": "cuda.cudart",
    "cuda.bindings.nvrtc": "nvrtc",
    "cuda.bindings.nvjitlink": "cubind.compat.nvjitlink",
    "cuda.bindings.nvvm": "cubind.compat.nvvm",
    "cuda.bindings._internal.nvjitlink": "cubind.compat._probe_nvjitlink",
    "cuda.bindings._internal.nvvm": "cubind.compat._probe_nvvm",
}
_PACKAGES = ("cuda.bindings", "cuda.bindings._internal")
_lock = threading.Lock()
_state = {"installed": False}


def installed():
    """Whether :func:`install` ran in this process."""
    return _state["installed"]


def install():
    """Makes ``cuda.bindings`` and its modules resolve to cubind's in this
    process (idempotent). Refuses with ``RuntimeError`` where NVIDIA's
    ``cuda.bindings`` is already imported: modules already holding its
    objects would mix the two."""
    with _lock:
        if _state["installed"]:
            return
        # A None entry is an import blocked on purpose (sys.modules[name] = None,
        # as cuda.core's tests do to make it fall back): nothing of NVIDIA's loaded.
        loaded = [name for name, module in list(sys.modules.items())
                  if module is not None and (name == "cuda.bindings" or name.startswith("cuda.bindings."))]
        if loaded:
            raise RuntimeError(
                f"cubind.compat.install(): NVIDIA's cuda.bindings is already imported ({', '.join(sorted(loaded))}); "
                "call install() (or set CUBIND_CUDA_BINDINGS=1) before anything imports cuda.bindings")
        sys.meta_path.insert(0, _Finder())
        _state["installed"] = True


def _version():
    """The CUDA version cubind's driver module was generated from, as
    cuda-bindings numbers its releases ("13.0.0")."""
    cuda = importlib.import_module("cuda")
    version = int(cuda.CUDA_VERSION)
    return f"{version // 1000}.{version % 1000 // 10}.0"


class _Alias(importlib.abc.Loader):
    """Loads a served name as the module that serves it (the same object)."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        return importlib.import_module(self.target)

    def exec_module(self, module):
        pass  # already executed by its own import


class _Package(importlib.abc.Loader):
    def create_module(self, spec):
        return None  # a fresh module

    def exec_module(self, module):
        module.__path__ = []
        if module.__name__ == "cuda.bindings":
            module.__version__ = _version()


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path=None, target=None):
        if fullname in _PACKAGES:
            return importlib.machinery.ModuleSpec(fullname, _Package(), is_package=True)
        target = _TARGETS.get(fullname)
        if target is not None:
            return importlib.machinery.ModuleSpec(fullname, _Alias(target))
        return None

    def find_distributions(self, context=None):
        # Answered only where no real cuda-bindings is installed.
        if context is None or context.name not in ("cuda-bindings", "cuda_bindings"):
            return []
        if any(True for finder in sys.meta_path if finder is not self
               for _ in getattr(finder, "find_distributions", lambda c: [])(context)):
            return []
        return [_Distribution()]


class _Distribution(importlib.metadata.Distribution):
    def read_text(self, filename):
        if filename == "METADATA":
            return f"Metadata-Version: 2.1\nName: cuda-bindings\nVersion: {_version()}\nSummary: served by cubind\n"
        return None

    def locate_file(self, path):
        return None
