"""NVIDIA's ``cuda.bindings.nvjitlink`` API over cubind's ``nvjitlink``.

NVIDIA never gave nvJitLink the tuple convention: its module raises
:class:`nvJitLinkError` and returns values (``create`` returns the handle as
an int, ``get_linked_cubin_size`` the size, the getters fill the caller's
buffer). Code written for it (cuda.core's ``Linker``) runs on these.
"""

import enum

import nvjitlink as _nj

__all__ = ["InputType", "Result", "nvJitLinkError", "create", "destroy", "add_data", "add_file", "complete",
           "get_linked_cubin_size", "get_linked_cubin", "get_linked_ptx_size", "get_linked_ptx",
           "get_error_log_size", "get_error_log", "get_info_log_size", "get_info_log", "version"]


def _members(c_enum, prefix):
    return {name[len(prefix):]: int(getattr(c_enum, name)) for name in dir(c_enum) if name.startswith(prefix)}


InputType = enum.IntEnum("InputType", _members(_nj.nvJitLinkInputType, "NVJITLINK_INPUT_"))
Result = enum.IntEnum("Result", _members(_nj.nvJitLinkResult, "NVJITLINK_"))


class nvJitLinkError(Exception):
    """A status other than NVJITLINK_SUCCESS; ``.status`` is the :class:`Result`."""

    def __init__(self, status):
        self.status = Result(int(status))
        super().__init__(f"{self.status.name} ({int(status)})")

    def __reduce__(self):
        return type(self), (int(self.status),)


def _check(result):
    if int(result[0]) != 0:
        raise nvJitLinkError(result[0])
    return result[1] if len(result) == 2 else result[1:]


def _text(value):
    return value.encode() if isinstance(value, str) else value


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
