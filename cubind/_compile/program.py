"""Compiling CUDA C++ with NVRTC, and loading what it makes.

``Program(source).compile()`` gives a :class:`Module`: the code, the PTX
(kept beside a CUBIN: NVRTC writes both in one compile, and the PTX types the
kernels' arguments), the compiler's log and the lowered names of the
program's name expressions. The module is loaded into the driver on first
use (``cuLibraryLoadData``: context-independent, so one module serves every
device), which is why compiling needs no GPU.
"""

from __future__ import annotations

import os
import re
import threading
from typing import TYPE_CHECKING

from cubind._compile import cache as _cache
from cubind._compile.toolkit import toolkit_include_options
from cubind._core import lifetime as _lifetime
from cubind._core.driver import module as _driver_module
from cubind._core.errors import CompileError, CUDAError, check
from cubind._launch.params import parse_ptx_entries, ptx_globals

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from typing import Literal, TypeAlias

    import cuda
    from cubind._launch.kernel import Kernel
    from cubind._launch.params import Param

    _Arch: TypeAlias = int | str

__all__ = ["Program", "Module", "default_arch"]

_TARGETS = ("ptx", "cubin", "ltoir")
_ARCH = re.compile(r"^(?:sm_|compute_)?(\d+)([a-z]?)$")
_ARCH_OPTIONS = ("-arch", "--gpu-architecture")
_NOT_FOUND = 500  # CUDA_ERROR_NOT_FOUND
_ELF = b"\x7fELF"
_FATBIN = b"\x50\xed\x55\xba"
_load_lock = threading.Lock()  # Module.handle's first load


def _nvrtc_call(fn, *args):
    result = fn(*args)
    if result[0] != 0:
        raise CompileError("<nvrtc>", f"{fn.__name__} returned {getattr(result[0], 'name', result[0])}", [],
                           code=result[0])
    return result[1] if len(result) == 2 else (result[1:] or None)


def _supported_archs():
    import nvrtc

    return sorted(_nvrtc_call(nvrtc.nvrtcGetSupportedArchs))


def _device_capability():
    """The current device's (else device 0's) compute capability as an int
    (90), or None where there is no driver or no GPU."""
    try:
        cuda = _driver_module()
        err, = cuda.cuInit(0)
        if err != 0:
            return None
        # cuCtxGetCurrent first: cuCtxGetDevice fails where no context is
        # current, and a failed call is an error in a sanitizer's report.
        err, ctx = cuda.cuCtxGetCurrent()
        if err == 0 and ctx is not None and int(ctx) != 0:
            err, dev = cuda.cuCtxGetDevice()
        else:
            err, dev = cuda.cuDeviceGet(0)
        if err != 0:
            return None
        attr = cuda.CUdevice_attribute
        err, major = cuda.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev)
        err2, minor = cuda.cuDeviceGetAttribute(attr.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev)
    except OSError:  # the loader found no libcuda: compile for the default
        return None
    if err != 0 or err2 != 0 or major == 0:
        return None
    return 10 * major + minor


def default_arch() -> int:
    """The architecture a compile targets when none is given, as an int (90):
    the current device's (device 0's where no context is current), capped to
    the newest NVRTC supports; with no GPU or driver, the oldest NVRTC
    supports (75 for CUDA 13), whose PTX every supported GPU can JIT."""
    supported = _supported_archs()
    capability = _device_capability()
    if capability is None:
        return supported[0]
    usable = [a for a in supported if a <= capability]
    return max(usable) if usable else supported[0]


def _arch_option(arch, target):
    """``--gpu-architecture=...`` for ``arch`` (90, "90", "sm_90", "compute_90a")."""
    match = _ARCH.match(str(arch).strip()) if isinstance(arch, (int, str)) and not isinstance(arch, bool) else None
    if match is None:
        raise ValueError(f"arch: expected an architecture such as 90, 'sm_90', 'compute_90' or 'sm_90a', "
                         f"not {arch!r}")
    number, suffix = match.groups()
    prefix = "sm" if target == "cubin" else "compute"
    return f"--gpu-architecture={prefix}_{number}{suffix}"


def _text(value: object, param: str) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode()
    raise TypeError(f"{param}: expected str or bytes, not {type(value).__name__}")


def _nvrtc_version():
    import nvrtc

    return list(_nvrtc_call(nvrtc.nvrtcVersion) or ())


_UNKNOWN = object()
_driver_version_value = _UNKNOWN


def _driver_version():
    """The driver's version, or None where no driver library exists: then it
    cannot matter to what is compiled or loaded."""
    global _driver_version_value
    version = _driver_version_value
    if version is _UNKNOWN:
        try:
            cuda = _driver_module()
            err, version = cuda.cuDriverGetVersion()
            version = int(version) if err == 0 else None
        except OSError:
            version = None
        # Threads racing here all find the same value: publishing it twice is harmless.
        _driver_version_value = version
    return version


class Program:
    """CUDA C++ source to compile with NVRTC.

    ``options``: NVRTC options (str or bytes), e.g. ``["-std=c++17",
    "--use_fast_math"]``; an architecture option among them wins over the
    default (``compile(arch=...)`` and an option together are a ValueError).
    ``name_expressions``: C++ names to instantiate and look up after the
    compile (``"reduce<float, 256>"``), for templates and overloads.
    ``headers``: ``{include name: source}`` for ``#include "name"``.
    ``include_toolkit``: add the CUDA toolkit's include directory after the
    given options (``<cooperative_groups.h>``, ``<cuda_fp16.h>``, ... work).
    """
    include_toolkit: bool
    source: str
    name: str
    options: list[str]
    name_expressions: list[str]
    headers: list[tuple[str, str]]

    def __init__(self, source: str | bytes, options: Iterable[str | bytes] = (),
                 name_expressions: str | bytes | Iterable[str | bytes] = (),
                 headers: Mapping[str, str | bytes] | Mapping[bytes, str | bytes]
                 | Iterable[tuple[str | bytes, str | bytes]] | None = None,
                 name: str | bytes = "program.cu", include_toolkit: bool = True) -> None:
        self.include_toolkit = bool(include_toolkit)
        self.source = _text(source, "source")
        self.name = _text(name, "name")
        if isinstance(options, (str, bytes)):
            raise TypeError("options: expected a list of options, not one string (split it)")
        self.options = [_text(o, f"options[{i}]") for i, o in enumerate(options)]
        if isinstance(name_expressions, (str, bytes)):
            name_expressions = [name_expressions]
        self.name_expressions = [_text(e, f"name_expressions[{i}]") for i, e in enumerate(name_expressions)]
        items = headers.items() if isinstance(headers, dict) else (headers or ())
        self.headers = []
        for i, item in enumerate(items):
            try:
                include, text = item
            except (TypeError, ValueError):
                raise TypeError(f"headers[{i}]: expected an (include name, source) pair") from None
            self.headers.append((_text(include, f"headers[{i}] name"), _text(text, f"headers[{i}] source")))

    def __repr__(self):
        return f"<cubind.Program {self.name!r}>"

    def _final_options(self, target, arch):
        given = [o for o in self.options if o.split("=")[0] in _ARCH_OPTIONS or o.startswith("-arch=")]
        if given and arch is not None:
            raise ValueError(f"arch: given both as arch={arch!r} and in options ({given[0]!r})")
        options = list(self.options)
        if not given:
            options.insert(0, _arch_option(default_arch() if arch is None else arch, target))
        if target == "ltoir" and "-dlto" not in options and "--dlink-time-opt" not in options:
            options.append("-dlto")
        if self.include_toolkit:
            options += [o for o in toolkit_include_options(_nvrtc_version()[0]) if o not in options]
        return options

    def compile(self, target: Literal["ptx", "cubin", "ltoir"] = "ptx", arch: _Arch | None = None) -> Module:
        """Compiles to ``target`` ("ptx", "cubin" or "ltoir") for ``arch``
        (default: :func:`default_arch`); returns a :class:`Module`. Raises
        :class:`CompileError` with NVRTC's log and the options used. Outputs
        are cached on disk (see ``docs/pythonic.md``)."""
        if target not in _TARGETS:
            raise ValueError(f"target: expected one of {', '.join(_TARGETS)}, not {target!r}")
        options = self._final_options(target, arch)
        use_cache = _cache.enabled()
        if use_cache:
            entry = self._cache_key(target, options)
            hit = _cache.load(entry)
            if hit is not None:
                meta, blobs = hit
                return Module(blobs["code"], target, ptx=blobs.get("ptx"), log=meta["log"],
                              lowered_names=meta["lowered"], name=self.name, from_cache=True)
        code, ptx, log, lowered = self._nvrtc(target, options)
        if use_cache:
            blobs = {"code": code} if ptx is None or target == "ptx" else {"code": code, "ptx": ptx}
            _cache.store(entry, {"log": log, "lowered": lowered, "target": target}, blobs)
        return Module(code, target, ptx=ptx if target != "ptx" else None, log=log, lowered_names=lowered,
                      name=self.name)

    def _cache_key(self, target, options):
        return _cache.key(source=self.source.encode(), name=self.name, options=options, target=target,
                          headers=self.headers, name_expressions=self.name_expressions,
                          nvrtc=_nvrtc_version(), driver=_driver_version())

    def _nvrtc(self, target, options):
        """One NVRTC compile: (code, ptx or None, log, {expression: lowered})."""
        import nvrtc

        prog = _nvrtc_call(nvrtc.nvrtcCreateProgram, self.source.encode(), self.name.encode(), len(self.headers),
                           [h[1].encode() for h in self.headers], [h[0].encode() for h in self.headers])
        try:
            for expression in self.name_expressions:
                _nvrtc_call(nvrtc.nvrtcAddNameExpression, prog, expression.encode())
            encoded = [o.encode() for o in options]
            err, = nvrtc.nvrtcCompileProgram(prog, len(encoded), encoded)
            log = _read(nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog, prog).decode(errors="replace")
            if err != 0:
                raise CompileError(self.name, log, options, code=err)
            kind = {"ptx": "PTX", "cubin": "CUBIN", "ltoir": "LTOIR"}[target]
            code = _read(getattr(nvrtc, f"nvrtcGet{kind}Size"), getattr(nvrtc, f"nvrtcGet{kind}"), prog)
            ptx = code if target == "ptx" else None
            if target == "cubin":
                ptx = _read(nvrtc.nvrtcGetPTXSize, nvrtc.nvrtcGetPTX, prog) or None
            lowered = {}
            for expression in self.name_expressions:
                raw = _nvrtc_call(nvrtc.nvrtcGetLoweredName, prog, expression.encode())
                lowered[expression] = raw.decode() if isinstance(raw, bytes) else str(raw)
            return code, ptx, log, lowered
        finally:
            nvrtc.nvrtcDestroyProgram(prog)


def _read(size_fn, get_fn, prog):
    size = _nvrtc_call(size_fn, prog)
    if not size:
        return b""
    buf = bytearray(size)
    _nvrtc_call(get_fn, prog, buf)
    return bytes(buf).rstrip(b"\0") if get_fn.__name__ in ("nvrtcGetPTX", "nvrtcGetProgramLog") else bytes(buf)


def _unload(library):
    try:
        cuda = _driver_module()
        cuda.cuLibraryUnload(library)
    except Exception:  # a finalizer has no caller to tell; at exit the driver may be gone
        pass


def _kind_of(code):
    if code.startswith(_ELF):
        return "cubin"
    if code.startswith(_FATBIN):
        return "fatbin"
    if b".entry" in code or b".version" in code[:4096]:
        return "ptx"
    raise ValueError("code: not PTX, a CUBIN or a fatbin (say which with kind=)")


class Module:
    """Compiled code and, once used, the driver's ``CUlibrary`` for it.

    Made by :meth:`Program.compile` or :meth:`Module.load`. ``code`` is the
    PTX, CUBIN, fatbin or LTO-IR bytes; ``ptx`` the PTX beside a CUBIN (what
    types the kernels' arguments); ``log`` the compiler's warnings;
    ``lowered_names`` maps each name expression to its mangled name;
    ``from_cache`` says whether the compile cache supplied it.
    """
    code: bytes
    kind: Literal["ptx", "cubin", "fatbin", "ltoir"]
    ptx: bytes | None
    log: str
    lowered_names: dict[str, str]
    name: str | None
    from_cache: bool

    def __init__(self, code: bytes | bytearray | memoryview, kind: Literal["ptx", "cubin", "fatbin", "ltoir"], *,
                 ptx: bytes | str | None = None, log: str = "", lowered_names: Mapping[str, str] | None = None,
                 name: str | None = None, from_cache: bool = False) -> None:
        if kind not in ("ptx", "cubin", "fatbin", "ltoir"):
            raise ValueError(f"kind: expected 'ptx', 'cubin', 'fatbin' or 'ltoir', not {kind!r}")
        if not isinstance(code, (bytes, bytearray, memoryview)):  # bytes(3) would be three NULs
            raise TypeError(f"code: expected bytes (PTX, a CUBIN, a fatbin or LTO-IR), not {type(code).__name__}")
        self.code = bytes(code)
        self.kind = kind
        self.ptx = ptx if ptx is None or isinstance(ptx, bytes) else _text(ptx, "ptx").encode()
        if kind == "ptx":
            self.ptx = self.code.rstrip(b"\0")
        self.log = log
        self.lowered_names = dict(lowered_names or {})
        self.name = name
        self.from_cache = from_cache
        self._library = None
        self._finalizer = None
        self._entries: dict[str, list[Param]] | None = None
        self._kernels: dict[str, Kernel] = {}

    @classmethod
    def load(cls, path_or_bytes: str | os.PathLike[str] | bytes | bytearray | memoryview,
             kind: Literal["ptx", "cubin", "fatbin", "ltoir"] | None = None, *,
             ptx: bytes | str | None = None) -> Module:
        """A module from a file path or from bytes (PTX, CUBIN or fatbin; the
        kind is found from the content unless given). ``ptx``: the module's PTX,
        where a CUBIN is loaded and its kernels' arguments are to be typed by it
        rather than by size."""
        if isinstance(path_or_bytes, (str, os.PathLike)):
            with open(path_or_bytes, "rb") as f:
                code = f.read()
            name = os.fspath(path_or_bytes)
        elif isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            code, name = bytes(path_or_bytes), None
        else:
            raise TypeError(f"path_or_bytes: expected a path or bytes, not {type(path_or_bytes).__name__}")
        return cls(code, kind or _kind_of(code), ptx=ptx, name=name)

    def __repr__(self):
        return f"<cubind.Module {self.name or ''} ({self.kind}, {len(self.code)} bytes)>"

    def __bytes__(self) -> bytes:
        return self.code

    @property
    def handle(self) -> cuda.CUlibrary:
        """The ``cuda.CUlibrary``, loaded on first use."""
        library = self._library
        if library is None:
            library = self._load()
        return library

    def _load(self):
        if self.kind == "ltoir":
            raise ValueError("an LTO-IR module cannot be loaded: link it first (nvjitlink)")
        cuda = _driver_module()
        from cubind._core.device_stream_event import ensure_context

        # Under the lock: threads racing to the first use must share one
        # library, or a __device__ variable one writes is not the one another reads.
        with _load_lock:
            if self._library is None:
                ensure_context()
                code = self.code if self.kind != "ptx" else self.code.rstrip(b"\0") + b"\0"
                library = check(cuda.cuLibraryLoadData(code, [], [], 0, [], [], 0), "cuLibraryLoadData")
                # A CUlibrary belongs to no context; a reset unloads it all the
                # same (EVERY_RESET), since its kernels' code died there.
                self._finalizer = _lifetime.track(self, _lifetime.EVERY_RESET, _unload, library)
                self._library = library
            return self._library

    @property
    def entries(self) -> dict[str, list[Param]]:
        """``{kernel name: [Param, ...]}`` from the module's PTX ({} without)."""
        if self._entries is None:
            self._entries = parse_ptx_entries(self.ptx) if self.ptx else {}
        return self._entries

    def _lowered(self, name):
        name = _text(name, "name")
        return self.lowered_names.get(name, name)

    def get_kernel(self, name: str | bytes) -> Kernel:
        """The kernel ``name``: its name in the module, or a name expression
        given to the :class:`Program`. Raises ValueError naming the kernels
        there are when there is none of that name."""
        name = _text(name, "name")
        kernel = self._kernels.get(name)
        if kernel is not None:
            return kernel
        lowered = self._lowered(name)
        if self.entries and lowered not in self.entries:
            raise ValueError(self._missing(name, lowered))
        cuda = _driver_module()
        err, handle = cuda.cuLibraryGetKernel(self.handle, lowered.encode())
        if err == _NOT_FOUND:
            raise ValueError(self._missing(name, lowered))
        if err != 0:
            raise CUDAError(err, "cuLibraryGetKernel")
        from cubind._launch.kernel import Kernel

        kernel = Kernel._from_library(self, handle, lowered, self.entries.get(lowered))
        return self._kernels.setdefault(name, kernel)  # a thread that got here first wins: one Kernel per name

    def _missing(self, name, lowered):
        shown = name if lowered == name else f"{name} ({lowered})"
        known = sorted(self.entries) or None
        hint = f"; it has {', '.join(known)}" if known else ""
        if name not in self.lowered_names and "<" in name:
            hint += "; a template needs name_expressions=[...] in Program()"
        return f"kernel {shown!r} is not in the module{hint}"

    def get_global(self, name: str | bytes) -> tuple[cuda.CUdeviceptr, int]:
        """``(CUdeviceptr, nbytes)`` of the ``__device__``/``__constant__``
        variable ``name`` (or name expression), in the current context."""
        cuda = _driver_module()
        from cubind._core.device_stream_event import ensure_context

        lowered = self._lowered(name)
        if self.ptx and lowered not in ptx_globals(self.ptx):
            # Asked of the PTX rather than the driver: a lookup that fails is
            # an error in a sanitizer's report of the user's program.
            raise ValueError(f"global {name!r} is not in the module")
        library = self.handle
        ensure_context()
        err, dptr, nbytes = cuda.cuLibraryGetGlobal(library, lowered.encode())
        if err == _NOT_FOUND:
            raise ValueError(f"global {name!r} is not in the module")
        if err != 0:
            raise CUDAError(err, "cuLibraryGetGlobal")
        return dptr, int(nbytes)

    def close(self) -> None:
        """Unloads the module now (idempotent); its kernels become unusable."""
        if self._finalizer is not None:
            self._finalizer()
        for kernel in list(self._kernels.values()):  # a copy: another thread may be adding one
            kernel._invalidate()
        self._kernels.clear()

    def _context_lost(self):
        # Device.reset() (the library was unloaded): load again on next use;
        # kernels got before refuse use.
        self.close()
        self._finalizer = None
        self._library = None
