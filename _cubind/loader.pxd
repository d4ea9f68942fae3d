# Locating and opening the CUDA shared libraries; see _loader.pyx.

# Open `libname` (searching as documented in _loader.pyx) once and cache the
# handle; raises LibraryNotFoundError (an OSError) when it cannot be found.
# `toolkit_subdirs`: where under a toolkit root it lives (default, or empty: lib64, lib).
cdef size_t open_library(str libname, tuple sonames, str env_var, tuple wheel_subdirs,
                         tuple toolkit_subdirs=*) except 0

# Plain dlsym: NULL when the symbol is missing.
cdef void* find_symbol(size_t handle, const char* name) noexcept nogil


# A generated C layer's symbol resolution (its module's `_resolver`): the
# library opened once by open_resolver, then each function's pointer looked
# up on its first call by resolve. Set up completely before `ready` is.
ctypedef int (*ProcAddress)(const char*, void**, int, unsigned long long, int*) noexcept nogil
cdef struct Resolver:
    bint ready
    size_t library
    # cuGetProcAddress, where the library resolves names at a version (the
    # driver), with the default-stream flags; NULL: dlsym alone.
    ProcAddress proc_address
    unsigned long long proc_flags
    # Per-thread default stream variants tried first (the runtime's _ptsz,
    # _ptds), when CUBIND_DEFAULT_STREAM=per-thread: each NUL-terminated.
    bint per_thread
    char suffixes[4][8]

# Opens the library (open_library's arguments by name in `library`: libname,
# sonames, env_var, wheel_subdirs, toolkit_subdirs, empty for the default)
# and sets `r` up: `proc_address_function` None for dlsym alone;
# `default_stream_flags` {mode: flag} for cuGetProcAddress;
# `per_thread_suffixes` for dlsym's variants.
cdef int open_resolver(Resolver* r, dict library, bytes proc_address_function, dict default_stream_flags,
                       tuple per_thread_suffixes) except -1

# Stores the function's pointer in `slot`, looked up by `name` at `version`
# (cuGetProcAddress) or `symbol` (dlsym); 1 where the library lacks it and
# `missing_ok`, else FunctionNotFoundError. Without the GIL: see loader.pyx.
cdef int resolve(Resolver* r, void** slot, const char* symbol, const char* name, int version,
                 bint missing_ok) except -1 nogil
