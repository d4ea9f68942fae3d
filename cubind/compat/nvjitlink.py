"""NVIDIA's ``cuda.bindings.nvjitlink`` API over cubind's ``nvjitlink``.

NVIDIA never gave nvJitLink the tuple convention: its module raises
:class:`nvJitLinkError` and returns values (``create`` returns the handle as
an int, ``get_linked_cubin_size`` the size, the getters fill the caller's
buffer). Code written for it (cuda.core's ``Linker``) runs on these.
"""

import nvjitlink as _nj
from cubind.compat import _raising

__all__ = ["InputType", "Result", "nvJitLinkError", "create", "destroy", "add_data", "add_file", "complete",
           "get_linked_cubin_size", "get_linked_cubin", "get_linked_ptx_size", "get_linked_ptx",
           "get_error_log_size", "get_error_log", "get_info_log_size", "get_info_log", "version"]


InputType = _raising.result_enum("InputType", _nj.nvJitLinkInputType, "NVJITLINK_INPUT_")
Result = _raising.result_enum("Result", _nj.nvJitLinkResult, "NVJITLINK_")
nvJitLinkError = _raising.error_class("nvJitLinkError", Result, __name__)
_check = _raising.checker(nvJitLinkError)
_text = _raising.as_bytes


def create(num_options, options):
    """A new link handle (an int) for ``options`` (str or bytes)."""
    return int(_check(_nj.nvJitLinkCreate(num_options, [_text(o) for o in options])))


def destroy(handle):
    _check(_nj.nvJitLinkDestroy(handle))


def add_data(handle, input_type, data, size, name):
    _check(_nj.nvJitLinkAddData(handle, int(input_type), data, size, _text(name)))


def add_file(handle, input_type, file_name):
    _check(_nj.nvJitLinkAddFile(handle, int(input_type), _text(file_name)))


def complete(handle):
    _check(_nj.nvJitLinkComplete(handle))


def get_linked_cubin_size(handle):
    return int(_check(_nj.nvJitLinkGetLinkedCubinSize(handle)))


def get_linked_cubin(handle, cubin):
    """Fills ``cubin`` (a writable buffer of :func:`get_linked_cubin_size` bytes)."""
    _check(_nj.nvJitLinkGetLinkedCubin(handle, cubin))


def get_linked_ptx_size(handle):
    return int(_check(_nj.nvJitLinkGetLinkedPtxSize(handle)))


def get_linked_ptx(handle, ptx):
    _check(_nj.nvJitLinkGetLinkedPtx(handle, ptx))


def get_error_log_size(handle):
    return int(_check(_nj.nvJitLinkGetErrorLogSize(handle)))


def get_error_log(handle, log):
    _check(_nj.nvJitLinkGetErrorLog(handle, log))


def get_info_log_size(handle):
    return int(_check(_nj.nvJitLinkGetInfoLogSize(handle)))


def get_info_log(handle, log):
    _check(_nj.nvJitLinkGetInfoLog(handle, log))


def version():
    """``(major, minor)`` of the loaded nvJitLink."""
    major, minor = _check(_nj.nvJitLinkVersion())
    return int(major), int(minor)
