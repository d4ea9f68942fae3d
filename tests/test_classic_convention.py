"""The classic CUDA Python convention's behaviours that code written for NVIDIA's
modules relies on (docs/API.md), each checked where no GPU is needed: the
conversions run before any library is opened, and struct fields need none."""

import math

import pytest

cuda = pytest.importorskip("cuda")


@pytest.mark.parametrize("value, stored", [(10.9, 10), (196.3, 196), (7.0, 7), (0.5, 0)])
def test_a_float_for_an_integer_field_converts_toward_zero(value, stored):
    s = cuda.CUDA_MEMCPY2D()
    s.WidthInBytes = value
    s.Height = value
    assert (s.WidthInBytes, s.Height) == (stored, stored)


def test_a_negative_float_for_an_unsigned_integer_is_out_of_range():
    s = cuda.CUDA_MEMCPY2D()
    with pytest.raises(OverflowError, match=r"WidthInBytes: -2 is out of range"):
        s.WidthInBytes = -2.7


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_nan_and_infinities_are_type_errors_naming_the_parameter(value):
    s = cuda.CUDA_MEMCPY2D()
    with pytest.raises(TypeError, match=r"WidthInBytes: expected an int or a finite float"):
        s.WidthInBytes = value
    with pytest.raises(TypeError, match=r"bytesize: expected an int or a finite float"):
        cuda.cuMemAlloc(value)  # refused before the driver is looked for


KERNEL_ARGS = r"""
import ctypes, json
import cuda
fake = ctypes.CDLL({lib!r})
ctypes.c_int.in_dll(fake, "fake_record_args").value = 7
x = ctypes.c_int(5)
text = ctypes.c_char_p(b"abc")
values = (ctypes.c_char(b"Z"), ctypes.c_wchar("x"), ctypes.c_void_p(16), text, ctypes.pointer(x),
          ctypes.c_uint8(200), ctypes.c_void_p(None))
err, = cuda.cuLaunchKernel(0x4000, 1, 1, 1, 1, 1, 1, 0, 0, (values, tuple(type(v) for v in values)), 0)
args = list((ctypes.c_ulonglong * 7).in_dll(fake, "fake_args"))
print(json.dumps([int(err), args, ctypes.cast(text, ctypes.c_void_p).value, ctypes.addressof(x)]))
"""


def test_kernel_params_take_ctypes_instances_of_every_ctypes_type(fake_driver):
    # `(values, types)` with ctypes instances as values: c_char(b"Z") was a
    # TypeError; pointer types (c_char_p, POINTER(T)) pack their address.
    import json
    import os
    import subprocess
    import sys

    from tests._toolkit import pythonpath

    env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath())
    done = subprocess.run([sys.executable, "-c", KERNEL_ARGS.format(lib=str(fake_driver))], env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    err, args, text_address, x_address = json.loads(done.stdout)
    assert err == 0
    assert args[0] & 0xFF == ord("Z") and args[1] & 0xFFFFFFFF == ord("x") and args[2] == 16
    assert args[3] == text_address and args[4] == x_address
    assert args[5] & 0xFF == 200 and args[6] == 0
