# cython: language_level=3
"""Slow paths of the argument conversions (see _convert.pxd)."""
from cpython.buffer cimport PyObject_CheckBuffer
from cpython.exc cimport PyErr_SetObject, PyErr_WriteUnraisable
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_CheckExact, PyByteArray_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.memoryview cimport PyMemoryView_GET_BUFFER
from cpython.number cimport PyNumber_Index


cdef int _ADDRESS_BITS = 8 * sizeof(void*)


cdef str _type_name(object o):
    return type(o).__name__


cdef object _index(object o, const char* name, str accepted):
    try:
        return PyNumber_Index(o)
    except TypeError:
        raise TypeError(f"{name.decode()}: expected {accepted}, got {_type_name(o)}") from None


cdef long long signed_slow(object o, const char* name, long long low, long long high) except? -1:
    v = _index(o, name, "an int")
    if not low <= v <= high:
        raise OverflowError(f"{name.decode()}: {v} is out of range for its C type [{low}, {high}]")
    return v


cdef unsigned long long unsigned_slow(object o, const char* name, unsigned long long high) except? 0:
    v = _index(o, name, "an int")
    if not 0 <= v <= high:
        raise OverflowError(f"{name.decode()}: {v} is out of range for its C type [0, {high}]")
    return v


cdef double double_slow(object o, const char* name) except? -1.0:
    if isinstance(o, (str, bytes, bytearray)) or not hasattr(type(o), "__float__") and not hasattr(type(o), "__index__"):
        raise TypeError(f"{name.decode()}: expected a float, got {_type_name(o)}")
    return float(o)


cdef object cstring_slow(object o, const char* name):
    if o is None:
        return None
    if isinstance(o, str):
        b = (<str>o).encode("utf-8")
    elif isinstance(o, (bytes, bytearray)):
        b = bytes(o)
    else:
        raise TypeError(f"{name.decode()}: expected bytes, str or None, got {_type_name(o)}")
    if b"\0" in b:
        raise ValueError(f"{name.decode()}: embedded NUL character (C would truncate the string there)")
    return b


cdef void* address_slow(object o, const char* name) except? NULL:
    if PyObject_CheckBuffer(o) or isinstance(o, (str, float)):
        raise TypeError(f"{name.decode()}: expected an int address or None, got {_type_name(o)}")
    v = _index(o, name, "an int address, a buffer or None")
    if v < 0 or v >> _ADDRESS_BITS:
        raise OverflowError(f"{name.decode()}: address {v} is out of range for a pointer")
    return <void*><size_t>v


cdef void* function_address(object o, const char* name) except? NULL:
    """A raw C function pointer: an int, None, or a ctypes function pointer."""
    if o is None:
        return NULL
    if any(cls.__name__ == "CFuncPtr" for cls in type(o).__mro__):
        import ctypes
        return <void*><size_t>(ctypes.cast(o, ctypes.c_void_p).value or 0)
    return address_slow(o, name)


cdef char* writable_buffer(object o, const char* name, size_t need, char* scratch) except NULL:
    cdef Py_ssize_t size
    cdef char* data
    if PyByteArray_CheckExact(o):
        size = PyByteArray_GET_SIZE(o)
        data = PyByteArray_AS_STRING(o)
    elif PyBytes_CheckExact(o):
        size = PyBytes_GET_SIZE(o)
        # CPython shares its empty and one-byte bytes objects: never write into
        # them. A one-byte result is only the terminating NUL.
        if size <= 1 and need <= 1:
            return scratch
        data = PyBytes_AS_STRING(o)
    else:
        raise TypeError(f"{name.decode()}: expected a bytearray or bytes of at least {need} bytes, "
                        f"got {_type_name(o)}")
    if <size_t>size < need:
        raise ValueError(f"{name.decode()}: buffer of {size} bytes is smaller than the {need} bytes needed")
    return data


cdef object buffer_view(object o):
    if o is None or PyLong_CheckExact(o) or not PyObject_CheckBuffer(o):
        return None
    return memoryview(o)


cdef void* view_address(object view) noexcept:
    return PyMemoryView_GET_BUFFER(view).buf


cdef class CStringArray:
    @staticmethod
    cdef CStringArray create(object items, const char* name, long long count, const char* count_name):
        cdef CStringArray self = CStringArray.__new__(CStringArray)
        cdef Py_ssize_t i
        if items is None:
            if count != 0:
                raise ValueError(f"{name.decode()}: None, but {count_name.decode()} is {count}")
            return self
        if not isinstance(items, (list, tuple)):
            raise TypeError(f"{name.decode()}: expected a list of bytes or str, got {_type_name(items)}")
        if len(items) != count:
            raise ValueError(f"{name.decode()}: {len(items)} items, but {count_name.decode()} is {count}")
        self._keep = []
        for i, item in enumerate(items):
            if item is None:
                raise TypeError(f"{name.decode()}[{i}]: expected bytes or str, got None")
            self._keep.append(cstring_slow(item, f"{name.decode()}[{i}]".encode()))
        self.ptr = <const char**>PyMem_Malloc(max(count, 1) * sizeof(char*))
        if self.ptr == NULL:
            raise MemoryError()
        for i in range(count):
            self.ptr[i] = PyBytes_AS_STRING(self._keep[i])
        return self

    def __dealloc__(self):
        PyMem_Free(self.ptr)


cdef void report_unraisable(object exc, object where) noexcept:
    # sys.unraisablehook only sees an exception that is set, not one caught.
    try:
        PyErr_SetObject(type(exc), exc)
    except BaseException:
        pass
    PyErr_WriteUnraisable(where)
