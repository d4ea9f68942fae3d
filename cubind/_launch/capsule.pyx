# cython: language_level=3
"""A kernel argument known by DLPack alone: the address of the memory in a
capsule its producer makes for the launch (args.dlpack_pointer; launch.pyx
calls it with the launch's stream)."""

from cpython.pycapsule cimport PyCapsule_GetPointer, PyCapsule_IsValid
from libc.stdint cimport uintptr_t

from cubind._launch.dlpack_abi cimport DLManagedTensor, DLManagedTensorVersioned, DLTensor

_CUDA_DLPACK_DEVICES = (2, 3, 13)  # kDLCUDA, kDLCUDAHost (pinned, mapped), kDLCUDAManaged
cdef const char* _DLTENSOR = b"dltensor"
cdef const char* _DLTENSOR_V = b"dltensor_versioned"


def dlpack_address(value, token):
    """The address of the memory in ``value``'s DLPack capsule (its data plus
    byte offset), asked with ``stream=token``. The capsule is left unconsumed:
    its destructor (the producer's) calls the deleter as it goes, and the
    memory stays the producer's, as ``value`` holds it."""
    device_type = int(value.__dlpack_device__()[0])
    if device_type not in _CUDA_DLPACK_DEVICES:
        raise TypeError(f"its DLPack device type is {device_type}, not CUDA (2, 3 or 13)"
                        f"{'; host memory: copy it with cubind.to_gpu' if device_type == 1 else ''}")
    try:
        capsule = value.__dlpack__(stream=token, max_version=(1, 1))
    except TypeError:  # a producer older than DLPack 1.0 takes no max_version
        capsule = value.__dlpack__(stream=token)
    return _capsule_address(capsule)


cdef object _capsule_address(object capsule):
    cdef DLTensor* tensor
    cdef DLManagedTensorVersioned* versioned
    if PyCapsule_IsValid(capsule, _DLTENSOR_V):
        versioned = <DLManagedTensorVersioned*>PyCapsule_GetPointer(capsule, _DLTENSOR_V)
        if versioned.version.major != 1:
            raise TypeError(f"its DLPack version {versioned.version.major}.{versioned.version.minor} is not 1.x")
        tensor = &versioned.dl_tensor
    elif PyCapsule_IsValid(capsule, _DLTENSOR):
        tensor = &(<DLManagedTensor*>PyCapsule_GetPointer(capsule, _DLTENSOR)).dl_tensor
    else:
        raise TypeError(f"its __dlpack__ gave a {type(capsule).__name__}, not an unused DLPack capsule")
    return <uintptr_t>tensor.data + tensor.byte_offset
