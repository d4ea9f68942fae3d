"""Re-exporting a generated module from its package without making its enums.

The generated modules make each enum class on first look-up (their
``__getattr__``, names in ``_LAZY``); a package re-exporting them with
``import *`` would make them all at import.
"""


def reexport(namespace, module, submodules=None):
    """Copies ``module.__all__`` into ``namespace`` but for the enum classes not
    made yet; returns the package's ``__getattr__`` and ``__dir__`` for those
    and for ``submodules`` ({attribute: module name}, the spec's
    ``[package] submodules``), imported on first look-up."""
    lazy = module._LAZY
    submodules = submodules or {}
    namespace.update({name: getattr(module, name) for name in module.__all__ if name not in lazy})

    def __getattr__(name):
        if name in submodules:
            return _submodule(namespace["__name__"], name, submodules[name])
        if name not in lazy:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = namespace[name] = getattr(module, name)
        return value

    def __dir__():
        return sorted(set(namespace) | lazy)

    return __getattr__, __dir__


def _submodule(package, name, target):
    """The module ``target``, imported; one outside ``package`` is registered
    as ``package.name`` too, so that ``import cuda.nvrtc`` finds it after
    ``cuda.nvrtc`` was first looked up."""
    import importlib
    import sys

    module = importlib.import_module(target)
    if target != package and not target.startswith(package + "."):
        sys.modules.setdefault(f"{package}.{name}", module)
    return module
