"""API.md "For library authors": a module compiled against NVIDIA's C-level
modules finds every function it imports in cubind's module serving that name
(bindings/*.toml ``[compat]``: ``cuda._cydriver`` for ``cuda.bindings.cydriver``, ...),
in ``__pyx_capi__`` under exactly NVIDIA's signature text, which Cython compares
with the text it compiled the consumer with.

NVIDIA's capsules come from the cuda-bindings of the build's toolkit: the
installed one (13.0.x for CUDA 13.0's headers: a test dependency,
scripts/_common.sh), or the one unpacked in the directory CUBIND_NVIDIA_BINDINGS
names (scripts/toolkit-build.sh: 13.5.x for the newest headers), listed by a
fresh interpreter without cubind's hook, so that NVIDIA's modules
never meet cubind's in one process. What cubind's module lacks or names
otherwise, each with the reason, is in tests/data/cy_capsules.json; an entry
there that is no longer needed fails too. The counts per module (same /
different with a reason / missing with a reason / cubind's only) are printed
(``pytest -s``) and recorded as the test's properties.
"""

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._helpers import compat_modules, import_cubind_driver
from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]
REASONS = ROOT / "tests" / "data" / "cy_capsules.json"
# A site directory holding the cuda-bindings to compare with, ahead of the installed one.
NVIDIA_SITE = os.environ.get("CUBIND_NVIDIA_BINDINGS")


MODULES = compat_modules()

# Each capsule's name, by a module's __pyx_capi__, as JSON: run in a fresh interpreter.
LIST_CAPSULES = """
import ctypes, importlib, importlib.util, json, sys
name = ctypes.pythonapi.PyCapsule_GetName
name.restype, name.argtypes = ctypes.c_char_p, [ctypes.py_object]
found = {}
for module in sys.argv[1:]:
    try:
        capi = importlib.import_module(module).__pyx_capi__
    except ImportError:
        continue  # not in this cuda-bindings (cynvml before 13.1), or a package not built
    found[module] = {function: name(capsule).decode() for function, capsule in capi.items()}
print(json.dumps(found))
"""


def _nvidia_version():
    """The version of the cuda-bindings compared with, or None."""
    search = [NVIDIA_SITE] if NVIDIA_SITE else sys.path
    found = next(iter(importlib.metadata.distributions(name="cuda-bindings", path=search)), None)
    return found.version if found else None


def _bindings_missing():
    version = _nvidia_version()
    if version is None:
        where = NVIDIA_SITE or "this environment"
        return f"NVIDIA's cuda-bindings is not in {where} (pip install cuda-bindings==13.0.3)"
    cuda = import_cubind_driver()
    if cuda is None:
        return "cubind's cuda driver package is not built"
    built = f"{cuda.CUDA_VERSION // 1000}.{cuda.CUDA_VERSION % 1000 // 10}"
    if ".".join(version.split(".")[:2]) != built:
        return f"the capsules are compared with the cuda-bindings of the build's CUDA {built}; {version} is installed"
    return None


pytestmark = pytest.mark.skipif(_bindings_missing() is not None, reason=str(_bindings_missing()))


def _list(modules, env):
    done = subprocess.run([sys.executable, "-c", LIST_CAPSULES, *modules], env=env, cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def nvidia():
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    env["PYTHONPATH"] = pythonpath(*filter(None, [NVIDIA_SITE, ROOT]))
    found = _list([f"cuda.bindings.{m}" for m in MODULES], env)
    return {name.rsplit(".", 1)[1]: capsules for name, capsules in found.items()}


@pytest.fixture(scope="module")
def ours():
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    env["PYTHONPATH"] = pythonpath(ROOT)
    found = _list(list(MODULES.values()), env)
    return {nvidia_name: found[module] for nvidia_name, module in MODULES.items() if module in found}


@pytest.fixture(scope="module")
def reasons():
    return json.loads(REASONS.read_text())


def _counts(module, nvidia, ours, reasons):
    """same / different / missing / cubind's only, and what no reason covers."""
    theirs, mine = nvidia[module], ours[module]
    missing_ok, different_ok = reasons["missing"].get(module, {}), reasons["different"].get(module, {})
    same = [f for f in theirs if mine.get(f) == theirs[f]]
    different = [f for f in theirs if f in mine and mine[f] != theirs[f]]
    missing = [f for f in theirs if f not in mine]
    unexplained = [f"{f}: cubind's text {mine[f]!r}, NVIDIA's {theirs[f]!r}"
                   for f in different if f not in different_ok]
    unexplained += [f"{f}: not exported (NVIDIA's text {theirs[f]!r})" for f in missing if f not in missing_ok]
    counts = {"same": len(same), "different": len(different), "missing": len(missing),
              "cubind_only": len([f for f in mine if f not in theirs])}
    return counts, unexplained


@pytest.mark.parametrize("module", list(MODULES))
def test_every_capsule_has_nvidias_name_and_text(module, nvidia, ours, reasons, record_property):
    if module not in nvidia:
        pytest.skip(f"cuda.bindings.{module} is not in the installed cuda-bindings")
    if module not in ours:
        pytest.skip(f"{MODULES[module]} is not built (its library's headers were missing)")
    counts, unexplained = _counts(module, nvidia, ours, reasons)
    record_property(module, counts)
    print(f"\n{MODULES[module]} as cuda.bindings.{module}: {counts['same']} same, {counts['different']} different "
          f"with a reason, {counts['missing']} missing with a reason ({counts['cubind_only']} cubind's only)")
    assert not unexplained, f"{MODULES[module]} against cuda.bindings.{module}:\n  " + "\n  ".join(unexplained)


@pytest.mark.parametrize("module", list(MODULES))
def test_every_listed_difference_is_still_one(module, nvidia, ours, reasons):
    if module not in nvidia or module not in ours:
        pytest.skip(f"cuda.bindings.{module} or {MODULES[module]} is not here")
    theirs, mine = nvidia[module], ours[module]
    # An entry for a function this version of NVIDIA's module lacks explains
    # another version's (the file serves 13.0.x and the newest 13.x).
    stale = [f for f in reasons["missing"].get(module, {}) if f in theirs and f in mine]
    stale += [f for f in reasons["different"].get(module, {}) if f in theirs and mine.get(f) == theirs[f]]
    assert not stale, f"{REASONS.name} [{module}] lists functions that need no reason now: {stale}"


def test_every_module_nvidia_has_is_served(reasons):
    """Each C-level module of the installed cuda-bindings has a spec serving it."""
    import importlib.util

    if NVIDIA_SITE:
        locations = [Path(NVIDIA_SITE) / "cuda" / "bindings"]
    else:
        spec = importlib.util.find_spec("cuda.bindings")
        assert spec is not None and spec.submodule_search_locations
        locations = spec.submodule_search_locations
    theirs = {p.name.split(".")[0] for loc in locations for p in Path(loc).glob("cy*.pxd")}
    unserved = sorted(theirs - set(MODULES) - set(reasons["unserved"]))
    assert not unserved, f"NVIDIA's C-level modules no spec serves, with no reason in {REASONS.name}: {unserved}"
    served = sorted(set(reasons["unserved"]) & set(MODULES))
    assert not served, f"{REASONS.name} lists as unserved modules a spec serves now: {served}"
