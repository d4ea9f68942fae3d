# cython: language_level=3
"""Locate and open the CUDA shared libraries (driver, runtime, NVRTC) on first use.

Nothing is opened at import time.  ``open_library`` (``load`` from Python)
searches for a library once, caches its handle per ``libname`` and returns it.
The places below are tried in this order; the first that opens wins:

1. The environment override ``env_var`` (e.g. ``CUBIND_NVRTC_LIBRARY``): the
   full path of the library file.  If it is set but cannot be opened, the
   search stops with ``LibraryNotFoundError`` carrying the dlerror text.  The
   override is used as given, even from a ``stubs`` directory.
2. Libraries already loaded in the process:
   ``dlopen(soname, RTLD_NOW | RTLD_NOLOAD)`` for each soname.
3. NVIDIA's pip wheels: for each directory of ``site.getsitepackages()``,
   ``site.getusersitepackages()`` and ``sys.path``, for each entry of
   ``wheel_subdirs`` (e.g. ``nvidia/cu13/lib``), for each soname: that file.
4. The CUDA installations ``_cubind/cuda_paths.py`` finds, as the build
   does: ``$CUDA_HOME`` then ``$CUDA_PATH`` when set, else the toolkit of the
   ``nvcc`` on ``PATH`` and ``$CONDA_PREFIX``: ``<root>/lib64/<soname>`` for each
   soname, then ``<root>/lib/<soname>``, then the same under
   ``targets/<arch>-linux`` (``toolkit_subdirs`` replaces lib64, lib for a
   library kept elsewhere: libNVVM's ``nvvm/lib64``).
5. The system loader: ``dlopen(soname)`` (``LD_LIBRARY_PATH``, ldconfig cache, ...).
6. The system's installations: Debian's multiarch directory,
   ``/usr/local/cuda``, ``/opt/cuda`` (``toolkit_subdirs`` as above).

Libraries are opened with ``RTLD_NOW | RTLD_LOCAL``.  The driver stub
(``lib64/stubs/libcuda.so``) is never picked: a candidate path with a
``stubs`` directory component is skipped, and a library that turns out to
live in a ``stubs`` directory once opened (by soname, or through a symlink)
is closed again and the search goes on.

When nothing is found, ``LibraryNotFoundError`` (an ``OSError`` and a
``cubind.CUDAError``, with ``code`` None) names the
library, the environment variable to set and every place searched, one per
line, with the dlerror of each failed dlopen. For the driver (``libcuda``) it
says that the NVIDIA driver, not the toolkit, provides it; for the others it
advises ``CUDA_HOME`` only where neither it nor ``CUDA_PATH`` is set.
"""

import os
import sys
import threading

from _cubind.errors import CUDAError

from libc.string cimport memcpy, strlen
from posix.dlfcn cimport dlclose, dlerror, dlopen, dlsym, RTLD_LOCAL, RTLD_NOW

# RTLD_NOLOAD and dlinfo are GNU extensions; Python.h (pyconfig.h) defines
# _GNU_SOURCE on Linux before any system header, so <dlfcn.h> declares them.
cdef extern from *:
    """
    #include <dlfcn.h>
    #include <link.h>
    static const char *cubind_handle_path(void *handle) {
        struct link_map *map = NULL;
        if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == NULL) return NULL;
        return map->l_name;
    }
    """
    int RTLD_NOLOAD
    const char* cubind_handle_path(void* handle) nogil


# An OSError, as it always was (``except OSError`` keeps working), and a
# CUDAError, so that one ``except cubind.CUDAError`` covers a missing library
# as well as a failed call. OSError first: its __init__ takes the message.
class LibraryNotFoundError(OSError, CUDAError):
    """A CUDA library could not be found or opened; the message says where we looked.

    An ``OSError`` and a ``cubind.CUDAError`` (``code``, ``call`` None,
    ``sticky`` False, ``name`` "LibraryNotFoundError", ``message`` the text).
    """

    name = "LibraryNotFoundError"

    @property
    def message(self):
        return str(self)


# NVIDIA's is a RuntimeError too (cuda.bindings._internal.utils serves this one).
class FunctionNotFoundError(CUDAError):
    """A CUDA library was found but lacks a function: it is older than the
    headers cubind was generated from. A ``cubind.CUDAError`` (``code`` and
    ``call`` None, ``name`` "FunctionNotFoundError") and a ``RuntimeError``.
    """

    name = "FunctionNotFoundError"

    def __init__(self, message):
        RuntimeError.__init__(self, message)

    @property
    def message(self):
        return str(self)


cdef dict _handles = {}   # libname -> handle (size_t)
_open_lock = threading.Lock()

_LOADED = "already loaded"
_TOOLKIT_SUBDIRS = ("lib64", "lib")
_SYSTEM = "system loader"


cdef size_t open_library(str libname, tuple sonames, str env_var, tuple wheel_subdirs,
                         tuple toolkit_subdirs=_TOOLKIT_SUBDIRS) except 0:
    cdef size_t handle = _handles.get(libname, 0)
    if handle:
        return handle
    with _open_lock:   # threads calling their first function at once: one searches, the others take its handle
        handle = _handles.get(libname, 0)
        if not handle:
            # An empty toolkit_subdirs (a spec naming none) is the default.
            handle = _search(libname, sonames, env_var, wheel_subdirs, toolkit_subdirs or _TOOLKIT_SUBDIRS)
            _handles[libname] = handle
    return handle


cdef void* find_symbol(size_t handle, const char* name) noexcept nogil:
    return dlsym(<void*>handle, name)


def load(str libname, sonames, str env_var, wheel_subdirs, toolkit_subdirs=_TOOLKIT_SUBDIRS):
    """Python wrapper of open_library: the (cached) handle of `libname` as an int."""
    return open_library(libname, tuple(sonames), env_var, tuple(wheel_subdirs), tuple(toolkit_subdirs))


def library_path(handle):
    """The file name the loader recorded for a handle returned by load()."""
    _check_handle(handle)
    return _handle_path(handle)


def _symbol_address(handle, name):
    """Address of symbol `name` (str or bytes) in a handle returned by load(); 0 when missing."""
    _check_handle(handle)
    cdef bytes bname = name.encode() if isinstance(name, str) else bytes(name)
    return <size_t>find_symbol(handle, bname)


def _check_handle(handle):
    # dlinfo/dlsym on a bogus handle would crash the process.
    if handle not in _handles.values():
        raise ValueError(f"{handle!r} is not a handle returned by _cubind.loader.load()")


cdef str _handle_path(size_t handle):
    cdef const char* path = cubind_handle_path(<void*>handle)
    return os.fsdecode(path) if path != NULL else ""


cdef tuple _dlopen(str name, int flags):
    """(handle, dlerror text); handle is 0 on failure."""
    cdef bytes bname = os.fsencode(name)
    cdef const char* cname = bname
    cdef void* handle
    cdef const char* err
    dlerror()   # clear a stale error
    with nogil:
        handle = dlopen(cname, flags)
    if handle != NULL:
        return <size_t>handle, ""
    err = dlerror()
    return 0, (err.decode(errors="replace") if err != NULL else "")


def _in_stubs(path):
    return "stubs" in os.path.normpath(path).split(os.sep)


def search_candidates(libname, sonames, env_var, wheel_subdirs, toolkit_subdirs=_TOOLKIT_SUBDIRS):
    """The places to try, in order, as (where, path_or_soname) pairs.

    `where` is the env var name (steps 1 and 4), "already loaded",
    "site-packages", "system loader" or "/usr/local/cuda".  Soname entries
    (no "/") are for dlopen; the others are file paths.  Paths listed twice
    (e.g. CUDA_HOME=/usr/local/cuda) are kept only at their first place.
    """
    found = []
    override = os.environ.get(env_var) if env_var else None
    if override:
        found.append((env_var, os.path.abspath(os.path.expanduser(override))))
    found += [(_LOADED, s) for s in sonames]
    from _cubind import cuda_paths as _cuda_paths  # the search setup.py makes too; imported on the first open only

    for d in _cuda_paths.site_dirs():
        for sub in wheel_subdirs:
            found += [("site-packages", os.path.join(d, sub, s)) for s in sonames]
    fallbacks = {root.where for root in _cuda_paths.fallback_roots()}
    toolkits = [r for r in _cuda_paths.roots(wheels=False) if r.where not in fallbacks]
    for root in toolkits:
        for lib in root.lib_dirs(toolkit_subdirs):
            found += [(root.where, os.path.join(lib, s)) for s in sonames]
    found += [(_SYSTEM, s) for s in sonames]
    for root in _cuda_paths.fallback_roots():
        for lib in root.lib_dirs(toolkit_subdirs):
            found += [(root.where, os.path.join(lib, s)) for s in sonames]

    seen = set()
    out = []
    for where, target in found:
        key = target if "/" in target else (where, target)
        if key not in seen:
            seen.add(key)
            out.append((where, target))
    return out


def _search(libname, sonames, env_var, wheel_subdirs, toolkit_subdirs):
    """Try the candidates in order; return a handle or raise LibraryNotFoundError."""
    report = []
    for where, target in search_candidates(libname, sonames, env_var, wheel_subdirs, toolkit_subdirs):
        is_override = bool(env_var) and where == env_var
        flags = RTLD_NOW | RTLD_LOCAL
        if where == _LOADED:
            flags |= RTLD_NOLOAD
        elif where != _SYSTEM and not is_override:
            if _in_stubs(target):
                report.append(f"{where}: {target}: skipped (driver stub directory)")
                continue
            if not os.path.exists(target):
                report.append(f"{where}: {target}: not found")
                continue
        handle, err = _dlopen(target, flags)
        if not handle:
            if is_override:
                raise LibraryNotFoundError(
                    f"cubind: cannot open the {libname} library given by "
                    f"{env_var}={os.environ[env_var]!r} ({target}): {err or 'dlopen failed'}")
            report.append(f"{where}: {target}: {'not loaded' if where == _LOADED else err}")
            continue
        if not is_override:
            path = _handle_path(handle)
            if path and (_in_stubs(path) or _in_stubs(os.path.realpath(path))):
                dlclose(<void*><size_t>handle)
                report.append(f"{where}: {target}: skipped, {os.path.realpath(path)} is a driver stub")
                continue
        return handle

    raise LibraryNotFoundError("\n".join(_not_found_lines(libname, sonames, env_var, report)))


# The libraries the NVIDIA driver installs (libcuda, NVML's libnvidia-ml),
# never a toolkit's: where they are missing, the driver is.
_DRIVER_LIBRARIES = ("libcuda.so", "libnvidia-ml.so")


def _is_driver(sonames):
    return any(s.startswith(_DRIVER_LIBRARIES) for s in sonames)


def _not_found_lines(libname, sonames, env_var, report):
    """The message of a failed search: what is missing, what to set, where we looked."""
    names = ", ".join(sonames)
    if _is_driver(sonames):
        # The toolkit ships only the driver's link stub, never libcuda.so.1:
        # pointing the user at CUDA_HOME would send them to the wrong package.
        lines = [
            f"cubind: cannot find the {'CUDA driver' if sonames[0].startswith('libcuda.so') else libname} "
            f"library ({names}).",
            f"It comes with the NVIDIA GPU driver, not with the CUDA toolkit (CUDA_HOME does not provide it): "
            f"on a machine with a GPU, install the NVIDIA driver; where it is installed out of the system "
            f"loader's sight, set {env_var} to the full path of {sonames[0]}. Searched, in order:",
        ]
        unset = [env_var] if env_var and not os.environ.get(env_var) else []
    else:
        roots = [f"{v}={os.environ[v]}" for v in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(v)]
        where = (f"; {' and '.join(roots)} {'does' if len(roots) == 1 else 'do'} not hold it" if roots
                 else ", or CUDA_HOME to the CUDA toolkit root")
        lines = [
            f"cubind: cannot find the {libname} library ({names}).",
            f"Set {env_var} to the full path of the library file{where}. Searched, in order:",
        ]
        unset = [v for v in (env_var, "CUDA_HOME", "CUDA_PATH") if v and not os.environ.get(v)]
    lines += ["  " + line for line in report]
    if unset:
        lines.append(f"  (not set: {', '.join(unset)})")
    return lines


_DEFAULT_STREAM_MODES = ("legacy", "per-thread")


cdef int open_resolver(Resolver* r, dict library, bytes proc_address_function, dict default_stream_flags,
                       tuple per_thread_suffixes) except -1:
    cdef ProcAddress address = NULL
    cdef bytes suffix
    if r.ready:
        return 0   # another thread got here first
    # Opt-in: CUBIND_DEFAULT_STREAM=per-thread calls the per-thread default
    # stream variants (the driver's flag, the runtime's suffixed symbols).
    mode = os.environ.get("CUBIND_DEFAULT_STREAM", "legacy")
    if mode not in _DEFAULT_STREAM_MODES:
        raise ValueError(f"CUBIND_DEFAULT_STREAM must be one of {list(_DEFAULT_STREAM_MODES)}, got {mode!r}")
    r.library = open_library(library["libname"], library["sonames"], library["env_var"], library["wheel_subdirs"],
                             library["toolkit_subdirs"])
    if proc_address_function is not None:
        address = <ProcAddress>find_symbol(r.library, proc_address_function)
        if address == NULL:
            raise FunctionNotFoundError(f"{proc_address_function.decode()} is not in the loaded driver: "
                                        "it predates CUDA 12.5")
        r.proc_flags = default_stream_flags[mode]
    if len(per_thread_suffixes) > 4 or any(len(s) >= 8 for s in per_thread_suffixes):
        raise ValueError(f"at most 4 per-thread suffixes of 7 bytes: {per_thread_suffixes!r}")
    for i in range(4):
        suffix = per_thread_suffixes[i] if i < len(per_thread_suffixes) else b""
        memcpy(r.suffixes[i], <const char*>suffix, len(suffix) + 1)
    r.per_thread = mode == "per-thread" and len(per_thread_suffixes) > 0
    r.proc_address = address
    r.ready = True
    return 0


cdef int _not_found(Resolver* r, const char* symbol, const char* name, int rc, int found) except -1 with gil:
    if r.proc_address != NULL:
        raise FunctionNotFoundError(f"{name.decode()} ({symbol.decode()}) is not in the loaded driver "
                                    f"(cuGetProcAddress returned {rc}, status {found})")
    raise FunctionNotFoundError(f"{symbol.decode()} is not in {_handle_path(r.library) or 'the loaded library'}")


# symbol + suffix looked up, in C: NULL where the library lacks it.
cdef void* _find_variant(size_t library, const char* symbol, const char* suffix) noexcept nogil:
    cdef char name[256]
    cdef size_t n = strlen(symbol)
    cdef size_t m = strlen(suffix)
    if n + m >= sizeof(name):
        return NULL
    memcpy(name, symbol, n)
    memcpy(name + n, suffix, m + 1)
    return find_symbol(library, name)


# Without the GIL once the library is open: a C-level consumer may make its
# first call of a function from a thread of its own, even from a destructor
# that runs after the interpreter has finished (cuda.core releases contexts
# from C++ thread-locals), where taking the GIL would crash.
cdef int resolve(Resolver* r, void** slot, const char* symbol, const char* name, int version,
                 bint missing_ok) except -1 nogil:
    cdef int found = 0
    cdef int rc = 0
    cdef void* function = NULL
    # Into a local, then one store: another thread may already be calling
    # through the slot, and must never see it pass through NULL or another
    # value. Threads racing here store the same pointer (benign).
    if r.proc_address != NULL:
        rc = r.proc_address(name, &function, version, r.proc_flags, &found)
        if rc != 0:
            function = NULL
    elif r.per_thread:
        for i in range(4):
            if function == NULL and r.suffixes[i][0] != 0:
                function = _find_variant(r.library, symbol, r.suffixes[i])
    if function == NULL:
        function = find_symbol(r.library, symbol)
    if function == NULL:
        if missing_ok:
            return 1
        _not_found(r, symbol, name, rc, found)
    slot[0] = function
    return 0
