"""``cuda.bindings._internal.nvjitlink``'s probe, which nvJitLink's users call
to learn whether the library is there before using it."""

__all__ = ["_inspect_function_pointer"]


def _inspect_function_pointer(name):
    """Nonzero where nvJitLink loads and answers ``nvJitLinkVersion`` (the
    names asked for, ``__nvJitLinkVersion`` included, are its entry points),
    0 where it cannot be loaded."""
    import nvjitlink

    try:
        status = nvjitlink.nvJitLinkVersion()[0]
    except OSError:  # the loader's LibraryNotFoundError: no nvJitLink here
        return 0
    return 1 if int(status) == 0 else 0
