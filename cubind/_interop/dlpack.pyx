# cython: language_level=3
"""DLPack capsules: made from cubind arrays, and consumed from other libraries.

A capsule named ``dltensor`` (DLPack 0.x) or ``dltensor_versioned`` (1.x)
holds a ``DLManagedTensor[Versioned]`` whose deleter the consumer calls when
it is done with the memory. A consumer renames the capsule ``used_dltensor``
(``used_dltensor_versioned``) so that the capsule's own destructor, which
calls the deleter for a capsule nobody consumed, does not call it twice.
The structs are declared as dlpack.h lays them out in
cubind/_launch/dlpack_abi.pxd (the launch path reads capsules too).
"""

from cpython.pycapsule cimport (PyCapsule_GetPointer, PyCapsule_IsValid, PyCapsule_New,
                                PyCapsule_SetName)
from cpython.ref cimport Py_DECREF, Py_INCREF, PyObject
from libc.stdint cimport int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
from libc.stdlib cimport free, malloc

from cubind._launch.dlpack_abi cimport DLManagedTensor, DLManagedTensorVersioned, DLTensor


cdef extern from "Python.h":
    int Py_IsInitialized() nogil


# The DLPack version cubind's structs follow (dlpack.h 1.1; 1.0 and 1.1 share
# the layout).
DLPACK_MAJOR = 1
DLPACK_MINOR = 1
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1

cdef const char* _NAME = b"dltensor"
cdef const char* _USED = b"used_dltensor"
cdef const char* _NAME_V = b"dltensor_versioned"
cdef const char* _USED_V = b"used_dltensor_versioned"


# -- producing ------------------------------------------------------------------------

cdef void _drop_owner(void* owner) noexcept nogil:
    # Consumers may call the deleter from any thread, with or without the
    # GIL; after the interpreter has finalized the reference is left as is.
    if owner != NULL and Py_IsInitialized():
        with gil:
            Py_DECREF(<object>owner)


cdef void _delete_managed(DLManagedTensor* self) noexcept nogil:
    if self != NULL:
        _drop_owner(self.manager_ctx)
        free(self)


cdef void _delete_versioned(DLManagedTensorVersioned* self) noexcept nogil:
    if self != NULL:
        _drop_owner(self.manager_ctx)
        free(self)


cdef void _capsule_destructor(object capsule) noexcept:
    # A capsule nobody consumed still owns its tensor.
    cdef DLManagedTensor* managed
    if PyCapsule_IsValid(capsule, _NAME):
        managed = <DLManagedTensor*>PyCapsule_GetPointer(capsule, _NAME)
        if managed.deleter != NULL:
            managed.deleter(managed)


cdef void _capsule_destructor_versioned(object capsule) noexcept:
    cdef DLManagedTensorVersioned* managed
    if PyCapsule_IsValid(capsule, _NAME_V):
        managed = <DLManagedTensorVersioned*>PyCapsule_GetPointer(capsule, _NAME_V)
        if managed.deleter != NULL:
            managed.deleter(managed)


cdef void _fill(DLTensor* t, size_t data, int device_type, int device_id, tuple shape, tuple strides,
                int code, int bits, int64_t* dims):
    cdef Py_ssize_t ndim = len(shape)
    cdef Py_ssize_t i
    t.data = <void*>data
    t.device.device_type = device_type
    t.device.device_id = device_id
    t.ndim = <int32_t>ndim
    t.dtype.code = <uint8_t>code
    t.dtype.bits = <uint8_t>bits
    t.dtype.lanes = 1
    t.shape = dims
    t.strides = dims + ndim
    t.byte_offset = 0
    for i in range(ndim):
        dims[i] = shape[i]
        dims[ndim + i] = strides[i]


def make_capsule(owner, size_t data, int device_type, int device_id, tuple shape, tuple strides,
                 int code, int bits, versioned=False, int minor=DLPACK_MINOR, uint64_t flags=0):
    """A capsule for the tensor at ``data`` (``strides`` in elements) that
    keeps ``owner`` alive until the consumer calls the deleter, or until the
    capsule is collected unconsumed."""
    if len(shape) != len(strides):
        raise ValueError("shape and strides differ in length")
    cdef Py_ssize_t ndim = len(shape)
    cdef size_t dims_bytes = 2 * <size_t>ndim * sizeof(int64_t)
    cdef DLManagedTensor* managed
    cdef DLManagedTensorVersioned* managed_v
    if versioned:
        managed_v = <DLManagedTensorVersioned*>malloc(sizeof(DLManagedTensorVersioned) + dims_bytes)
        if managed_v == NULL:
            raise MemoryError()
        managed_v.version.major = DLPACK_MAJOR
        managed_v.version.minor = minor
        managed_v.flags = flags
        managed_v.deleter = _delete_versioned
        _fill(&managed_v.dl_tensor, data, device_type, device_id, shape, strides, code, bits,
              <int64_t*>(managed_v + 1))
        managed_v.manager_ctx = <void*>owner
        Py_INCREF(owner)
        try:
            return PyCapsule_New(managed_v, _NAME_V, _capsule_destructor_versioned)
        except BaseException:
            _delete_versioned(managed_v)
            raise
    managed = <DLManagedTensor*>malloc(sizeof(DLManagedTensor) + dims_bytes)
    if managed == NULL:
        raise MemoryError()
    managed.deleter = _delete_managed
    _fill(&managed.dl_tensor, data, device_type, device_id, shape, strides, code, bits,
          <int64_t*>(managed + 1))
    managed.manager_ctx = <void*>owner
    Py_INCREF(owner)
    try:
        return PyCapsule_New(managed, _NAME, _capsule_destructor)
    except BaseException:
        _delete_managed(managed)
        raise


# -- consuming ------------------------------------------------------------------------

cdef class DLPackOwner:
    """The producer's tensor, taken from a capsule: its memory stays valid
    until :meth:`release` or until this object goes, which call the
    producer's deleter once."""

    cdef DLManagedTensor* _managed
    cdef DLManagedTensorVersioned* _managed_v
    cdef readonly bint versioned

    def __cinit__(self):
        self._managed = NULL
        self._managed_v = NULL

    def release(self):
        """Calls the producer's deleter (once)."""
        cdef DLManagedTensor* managed = self._managed
        cdef DLManagedTensorVersioned* managed_v = self._managed_v
        self._managed = NULL
        self._managed_v = NULL
        if managed != NULL and managed.deleter != NULL:
            managed.deleter(managed)
        if managed_v != NULL and managed_v.deleter != NULL:
            managed_v.deleter(managed_v)

    @property
    def alive(self):
        """Whether the deleter has yet to be called."""
        return self._managed != NULL or self._managed_v != NULL

    def __dealloc__(self):
        self.release()


cdef dict _describe(DLTensor* t):
    cdef Py_ssize_t i
    cdef Py_ssize_t ndim = t.ndim
    if ndim < 0:
        raise ValueError(f"DLPack tensor has a negative ndim ({ndim})")
    if ndim > 0 and t.shape == NULL:
        raise ValueError("DLPack tensor has no shape")
    shape = tuple(t.shape[i] for i in range(ndim))
    strides = None if t.strides == NULL else tuple(t.strides[i] for i in range(ndim))
    return {
        "data": <size_t>t.data + t.byte_offset,
        "device_type": t.device.device_type,
        "device_id": t.device.device_id,
        "shape": shape,
        "strides": strides,
        "code": t.dtype.code,
        "bits": t.dtype.bits,
        "lanes": t.dtype.lanes,
    }


def consume_capsule(capsule):
    """Takes the tensor out of a DLPack capsule: ``(owner, description)``.

    The capsule is renamed ``used_...`` only once the tensor was read: a
    capsule refused here (an unsupported version) keeps its name, and its
    destructor still calls the producer's deleter. ``description`` has the
    data address (``byte_offset`` added), the device, shape, strides (in
    elements, ``None`` for compact row-major), the data type's code, bits and
    lanes, and for DLPack 1.x the version and flags.
    """
    cdef DLManagedTensor* managed
    cdef DLManagedTensorVersioned* managed_v
    cdef DLPackOwner owner = DLPackOwner.__new__(DLPackOwner)
    if PyCapsule_IsValid(capsule, _NAME_V):
        managed_v = <DLManagedTensorVersioned*>PyCapsule_GetPointer(capsule, _NAME_V)
        if managed_v.version.major != DLPACK_MAJOR:
            raise BufferError(f"DLPack version {managed_v.version.major}.{managed_v.version.minor} is not "
                              f"supported (cubind reads {DLPACK_MAJOR}.x)")
        info = _describe(&managed_v.dl_tensor)
        info["version"] = (managed_v.version.major, managed_v.version.minor)
        info["flags"] = managed_v.flags
        PyCapsule_SetName(capsule, _USED_V)
        owner._managed_v = managed_v
        owner.versioned = True
        return owner, info
    if PyCapsule_IsValid(capsule, _NAME):
        managed = <DLManagedTensor*>PyCapsule_GetPointer(capsule, _NAME)
        info = _describe(&managed.dl_tensor)
        info["version"] = (0, 0)
        info["flags"] = 0
        PyCapsule_SetName(capsule, _USED)
        owner._managed = managed
        return owner, info
    if PyCapsule_IsValid(capsule, _USED) or PyCapsule_IsValid(capsule, _USED_V):
        raise ValueError("this DLPack capsule was already consumed (a capsule can be used once)")
    raise TypeError(f"expected a DLPack capsule ('dltensor' or 'dltensor_versioned'), "
                    f"not {type(capsule).__name__}")


def capsule_name(capsule):
    """The capsule's name, for tests: which of the four DLPack names it has,
    or ``None``."""
    for name in ("dltensor", "used_dltensor", "dltensor_versioned", "used_dltensor_versioned"):
        if PyCapsule_IsValid(capsule, name.encode()):
            return name
    return None
