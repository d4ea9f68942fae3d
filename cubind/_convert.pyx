# cython: language_level=3
"""Slow paths of the argument conversions (see _convert.pxd)."""
from cpython.buffer cimport PyObject_CheckBuffer
from cpython.exc cimport PyErr_SetObject, PyErr_WriteUnraisable
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_CheckExact, PyByteArray_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memcpy, memset
from cpython.memoryview cimport PyMemoryView_GET_BUFFER
from cpython.number cimport PyNumber_Index
from cpython.object cimport PyTypeObject


cdef extern from "Python.h":
    void PyType_Modified(PyTypeObject* t)


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


cdef bint is_c_function(object o):
    return any(cls.__name__ == "CFuncPtr" for cls in type(o).__mro__)


cdef void* function_address(object o, const char* name) except? NULL:
    """A raw C function pointer: an int, None, or a ctypes function pointer."""
    if o is None:
        return NULL
    if is_c_function(o):
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


cdef class Struct:
    cdef Struct _root(self):
        return self._owner if isinstance(self._owner, Struct) else self

    cdef object _kept(self, uintptr_t key):
        return None if self._refs is None else self._refs.get(key)

    cdef int _keep(self, uintptr_t key, object value) except -1:
        if self._refs is None:
            self._refs = {}
        self._refs[key] = value
        return 0


cdef int set_chars(char* field, size_t size, object value, const char* name) except -1:
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"{name.decode()}: expected bytes of at most {size} bytes, got {_type_name(value)}")
    if <size_t>len(value) > size:
        raise ValueError(f"{name.decode()}: {len(value)} bytes do not fit in {size}")
    memset(field, 0, size)
    memcpy(field, <char*>value, len(value))
    return 0


cdef void** kernel_params(object params, const char* name, list keep) except? NULL:
    """kernelParams/extra in the four forms of API.md; `keep` holds what the call needs."""
    if params is None:
        return NULL
    if isinstance(params, tuple):
        return _pack_kernel_params(params, name, keep)
    view = buffer_view(params)
    if view is not None:
        keep.append(view)
        return <void**>view_address(view)
    return <void**>as_address(params, name)


cdef void* address_kept(object o, const char* name, list keep) except? NULL:
    view = buffer_view(o)
    if view is None:
        return as_address(o, name)
    keep.append(view)
    return view_address(view)


cdef object _ctypes = None


cdef object _checked_ctypes_value(object kind, object value, str where):
    """kind(value), refusing what ctypes would silently wrap or truncate."""
    ctypes = _ctypes
    if kind in (ctypes.c_float, ctypes.c_double, ctypes.c_longdouble):
        if isinstance(value, (str, bytes)) or not hasattr(type(value), "__float__"):
            raise TypeError(f"{where}: expected a float for {kind.__name__}, got {_type_name(value)}")
        return kind(float(value))
    if kind is ctypes.c_void_p:
        value = None if value is None else (value if type(value) is int else _index(value, where.encode(),
                                                                                     "an int address or None"))
        if value is not None and (value < 0 or value >> _ADDRESS_BITS):
            raise OverflowError(f"{where}: address {value} is out of range for a pointer")
        return kind(value)
    if kind is ctypes.c_bool:
        return kind(bool(value))
    if not issubclass(kind, ctypes._SimpleCData) or kind._type_ not in "bBhHiIlLqQ":
        raise TypeError(f"{where}: unsupported argument type {kind!r}: use a ctypes scalar type, "
                        f"c_void_p, or None for a handle or struct object")
    v = _index(value, where.encode(), "an int")
    bits = 8 * ctypes.sizeof(kind)
    signed = kind._type_ in "bhilq"
    low, high = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if not low <= v <= high:
        raise OverflowError(f"{where}: {v} is out of range for {kind.__name__} [{low}, {high}]")
    return kind(v)


cdef void** _pack_kernel_params(tuple params, const char* name, list keep) except? NULL:
    global _ctypes
    if _ctypes is None:
        import ctypes as _c
        _ctypes = _c
    ctypes = _ctypes
    pname = name.decode()
    if len(params) != 2:
        raise TypeError(f"{pname}: expected (values, types), got a tuple of {len(params)}")
    values, types = params
    if len(values) != len(types):
        raise ValueError(f"{pname}: {len(values)} values but {len(types)} types")
    addresses = (ctypes.c_void_p * max(len(values), 1))()
    for i, (value, kind) in enumerate(zip(values, types)):
        where = f"{pname}[{i}]"
        if kind is None:
            # A handle or struct object: its storage is the argument.
            if not hasattr(value, "getPtr"):
                raise TypeError(f"{where}: type None needs a handle or struct object, got {_type_name(value)}")
            addresses[i] = value.getPtr()
            keep.append(value)
        else:
            arg = _checked_ctypes_value(kind, value, where)
            keep.append(arg)
            addresses[i] = ctypes.addressof(arg)
    keep.append(addresses)
    return <void**><size_t>ctypes.addressof(addresses)


cdef int set_type_attr(type cls, str name, object value) except -1:
    # Extension types refuse setattr; their dict takes the attribute (as the
    # class body would, where `sizeof` cannot be a name).
    (<dict>(<PyTypeObject*>cls).tp_dict)[name] = value
    PyType_Modified(<PyTypeObject*>cls)
    return 0
