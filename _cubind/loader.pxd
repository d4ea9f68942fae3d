# Locating and opening the CUDA shared libraries; see _loader.pyx.

# Open `libname` (searching as documented in _loader.pyx) once and cache the
# handle; raises LibraryNotFoundError (an OSError) when it cannot be found.
# `toolkit_subdirs`: where under a toolkit root it lives (default lib64, lib).
cdef size_t open_library(str libname, tuple sonames, str env_var, tuple wheel_subdirs,
                         tuple toolkit_subdirs=*) except 0

# Plain dlsym: NULL when the symbol is missing.
cdef void* find_symbol(size_t handle, const char* name) noexcept nogil
