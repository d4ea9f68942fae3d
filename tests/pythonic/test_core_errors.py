"""CUDAError and cubind.check (cubind/_core/errors.py): a driver failure is a
CUDAError naming the call (against tests/fake_driver), and check returns a
status tuple's outputs or raises.
"""

import pytest

import cubind
from tests.pythonic._core_fixtures import compiled_module, own_cache_dir, ptx_file_of_module, run_fake  # noqa: F401  (fixtures)


def test_driver_failures_are_cuda_errors_naming_the_call(fake_driver, ptx_file):
    got = run_fake(fake_driver, ptx_file, """
        out = []
        for fn in (lambda: cubind.Stream(), lambda: module.get_kernel("saxpy")):
            try:
                fn()
                out.append("no error")
            except cubind.CUDAError as exc:
                out.append([exc.name, exc.call, int(exc.code), str(exc)])
        print(json.dumps(out))
    """, env={"FAKE_MISSING": "cuStreamCreateWithPriority"})
    assert got[0][:3] == ["CUDA_ERROR_NOT_FOUND", "cuStreamCreateWithPriority", 500]
    assert got[0][3].startswith("cuStreamCreateWithPriority: CUDA_ERROR_NOT_FOUND (500)")
    assert got[1] == "no error"


# -- cubind.check, the public end of a status tuple ------------------------------------


def test_check_returns_the_outputs_or_raises_naming_the_call():
    assert cubind.check((0,)) is None
    assert cubind.check((0, 5)) == 5
    assert cubind.check((0, 1, 2)) == (1, 2)
    with pytest.raises(cubind.CUDAError) as info:
        cubind.check((1, None), "cuMemAlloc")
    assert info.value.call == "cuMemAlloc" and int(info.value.code) == 1
