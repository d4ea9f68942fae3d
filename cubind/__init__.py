"""cubind's Pythonic layer: CUDA without status tuples.

Built on the 1:1 modules (``import cuda``, ``from cuda import cudart``,
``import nvrtc``) and their cimportable C level, it gives:

- :class:`Device` (primary contexts, properties, ``with device:``),
  :class:`Stream` and :class:`Event` (``__cuda_stream__`` both ways);
- :class:`Program` (NVRTC, with an on-disk compile cache) and :class:`Module`;
- :class:`Kernel`: ``kernel(grid, block, *args, stream=, shared_mem=)`` with each
  argument typed by the kernel's own parameter list (a Python float to a
  ``float`` parameter is a float32, a device array its pointer, ...), and
  :func:`launch` with a :class:`LaunchConfig` (clusters, cooperative launch,
  launch attributes);
- :class:`Array` (``to_gpu``, ``empty``, ``zeros``, ``from_dlpack``) and the typed
  :class:`DeviceArray`, exchanged with other libraries through
  ``__cuda_array_interface__`` and DLPack;
- :class:`CUDAError` and :class:`CompileError` instead of status codes
  (:class:`LibraryNotFoundError`, a missing CUDA library, and
  :class:`FunctionNotFoundError`, a function a library lacks, are CUDAErrors).

Importing it loads no CUDA library: the driver and NVRTC are opened on first
use. ``docs/pythonic.md`` describes the layer.

    import numpy as np, cubind
    saxpy = cubind.Program(SRC).compile().get_kernel("saxpy")
    x, y, out = cubind.to_gpu(hx), cubind.to_gpu(hy), cubind.empty(n, np.float32)
    saxpy((n + 255) // 256, 256, 2.0, x, y, out, n)
    result = out.get()
"""

# Importing cubind does nothing else: every public name is made on first use
# (importing the Pythonic layer costs the `cuda` package, the arrays numpy).
# The generated packages import none of cubind (their runtime is _cubind), and
# the CUBIND_CUDA_BINDINGS request is read by them, not here (_cubind.compat).
_LAZY = {
    **dict.fromkeys(("CUDAError", "CompileError", "check"), "._core.errors"),
    **dict.fromkeys(("LibraryNotFoundError", "FunctionNotFoundError"), "_cubind.loader"),
    **dict.fromkeys(("Device", "current_device", "ensure_context", "Stream", "Event", "current_stream"),
                    "._core.device_stream_event"),
    **dict.fromkeys(("Program", "Module", "default_arch"), "._compile.program"),
    **dict.fromkeys(("Kernel", "LaunchConfig", "launch"), "._launch.kernel"),
    "CUDAGraph": "._launch.cuda_graph",
    **dict.fromkeys(("Array", "to_gpu", "asarray", "empty", "zeros", "empty_like", "zeros_like",
                     "from_dlpack"), "._arrays.array"),
    **dict.fromkeys(("PinnedMemory", "empty_pinned"), "._memory.pinned"),
    "get_include": "_cubind.cuda_paths",
    "show_config": "._config.report",
}


def _version() -> str:
    """``pyproject.toml``'s version, the one place it is written: read from the
    clone cubind runs from (a build in place), else from the installed
    distribution's metadata."""
    import os
    import re

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:
            text = f.read()
    except OSError:
        text = ""
    table = re.search(r"^\[project\]\s*$(.*?)(?=^\[|\Z)", text, re.M | re.S)
    if table and re.search(r'^name\s*=\s*"cubind"\s*$', table.group(1), re.M):
        found = re.search(r'^version\s*=\s*"([^"]+)"\s*$', table.group(1), re.M)
        if found:
            return found.group(1)
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("cubind")
    except PackageNotFoundError:  # a copied tree without its pyproject.toml
        return "unknown"


def __getattr__(name):
    if name == "__version__":  # read on first use: importing cubind reads no file
        value = globals()[name] = _version()
        return value
    if name not in _LAZY:
        raise AttributeError(f"module 'cubind' has no attribute {name!r}")
    import importlib

    try:
        module = importlib.import_module(_LAZY[name], __name__)
    except ModuleNotFoundError as exc:
        if exc.name != "numpy":
            raise
        # A declared dependency, but an environment can still lack it (a
        # --no-deps install, a vendored tree): say what to install.
        raise ModuleNotFoundError(f"cubind.{name} needs numpy, which is not installed (pip install numpy)",
                                  name="numpy") from exc
    value = globals()[name] = getattr(module, name)
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "CUDAError", "CompileError", "LibraryNotFoundError", "FunctionNotFoundError", "check",
    "Device", "current_device", "ensure_context",
    "Stream", "Event", "current_stream",
    "Program", "Module", "default_arch",
    "Kernel", "LaunchConfig", "launch", "CUDAGraph",
    "Array", "to_gpu", "asarray", "empty", "zeros", "empty_like", "zeros_like", "from_dlpack",
    "PinnedMemory", "empty_pinned",
    "get_include", "show_config",
]
