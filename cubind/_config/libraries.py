"""The CUDA libraries as the loader finds them: each opened through
``_cubind.loader`` with the arguments its generated C layer passes (from the
build's record), so the path reported is the one a call would use, then its
version asked of the library where the generated package has the call."""

from __future__ import annotations

import importlib
import os

from _cubind import loader

# What each library is, by the loader's name for it (the spec's [library]),
# in the order the report lists them.
LABELS = {
    "cuda": "driver", "cudart": "runtime", "nvrtc": "NVRTC", "nvjitlink": "nvJitLink", "nvvm": "NVVM",
    "nvml": "NVML", "nvfatbin": "nvFatbin", "cufile": "cuFile",
}

# The call that reports each library's version: (module, function). NVML's
# needs nvmlInit (and a driver); its file name carries the driver's version.
VERSION_CALLS = {
    "cuda": ("cuda", "cuDriverGetVersion"), "cudart": ("cuda.cudart", "cudaRuntimeGetVersion"),
    "nvrtc": ("nvrtc", "nvrtcVersion"), "nvjitlink": ("nvjitlink", "nvJitLinkVersion"),
    "nvvm": ("nvvm", "nvvmVersion"), "nvfatbin": ("nvfatbin", "nvFatbinVersion"),
    "cufile": ("cufile", "cuFileGetVersion"),
}


def library_lines(loaders: dict) -> list[str]:
    """A line per library of ``loaders`` (the record's ``libraries``)."""
    order = [name for name in LABELS if name in loaders] + sorted(set(loaders) - set(LABELS))
    return [_line(name, loaders[name]) for name in order]


def _line(name: str, args: dict) -> str:
    label = f"{LABELS.get(name, name)} ({', '.join(args['sonames'])})"
    try:
        handle = loader.load(name, args["sonames"], args["env_var"], args["wheel_subdirs"],
                             args.get("toolkit_subdirs", ()))  # empty: the loader's default
    except loader.LibraryNotFoundError as exc:
        # The first line says what is missing and what provides it; the
        # places searched follow in the error a call raises.
        return f"{label}: not found: {str(exc).splitlines()[0].removeprefix('cubind: ')}"
    path = loader.library_path(handle)
    real = os.path.basename(os.path.realpath(path))   # the versioned file a soname links to
    shown = path if real == os.path.basename(path) else f"{path} -> {real}"
    return f"{label}: {shown}{_version(name, args['package'])}"


def _version(name: str, package: str) -> str:
    """``", version 13.0"`` as the library reports it; nothing where the
    package is not built or the library has no such call."""
    if name not in VERSION_CALLS:
        return ""
    module, function = VERSION_CALLS[name]
    try:
        status, *values = getattr(importlib.import_module(module), function)()
    except ImportError:
        return f" ({package} not built: version not asked)"
    if status != 0:
        return f", {function}: {getattr(status, 'name', status)}"
    if len(values) == 1:   # CUDA's encoding: 1000 * major + 10 * minor
        return f", version {values[0] // 1000}.{values[0] % 1000 // 10}"
    return ", version " + ".".join(str(v) for v in values)
