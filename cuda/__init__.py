"""The CUDA driver API (cuda.h): every function under its C name, returning
``(CUresult, outputs...)``. ``libcuda.so.1`` is opened on the first call,
never at import, so importing works on a machine without a driver.

``from cuda import cuda`` gives this module, ``from cuda import cudart`` the
runtime API (``cuda_runtime_api.h``, module ``cuda.cudart``) and ``from cuda
import nvrtc`` the ``nvrtc`` package, as in the classic spelling.
"""

import os as _os
import sys as _sys

# NVIDIA's cuda.bindings, cuda.core and cuda.pathfinder are namespace packages
# under the same name: keep them importable beside us. (pkgutil.extend_path
# does this too, but importing pkgutil costs a tenth of `import cuda`.)
__path__ += [p for p in (_os.path.join(e, "cuda") for e in _sys.path if isinstance(e, str) and e)
             if p not in __path__ and _os.path.isdir(p)]

from cubind._bind.exports import reexport as _reexport  # noqa: E402
from cuda import _driver  # noqa: E402

if _os.environ.get("CUBIND_CUDA_BINDINGS", "") not in ("", "0"):  # serve cuda.bindings (cubind.compat)
    from cubind.compat import install as _install

    _install()

_enum_getattr, __dir__ = _reexport(globals(), _driver)


def __getattr__(name):
    import importlib

    if name == "cuda":
        return _sys.modules[__name__]
    if name == "cudart":
        return importlib.import_module("cuda.cudart")
    if name == "nvrtc":
        module = importlib.import_module("nvrtc")
        _sys.modules.setdefault("cuda.nvrtc", module)
        return module
    return _enum_getattr(name)


__all__ = list(_driver.__all__)
