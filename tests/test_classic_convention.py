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
