"""The CUDA driver API (cuda.h): every function under its C name, returning
``(CUresult, outputs...)``. ``libcuda.so.1`` is opened on the first call,
never at import, so importing works on a machine without a driver.

``from cuda import cuda`` gives this module and ``from cuda import nvrtc`` the
``nvrtc`` package, as in the classic spelling.
"""

from pkgutil import extend_path

# NVIDIA's cuda.bindings, cuda.core and cuda.pathfinder are namespace packages
# under the same name: keep them importable beside us.
__path__ = extend_path(__path__, __name__)

from cuda._driver import *  # noqa: E402, F403
from cuda._driver import __all__ as _driver_all  # noqa: E402


def __getattr__(name):
    import importlib
    import sys

    if name == "cuda":
        return sys.modules[__name__]
    if name == "nvrtc":
        module = importlib.import_module("nvrtc")
        sys.modules.setdefault("cuda.nvrtc", module)
        return module
    raise AttributeError(f"module 'cuda' has no attribute {name!r}")


__all__ = list(_driver_all)
