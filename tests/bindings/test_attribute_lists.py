"""cuMemRangeGetAttributes / cudaMemRangeGetAttributes: a list of values, one
per attribute, each typed by its attribute and read from the bytes the caller
gives for it in dataSizes (the classic signature: no data argument)."""

import inspect

import pytest

from tests._helpers import ok

cuda = pytest.importorskip("cuda")
cudart = pytest.importorskip("cuda.cudart")
A = cuda.CUmem_range_attribute
RA = cudart.cudaMemRangeAttribute


def test_signatures_are_the_classic_ones():
    want = ["dataSizes", "attributes", "numAttributes", "devPtr", "count"]
    assert list(inspect.signature(cuda.cuMemRangeGetAttributes).parameters) == want
    assert list(inspect.signature(cudart.cudaMemRangeGetAttributes).parameters) == want


def test_bad_lists_are_refused_before_the_library():
    with pytest.raises(ValueError, match="dataSizes"):
        cuda.cuMemRangeGetAttributes([4], [A.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY] * 2, 2, 0, 4096)
    with pytest.raises(ValueError, match="no known value type"):
        cuda.cuMemRangeGetAttributes([4], [999], 1, 0, 4096)
    with pytest.raises(TypeError, match="attributes"):
        cudart.cudaMemRangeGetAttributes([4], RA.cudaMemRangeAttributeReadMostly, 1, 0, 4096)


@pytest.mark.gpu
def test_driver_list_matches_the_single_queries(driver, cu_context):
    ptr = ok(driver.cuMemAllocManaged, 1 << 16, driver.CUmemAttach_flags.CU_MEM_ATTACH_GLOBAL)
    try:
        attrs = [A.CU_MEM_RANGE_ATTRIBUTE_READ_MOSTLY, A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION,
                 A.CU_MEM_RANGE_ATTRIBUTE_ACCESSED_BY, A.CU_MEM_RANGE_ATTRIBUTE_PREFERRED_LOCATION_TYPE]
        sizes = [4, 4, 12, 4]
        values = ok(driver.cuMemRangeGetAttributes, sizes, attrs, len(attrs), ptr, 1 << 16)
        singles = [ok(driver.cuMemRangeGetAttribute, size, attr, ptr, 1 << 16)
                   for size, attr in zip(sizes, attrs)]
        assert values == singles
        assert values[0] == 0 and isinstance(values[2], list) and len(values[2]) == 3
        assert isinstance(values[3], driver.CUmemLocationType)
    finally:
        ok(driver.cuMemFree, ptr)


@pytest.mark.gpu
def test_runtime_list_matches_the_single_queries(driver, cu_context):
    err, ptr = cudart.cudaMallocManaged(1 << 16, cudart.cudaMemAttachGlobal)
    assert err == 0
    try:
        attrs = [RA.cudaMemRangeAttributeReadMostly, RA.cudaMemRangeAttributeAccessedBy]
        err, values = cudart.cudaMemRangeGetAttributes([4, 8], attrs, 2, ptr, 1 << 16)
        assert err == 0
        assert values[0] == cudart.cudaMemRangeGetAttribute(4, attrs[0], ptr, 1 << 16)[1]
        assert values[1] == cudart.cudaMemRangeGetAttribute(8, attrs[1], ptr, 1 << 16)[1] and len(values[1]) == 2
    finally:
        cudart.cudaFree(ptr)
