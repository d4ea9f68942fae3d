"""Re-exporting a generated module from its package without making its enums.

The generated modules make each enum class on first look-up (their
``__getattr__``, names in ``_LAZY``); a package re-exporting them with
``import *`` would make them all at import.
"""


def reexport(namespace, module):
    """Copies ``module.__all__`` into ``namespace`` but for the enum classes not
    made yet; returns the package's ``__getattr__`` and ``__dir__`` for those."""
    lazy = module._LAZY
    namespace.update({name: getattr(module, name) for name in module.__all__ if name not in lazy})

    def __getattr__(name):
        if name not in lazy:
            raise AttributeError(f"module {namespace['__name__']!r} has no attribute {name!r}")
        value = namespace[name] = getattr(module, name)
        return value

    def __dir__():
        return sorted(set(namespace) | lazy)

    return __getattr__, __dir__
