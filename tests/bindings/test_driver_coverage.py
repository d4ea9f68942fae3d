"""The driver package covers cuda.h: every bound function is in the module,
every skipped one has a reason, no ABI-suffixed names, docstrings give the
Python signature (no driver needed).
"""

import re
import subprocess

import pytest

from tests._helpers import import_cubind_driver
from tests._toolkit import cuda_include
from tests.bindings._driver_support import CUDA_13, CUDA_H, DRIVER_SPEC, GENERATOR, _signature, needs_cuda, needs_header

cuda = import_cubind_driver()


# -- coverage and names ------------------------------------------------------------


@pytest.fixture(scope="module")
def coverage_report():
    if not GENERATOR.exists():
        pytest.skip(f"the generator is not built ({GENERATOR})")
    if not DRIVER_SPEC.exists():
        pytest.skip(f"no driver spec ({DRIVER_SPEC})")
    if cuda_include() is None:
        pytest.skip("no CUDA headers")
    proc = subprocess.run([str(GENERATOR), "--spec", str(DRIVER_SPEC), "-I", str(cuda_include()), "--report"],
                          capture_output=True, text=True, check=False, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _report_lines(report):
    bound, skipped = [], []
    for line in report.splitlines():
        if line.startswith("  bound    "):
            bound.append(line[len("  bound    "):].split(" (calls ")[0].strip())
        elif line.startswith("  skipped  "):
            name, _, reason = line[len("  skipped  "):].partition(":")
            skipped.append((name.split(" (calls ")[0].strip(), reason.strip()))
    return bound, skipped


@needs_cuda
def test_every_bound_function_is_in_the_module(coverage_report):
    bound, skipped = _report_lines(coverage_report)
    assert len(bound) > 400, coverage_report[:2000]
    for name in ("cuInit", "cuMemAlloc", "cuCtxCreate", "cuLaunchKernel", "cuLaunchKernelEx", "cuGraphInstantiate",
                 "cuStreamAddCallback", "cuLaunchHostFunc", "cuMemcpy3D", "cuPointerGetAttribute"):
        assert name in bound, name
    missing = [name for name in bound if not callable(getattr(cuda, name, None))]
    assert not missing
    assert not {name for name, _ in skipped} & set(bound)


@needs_cuda
def test_every_skipped_function_has_a_reason(coverage_report):
    _, skipped = _report_lines(coverage_report)
    assert not [name for name, reason in skipped if not reason]


@needs_cuda
@needs_header
def test_no_abi_suffixed_names():
    # ``#define cuMemAlloc cuMemAlloc_v2``: the Python name is cuMemAlloc only.
    pairs = re.findall(r"^[ \t]*#define\s+(cu\w+)\s+(?:__CUDA_API_PT(?:DS|SZ)\()?(cu\w+)\)?[ \t]*$",
                       CUDA_H.read_text(), re.MULTILINE)
    targets = {target for name, target in pairs if target != name and re.search(r"_v\d+$", target)}
    assert "cuMemAlloc_v2" in targets and ("cuCtxCreate_v4" if CUDA_13 else "cuCtxCreate_v2") in targets
    assert not [name for name in targets if hasattr(cuda, name)]
    assert not [name for name in dir(cuda) if re.search(r"_pt(sz|ds)$", name)]
    # Functions whose own name carries a version (no #define) keep it: 13.x's
    # cuCtxSynchronize_v2(ctx), 12.x's cuCtxCreate_v4 (cuCtxCreate is _v2 there).
    if CUDA_13:
        assert callable(cuda.cuCtxSynchronize_v2) and callable(cuda.cuCtxSynchronize)
    else:
        assert callable(cuda.cuCtxCreate_v4) and callable(cuda.cuCtxCreate)


@needs_cuda
@pytest.mark.parametrize("name,words", [("cuMemAlloc", ["bytesize"]), ("cuLaunchKernel", ["kernelParams"]),
                                        ("cuCtxCreate", ["ctxCreateParams", "flags", "dev"] if CUDA_13 else
                                         ["cuCtxCreate(flags, dev)"])])
def test_docstrings_describe_python_signature(name, words):
    # help() shows the signature (__text_signature__), then the docstring.
    doc = getattr(cuda, name).__doc__
    assert doc and not doc.startswith(name + "(")
    text = _signature(name) + "\n" + doc
    for word in words:
        assert word in text, word


@needs_cuda
def test_noncontiguous_kernel_params_buffer_is_refused():
    np = pytest.importorskip("numpy")
    strided = np.zeros(4, dtype=np.uint64)[::2]
    with pytest.raises(ValueError, match="kernelParams"):
        cuda.cuLaunchKernel(0, 1, 1, 1, 1, 1, 1, 0, None, strided, None)


@needs_cuda
def test_integer_handles_are_indices_and_pass_as_addresses():
    import operator

    assert operator.index(cuda.CUdeviceptr(0x40)) == 0x40
    assert operator.index(cuda.CUdevice(3)) == 3
    # A void* parameter takes a CUdeviceptr as its address: no TypeError; the
    # call then reaches the driver, or stops where there is none.
    try:
        cuda.cuTensorMapEncodeTiled(cuda.CUtensorMap(), 7, 1, cuda.CUdeviceptr(0x1000), [64], None, [16], [1],
                                    0, 0, 0, 0)
    except OSError as exc:
        assert "CUBIND_CUDA_LIBRARY" in str(exc)
