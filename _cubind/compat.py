"""The import hook behind ``cubind.compat``: NVIDIA's ``cuda.bindings`` names
served by cubind's modules, on request.

It lives here, in the generated packages' runtime, so that the request made
from the environment (``CUBIND_CUDA_BINDINGS=1``) is honoured by the first
generated package imported (``from cuda.bindings import driver`` imports
``cuda`` first), without importing the Pythonic layer: each generated
package's ``__init__`` calls :func:`install_if_requested`, which reads the
variable and does nothing else unless it is set. ``cubind.compat.install()``,
the explicit request, is :func:`install`.

The served names map to module *names*; each is imported only when a program
imports the served name. Those written for NVIDIA's API rather than
generated (``cuda.bindings.nvjitlink``, ``.nvvm``, ``.nvml``, ``.utils``,
``._version`` and the ``_internal`` names) are ``cubind.compat``'s modules:
the one place this package names a module of the layer above it, never
imported at ``import cuda`` nor at ``import cuda.bindings``.

Only ``os``, ``sys`` and ``threading`` are imported here (the loader imports
threading anyway); ``importlib.metadata`` is imported when a program asks for
a distribution's metadata by name, and only for cuda-bindings'.
"""

import os
import sys
import threading

__all__ = ["install", "installed", "install_if_requested", "version", "version_tuple", "ENVIRONMENT_VARIABLE"]

ENVIRONMENT_VARIABLE = "CUBIND_CUDA_BINDINGS"

# Each served name and the module that serves it. NVIDIA's Python modules first;
# then the private names released consumers import (cuda.core reads
# _version.__version_tuple__ and _internal._fast_enum, numba-cuda
# _internal.utils and the probes); then the C-level modules, whose
# __pyx_capi__ compiled consumers read.
_TARGETS = {
    "cuda.bindings.driver": "cuda",
    "cuda.bindings.runtime": "cuda.cudart",
    "cuda.bindings.nvrtc": "nvrtc",
    "cuda.bindings.nvjitlink": "cubind.compat.nvjitlink",
    "cuda.bindings.nvvm": "cubind.compat.nvvm",
    "cuda.bindings.nvml": "cubind.compat.nvml",
    "cuda.bindings.utils": "cubind.compat.utils",
    "cuda.bindings._version": "cubind.compat._version",
    "cuda.bindings._internal.nvjitlink": "cubind.compat._probe_nvjitlink",
    "cuda.bindings._internal.nvvm": "cubind.compat._probe_nvvm",
    "cuda.bindings._internal.utils": "cubind.compat._internal_utils",
    "cuda.bindings._internal._fast_enum": "cubind.compat._fast_enum",
    "cuda.bindings.cydriver": "cuda._cydriver",
    "cuda.bindings.cyruntime": "cuda._cyruntime",
    "cuda.bindings.cynvrtc": "nvrtc._cynvrtc",
    "cuda.bindings.cynvjitlink": "nvjitlink._cynvjitlink",
    "cuda.bindings.cynvvm": "nvvm._cynvvm",
    "cuda.bindings.cynvml": "nvml._cynvml",
    "cuda.bindings.cynvfatbin": "nvfatbin._cynvfatbin",
    "cuda.bindings.cycufile": "cufile._cycufile",
}
_PACKAGES = ("cuda.bindings", "cuda.bindings._internal")
_lock = threading.Lock()
_state = {"installed": False}


def requested():
    """Whether the environment asks for the hook (``CUBIND_CUDA_BINDINGS`` set,
    to anything but ``0``)."""
    return os.environ.get(ENVIRONMENT_VARIABLE, "") not in ("", "0")


def install_if_requested():
    """:func:`install` where :func:`requested`; what every generated package's
    ``__init__`` runs."""
    if requested():
        install()


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
                f"call install() (or set {ENVIRONMENT_VARIABLE}=1) before anything imports cuda.bindings")
        sys.meta_path.insert(0, _Finder())
        _state["installed"] = True


def version():
    """The CUDA version of the module serving ``cuda.bindings.driver`` (the
    headers it was generated from), as cuda-bindings numbers its releases
    ("13.0.0"): cuda.core picks its cu12 or cu13 build by the major. Imported
    by its served name, as the hook imports every served module: only when
    asked."""
    return ".".join(map(str, version_tuple()))


def version_tuple():
    """:func:`version` as cuda-bindings' ``__version_tuple__``: ``(13, 0, 0)``."""
    import importlib

    driver = importlib.import_module(_TARGETS["cuda.bindings.driver"])
    cuda_version = int(driver.CUDA_VERSION)
    return cuda_version // 1000, cuda_version % 1000 // 10, 0


def _spec(fullname, loader, is_package=False):
    import importlib.machinery

    return importlib.machinery.ModuleSpec(fullname, loader, is_package=is_package)


class _Alias:
    """Loads a served name as the module that serves it (the same object)."""

    def __init__(self, target):
        self.target = target

    def create_module(self, spec):
        import importlib

        try:
            return importlib.import_module(self.target)
        except ModuleNotFoundError as exc:
            if exc.name != self.target:
                raise  # a module the target imports: the error it is
            raise ImportError(_not_served(spec.name, self.target), name=spec.name) from None

    def exec_module(self, module):
        pass  # already executed by its own import


def _not_served(name, target):
    """Why ``name`` cannot be imported: its module is not in this build (a
    package the build left out says so itself, on importing it)."""
    from _cubind.built import REBUILD

    return (f"{name} is served by cubind's {target}, which this build of cubind does not have: "
            f"build cubind from a version that generates it ({REBUILD})")


class _Package:
    """``cuda.bindings`` and ``cuda.bindings._internal``: empty packages whose
    served modules are also their attributes, imported on first access (NVIDIA's
    ``cuda.bindings`` imports ``utils`` and ``_version`` itself; importing them
    here would import cubind at ``from cuda.bindings import driver``)."""

    def create_module(self, spec):
        return None  # a fresh module

    def exec_module(self, module):
        module.__path__ = []
        module.__getattr__ = _submodule_getter(module.__name__)
        if module.__name__ == "cuda.bindings":
            module.__version__ = version()


def _submodule_getter(package):
    children = {name[len(package) + 1:] for name in (*_TARGETS, *_PACKAGES)
                if name.startswith(package + ".") and "." not in name[len(package) + 1:]}

    def __getattr__(name):
        if name not in children:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        import importlib

        return importlib.import_module(f"{package}.{name}")

    return __getattr__


class _Finder:
    """A meta path finder (importlib.abc.MetaPathFinder's protocol, without
    importing importlib.abc)."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname in _PACKAGES:
            return _spec(fullname, _Package(), is_package=True)
        target = _TARGETS.get(fullname)
        if target is not None:
            return _spec(fullname, _Alias(target))
        return None

    def invalidate_caches(self):
        pass

    def find_distributions(self, context=None):
        # Answered only where no real cuda-bindings is installed.
        if context is None or context.name not in ("cuda-bindings", "cuda_bindings"):
            return []
        if any(True for finder in sys.meta_path if finder is not self
               for _ in getattr(finder, "find_distributions", lambda c: [])(context)):
            return []
        return [_distribution()]


def _distribution():
    """cuda-bindings' metadata, the version as :func:`version`."""
    import importlib.metadata

    class _Distribution(importlib.metadata.Distribution):
        def read_text(self, filename):
            if filename == "METADATA":
                return f"Metadata-Version: 2.1\nName: cuda-bindings\nVersion: {version()}\nSummary: served by cubind\n"
            return None

        def locate_file(self, path):
            return None

    return _Distribution()
