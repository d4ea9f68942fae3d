"""The generator on the real CUDA headers the build comes from (integration; the
synthetic per-construct cases are generator/tests/cases): CUDA 13.0's here,
another toolkit's under scripts/toolkit-build.sh (tests/_toolkit.py)."""

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from tests._toolkit import cuda_include, cuda_version, header, is_cuda_13_0, spec_headers

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = Path(os.environ.get("CUBIND_GEN", ROOT / "generator" / "build" / "cubind-gen"))
INCLUDE = cuda_include()


def run_generator(*args):
    if not GENERATOR.exists():
        if os.environ.get("CI"):
            pytest.fail(f"the generator is not built ({GENERATOR})")
        pytest.skip(f"the generator is not built ({GENERATOR})")
    if INCLUDE is None:
        pytest.skip("no CUDA headers (CUBIND_CUDA_INCLUDE, CUDA_HOME, CUDA_PATH, nvcc, /usr/local/cuda)")
    return subprocess.run([str(GENERATOR), "-I", str(INCLUDE), *spec_includes(args), *args], check=True,
                          capture_output=True, text=True).stdout


def spec_includes(args):
    """``-I`` options for a spec's headers found outside cuda.h's directory:
    a library the toolkit lacks, from its NVIDIA wheel (nvFatbin.h), and a
    library not CUDA's from the wheel its spec names (UCX's, ``[build]
    wheel_includes``), as the build and scripts/regenerate.sh find them."""
    from _cubind import cuda_paths

    found = []
    for flag, value in zip(args, args[1:]):
        if flag == "--spec":
            found += [d for d in cuda_paths.spec_wheel_includes(value) if d not in found]
            for name in spec_headers(value):
                path = header(name)
                if path is not None and path.parent != INCLUDE and str(path.parent) not in found:
                    found.append(str(path.parent))
    return [arg for d in found for arg in ("-I", d)]


@pytest.fixture(scope="module")
def driver_model():
    out = run_generator("--spec", str(ROOT / "bindings" / "driver.toml"), "--dump-model")
    return {f["name"]: f for f in json.loads(out)["functions"]}


def test_functions_resolve_at_the_abi_version_of_their_declaration(driver_model):
    # cudaTypedefs.h has cuCtxSynchronize_v2000(void) and (13.x) _v13000(CUcontext):
    # the header declares the first, so asking for CUDA_VERSION would be wrong.
    assert driver_model["cuCtxSynchronize"]["abi_version"] == 2000
    if cuda_version() >= 13000:   # #define cuCtxCreate cuCtxCreate_v4: (pctx, ctxCreateParams, flags, dev)
        assert driver_model["cuCtxCreate"]["alias_of"] == "cuCtxCreate_v4"
        assert driver_model["cuCtxCreate"]["abi_version"] == 12050
    else:   # 12.x: #define cuCtxCreate cuCtxCreate_v2: (pctx, flags, dev); _v4 is a function of its own
        assert driver_model["cuCtxCreate"]["alias_of"] == "cuCtxCreate_v2"
        assert driver_model["cuCtxCreate"]["abi_version"] == 3020
        assert "alias_of" not in driver_model["cuCtxCreate_v4"]
    assert driver_model["cuMemAlloc"]["abi_version"] == 3020
    # Nearly every bound function of cuda.h has its declaration's ABI version
    # (12.9: 436 of 447, 13.0: 445 of 445).
    bound = [f for f in driver_model.values() if "skip_reason" not in f and f.get("header") in (None, "cuda.h")]
    with_abi = sum("abi_version" in f for f in bound)
    assert with_abi >= 0.95 * len(bound)
    if is_cuda_13_0():
        assert sum("abi_version" in f for f in driver_model.values()) >= 445


def test_driver_report_accounts_for_every_function():
    report = run_generator("--spec", str(ROOT / "bindings" / "driver.toml"), "--report")
    bound, total = map(int, re.search(r"cuda.h: (\d+)/(\d+) functions bound", report).groups())
    assert total >= 440 and bound / total >= 0.98
    if is_cuda_13_0():
        assert bound >= 442 and total >= 449
    assert "cudaProfiler.h: 3/3 functions bound" in report
    total = int(re.search(r"total: \d+/(\d+) functions bound", report).group(1))
    # Each void* buffer has a line of its own: what a buffer object there must hold.
    buffers = [line for line in report.splitlines() if line.startswith("  buffer   ")]
    assert buffers and all(re.match(r"  buffer   \w+\.\w+: (holds .+|unchecked: .+)", line) for line in buffers)
    # Each function pointer typedef: a class of its name, or why it has none.
    classes = [line for line in report.splitlines() if line.startswith(("  class    ", "  skipped  class "))]
    callback_types = int(re.search(r"(\d+) callback types", report).group(1))
    assert len(classes) == callback_types and "  class    CUoccupancyB2DSize: function pointer" in classes
    # Each other name of a class, bound to that class (name_type_aliases).
    aliases = [line for line in report.splitlines() if line.startswith("  alias    ")]
    assert all(re.match(r"  alias    \w+: the class \w+$", line) for line in aliases)
    assert "  alias    CUdevice_v1: the class CUdevice" in aliases
    lines = [line for line in report.splitlines() if line.startswith("  ") and " field " not in line
             and line not in buffers and line not in classes and line not in aliases]
    assert len(lines) == total
    for line in lines:
        assert line.startswith("  bound    ") or re.match(r"  skipped  \S+.*: .+", line), line
    # Struct fields too: each is a property or a skip with its reason.
    fields_bound, fields = map(int, re.search(r"(\d+)/(\d+) struct fields bound", report).groups())
    skipped = [line for line in report.splitlines() if line.startswith("  skipped  field ")]
    assert fields >= 500 and len(skipped) == fields - fields_bound
    assert all(re.match(r"  skipped  field \w+\.\w+: .+", line) for line in skipped)


def test_nvrtc_report_is_complete():
    report = run_generator("--spec", str(ROOT / "bindings" / "nvrtc.toml"), "--report")
    assert re.search(r"nvrtc.h: (\d+)/\1 functions bound \(100.0%\)", report), report
    if is_cuda_13_0():
        assert "nvrtc.h: 24/24 functions bound (100.0%)" in report
