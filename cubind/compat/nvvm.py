"""NVIDIA's ``cuda.bindings.nvvm`` API over cubind's ``nvvm``: functions that
raise :class:`nvvmError` and return values, programs as ints."""

import nvvm as _nv
from cubind.compat import _raising

__all__ = ["Result", "nvvmError", "get_error_string", "version", "ir_version", "create_program", "destroy_program",
           "add_module_to_program", "lazy_add_module_to_program", "compile_program", "verify_program",
           "get_compiled_result_size", "get_compiled_result", "get_program_log_size", "get_program_log"]

Result = _raising.result_enum("Result", _nv.nvvmResult, "NVVM_")
nvvmError = _raising.error_class("nvvmError", Result, __name__)
_check = _raising.checker(nvvmError)
_text = _raising.as_bytes


def get_error_string(result):
    """The library's message for the status ``result`` (a :class:`Result` or an int), as str."""
    _success, message = _nv.nvvmGetErrorString(int(result))
    return "" if message is None else message.decode()


def version():
    major, minor = _check(_nv.nvvmVersion())
    return int(major), int(minor)


def ir_version():
    return tuple(int(v) for v in _check(_nv.nvvmIRVersion()))


def create_program():
    """A new program, as an int."""
    return int(_check(_nv.nvvmCreateProgram()))


def destroy_program(prog):
    _check(_nv.nvvmDestroyProgram(_nv.nvvmProgram(int(prog))))


def add_module_to_program(prog, buffer, size, name):
    _check(_nv.nvvmAddModuleToProgram(prog, _text(buffer), size, _text(name)))


def lazy_add_module_to_program(prog, buffer, size, name):
    _check(_nv.nvvmLazyAddModuleToProgram(prog, _text(buffer), size, _text(name)))


def compile_program(prog, num_options, options):
    _check(_nv.nvvmCompileProgram(prog, num_options, [_text(o) for o in options]))


def verify_program(prog, num_options, options):
    _check(_nv.nvvmVerifyProgram(prog, num_options, [_text(o) for o in options]))


def get_compiled_result_size(prog):
    return int(_check(_nv.nvvmGetCompiledResultSize(prog)))


def get_compiled_result(prog, buffer):
    _check(_nv.nvvmGetCompiledResult(prog, buffer))


def get_program_log_size(prog):
    return int(_check(_nv.nvvmGetProgramLogSize(prog)))


def get_program_log(prog, buffer):
    _check(_nv.nvvmGetProgramLog(prog, buffer))
