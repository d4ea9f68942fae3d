"""Runtime support for the cubind CUDA bindings (library loading)."""

__version__ = "0.1.0"
