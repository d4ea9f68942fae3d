"""cubind and NVIDIA's cuda-bindings wheel never collide: no file of cubind's
lies under ``cuda/bindings/``; with the switch off, ``cuda.bindings`` and its
modules are NVIDIA's; with it asked for after NVIDIA's are imported, the
request is refused with the contract's error, whichever served name was
imported. Each check runs in a fresh interpreter."""

import importlib.metadata
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from _cubind.compat import _TARGETS
from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]


def run(code, env=None):
    full = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    full.update(PYTHONPATH=pythonpath(ROOT), **(env or {}))
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full, cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _nvidia_missing():
    try:
        version = importlib.metadata.version("cuda-bindings")
    except importlib.metadata.PackageNotFoundError:
        return "NVIDIA's cuda-bindings is not installed (pip install cuda-bindings==13.0.3)"
    return None if version.startswith("13.") else f"written for cuda-bindings 13.x; {version} is installed"


def test_no_file_of_cubinds_is_under_cuda_bindings():
    import importlib.util

    spec = importlib.util.spec_from_file_location("cubind_setup", ROOT / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)  # imported, it defines its functions and builds nothing
    assert not [p for p in setup.packages(str(ROOT)) if p == "cuda.bindings" or p.startswith("cuda.bindings.")]
    assert not [m for m in setup.module_names(str(ROOT)) if m.startswith("cuda.bindings.")]
    assert not (ROOT / "cuda" / "bindings").exists()
    # Every served name is answered by a module of cubind's own packages.
    assert all(not target.startswith("cuda.bindings") for target in _TARGETS.values())


@pytest.mark.skipif(_nvidia_missing() is not None, reason=str(_nvidia_missing()))
@pytest.mark.parametrize("cubind_first", [True, False], ids=["cubind_first", "nvidia_first"])
def test_switched_off_cuda_bindings_is_nvidias(cubind_first):
    pytest.importorskip("cuda", reason="cubind's cuda package is not built")
    first, second = "import cuda", "import cuda.bindings.driver, cuda.bindings.runtime, cuda.bindings.nvrtc"
    got = run(f"""
        import importlib.metadata, json, sys
        {first if cubind_first else second}
        {second if cubind_first else first}
        import cuda.bindings.utils, cuda.bindings._version, cuda.bindings.cydriver, _cubind.compat
        names = [n for n in sys.modules if n.startswith("cuda.bindings")]
        files = {{n: getattr(sys.modules[n], "__file__", None) or "" for n in names}}
        print(json.dumps([_cubind.compat.installed(), hasattr(cuda, "cuInit"),
                          sorted(n for n, f in files.items() if "site-packages" not in f),
                          cuda.bindings.__version__ == importlib.metadata.version("cuda-bindings")]))
    """)
    assert got == [False, True, [], True]


@pytest.mark.parametrize("served", sorted(_TARGETS))
def test_asked_for_after_nvidias_import_is_refused(served):
    # As an import of NVIDIA's module leaves sys.modules (a stand-in: the
    # refusal reads only the names).
    got = run(f"""
        import json, sys, types
        import cubind.compat
        sys.modules[{served!r}] = types.ModuleType({served!r})
        try:
            cubind.compat.install()
            print(json.dumps(None))
        except RuntimeError as exc:
            print(json.dumps([str(exc), cubind.compat.installed()]))
    """)
    assert got is not None, f"install() went ahead with NVIDIA's {served} imported"
    assert f"NVIDIA's cuda.bindings is already imported ({served})" in got[0] and got[1] is False


@pytest.mark.skipif(_nvidia_missing() is not None, reason=str(_nvidia_missing()))
def test_asked_for_after_nvidias_real_import_is_refused():
    got = run("""
        import json
        from cuda.bindings import driver, utils
        import cubind.compat
        try:
            cubind.compat.install()
            print(json.dumps(None))
        except RuntimeError as exc:
            print(json.dumps([str(exc), cubind.compat.installed(), "site-packages" in driver.__file__]))
    """)
    assert got is not None and "NVIDIA's cuda.bindings is already imported (cuda.bindings" in got[0]
    assert "cuda.bindings.utils" in got[0] and got[1:] == [False, True]
