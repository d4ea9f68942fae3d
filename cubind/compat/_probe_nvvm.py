"""``cuda.bindings._internal.nvvm``'s probe: whether libNVVM is there."""

__all__ = ["_inspect_function_pointer"]


def _inspect_function_pointer(name):
    """Nonzero where libNVVM loads and answers ``nvvmVersion``, else 0."""
    import nvvm

    try:
        status = nvvm.nvvmVersion()[0]
    except OSError:  # the loader's LibraryNotFoundError: no libNVVM here
        return 0
    return 1 if int(status) == 0 else 0
