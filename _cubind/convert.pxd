# cython: language_level=3
# Argument conversions shared by every generated module. The inline fast
# paths take the common exact types without a call; anything else goes to a
# slow path in convert.pyx that converts or raises an error naming the
# parameter.
from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_CheckExact, PyBytes_GET_SIZE
from cpython.float cimport PyFloat_AS_DOUBLE, PyFloat_CheckExact
from cpython.long cimport PyLong_Check, PyLong_CheckExact
from cpython.memoryview cimport PyMemoryView_GET_BUFFER
from libc.stdint cimport uintptr_t
from libc.string cimport memchr, memcpy
cimport cython

cdef extern from "Python.h":
    long long PyLong_AsLongLongAndOverflow(object o, int* overflow)
    unsigned long long PyLong_AsUnsignedLongLongMask(object o)

# An int of one digit (|v| < 2**30, nearly every argument) is read in place,
# without a call into libpython: on the slower hosts the call costs ~3 ns per
# argument, 30 ns for the 11 of cuLaunchKernel. `o` must be an int (subclass).
cdef extern from *:
    """
    #if PY_VERSION_HEX >= 0x030C0000 && !defined(Py_LIMITED_API)
    #define CUBIND_LONG_IS_COMPACT(o) PyUnstable_Long_IsCompact((PyLongObject *)(o))
    #define CUBIND_LONG_COMPACT_VALUE(o) ((long long)PyUnstable_Long_CompactValue((PyLongObject *)(o)))
    #elif !defined(Py_LIMITED_API)
    #define CUBIND_LONG_IS_COMPACT(o) (Py_SIZE(o) >= -1 && Py_SIZE(o) <= 1)
    #define CUBIND_LONG_COMPACT_VALUE(o) ((long long)Py_SIZE(o) * (long long)((PyLongObject *)(o))->ob_digit[0])
    #else
    #define CUBIND_LONG_IS_COMPACT(o) 0
    #define CUBIND_LONG_COMPACT_VALUE(o) 0
    #endif
    """
    bint long_is_compact "CUBIND_LONG_IS_COMPACT"(object o) noexcept
    long long long_compact_value "CUBIND_LONG_COMPACT_VALUE"(object o) noexcept

cdef long long signed_slow(object o, const char* name, long long low, long long high) except? -1
cdef unsigned long long unsigned_slow(object o, const char* name, unsigned long long high) except? 0
cdef double double_slow(object o, const char* name) except? -1.0
cdef object cstring_slow(object o, const char* name)
cdef void* address_slow(object o, const char* name) except? NULL
cdef void* function_address(object o, const char* name) except? NULL
# A ctypes function pointer (CFUNCTYPE instance): callable, but already C.
cdef bint is_c_function(object o)
cdef object buffer_view_slow(object o, const char* name)
# Reports an exception raised inside a C callback through sys.unraisablehook.
cdef void report_unraisable(object exc, object where) noexcept


cdef inline long long as_signed(object o, const char* name, long long low, long long high) except? -1:
    cdef int overflow = 0
    cdef long long v
    if PyLong_Check(o):   # int and its subclasses (enums, bool)
        if long_is_compact(o):
            v = long_compact_value(o)
        else:
            v = PyLong_AsLongLongAndOverflow(o, &overflow)
        if overflow == 0 and low <= v <= high:
            return v
    return signed_slow(o, name, low, high)


cdef inline unsigned long long as_unsigned(object o, const char* name, unsigned long long high) except? 0:
    cdef int overflow = 0
    cdef long long v
    if PyLong_Check(o):
        if long_is_compact(o):
            v = long_compact_value(o)
        else:
            v = PyLong_AsLongLongAndOverflow(o, &overflow)
        if overflow == 0 and v >= 0 and <unsigned long long>v <= high:
            return <unsigned long long>v
    return unsigned_slow(o, name, high)


# An enum parameter or field takes a member of its own enum class `cls` (None
# until the lazily made class exists: then no member of it does either) or a
# plain int; a member of another enum class is a TypeError naming it, never
# stored as the number it happens to be, but for a member of its twin (the
# other spelling of one C enum, which lists this enum's name in `_twins_`).
# Returns `o`, for as_signed/unsigned.
cdef object enum_slow(object o, object cls, const char* enum_name, const char* name)


cdef inline object as_enum(object o, object cls, const char* enum_name, const char* name):
    if type(o) is cls or PyLong_CheckExact(o):
        return o
    return enum_slow(o, cls, enum_name, name)


# Kernel arguments: both packers (the 1:1 cuLaunchKernel's (values, types)
# form in convert.pyx, the Pythonic launch's plan in cubind/_launch/launch.pyx)
# write an int argument through store_int. SIGN_EITHER is PTX's: a parameter
# declared .u32 may be a C int, so both ranges are taken and the value's two's
# complement is stored, as C converts.
cdef enum:
    SIGN_SIGNED = 0
    SIGN_UNSIGNED = 1
    SIGN_EITHER = 2


cdef inline bint store_int(object o, int size, int sign, void* slot) noexcept:
    """Writes the exact int ``o`` as ``size`` little-endian bytes at ``slot``
    where it is in range (True); False leaves the packer's slow path to
    convert it or raise an error naming the parameter."""
    cdef int overflow = 0
    cdef long long v
    cdef int bits = 8 * size
    if not PyLong_CheckExact(o):
        return False
    if long_is_compact(o):
        v = long_compact_value(o)
    else:
        v = PyLong_AsLongLongAndOverflow(o, &overflow)
        if overflow:
            return False
    if size < 8:
        if v < (0 if sign == SIGN_UNSIGNED else -(1LL << (bits - 1))):
            return False
        if v > ((1LL << (bits - 1)) - 1 if sign == SIGN_SIGNED else (1LL << bits) - 1):
            return False
    elif sign == SIGN_UNSIGNED and v < 0:
        return False
    # Constant sizes: the compiler writes each inline, where memcpy(size)
    # called libc's per argument (the low bytes: the layout is little-endian).
    if size == 4:
        memcpy(slot, &v, 4)
    elif size == 8:
        memcpy(slot, &v, 8)
    elif size == 2:
        memcpy(slot, &v, 2)
    else:
        memcpy(slot, &v, 1)
    return True


cdef inline double as_double(object o, const char* name) except? -1.0:
    if PyFloat_CheckExact(o):
        return PyFloat_AS_DOUBLE(o)
    return double_slow(o, name)


# bytes for a `const char*`: the object to keep alive for the call, or None.
cdef inline object as_cstring(object o, const char* name):
    if PyBytes_CheckExact(o) and memchr(PyBytes_AS_STRING(o), 0, <size_t>PyBytes_GET_SIZE(o)) == NULL:
        return o
    return cstring_slow(o, name)


cdef inline const char* cstring_ptr(object b) noexcept:
    return NULL if b is None else PyBytes_AS_STRING(b)


# An int address or None; buffers go through buffer_view/view_address.
cdef inline void* as_address(object o, const char* name) except? NULL:
    cdef int overflow = 0
    cdef long long v
    if o is None:
        return NULL
    if PyLong_CheckExact(o):
        v = PyLong_AsLongLongAndOverflow(o, &overflow)
        if overflow == 0 and v >= 0:
            return <void*><size_t>v
    return address_slow(o, name)


# A `const char* const*` built from a list of bytes/str, alive as long as it is.
cdef class CStringArray:
    cdef const char** ptr
    cdef list _keep

    @staticmethod
    cdef CStringArray create(object items, const char* name, long long count, const char* count_name)


# Base of the generated struct classes: what a struct keeps alive (buffers and
# arrays its pointer fields point into), kept on the outermost struct.
cdef class Struct:
    cdef object _owner
    cdef dict _refs
    cdef Struct _root(self)
    cdef object _kept(self, uintptr_t key)
    cdef int _keep(self, uintptr_t key, object value) except -1


cdef int set_chars(char* field, size_t size, object value, const char* name) except -1
# Room in the calling function's frame for a launch's packed arguments, up
# to KERNEL_INLINE_ARGS of them (more go to the heap): a launch in the
# (values, types) form then allocates nothing.
cdef enum:
    KERNEL_INLINE_ARGS = 24

ctypedef struct KernelArgSpace:
    void* ptrs[KERNEL_INLINE_ARGS]
    unsigned long long slots[KERNEL_INLINE_ARGS]

cdef object kernel_params_slow(object params, const char* name, void*** out, KernelArgSpace* space)
# The same forms for storage that outlives a call (a struct's kernelParams
# field): the packed array lives in the returned object, which the struct keeps.
cdef object kernel_params_kept(object params, const char* name, void*** out)


# A memoryview of a buffer argument, or None for an int address or None. The
# common int is answered inline; only other objects pay a call. A buffer that
# is not contiguous (numpy's a[::-1], a column) is a ValueError naming the
# parameter: C reads and writes its bytes from .buf onward.
cdef inline object buffer_view(object o, const char* name):
    if o is None or PyLong_CheckExact(o):
        return None
    return buffer_view_slow(o, name)


cdef inline void* view_address(object view) noexcept:
    return PyMemoryView_GET_BUFFER(view).buf


cdef int buffer_too_small(Py_ssize_t size, size_t need, const char* name, const char* size_name) except -1


# A buffer the call writes into (nvrtcGetPTX's ptx, cuMemcpyDtoH's dstHost,
# nvJitLinkGetLinkedCubin's cubin: the conversion pass's rule, the same for
# every library). The object holds the caller's buffer exported (a
# Py_buffer) until it dies, when the binding returns: a bytearray another
# thread resizes during the nogil call then raises BufferError there instead
# of freeing the memory the library writes to. Made by written_buffer, read
# by written_address.
@cython.final
cdef class WrittenBuffer:
    cdef Py_buffer view
    cdef bint held       # view holds an export, released by __dealloc__
    # An empty or one-byte bytes object, which CPython shares between every
    # use of its value: never written (convert.pyx: written_address_slow).
    cdef bint shared
    cdef char scratch[1]

# The caller's buffer exported writable: None for None and an int address
# (the caller's word, converted by as_address), a TypeError naming the
# parameter for a read-only buffer (bytes excepted: the classic convention
# writes into `b" " * size`) and for anything else.
cdef WrittenBuffer written_buffer_slow(object o, const char* name)


cdef inline WrittenBuffer written_buffer(object o, const char* name):
    if o is None or PyLong_CheckExact(o):
        return None
    return written_buffer_slow(o, name)


cdef void* written_address_slow(WrittenBuffer held, size_t need, const char* name, const char* size_name,
                                bint c_string) except? NULL


# Where the call may write `need` bytes (`size_name`: the count or query
# giving them): a smaller buffer is a ValueError naming both sizes, before
# anything is written. `c_string`: the call writes a NUL-terminated string.
cdef inline void* written_address(WrittenBuffer held, size_t need, const char* name, const char* size_name,
                                  bint c_string) except? NULL:
    if <size_t>held.view.len >= need and not held.shared:
        return held.view.buf
    return written_address_slow(held, need, name, size_name, c_string)


# The address of a buffer argument the call reads or writes `need` bytes of
# (`size_name`: the parameter or query giving them): a smaller one is a
# ValueError before C could run past its end. The Py_buffer is already held.
cdef inline void* sized_view_address(object view, size_t need, const char* name,
                                     const char* size_name) except? NULL:
    cdef Py_ssize_t size = PyMemoryView_GET_BUFFER(view).len
    if <size_t>size < need:
        buffer_too_small(size, need, name, size_name)
    return PyMemoryView_GET_BUFFER(view).buf


# kernelParams/extra (API.md's four forms): sets *out, returns what must stay
# alive until the C call returns; `space` lives in the caller's frame. None
# and an int address, the forms of a hot launch loop, are answered inline.
cdef inline object kernel_params(object params, const char* name, void*** out, KernelArgSpace* space):
    if params is None:
        out[0] = NULL
        return None
    if PyLong_CheckExact(params):
        out[0] = <void**>as_address(params, name)
        return None
    return kernel_params_slow(params, name, out, space)
# A value typed by an attribute, given as its raw bytes (a ctypes instance,
# a numpy array, a bytearray: a buffer without __index__): copied into `buf`;
# 1 when it was one, 0 for a value to convert by its type.
cdef int raw_value_into(object o, void* buf, size_t size, const char* name) except -1
# A NUL-terminated string the call wrote into a char[size]: the bytes before the NUL.
cdef bytes fixed_string_of(const char* p, size_t size)
# bytes, or str as UTF-8, into a char[size] with its NUL; too long is a ValueError.
cdef int fixed_string_into(object item, char* buf, size_t size, const char* name) except -1
# An int address, None, or a buffer (held in `keep` for the call).
cdef void* address_kept(object o, const char* name, list keep) except? NULL

# Sets a class attribute on an extension type (`CUDA_MEMCPY2D.sizeof`).
cdef int set_type_attr(type cls, str name, object value) except -1
