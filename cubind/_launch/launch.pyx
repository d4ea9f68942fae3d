# cython: language_level=3, boundscheck=False, wraparound=False
"""The launch hot path: a kernel's packing plan and the calls into the driver.

A :class:`Plan` is made once per kernel from its parameter list (offsets and
kinds); a launch packs its arguments into a buffer on the C stack and calls
``cuLaunchKernel``/``cuLaunchKernelEx`` through the cimported C level with the
GIL released, as the 1:1 function does. Python floats and ints to float and
integer parameters are packed here; every other value goes through
cubind/_launch/args.py (numpy scalars, ctypes values, device arrays, structs), and
device arrays of a type seen before are read the way its cached pointer getter
reads them: in C for CuPy's, PyTorch's and ``__cuda_array_interface__``'s.
"""

from libc.float cimport FLT_MAX
from libc.math cimport fabs, isfinite
from libc.stdint cimport uintptr_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy
from cpython.dict cimport PyDict_GetItemWithError
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.object cimport Py_TYPE, PyObject, PyObject_TypeCheck, PyTypeObject
from cpython.tuple cimport PyTuple_GET_ITEM, PyTuple_GET_SIZE

cimport cuda.cdriver as cdrv
from _cubind.convert cimport SIGN_EITHER, SIGN_SIGNED, store_int

from cubind._launch import params as _params
from cubind._launch import args as _args
from cubind._launch.capsule import dlpack_address
from cubind._launch.args import POINTER_GETTERS, convert, count_error, describe
from cubind._core.errors import CUDAError
from cubind._core.handles import stream_handle
from cubind._core.driver import module as _driver_module
from cubind._core.handles import current as _current
from cubind._core.handles import open_blocks

cdef list _open_blocks = open_blocks  # `with stream:` blocks open: the thread-local is read only then

cdef enum:
    STACK_WORDS = 512   # 4 KiB of argument bytes on the C stack (the classic parameter limit)
    STACK_PARAMS = 64

# The parameter kinds the fast path compares, written once in
# cubind/_launch/params.py and read into C ints here at import: a comparison
# with them costs what one with a literal does. (A float's width is
# Param.float_width, copied per parameter into the plan.)
cdef int K_INT = _params.INT
cdef int K_ANY = _params.ANY

cdef int INVALID_CONTEXT = 201
cdef object _MISSING = object()
cdef object _StreamType = None


class SlotAddressed:
    """The base of a device-array type whose address the launch path reads
    from its slots, ``_mem.ptr + _offset`` (``_mem.ptr`` None once freed:
    the slow path then says so), instead of calling a property per argument.
    A higher layer's array class (``cubind.Array``) derives from it and
    declares those two slots; the launch path needs to know nothing of it."""

    __slots__ = ()


# A C pointer to it: PyObject_TypeCheck walks the type's MRO only, where
# isinstance() would also look up __class__ on every other object (about
# 100 ns per __cuda_array_interface__ argument).
cdef PyTypeObject* _SlotAddressed = <PyTypeObject*>SlotAddressed

# args.py's pointer getters, told apart by identity: a type's entry says
# which way its objects' pointer is read, and the read is done here.
cdef dict _pointer_getters = POINTER_GETTERS
cdef object _PTR = _args.PTR
cdef object _DATA_PTR = _args.DATA_PTR
cdef object _TORCH_POINTER = _args.torch_pointer
cdef object _CAI_POINTER = _args.cai_pointer
cdef object _DLPACK_POINTER = _args.dlpack_pointer

# The attribute names, made once (interned: the type's attribute cache hits).
cdef object _S_DATA = "data"
cdef object _S_PTR = "ptr"
cdef object _S_IS_CUDA = "is_cuda"
cdef object _S_DATA_PTR = "data_ptr"
cdef object _S_INTERFACE = "__cuda_array_interface__"
cdef object _S_STREAM = "stream"

# The C API's raw forms: a new reference (or a borrowed one, for the dict)
# or NULL with the error set, which the packer clears for the slow path to
# raise again, naming the parameter. A try/except around Cython's reads cost
# about 45 instructions an array (the thread state fetched, the handled
# exception saved and restored).
cdef extern from *:
    """
    /* PyObject_GetAttr without its call: ~20 instructions a read. */
    static inline PyObject *cubind_get_attr(PyObject *o, PyObject *name) {
        getattrofunc get = Py_TYPE(o)->tp_getattro;
        return get != NULL ? get(o, name) : PyObject_GetAttr(o, name);
    }
    """
    PyObject* _get_attr "cubind_get_attr"(PyObject* o, PyObject* name) noexcept
cdef extern from "Python.h":
    PyObject* _call_method "PyObject_CallMethodNoArgs"(PyObject* o, PyObject* name) noexcept
    PyObject* _call "PyObject_CallOneArg"(PyObject* f, PyObject* arg) noexcept
    PyObject* _dict_item "PyDict_GetItemWithError"(PyObject* d, PyObject* key) noexcept
    int _truth "PyObject_IsTrue"(PyObject* o) noexcept
    void _incref "Py_INCREF"(PyObject* o) noexcept
    void _decref "Py_DECREF"(PyObject* o) noexcept
    void _xdecref "Py_XDECREF"(PyObject* o) noexcept
    PyObject* _error_occurred "PyErr_Occurred"() noexcept
    int _error_matches "PyErr_ExceptionMatches"(PyObject* exc) noexcept
    void _error_clear "PyErr_Clear"() noexcept
    PyObject* _Exception "PyExc_Exception"


cdef PyObject* _read_address(object getter, PyObject* value, PyObject** producer) noexcept:
    """``value``'s device address, read as ``getter`` (its type's entry in
    POINTER_GETTERS) reads it, anew each call: a foreign array's pointer may
    change. A new reference, None for a CPU tensor and an interface of
    another shape (the slow path reads them), or NULL with the read's error set.
    An interface's "stream" other than None is left in ``producer`` (a new reference)."""
    cdef PyObject* inner
    cdef PyObject* address
    cdef int on_device
    if getter is _DATA_PTR:
        inner = _get_attr(value, <PyObject*>_S_DATA)
        if inner == NULL:
            return NULL
        address = _get_attr(inner, <PyObject*>_S_PTR)
        _decref(inner)
        return address
    if getter is _TORCH_POINTER:
        inner = _get_attr(value, <PyObject*>_S_IS_CUDA)
        if inner == NULL:
            return NULL
        on_device = _truth(inner)
        _decref(inner)
        if on_device == 1:
            return _call_method(value, <PyObject*>_S_DATA_PTR)
        return NULL if on_device < 0 else _new_none()
    if getter is _CAI_POINTER:
        inner = _get_attr(value, <PyObject*>_S_INTERFACE)
        if inner == NULL:
            return NULL
        address = _interface_pointer(inner, producer)
        _decref(inner)
        return address
    if getter is _PTR:
        return _get_attr(value, <PyObject*>_S_PTR)
    return _call(<PyObject*>getter, value)


cdef inline PyObject* _new_none() noexcept:
    _incref(<PyObject*>None)
    return <PyObject*>None


cdef PyObject* _interface_pointer(PyObject* interface, PyObject** producer) noexcept:
    """The first item of an interface dict's "data" tuple (a new reference);
    None where the dict or the tuple is not exactly one (args.cai_pointer
    reads those, or says what is missing); NULL with the error set. Its
    "stream", where not None, goes to ``producer`` (a new reference)."""
    cdef PyObject* data
    cdef PyObject* stream
    if type(<object>interface) is not dict:
        return _new_none()
    stream = _dict_item(interface, <PyObject*>_S_STREAM)
    if stream == NULL:
        if _error_occurred() != NULL:
            return NULL
    elif stream != <PyObject*>None:
        _incref(stream)
        producer[0] = stream
    data = _dict_item(interface, <PyObject*>_S_DATA)
    if data == NULL:
        return NULL if _error_occurred() != NULL else _new_none()
    if type(<object>data) is not tuple or PyTuple_GET_SIZE(<object>data) < 1:
        return _new_none()
    data = PyTuple_GET_ITEM(<object>data, 0)
    _incref(data)
    return data


cdef int _forget_read_error() except -1:
    """Clears a failed read's error for the slow path to raise it again,
    naming the parameter; one that is no Exception (KeyboardInterrupt) stays."""
    if not _error_matches(_Exception):
        return -1
    _error_clear()
    return 0


cdef int _add_wait(PyObject** waits, Py_ssize_t i, object producer) except -1:
    """Appends (i, producer) to the list at ``waits``, made at the first."""
    cdef list found
    if waits[0] == NULL:
        found = [(i, producer)]
        _incref(<PyObject*>found)
        waits[0] = <PyObject*>found
    else:
        (<list>waits[0]).append((i, producer))
    return 0


cdef int _order_after(Plan plan, PyObject** waits, uintptr_t stream) except -1:
    """Makes the launch's ``stream`` wait for the producers' streams found
    while packing, and lets go of their list."""
    cdef object found = <object>waits[0]
    waits[0] = NULL
    _decref(<PyObject*>found)
    _args.order_producers(plan.name, plan.params, found, stream)
    return 0


cdef class Plan:
    """How to pack one kernel's arguments: per parameter its kind, size,
    signedness and offset in the argument buffer (8-byte slots, 16-aligned
    for large structs)."""

    cdef readonly int n
    cdef readonly Py_ssize_t total
    cdef readonly object params
    cdef readonly object name
    cdef int* kinds
    cdef int* sizes
    cdef int* float_widths  # Param.float_width: a Python float's bytes here, 0 for none
    cdef int* signs
    cdef Py_ssize_t* offsets
    # Per parameter, the device-array type last met there and its getter
    # (POINTER_GETTERS' entry, which args.py never changes once made), both
    # held, or NULL: a launch passing the same types again skips the dict's
    # lookup (~75 instructions an array). Types only, never an array: its
    # pointer is read anew each time.
    cdef PyObject** seen_types
    cdef PyObject** seen_getters

    def __cinit__(self, name, params):
        cdef Py_ssize_t i, offset = 0, align
        self.name = name
        self.params = tuple(params)
        self.n = len(self.params)
        count = self.n if self.n else 1
        self.kinds = <int*>malloc(count * sizeof(int))
        self.sizes = <int*>malloc(count * sizeof(int))
        self.float_widths = <int*>malloc(count * sizeof(int))
        self.signs = <int*>malloc(count * sizeof(int))
        self.offsets = <Py_ssize_t*>malloc(count * sizeof(Py_ssize_t))
        self.seen_types = <PyObject**>calloc(count, sizeof(PyObject*))
        self.seen_getters = <PyObject**>calloc(count, sizeof(PyObject*))
        if not (self.kinds and self.sizes and self.float_widths and self.signs and self.offsets and self.seen_types
                and self.seen_getters):
            raise MemoryError()
        for i, param in enumerate(self.params):
            self.kinds[i] = param.kind
            self.sizes[i] = param.size
            self.float_widths[i] = param.float_width
            self.signs[i] = param.signed
            align = 16 if param.size > 8 else 8
            offset = (offset + align - 1) // align * align
            self.offsets[i] = offset
            offset += max(param.size, 8)
        self.total = offset

    def __dealloc__(self):
        cdef Py_ssize_t i
        if self.seen_types and self.seen_getters:
            for i in range(self.n):
                _xdecref(self.seen_types[i])
                _xdecref(self.seen_getters[i])
        free(self.kinds)
        free(self.sizes)
        free(self.float_widths)
        free(self.signs)
        free(self.offsets)
        free(self.seen_types)
        free(self.seen_getters)

    cdef object pointer_getter(self, Py_ssize_t i, object value):
        """The pointer getter of ``value``'s type (None: not known yet), kept
        for parameter ``i`` where it is not the type last met there."""
        cdef PyObject* t = <PyObject*>Py_TYPE(value)
        cdef PyObject* found
        cdef PyObject* old_type = self.seen_types[i]
        cdef PyObject* old_getter = self.seen_getters[i]
        if t == old_type:
            return <object>old_getter
        found = PyDict_GetItemWithError(_pointer_getters, <object>t)
        if found == NULL:
            return None
        _incref(t)
        _incref(found)
        self.seen_types[i] = t
        self.seen_getters[i] = found
        _xdecref(old_type)  # POINTER_GETTERS holds both: no finalizer runs here
        _xdecref(old_getter)
        return <object>found

    cdef int pack(self, tuple args, Py_ssize_t start, char* buf, void** ptrs, PyObject** waits=NULL,
                  uintptr_t stream=0, bint launched=False) except -1:
        """Packs ``args[start:]``. Where ``waits`` is given, the streams that
        arrays' ``__cuda_array_interface__`` names (its "stream") are
        appended to the list there, made at the first, as (parameter index,
        stream): the launch orders itself after them (``order_producers``).
        ``stream``: the launch's (a DLPack producer orders its work before
        it), where ``launched``; else none (a graph node's arguments)."""
        cdef Py_ssize_t i
        cdef int kind, size, width
        cdef char* p
        cdef double d
        cdef object value, address
        cdef int found
        if len(args) - start != self.n:
            raise count_error(self.name, self.params, len(args) - start)
        for i in range(self.n):
            p = buf + self.offsets[i]
            ptrs[i] = p
            value = <object>PyTuple_GET_ITEM(args, i + start)
            kind = self.kinds[i]
            size = self.sizes[i]
            if type(value) is float:
                width = self.float_widths[i]
                if width == 4:
                    d = PyFloat_AS_DOUBLE(value)
                    if fabs(d) > FLT_MAX and isfinite(d):
                        convert(self.name, self.params[i], value)  # raises the OverflowError
                    (<float*>p)[0] = <float>d
                    continue
                if width == 8:
                    (<double*>p)[0] = PyFloat_AS_DOUBLE(value)
                    continue
            elif type(value) is int:
                if kind == K_INT or kind == K_ANY:
                    self.pack_int(i, value, p)
                    continue
            elif PyObject_TypeCheck(value, _SlotAddressed) and size == 8 and (kind == K_INT or kind == K_ANY):
                address = value._mem.ptr
                if address is not None:  # None: freed, and the slow path says so
                    self.pack_int(i, address + value._offset, p)
                    continue
            elif size == 8 and (kind == K_INT or kind == K_ANY):
                found = self.pack_pointer(i, value, p, waits, stream, launched)
                if found == 2:  # a type not seen yet: learned now, then read as the next one is
                    if _args.learn_pointer_getter(value) is None:
                        self.pack_slow(i, value, p, None)  # no device array: convert need not look again
                        continue
                    found = self.pack_pointer(i, value, p, waits, stream, launched)
                if found == 1:
                    continue
            self.pack_slow(i, value, p)
        return 0

    cdef int pack_pointer(self, Py_ssize_t i, object value, char* p, PyObject** waits, uintptr_t stream,
                          bint launched) except -1:
        """Packs the device address of ``value``, an array of a type seen
        before (1), or leaves it to the slow path: a type not seen yet (2), a
        failed read, anything but an int (0)."""
        cdef object address
        cdef PyObject* raw
        cdef PyObject* producer = NULL
        cdef object getter = self.pointer_getter(i, value)  # held: the read may run code that forgets it
        if getter is None:
            return 2
        if getter is _DLPACK_POINTER:
            try:
                address = dlpack_address(value, (stream or _args.LEGACY_STREAM) if launched else _args.NO_STREAM)
            except (AttributeError, TypeError, ValueError, BufferError, RuntimeError) as exc:
                raise TypeError(f"{describe(self.name, self.params[i])}: {_args.type_name(value)} is not device "
                                f"memory ({exc})") from exc
            self.pack_int(i, address, p)
            return 1
        raw = _read_address(getter, <PyObject*>value, &producer)
        if producer != NULL:
            if waits != NULL and raw != NULL:
                _add_wait(waits, i, <object>producer)
            _decref(producer)
        if raw == NULL:
            return _forget_read_error()
        address = <object>raw
        _decref(raw)
        if getter is _CAI_POINTER and address is None and waits != NULL:
            self.note_stream(i, value, waits)  # an interface not a dict: the slow path reads its pointer
        if type(address) is not int:  # the slow path converts it or says why
            return 0
        self.pack_int(i, address, p)
        return 1

    cdef int note_stream(self, Py_ssize_t i, object value, PyObject** waits) except -1:
        """Adds the "stream" of ``value``'s interface, read in Python, to ``waits``."""
        producer = _args.cai_stream(value)
        if producer is not None:
            _add_wait(waits, i, producer)
        return 0

    cdef int pack_int(self, Py_ssize_t i, object value, char* p) except -1:
        # The 1:1 layer's writer (_cubind.convert.store_int). Unsigned
        # parameters take negative values too: PTX says .u32 for a C int.
        if store_int(value, self.sizes[i], SIGN_SIGNED if self.signs[i] else SIGN_EITHER, p):
            return 0
        return self.pack_slow(i, value, p)  # converts (2**63 and above for .u64) or raises naming the parameter

    cdef int pack_slow(self, Py_ssize_t i, object value, char* p, object getter=_args.UNSEEN) except -1:
        cdef bytes raw = convert(self.name, self.params[i], value, getter)
        memcpy(p, <const char*>raw, self.sizes[i])
        return 0

    def pack_to_slots(self, uintptr_t slots, *args):
        """Packs ``args`` into the argument slots a ``void*[]`` at ``slots``
        points to, each at least its parameter's size (a graph kernel node's:
        ``KernelNode.set_args``), with no bytes object per parameter."""
        cdef unsigned long long stack_words[STACK_WORDS]
        cdef void* stack_ptrs[STACK_PARAMS]
        cdef char* buf = <char*>stack_words
        cdef void** ptrs = stack_ptrs
        cdef void** dest = <void**>slots
        cdef Py_ssize_t i
        if slots == 0:
            raise ValueError("slots: a null address")
        _heap_buffers(self, &buf, &ptrs)
        try:
            self.pack(args, 0, buf, ptrs)
            for i in range(self.n):
                memcpy(dest[i], ptrs[i], self.sizes[i])
        finally:
            if buf != <char*>stack_words:
                free(buf)
                free(ptrs)

    def pack_bytes(self, *args):
        """The packed argument slots as a list of bytes (for tests and tools)."""
        cdef char* buf = <char*>malloc(self.total if self.total else 8)
        cdef void** ptrs = <void**>malloc((self.n if self.n else 1) * sizeof(void*))
        try:
            self.pack(args, 0, buf, ptrs)
            return [(<char*>ptrs[i])[:self.sizes[i]] for i in range(self.n)]
        finally:
            free(buf)
            free(ptrs)


cdef int _dim(object value, str what, int index, unsigned int* out) except -1:
    if type(value) is not int:
        try:
            value = value.__index__()
        except AttributeError:
            raise TypeError(f"{_where(what, index)}: expected an int, not {type(value).__name__}") from None
    if value < 1 or value > 0xFFFFFFFF:
        if value < 1:
            raise ValueError(f"{_where(what, index)}: each dimension must be at least 1, got {value}")
        raise OverflowError(f"{_where(what, index)}: {value} does not fit an unsigned 32-bit dimension")
    out[0] = <unsigned int>value
    return 0


cdef str _where(str what, int index):
    return what if index < 0 else f"{what}[{index}]"


cdef int _dim3(object value, str what, unsigned int* out) except -1:
    cdef Py_ssize_t n, i
    out[0] = out[1] = out[2] = 1
    if type(value) is int:
        return _dim(value, what, -1, out)
    if type(value) is tuple or isinstance(value, (tuple, list)):
        n = len(value)
        if n < 1 or n > 3:
            raise ValueError(f"{what}: expected 1 to 3 dimensions, got {n}")
        for i in range(n):
            _dim(value[i], what, i, out + i)
        return 0
    return _dim(value, what, -1, out)


cdef uintptr_t _stream_value(object stream) except? 0:
    global _StreamType
    if stream is None:
        if not _open_blocks:
            return 0
        stream = _current.top  # the innermost `with stream:` of this thread
        if stream is None:
            return 0
    if type(stream) is int:
        return <uintptr_t>stream
    if _StreamType is None:
        from cubind._core.device_stream_event import Stream
        _StreamType = Stream
    if type(stream) is _StreamType:
        raw = stream._raw
        if raw is None:
            raise ValueError("stream: the stream is closed")
        return <uintptr_t>raw
    return <uintptr_t>stream_handle(stream, "stream")


cdef long long _shared(object value) except -1:
    if type(value) is not int:
        try:
            value = value.__index__()
        except AttributeError:
            raise TypeError(f"shared_mem: expected an int, not {type(value).__name__}") from None
    if value < 0 or value > 0xFFFFFFFF:
        raise OverflowError(f"shared_mem: {value} is out of range for an unsigned 32-bit byte count")
    return value


cdef int _options(dict options, uintptr_t* hstream, unsigned int* smem, name) except -1:
    cdef Py_ssize_t known = 0
    value = options.get("stream", _MISSING)
    if value is not _MISSING:
        hstream[0] = _stream_value(value)
        known += 1
    value = options.get("shared_mem", _MISSING)
    if value is not _MISSING:
        smem[0] = <unsigned int>_shared(value)
        known += 1
    if known != len(options):
        extra = sorted(set(options) - {"stream", "shared_mem"})
        raise TypeError(f"{name}: unexpected keyword argument {extra[0]!r} (a launch takes stream= and shared_mem=)")
    return 0


cdef _raise(int err, str call):
    cuda = _driver_module()
    raise CUDAError(cuda.CUresult(err), call)


cdef int _heap_buffers(Plan plan, char** buf, void*** ptrs) except -1:
    """Moves the argument buffers to the heap where the plan outgrows the
    caller's stack arrays (which ``*buf``/``*ptrs`` point at until then)."""
    if plan.total <= STACK_WORDS * 8 and plan.n <= STACK_PARAMS:
        return 0
    buf[0] = <char*>malloc(plan.total)
    ptrs[0] = <void**>malloc(plan.n * sizeof(void*))
    if buf[0] == NULL or ptrs[0] == NULL:
        free(buf[0])
        free(ptrs[0])
        raise MemoryError()
    return 0


cdef class KernelBase:
    """The launchable part of :class:`cubind.Kernel`: the driver handle and
    the packing plan. ``kernel(grid, block, *args, stream=None, shared_mem=0)``
    launches it."""

    cdef uintptr_t _func
    cdef Plan _plan
    cdef bint _closed

    def _set_launch(self, uintptr_t func, Plan plan):
        self._func = func
        self._plan = plan
        self._closed = False

    def _invalidate(self):
        self._closed = True

    @property
    def plan(self):
        """The packing plan made from the kernel's parameter list: per parameter its kind, size and offset."""
        return self._plan

    cdef Plan _usable_plan(self):
        """The packing plan, once the kernel is known launchable."""
        if self._plan is None:
            raise TypeError("kernel: not made by Module.get_kernel")
        if self._closed:
            raise ValueError(f"{self._plan.name}: its module was closed")
        return self._plan

    def __call__(self, *args, **options):
        # (grid, block, *args, stream=None, shared_mem=0), parsed by hand:
        # Cython's parsing of keyword-only arguments after *args cost 200 ns.
        cdef unsigned int g[3]
        cdef unsigned int b[3]
        cdef unsigned int smem = 0
        cdef uintptr_t hstream = 0
        cdef Plan plan = self._usable_plan()
        if len(args) < 2:
            raise TypeError(f"{plan.name}: a launch takes grid and block first: kernel(grid, block, *args)")
        if options:
            _options(options, &hstream, &smem, plan.name)
        if _open_blocks and _current.top is not None and "stream" not in options:
            hstream = _stream_value(None)
        _dim3(<object>PyTuple_GET_ITEM(args, 0), "grid", g)
        _dim3(<object>PyTuple_GET_ITEM(args, 1), "block", b)
        _pack_and_launch(plan, self._func, args, 2, hstream, g, b, smem, NULL)

    cdef _launch_ex(self, uintptr_t config_addr, stream, tuple args):
        """cuLaunchKernelEx with a copy of the CUlaunchConfig at ``config_addr``
        (owned by the caller's LaunchConfig) and ``stream``."""
        cdef cdrv.CUlaunchConfig cfg
        cdef Plan plan = self._usable_plan()
        cfg = (<cdrv.CUlaunchConfig*>config_addr)[0]
        cfg.hStream = <cdrv.CUstream>_stream_value(stream)
        _pack_and_launch(plan, self._func, args, 0, <uintptr_t>cfg.hStream, NULL, NULL, 0, &cfg)


cdef inline cdrv.CUresult _driver_launch(uintptr_t func, const unsigned int* g, const unsigned int* b,
                                         unsigned int smem, uintptr_t stream, cdrv.CUlaunchConfig* cfg,
                                         void** ptrs) noexcept nogil:
    """One launch: cuLaunchKernelEx where there is a ``cfg`` (its dimensions,
    shared bytes and stream), else cuLaunchKernel with the rest."""
    if cfg != NULL:
        return cdrv.cuLaunchKernelEx(cfg, <cdrv.CUfunction>func, ptrs, NULL)
    return cdrv.cuLaunchKernel(<cdrv.CUfunction>func, g[0], g[1], g[2], b[0], b[1], b[2], smem,
                               <cdrv.CUstream>stream, ptrs, NULL)


cdef int _pack_and_launch(Plan plan, uintptr_t func, tuple args, Py_ssize_t start, uintptr_t stream,
                          const unsigned int* g, const unsigned int* b, unsigned int smem,
                          cdrv.CUlaunchConfig* cfg) except -1:
    """Packs ``args[start:]`` by ``plan`` and launches ``func`` on ``stream``
    (also ``cfg.hStream`` where ``cfg`` is given), after the producers'
    streams the arguments name: ``kernel(...)`` and ``launch(...)`` share
    it, so the buffers, the retry and the clean-up are written once. A C
    function with the stack buffers here: no Python object per launch."""
    cdef unsigned long long stack_words[STACK_WORDS]
    cdef void* stack_ptrs[STACK_PARAMS]
    cdef char* buf = <char*>stack_words
    cdef void** ptrs = stack_ptrs
    cdef void** params
    cdef PyObject* waits = NULL
    cdef cdrv.CUresult err
    cdef int attempt
    _heap_buffers(plan, &buf, &ptrs)
    try:
        plan.pack(args, start, buf, ptrs, &waits, stream, True)
        if waits != NULL:
            _order_after(plan, &waits, stream)
        params = ptrs if plan.n else NULL
        for attempt in range(2):
            with nogil:
                err = _driver_launch(func, g, b, smem, stream, cfg, params)
            if err != INVALID_CONTEXT or attempt:
                break
            _make_context()  # the first launch in a thread with no context: use the device's
        if err != 0:
            _raise(err, "cuLaunchKernel" if cfg == NULL else "cuLaunchKernelEx")
    finally:
        _xdecref(waits)  # packing failed after finding a producer's stream
        if buf != <char*>stack_words:
            free(buf)
            free(ptrs)
    return 0


def launch(stream, config, kernel, *args):
    """Launches ``kernel`` on ``stream`` (any stream; None: this thread's
    current stream, else the default one) with ``config`` (a
    :class:`cubind.LaunchConfig`) and ``args``, typed as ``kernel(...)``
    types them, through ``cuLaunchKernelEx``: cuda.core's
    ``launch(stream, config, kernel, *args)``."""
    try:
        address = config._addr
    except AttributeError:
        if hasattr(stream, "_addr"):
            raise TypeError("launch(stream, config, kernel, *args): the stream comes first, as in cuda.core "
                            "(launch(config, kernel, ...) with the stream in LaunchConfig is gone)") from None
        raise TypeError(f"config: expected a cubind.LaunchConfig, not {type(config).__name__}") from None
    if not isinstance(kernel, KernelBase):
        raise TypeError(f"kernel: expected a cubind.Kernel, not {type(kernel).__name__}")
    (<KernelBase>kernel)._launch_ex(address, stream, args)


def _make_context():
    from cubind._core.device_stream_event import ensure_context
    ensure_context()


def shared_mem_bytes(value):
    """``value`` (dynamic shared memory bytes) as an int, checked as a launch checks it."""
    return _shared(value)


def dims(value, what):
    """``value`` (an int or 1 to 3 ints) as a 3-tuple, checked as a launch checks it."""
    cdef unsigned int out[3]
    _dim3(value, what, out)
    return (out[0], out[1], out[2])
