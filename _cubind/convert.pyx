# cython: language_level=3
"""Slow paths of the argument conversions (see convert.pxd)."""
cimport cython
from cpython.buffer cimport (PyBUF_ANY_CONTIGUOUS, PyBUF_SIMPLE, PyBUF_WRITABLE, PyBuffer_IsContiguous,
                             PyBuffer_Release, PyObject_CheckBuffer, PyObject_GetBuffer)
from cpython.exc cimport PyErr_SetObject, PyErr_WriteUnraisable
from cpython.bytearray cimport PyByteArray_AS_STRING, PyByteArray_CheckExact, PyByteArray_GET_SIZE
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from libc.string cimport memcpy, memset
from cpython.number cimport PyNumber_Index
from cpython.object cimport PyObject, PyTypeObject
from cpython.tuple cimport PyTuple_GET_ITEM


cdef extern from "Python.h":
    void PyType_Modified(PyTypeObject* t)


cdef int _ADDRESS_BITS = 8 * sizeof(void*)


cdef str _type_name(object o):
    return type(o).__name__


# What ctypes makes of a type, found once per type: the conversions ask per
# argument, and scanning the MRO in Python for every handle passed where an
# address is taken (a CUkernel as cudaLaunchKernel's func) cost ~600 ns a call.
cdef enum:
    _CT_SCALAR = 1      # a _SimpleCData: c_int, c_float, ... (c_void_p too)
    _CT_POINTER = 2     # holds an address: POINTER(T), c_void_p, c_char_p, c_wchar_p
    _CT_FUNCTION = 4    # a CFuncPtr: CFUNCTYPE(...)(fn)
    _CT_CACHE_MAX = 4096  # types made in a loop are then classified afresh, not kept alive
cdef dict _ctypes_traits = {}


cdef int _ctypes_kind(object o) except -1:
    cdef type t = type(o)
    cached = _ctypes_traits.get(t)
    if cached is not None:
        return <int>cached
    names = [cls.__name__ for cls in t.__mro__]
    cdef int kind = 0
    if "_SimpleCData" in names[1:]:
        kind |= _CT_SCALAR
    # c_void_p, c_char_p and c_wchar_p are the simple types holding an address.
    if "_Pointer" in names[1:] or (kind & _CT_SCALAR and getattr(t, "_type_", "") in "zZP"):
        kind |= _CT_POINTER
    if "CFuncPtr" in names:
        kind |= _CT_FUNCTION
    if len(_ctypes_traits) < _CT_CACHE_MAX:
        _ctypes_traits[t] = kind
    return kind


cdef bint _is_ctypes_scalar(object o) except -1:
    return _ctypes_kind(o) & _CT_SCALAR != 0


cdef object _index(object o, const char* name, str accepted):
    try:
        return PyNumber_Index(o)
    except TypeError:
        raise TypeError(f"{name.decode()}: expected {accepted}, got {_type_name(o)}") from None


cdef object _integer(object o, const char* name):
    if _is_ctypes_scalar(o):   # c_int(5): its value
        o = o.value
    # C converts a float given for an integer toward zero, and NVIDIA's samples
    # rely on it (`gridDimX=n / 256`, `int(dptr) + stride` with a float
    # stride): the classic convention does the same. NaN and the infinities
    # have no integer value: a TypeError, as the contract (docs/API.md) says.
    if isinstance(o, float) or (hasattr(o, "is_integer") and hasattr(type(o), "__float__")
                                and not hasattr(type(o), "__index__")):
        f = float(o)
        if f != f or f - f != 0:
            raise TypeError(f"{name.decode()}: expected an int or a finite float, got {_type_name(o)} {o!r}")
        return int(f)
    return _index(o, name, "an int")


cdef long long signed_slow(object o, const char* name, long long low, long long high) except? -1:
    v = _integer(o, name)
    if not low <= v <= high:
        raise OverflowError(f"{name.decode()}: {v} is out of range for its C type [{low}, {high}]")
    return v


cdef unsigned long long unsigned_slow(object o, const char* name, unsigned long long high) except? 0:
    v = _integer(o, name)
    if not 0 <= v <= high:
        raise OverflowError(f"{name.decode()}: {v} is out of range for its C type [0, {high}]")
    return v


cdef object enum_slow(object o, object cls, const char* enum_name, const char* name):
    if cls is not None and isinstance(o, cls):
        return o
    if _enum_types is None:
        _import_arg_types()
    if isinstance(o, _enum_types):
        # The twin the runtime or the driver spells for the same C enum
        # (cudaDeviceAttr for CUdevice_attribute: same values, the generator
        # finds them), as the classic modules take and NVIDIA's samples pass.
        if enum_name.decode() in getattr(type(o), "_twins_", ()):
            return o
        member = getattr(o, "name", None)
        shown = f"{type(o).__name__}.{member}" if member is not None else _type_name(o)
        raise TypeError(f"{name.decode()}: expected a {enum_name.decode()} member or an int, "
                        f"got {shown} (a member of another enum)")
    return o


cdef double double_slow(object o, const char* name) except? -1.0:
    if _is_ctypes_scalar(o):
        o = o.value
    if isinstance(o, (str, bytes, bytearray)) or not hasattr(type(o), "__float__") and not hasattr(type(o), "__index__"):
        raise TypeError(f"{name.decode()}: expected a float, got {_type_name(o)}")
    return float(o)


cdef bytes _c_bytes(object o, const char* name, str expected):
    """``o`` (str, as UTF-8, or bytes) as the bytes of a C string, refusing a
    NUL inside; ``expected`` names what the parameter takes."""
    if isinstance(o, str):
        b = (<str>o).encode("utf-8")
    elif isinstance(o, (bytes, bytearray)):
        b = bytes(o)
    else:
        raise TypeError(f"{name.decode()}: expected {expected}, got {_type_name(o)}")
    if b"\0" in b:
        raise ValueError(f"{name.decode()}: embedded NUL character (C would truncate the string there)")
    return b


cdef object cstring_slow(object o, const char* name):
    if o is None:
        return None
    return _c_bytes(o, name, "bytes, str or None")


cdef object _ctypes_pointer_value(object o):
    """The address a ctypes pointer instance holds (c_void_p, c_char_p,
    c_wchar_p, POINTER(T)), 0 for NULL; None for anything else."""
    if not _ctypes_kind(o) & _CT_POINTER:
        return None  # not ctypes', or c_int and the other scalars: not addresses
    import ctypes
    return ctypes.cast(o, ctypes.c_void_p).value or 0


cdef void* address_slow(object o, const char* name) except? NULL:
    pointer = _ctypes_pointer_value(o)  # before the buffer check: ctypes instances have the buffer protocol
    if pointer is not None:
        o = pointer
    elif isinstance(o, str):
        # Text has no bytes until encoded, and its length is not theirs: a
        # buffer counted by `size` (nvvmAddModuleToProgram's) takes bytes.
        raise TypeError(f"{name.decode()}: expected an int address, a buffer (bytes, not str: encode it) "
                        f"or None, got str")
    elif PyObject_CheckBuffer(o) or isinstance(o, float):
        raise TypeError(f"{name.decode()}: expected an int address or None, got {_type_name(o)}")
    v = _index(o, name, "an int address, a buffer or None")
    # A handle's address (its __index__) is the common case here: checked in
    # C, without Python int arithmetic.
    cdef int overflow = 0
    cdef long long s = PyLong_AsLongLongAndOverflow(v, &overflow)
    if overflow == 0 and s >= 0:
        return <void*><size_t>s
    if v < 0 or v >> _ADDRESS_BITS:
        raise OverflowError(f"{name.decode()}: address {v} is out of range for a pointer")
    return <void*><size_t>v


cdef bint is_c_function(object o):
    return _ctypes_kind(o) & _CT_FUNCTION != 0


cdef void* function_address(object o, const char* name) except? NULL:
    """A raw C function pointer: an int, None, or a ctypes function pointer."""
    if o is None:
        return NULL
    if is_c_function(o):
        import ctypes
        return <void*><size_t>(ctypes.cast(o, ctypes.c_void_p).value or 0)
    return address_slow(o, name)


_WRITABLE = "a writable buffer (bytearray, writable numpy array or memoryview, ctypes array)"


@cython.final
@cython.freelist(8)
cdef class WrittenBuffer:
    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.view)


cdef WrittenBuffer written_buffer_slow(object o, const char* name):
    cdef WrittenBuffer held = WrittenBuffer.__new__(WrittenBuffer)
    cdef Py_buffer probe
    if PyByteArray_CheckExact(o):   # the common case: no ctypes or read-only questions
        PyObject_GetBuffer(o, &held.view, PyBUF_WRITABLE)
        held.held = True
        return held
    if PyBytes_CheckExact(o):
        # Immutable to Python, written in place all the same, as the classic
        # convention (NVIDIA's samples: `ptx = b" " * size`) expects; docs/
        # bindings.md says what that costs. Its export pins nothing (a bytes
        # never moves), and gives its bytes read-only: asked as such.
        PyObject_GetBuffer(o, &held.view, PyBUF_SIMPLE)
        held.held = True
        held.shared = held.view.len <= 1
        return held
    # c_void_p(address): an address, not its own 8 bytes. ctypes types have a
    # metaclass of ctypes' own: other buffers (numpy's) skip the slow check.
    if type(type(o)) is not type and _ctypes_pointer_value(o) is not None:
        return None
    if not PyObject_CheckBuffer(o):
        if hasattr(type(o), "__index__"):      # a numpy integer, a handle: an address
            return None
        raise TypeError(f"{name.decode()}: expected {_WRITABLE}, bytes, an int address or None, "
                        f"got {_type_name(o)}")
    # Contiguous in either order (a Fortran-ordered 2-D array is as much one
    # block of bytes as a C-ordered one); a strided view is refused by its
    # exporter, which cannot give it as one block.
    try:
        PyObject_GetBuffer(o, &held.view, PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS)
    except Exception as refused:
        # Exporters word a refusal their own way (numpy: ValueError "buffer
        # source array is read-only", others BufferError): a read-only export
        # that succeeds tells a read-only buffer from an unusable one.
        try:
            PyObject_GetBuffer(o, &probe, PyBUF_ANY_CONTIGUOUS)
        except Exception:
            raise TypeError(f"{name.decode()}: expected {_WRITABLE} of contiguous bytes, "
                            f"got {_type_name(o)} ({refused})") from None
        PyBuffer_Release(&probe)
        raise TypeError(f"{name.decode()}: the call writes into this buffer, but the {_type_name(o)} is read-only; "
                        f"pass {_WRITABLE}") from None
    held.held = True
    return held


cdef void* written_address_slow(WrittenBuffer held, size_t need, const char* name, const char* size_name,
                                bint c_string) except? NULL:
    cdef Py_ssize_t size = held.view.len
    if held.shared:
        # CPython's empty and one-byte bytes objects are shared by every use
        # of their value: never written. Where nothing is written, or only a
        # C string's terminating NUL, the call gets a scratch byte instead.
        if need == 0 or (need == 1 and c_string):
            return held.scratch
        if <size_t>size >= need:
            raise ValueError(f"{name.decode()}: a {size}-byte bytes object is shared by every use of its value "
                             f"in CPython: writing the {need} bytes of {size_name.decode()} into it would change "
                             f"them all; pass a bytearray")
    if <size_t>size < need:
        buffer_too_small(size, need, name, size_name)
    return held.view.buf


cdef int raw_value_into(object o, void* buf, size_t size, const char* name) except -1:
    if not PyObject_CheckBuffer(o) or hasattr(type(o), "__index__"):
        return 0
    view = buffer_view_slow(o, name)   # contiguous, or a ValueError naming the parameter
    cdef Py_buffer* b = PyMemoryView_GET_BUFFER(view)
    if <size_t>b.len < size:
        raise ValueError(f"{name.decode()}: {b.len} bytes given, the attribute's value takes {size}")
    memcpy(buf, b.buf, size)
    view.release()
    return 1


cdef extern from "<string.h>":
    size_t strnlen(const char* s, size_t maxlen) nogil


cdef bytes fixed_string_of(const char* p, size_t size):
    return p[:strnlen(p, size)]


cdef int fixed_string_into(object item, char* buf, size_t size, const char* name) except -1:
    cdef bytes data = _c_bytes(item, name, "bytes or str")
    if <size_t>len(data) >= size:
        raise ValueError(f"{name.decode()}: {len(data)} bytes, at most {size - 1} fit (with the NUL)")
    memcpy(buf, <const char*>data, len(data))
    buf[len(data)] = 0
    return 0


cdef int buffer_too_small(Py_ssize_t size, size_t need, const char* name, const char* size_name) except -1:
    raise ValueError(f"{name.decode()}: buffer of {size} bytes is smaller than the {need} bytes of "
                     f"{size_name.decode()}")


cdef object buffer_view_slow(object o, const char* name):
    if not PyObject_CheckBuffer(o):
        return None
    view = memoryview(o)
    # memoryview takes any buffer, strided ones too (numpy's a[::-1], a
    # column of a 2-D array), and C reads or writes from .buf onward: only
    # one block of bytes, in either order, is what the call means. An empty
    # buffer is one (PyBuffer_IsContiguous: len 0).
    if not PyBuffer_IsContiguous(PyMemoryView_GET_BUFFER(view), b'A'):
        view.release()
        raise ValueError(f"{name.decode()}: the buffer is not contiguous (a strided view); "
                         f"pass a contiguous copy (numpy.ascontiguousarray)")
    return view


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
        # As in C, the call reads the first `count` items: more are ignored,
        # fewer would be read past the end.
        if count < 0 or len(items) < count:
            raise ValueError(f"{name.decode()}: {len(items)} items, but {count_name.decode()} is {count}")
        self._keep = []
        for i, item in enumerate(items[:count]):
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
    # The fields printed in hex (a generated class's void* fields).
    _hex_fields = ()

    def __repr__(self):
        """One `field : value` line per field (the class's `_fields`, in C
        order), a nested struct's lines indented under `field :`, a void*
        field in hex (`fence : 0x0`), as the classic modules' repr (and so
        str) prints a struct."""
        lines = []
        hex_fields = type(self)._hex_fields
        for key in type(self)._fields:
            try:
                value = getattr(self, key)
            except Exception as exc:  # a field that cannot be read says so, in its line
                lines.append(f"{key} : <{type(exc).__name__}>")
                continue
            if isinstance(value, Struct):
                lines.append(f"{key} :")
                lines.extend("    " + line for line in str(value).splitlines())
            elif key in hex_fields:
                lines.append(f"{key} : {_hex_text(value)}")
            else:
                lines.append(f"{key} : {value}")
        return "\n".join(lines)

    cdef Struct _root(self):
        return self._owner if isinstance(self._owner, Struct) else self

    cdef object _kept(self, uintptr_t key):
        return None if self._refs is None else self._refs.get(key)

    cdef int _keep(self, uintptr_t key, object value) except -1:
        if self._refs is None:
            self._refs = {}
        self._refs[key] = value
        return 0


cdef str _hex_text(object value):
    """An address in hex, or a list of them (a fixed array of void*)."""
    if isinstance(value, list):
        return "[" + ", ".join([hex(v) for v in value]) + "]"
    return hex(value)


cdef int set_chars(char* field, size_t size, object value, const char* name) except -1:
    if isinstance(value, (list, tuple)):
        # C's char holds -128..127 or 0..255 depending on the platform: both
        # spellings of a byte are taken.
        items = [_integer(v, name) for v in value]
        for i, v in enumerate(items):
            if not -128 <= v <= 255:
                raise OverflowError(f"{name.decode()}[{i}]: {v} does not fit in a char (-128..255)")
        value = bytes([v & 0xFF for v in items])
    if not isinstance(value, (bytes, bytearray)):
        raise TypeError(f"{name.decode()}: expected bytes (or a list of ints) of at most {size} bytes, "
                        f"got {_type_name(value)}")
    if <size_t>len(value) > size:
        raise ValueError(f"{name.decode()}: {len(value)} bytes do not fit in {size}")
    memset(field, 0, size)
    memcpy(field, <char*>value, len(value))
    return 0


cdef void* address_kept(object o, const char* name, list keep) except? NULL:
    view = buffer_view(o, name)
    if view is None:
        return as_address(o, name)
    keep.append(view)
    return view_address(view)


# kernelParams in the (values, types) form is packed here, in C: a slot of 8
# bytes per value and the array of their addresses, in the caller's
# KernelArgSpace up to KERNEL_INLINE_ARGS values, in a KernelArgs' heap block
# above. ctypes is imported once, to learn its types.

# The kinds of value a ctypes type stands for; integers carry their size in
# bytes in the bits above.
cdef enum:
    _KIND_HANDLE = 1    # type None: the value's own storage (getPtr())
    _KIND_FLOAT = 2
    _KIND_DOUBLE = 3
    _KIND_POINTER = 4
    _KIND_BOOL = 5
    _KIND_SIGNED = 6
    _KIND_UNSIGNED = 7
    _KIND_CHAR = 8      # c_char: a 1-byte bytes or an int in -128..255
    _KIND_WCHAR = 9     # c_wchar: a 1-character str or an int

cdef dict _kinds = None   # ctypes type (or None) -> kind


@cython.freelist(8)
cdef class KernelArgs:
    """What one call's kernelParams need alive beyond the caller's frame: the
    packed values of a long list and the objects they came from, or the
    buffer the caller's array lives in."""
    cdef void* heap
    cdef object keep
    cdef Py_buffer view
    cdef bint has_view

    def __dealloc__(self):
        if self.has_view:
            PyBuffer_Release(&self.view)
        PyMem_Free(self.heap)


cdef object kernel_params_slow(object params, const char* name, void*** out, KernelArgSpace* space):
    """kernel_params' forms other than None and an exact int."""
    cdef KernelArgs args
    if type(params) is tuple:
        return _pack_kernel_params(<tuple>params, name, out, space)
    if PyObject_CheckBuffer(params):
        args = KernelArgs.__new__(KernelArgs)
        try:
            PyObject_GetBuffer(params, &args.view, PyBUF_SIMPLE)
        except (BufferError, ValueError) as exc:   # numpy refuses non-contiguous arrays with ValueError
            raise ValueError(f"{name.decode()}: the buffer of {_type_name(params)} cannot be used: {exc}") from None
        args.has_view = True
        out[0] = <void**>args.view.buf
        return args
    if isinstance(params, (list, dict, str, float)):
        raise TypeError(f"{name.decode()}: expected None, an int address, a buffer of argument addresses "
                        f"or a (values, types) tuple, got {_type_name(params)}")
    out[0] = <void**>as_address(params, name)
    return None


cdef object kernel_params_kept(object params, const char* name, void*** out):
    cdef KernelArgs owner
    if params is None or PyLong_CheckExact(params):
        return kernel_params(params, name, out, NULL)   # nothing packed: no space used
    owner = KernelArgs.__new__(KernelArgs)
    owner.heap = PyMem_Malloc(sizeof(KernelArgSpace))
    if owner.heap == NULL:
        raise MemoryError()
    # The one packer, into room owned by `owner` instead of a caller's frame.
    owner.keep = kernel_params(params, name, out, <KernelArgSpace*>owner.heap)
    return owner


# The same, as parallel C arrays for _kind_of's first look: a scan of a
# dozen pointers costs less than a dict look-up (the objects stay alive in
# _kinds' keys).
cdef enum:
    _MAX_KINDS = 16
cdef PyObject* _kind_types[_MAX_KINDS]
cdef int _kind_codes[_MAX_KINDS]
cdef int _nkinds = 0


cdef dict _ctypes_kinds():
    global _kinds, _nkinds
    import ctypes
    kinds = {None: _KIND_HANDLE, ctypes.c_float: _KIND_FLOAT, ctypes.c_double: _KIND_DOUBLE,
             ctypes.c_void_p: _KIND_POINTER, ctypes.c_bool: _KIND_BOOL,
             ctypes.c_char_p: _KIND_POINTER, ctypes.c_wchar_p: _KIND_POINTER}
    for t in (ctypes.c_byte, ctypes.c_short, ctypes.c_int, ctypes.c_long, ctypes.c_longlong):
        kinds[t] = _KIND_SIGNED | (ctypes.sizeof(t) << 8)
    for t in (ctypes.c_ubyte, ctypes.c_ushort, ctypes.c_uint, ctypes.c_ulong, ctypes.c_ulonglong):
        kinds[t] = _KIND_UNSIGNED | (ctypes.sizeof(t) << 8)
    # Last: the scan of the C arrays below meets the common kinds first.
    kinds[ctypes.c_char] = _KIND_CHAR | (1 << 8)
    kinds[ctypes.c_wchar] = _KIND_WCHAR | (ctypes.sizeof(ctypes.c_wchar) << 8)
    _nkinds = 0
    for t, code in kinds.items():
        if _nkinds < _MAX_KINDS:
            _kind_types[_nkinds] = <PyObject*>t
            _kind_codes[_nkinds] = code
            _nkinds += 1
    _kinds = kinds
    return kinds


cdef str _where(const char* name, Py_ssize_t i):
    return f"{name.decode()}[{i}]"


cdef int _kind_of(object kind, const char* name, Py_ssize_t i) except -1:
    cdef dict kinds = _kinds if _kinds is not None else _ctypes_kinds()
    cdef int k
    for k in range(_nkinds):
        if _kind_types[k] == <PyObject*>kind:
            return _kind_codes[k]
    cdef object code = kinds.get(kind)
    if code is not None:
        return code
    # A subclass of a ctypes scalar type packs as its base type; a ctypes
    # pointer type (POINTER(c_int)) as an address.
    if isinstance(kind, type):
        for base in (<type>kind).__mro__[1:]:
            code = kinds.get(base)
            if code is not None:
                return code
            if base.__name__ == "_Pointer" and base.__module__ in ("_ctypes", "ctypes"):
                return _KIND_POINTER
    raise TypeError(f"{_where(name, i)}: unsupported argument type {kind!r}: use a ctypes integer, float or "
                    f"character type, c_bool, a ctypes pointer type (c_void_p, c_char_p, POINTER(T)), or None "
                    f"for an enum member, a handle or a struct")


cdef int _store_integer(void* slot, object value, int code, const char* name, Py_ssize_t i) except -1:
    """value as a C integer of the kind's size and signedness, its low bytes
    written to slot (little-endian); the slow paths name `name[i]`."""
    cdef int size = code >> 8
    cdef bint signed = (code & 0xff) == _KIND_SIGNED
    cdef long long high
    cdef unsigned long long u
    cdef unsigned long long top = 0xffffffffffffffffULL >> (64 - 8 * size)
    if store_int(value, size, SIGN_SIGNED if signed else SIGN_UNSIGNED, slot):
        return 0
    # Not an exact int, or out of range: converted (int subclasses, __index__)
    # or refused with an error naming the argument.
    if signed:
        high = <long long>(top >> 1)
        u = <unsigned long long>signed_slow(value, _where(name, i).encode(), -high - 1, high)
    else:
        u = unsigned_slow(value, _where(name, i).encode(), top)
    memcpy(slot, &u, size)
    return 0


cdef inline double _arg_double(object value, const char* name, Py_ssize_t i) except? -1.0:
    if PyFloat_CheckExact(value):
        return PyFloat_AS_DOUBLE(value)
    return double_slow(value, _where(name, i).encode())


cdef inline void* _arg_address(object value, const char* name, Py_ssize_t i) except? NULL:
    cdef int overflow = 0
    cdef long long v
    if PyLong_CheckExact(value):
        v = PyLong_AsLongLongAndOverflow(value, &overflow)
        if overflow == 0 and v >= 0:
            return <void*><size_t>v
    if value is None:
        return NULL
    return address_slow(value, _where(name, i).encode())


# The classes _arg_storage tells apart, imported once, on first need.
cdef tuple _enum_types = None
cdef tuple _ctypes_aggregates = None


cdef int _import_arg_types() except -1:
    global _enum_types, _ctypes_aggregates
    import ctypes
    import enum
    from _cubind.enum import CEnum
    _enum_types = (CEnum, enum.Enum)
    _ctypes_aggregates = (ctypes.Structure, ctypes.Union, ctypes.Array)
    return 0


cdef void* _arg_storage(object value, unsigned long long* slot, const char* name, Py_ssize_t i) except? NULL:
    """Type None: where the argument's bytes are. A handle or a cubind struct
    lends its own storage (getPtr(), the common case, asked first); an enum
    member is its value at the enum's C size (4 bytes) in `slot`; a ctypes
    Structure/Union lends its buffer (the values tuple keeps it alive)."""
    get_ptr = getattr(value, "getPtr", None)
    if get_ptr is not None:
        return <void*><uintptr_t>get_ptr()
    if _enum_types is None:
        _import_arg_types()
    if isinstance(value, _enum_types) and isinstance(value, int):
        _store_integer(slot, value, (_KIND_SIGNED if value < 0 else _KIND_UNSIGNED) | (4 << 8), name, i)
        return slot
    if isinstance(value, _ctypes_aggregates):
        import ctypes
        return <void*><uintptr_t>ctypes.addressof(value)
    raise TypeError(f"{_where(name, i)}: type None needs an enum member, a handle or a struct "
                    f"(cubind's or ctypes'), got {_type_name(value)}")


cdef int _store_char(void* slot, object value, int code, const char* name, Py_ssize_t i) except -1:
    """c_char: bytes of length 1 or an int of one byte; c_wchar: a str of one
    character or an int."""
    cdef int size = code >> 8
    if _is_ctypes_scalar(value):  # c_char(b"Z"), c_wchar("x"): their value
        value = value.value
    if (code & 0xff) == _KIND_CHAR and isinstance(value, (bytes, bytearray)):
        if len(value) != 1:
            raise ValueError(f"{_where(name, i)}: c_char takes 1 byte, got {len(value)}")
        value = value[0]
    elif (code & 0xff) == _KIND_WCHAR and isinstance(value, str):
        if len(value) != 1:
            raise ValueError(f"{_where(name, i)}: c_wchar takes 1 character, got {len(value)}")
        value = ord(value)
    cdef long long low = -128 if size == 1 else -(<long long>1 << (8 * size - 1))
    cdef long long high = (<long long>1 << (8 * size)) - 1
    v = signed_slow(value, _where(name, i).encode(), low, high)
    cdef unsigned long long u = <unsigned long long><long long>v
    memcpy(slot, &u, size)
    return 0


cdef tuple _as_tuple(object seq, const char* name, str part):
    if not isinstance(seq, (list, tuple)):
        raise TypeError(f"{name.decode()}: {part} must be a tuple or list, got {_type_name(seq)}")
    return tuple(seq)


cdef Py_ssize_t _pack_int_run(tuple values, tuple types, Py_ssize_t i, Py_ssize_t n, int code, void** ptrs,
                               unsigned long long* slots, const char* name) except -1:
    """Packs the run of arguments from ``i`` whose type is ``types[i]`` (an
    integer kind); returns the index after it. A long list of ints (256 c_int)
    is one such run: each small int is stored as its 64-bit two's complement
    word cut to ``size`` bytes (the C value, little-endian) with no per-size
    branch; anything else takes store_int's path."""
    cdef int size = code >> 8
    cdef bint signed = (code & 0xff) == _KIND_SIGNED
    cdef long long low = -(1LL << (8 * size - 1)) if signed else 0
    cdef long long high = 0x7fffffffffffffffLL if size == 8 else (
        (1LL << (8 * size - 1)) - 1 if signed else (1LL << (8 * size)) - 1)
    cdef unsigned long long mask = 0xffffffffffffffffULL >> (64 - 8 * size)
    cdef PyObject* kind = PyTuple_GET_ITEM(types, i)
    cdef PyObject* value
    cdef long long v
    while True:
        value = PyTuple_GET_ITEM(values, i)
        ptrs[i] = &slots[i]
        if PyLong_CheckExact(<object>value) and long_is_compact(<object>value):
            v = long_compact_value(<object>value)
            if low <= v <= high:
                slots[i] = <unsigned long long>v & mask   # the bytes past `size` zero, as store_int leaves them
            else:
                slots[i] = 0
                _store_integer(&slots[i], <object>value, code, name, i)   # refused by name
        else:
            slots[i] = 0
            if not store_int(<object>value, size, SIGN_SIGNED if signed else SIGN_UNSIGNED, &slots[i]):
                _store_integer(&slots[i], <object>value, code, name, i)   # converted, or refused by name
        i += 1
        if i == n or PyTuple_GET_ITEM(types, i) != kind:
            return i


cdef object _pack_kernel_params(tuple params, const char* name, void*** out, KernelArgSpace* space):
    cdef KernelArgs args
    cdef Py_ssize_t n, i
    cdef void** ptrs
    cdef unsigned long long* slots
    cdef int code = 0
    cdef PyObject* prev = NULL
    cdef PyObject* value
    cdef PyObject* kind
    cdef object keep
    if len(params) != 2:
        raise TypeError(f"{name.decode()}: expected (values, types), got a tuple of {len(params)}")
    values, types = params
    if type(values) is not tuple:
        values = _as_tuple(values, name, "values")
    if type(types) is not tuple:
        types = _as_tuple(types, name, "types")
    n = len(<tuple>values)
    if len(<tuple>types) != n:
        raise ValueError(f"{name.decode()}: {n} values but {len(<tuple>types)} types")
    # Handle and struct values lend their own storage: the tuple holding them
    # (the caller's, or the copy of the caller's list) stays alive for the call.
    keep = values
    if n <= KERNEL_INLINE_ARGS:
        ptrs = space.ptrs
        slots = space.slots
    else:
        args = KernelArgs.__new__(KernelArgs)
        args.keep = values
        args.heap = PyMem_Malloc(n * (sizeof(void*) + sizeof(unsigned long long)))
        if args.heap == NULL:
            raise MemoryError()
        ptrs = <void**>args.heap
        slots = <unsigned long long*>(ptrs + n)
        keep = args
    # Borrowed references: both tuples hold their items for the call, and a
    # reference count taken and dropped per item costs more than the packing
    # (Python 3.12's 32-bit increment then 64-bit read of the same count
    # stalls store forwarding: 256 ints took twice C's time).
    i = 0
    while i < n:
        value = PyTuple_GET_ITEM(<tuple>values, i)
        kind = PyTuple_GET_ITEM(<tuple>types, i)
        if kind != prev:
            code = _kind_of(<object>kind, name, i)
            prev = kind
        if (code & 0xff) == _KIND_SIGNED or (code & 0xff) == _KIND_UNSIGNED:
            i = _pack_int_run(<tuple>values, <tuple>types, i, n, code, ptrs, slots, name)
            continue
        slots[i] = 0
        ptrs[i] = &slots[i]
        if code == _KIND_HANDLE:
            ptrs[i] = _arg_storage(<object>value, &slots[i], name, i)
        elif code == _KIND_FLOAT:
            (<float*>&slots[i])[0] = <float>_arg_double(<object>value, name, i)
        elif code == _KIND_DOUBLE:
            (<double*>&slots[i])[0] = _arg_double(<object>value, name, i)
        elif code == _KIND_POINTER:
            (<void**>&slots[i])[0] = _arg_address(<object>value, name, i)
        elif code == _KIND_BOOL:
            (<unsigned char*>&slots[i])[0] = 1 if <object>value else 0
        else:
            _store_char(&slots[i], <object>value, code, name, i)
        i += 1
    out[0] = ptrs
    return keep


cdef int set_type_attr(type cls, str name, object value) except -1:
    # Extension types refuse setattr; their dict takes the attribute (as the
    # class body would, where `sizeof` cannot be a name).
    (<dict>(<PyTypeObject*>cls).tp_dict)[name] = value
    PyType_Modified(<PyTypeObject*>cls)
    return 0
