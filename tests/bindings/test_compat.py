"""cubind.compat: NVIDIA's ``cuda.bindings`` names served by cubind's modules,
only on request. Each check runs in a fresh interpreter (the finder and the
imports it serves belong to a process); nvJitLink and NVRTC run without a GPU,
so the nvJitLink API that cuda.core's Linker calls is exercised for real."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]

PTX = r"""
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u64 p) { ret; }
"""


def run(code, env=None):
    full = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    full.update(PYTHONPATH=pythonpath(ROOT), **(env or {}))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_nothing_is_served_by_default():
    got = run("""
        import json, sys, importlib.util
        import cuda, cubind.compat
        spec = importlib.util.find_spec("cuda.bindings")
        origin = None if spec is None else (spec.origin or str(list(spec.submodule_search_locations or [])))
        print(json.dumps([cubind.compat.installed(), origin is None or "cubind" not in origin]))
    """)
    assert got == [False, True]


@pytest.mark.parametrize("how", ["call", "environment"])
def test_the_served_modules_are_cubinds(how):
    code = """
        import json, importlib.metadata
        import cuda, cubind.compat
        if not cubind.compat.installed():
            cubind.compat.install()
        cubind.compat.install()  # idempotent
        from cuda.bindings import driver, runtime, nvrtc, nvjitlink, nvvm
        import cuda.bindings
        import cuda.bindings.driver
        from cuda.bindings._internal import nvjitlink as inner
        import cuda.cudart, nvrtc as ours_nvrtc
        version = cuda.bindings.__version__
        print(json.dumps([driver is cuda, runtime is cuda.cudart, nvrtc is ours_nvrtc,
                          cuda.bindings.driver is cuda, nvjitlink.__name__, nvvm.__name__,
                          inner._inspect_function_pointer("__nvJitLinkVersion") != 0,
                          version.split(".")[0] == str(cuda.CUDA_VERSION // 1000),
                          bool(importlib.metadata.version("cuda-bindings"))]))
    """
    if how == "call":
        got = run(code)
    else:
        check = "import cuda, cubind.compat\n        assert cubind.compat.installed()"
        got = run(code.replace("import cuda, cubind.compat", check), env={"CUBIND_CUDA_BINDINGS": "1"})
    assert got[:4] == [True, True, True, True]
    assert got[4:6] == ["cubind.compat.nvjitlink", "cubind.compat.nvvm"]
    assert got[6:] == [True, True, True]


def test_install_refuses_after_nvidias_cuda_bindings_was_imported():
    got = run("""
        import json, sys, types
        import cubind.compat
        sys.modules["cuda.bindings"] = types.ModuleType("cuda.bindings")  # as an import of NVIDIA's leaves it
        try:
            cubind.compat.install()
        except RuntimeError as exc:
            print(json.dumps([str(exc), cubind.compat.installed()]))
    """)
    assert "NVIDIA's cuda.bindings is already imported (cuda.bindings)" in got[0]
    assert got[1] is False


def test_an_import_blocked_on_purpose_is_not_nvidias_module():
    # sys.modules[name] = None makes `import name` fail (cuda.core's fallback to
    # the driver's linker is tested so): nothing of NVIDIA's is loaded.
    got = run("""
        import json, sys
        sys.modules["cuda.bindings.nvjitlink"] = None
        import cubind.compat
        cubind.compat.install()
        try:
            import cuda.bindings.nvjitlink
            blocked = False
        except ImportError:
            blocked = True
        import cuda.bindings.driver
        print(json.dumps([cubind.compat.installed(), blocked, cuda.bindings.driver.__name__]))
    """)
    assert got == [True, True, "cuda"]


def test_nvjitlink_in_nvidias_api_links_and_raises():
    got = run(f"""
        import json
        import cubind.compat
        cubind.compat.install()
        from cuda.bindings import nvjitlink
        handle = nvjitlink.create(1, ["-arch=sm_90"])
        ptx = {PTX!r}.encode()
        nvjitlink.add_data(handle, nvjitlink.InputType.PTX, ptx, len(ptx), "k.ptx")
        nvjitlink.complete(handle)
        cubin = bytearray(nvjitlink.get_linked_cubin_size(handle))
        nvjitlink.get_linked_cubin(handle, cubin)
        info = bytearray(nvjitlink.get_info_log_size(handle))
        nvjitlink.get_info_log(handle, info)
        nvjitlink.destroy(handle)
        bad = nvjitlink.create(1, ["-arch=sm_90"])
        try:
            nvjitlink.add_data(bad, nvjitlink.InputType.PTX, b"not ptx", 7, "bad.ptx")
            nvjitlink.complete(bad)
            error = None
        except nvjitlink.nvJitLinkError as exc:
            error = [exc.status.name, str(exc)]
        log = bytearray(nvjitlink.get_error_log_size(bad))
        nvjitlink.get_error_log(bad, log)
        print(json.dumps([isinstance(handle, int), bytes(cubin[:4]).hex(), list(nvjitlink.version()) > [12, 2],
                          error, len(log) > 1]))
    """)
    assert got[0] is True and got[1] == "7f454c46"  # an ELF image
    assert got[2] is True
    assert got[3] is not None and got[3][0].startswith("ERROR_") and got[3][1].startswith("ERROR_")
    assert got[4] is True


def test_nvvm_in_nvidias_api_compiles_and_raises():
    from tests.bindings.test_nvvm import TWICE_IR

    got = run(f"""
        import json
        import cubind.compat
        cubind.compat.install()
        from cuda.bindings import nvvm
        ir = {TWICE_IR!r}
        prog = nvvm.create_program()
        nvvm.add_module_to_program(prog, ir, len(ir), "twice")
        nvvm.compile_program(prog, 1, ["-arch=compute_90"])
        ptx = bytearray(nvvm.get_compiled_result_size(prog))
        nvvm.get_compiled_result(prog, ptx)
        nvvm.destroy_program(prog)
        bad = nvvm.create_program()
        nvvm.add_module_to_program(bad, b"not IR", 6, "bad")
        try:
            nvvm.compile_program(bad, 0, [])
            error = None
        except nvvm.nvvmError as exc:
            error = exc.status.name
        log = bytearray(nvvm.get_program_log_size(bad))
        nvvm.get_program_log(bad, log)
        print(json.dumps([b".entry twice" in bytes(ptx), error, len(log) > 1, list(nvvm.version())]))
    """)
    assert got[0] is True and got[1] is not None and got[1].startswith("ERROR_") and got[2] is True
