"""The released consumers of NVIDIA's ``cuda.bindings`` find, under
``CUBIND_CUDA_BINDINGS=1``, every name they read: the set is read from each
consumer's installed files (``tests/_consumer_names.py``), never kept by hand.

The consumers are cuda-core 1.2.x and numba-cuda 0.30.x, installed with
``--no-deps`` into a directory of their own (``CUBIND_CONSUMERS_PATH``, by
default ``consumers/`` in the virtual environment: scripts/_common.sh puts
them there) so that the cuda.core 0.3 that ``test_cuda_core.py`` runs stays
what the rest of the suite imports. A consumer found nowhere is skipped with
the reason.

A use the consumer guards (its absence caught, or asked with ``hasattr``) may
be missing, unless cubind's own compat modules serve the module it is read
from: what is written for the consumers serves all they read.
"""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests._consumer_names import installed_files, is_library_file, scan_compiled, scan_python
from tests._toolkit import consumers_path, consumers_unserved, pythonpath

ROOT = Path(__file__).resolve().parents[2]
CONSUMERS = {"cuda-core": "1.2.", "numba-cuda": "0.30."}
# The C-level modules item 1 of issue 44 adds: served names whose module a
# build may not have yet (the hook's ImportError says so).
C_LEVEL = ("cuda.bindings.cy",)


def _find(distribution):
    """(version, files, the directory to put first on a child's path), or the reason it is missing."""
    wanted = CONSUMERS[distribution]
    for where in [consumers_path(), *sys.path]:
        if not where or not os.path.isdir(where):
            continue
        found = installed_files(distribution, [where])
        if found and found[0].startswith(wanted):
            return found[0], found[1], where
    return (f"{distribution} {wanted}x is not installed (scripts/_common.sh installs it --no-deps into "
            f"{consumers_path()}, or set CUBIND_CONSUMERS_PATH)")


def uses_of(files, root):
    """Every ``cuda.bindings`` use in a consumer's own files (not its tests)."""
    uses = set()
    for path in files:
        label = str(path.relative_to(root)) if path.is_relative_to(root) else str(path)
        if not is_library_file(Path(label)):
            continue
        if path.suffix == ".py":
            uses |= scan_python(path, label)
        elif path.suffix in (".so", ".pyd"):
            uses |= scan_compiled(path, label)
    return uses


RESOLVE = textwrap.dedent("""
    import importlib, json, sys
    paths = json.loads(sys.argv[1])

    def resolve(path):
        # From cuda.bindings by attribute (the served packages import a module on
        # access): [resolved, the missing part or the error, the module read from].
        parts = path.split(".")
        try:
            obj = importlib.import_module("cuda.bindings")
        except ImportError as exc:
            return [False, repr(exc), None]
        module = obj.__name__
        for i, part in enumerate(parts[2:], 2):
            try:
                obj = getattr(obj, part)
            except ImportError as exc:
                return [False, f"{'.'.join(parts[:i + 1])}: {exc}", module]
            except AttributeError:
                return [False, ".".join(parts[:i + 1]), module]
            if type(obj).__name__ == "module":
                module = obj.__name__
        return [True, None, module]

    print(json.dumps({path: resolve(path) for path in paths}))
""")


def resolve_all(paths):
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    env.update(PYTHONPATH=pythonpath(ROOT), CUBIND_CUDA_BINDINGS="1")
    done = subprocess.run([sys.executable, "-c", RESOLVE, json.dumps(sorted(paths))], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _missing(uses, resolved):
    """The uses cubind must serve and does not: unguarded, or read from a
    module of cubind.compat; a C-level module not built yet is item 1's."""
    missing = {}
    for use in sorted(uses, key=lambda u: (u.path, u.where)):
        ok, why, module = resolved[use.path]
        if ok or use.path.startswith(C_LEVEL) or use.path in missing:
            continue
        if not use.guarded or (module or "").startswith("cubind.compat"):
            missing[use.path] = f"{why} (read at {use.where})"
    return missing


@pytest.mark.parametrize("distribution", sorted(CONSUMERS))
def test_every_name_a_consumer_reads_is_served(distribution):
    pytest.importorskip("cuda", reason="cubind's cuda package is not built")
    if consumers_unserved(running=False):
        pytest.skip(consumers_unserved(running=False))
    found = _find(distribution)
    if isinstance(found, str):
        pytest.skip(found)
    version, files, where = found
    uses = uses_of(files, Path(where))
    assert uses, f"no use of cuda.bindings found in {distribution} {version}: the scan is broken"
    resolved = resolve_all({u.path for u in uses})
    missing = _missing(uses, resolved)
    assert not missing, f"{distribution} {version} reads these, which cubind does not serve: {missing}"


def test_the_scan_reads_guards_and_aliases(tmp_path):
    source = tmp_path / "consumer.py"
    source.write_text(textwrap.dedent("""
        from cuda.bindings import driver as drv, nvml
        import cuda.bindings.runtime
        try:
            from cuda.bindings._internal.utils import NotSupportedError
        except ImportError:
            pass
        try:
            nvml.DeviceArch.KEPLER
        except ImportError:
            pass
        def f():
            if hasattr(drv, "cuNewer"):
                return drv.CUresult.CUDA_SUCCESS, cuda.bindings.runtime.cudaError_t
    """))
    got = {(u.path, u.guarded) for u in scan_python(source, "consumer.py")}
    assert got == {
        ("cuda.bindings.driver", False), ("cuda.bindings.nvml", False), ("cuda.bindings.runtime", False),
        ("cuda.bindings._internal.utils.NotSupportedError", True),
        ("cuda.bindings.nvml.DeviceArch.KEPLER", False),  # an ImportError handler does not catch AttributeError
        ("cuda.bindings.driver.cuNewer", True), ("cuda.bindings.driver.CUresult.CUDA_SUCCESS", False),
        ("cuda.bindings.runtime.cudaError_t", False),
    }


IMPORT_CUDA_CORE = textwrap.dedent("""
    import json, sys
    import cuda.core, cuda.core.system
    served = sorted(m for m, module in sys.modules.items() if m.startswith("cuda.bindings.")
                    and not m.startswith(("cuda.bindings.cy", "cuda.bindings._bindings", "cuda.bindings._internal.nv"))
                    and "site-packages" in (getattr(module, "__file__", None) or ""))
    print(json.dumps([cuda.core.__version__, type(cuda.core.Device).__name__, served,
                      hasattr(cuda.core.system.typing, "DeviceArch")]))
""")


def _import_cuda_core():
    found = _find("cuda-core")
    if isinstance(found, str):
        pytest.skip(found)
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    env.update(PYTHONPATH=pythonpath(found[2], ROOT), CUBIND_CUDA_BINDINGS="1")
    done = subprocess.run([sys.executable, "-c", IMPORT_CUDA_CORE], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cuda_core_imports_on_cubind():
    import importlib.util

    pytest.importorskip("cuda", reason="cubind's cuda package is not built")
    if consumers_unserved():
        pytest.skip(consumers_unserved())
    if importlib.util.find_spec("cuda._cydriver") is None:
        pytest.skip("cubind's C-level modules (cuda._cydriver, ...: issue 44, item 1) are not in this build")
    version, device, nvidias_python_modules, device_arch = _import_cuda_core()
    assert version.startswith(CONSUMERS["cuda-core"]) and device == "type"
    assert nvidias_python_modules == []  # every module of cuda.bindings it imported is cubind's
    assert device_arch is True  # its system.typing.DeviceArch, derived from the served nvml
