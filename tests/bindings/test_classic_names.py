"""Every public name of NVIDIA's classic modules exists in cubind's, with the
same kind (API.md "Types"): ``cuda.bindings.driver`` in ``cuda``,
``.runtime`` in ``cuda.cudart``, ``.nvrtc`` in ``nvrtc``, each name a
function, an enum, a class or a constant in both.

NVIDIA's names come from cuda-bindings 13.0.x (a test dependency,
scripts/_common.sh), listed by a fresh interpreter so that its modules never
meet cubind's in one process. The names cubind leaves out on purpose, each
with the reason, are in tests/data/classic_names.json; an entry there that is
no longer needed fails too, so the list stays short and true.
"""

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests._helpers import import_cubind_driver, public_kinds
from tests._toolkit import pythonpath

ROOT = Path(__file__).resolve().parents[2]
EXEMPT = ROOT / "tests" / "data" / "classic_names.json"
MODULES = {"driver": "cuda", "runtime": "cuda.cudart", "nvrtc": "nvrtc"}


def _bindings_missing():
    try:
        version = importlib.metadata.version("cuda-bindings")
    except importlib.metadata.PackageNotFoundError:
        return "NVIDIA's cuda-bindings is not installed (pip install cuda-bindings==13.0.3)"
    if not version.startswith("13.0."):
        return f"the names are checked against cuda-bindings 13.0.x; {version} is installed"
    cuda = import_cubind_driver()
    if cuda is None:
        return "cubind's cuda driver package is not built"
    if cuda.CUDA_VERSION // 10 != 1300:
        # A tree generated from other headers (scripts/test-toolkits.sh: 12.9, the newest 13.x)
        # has the names of its own toolkit.
        return f"the names are checked for a build from CUDA 13.0's headers; this one is from {cuda.CUDA_VERSION}"
    return None


pytestmark = pytest.mark.skipif(_bindings_missing() is not None, reason=str(_bindings_missing()))

LIST_NVIDIA = f"""
import json
import cuda.bindings
from tests._helpers import public_kinds
assert "cubind" not in (cuda.bindings.__file__ or ""), cuda.bindings.__file__
from cuda.bindings import {", ".join(MODULES)}
print(json.dumps({{name: public_kinds(globals()[name]) for name in {list(MODULES)!r}}}))
"""


@pytest.fixture(scope="module")
def nvidia():
    env = {k: v for k, v in os.environ.items() if k != "CUBIND_CUDA_BINDINGS"}
    env["PYTHONPATH"] = pythonpath(ROOT)
    done = subprocess.run([sys.executable, "-c", LIST_NVIDIA], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def exempt():
    return json.loads(EXEMPT.read_text())


def _exempt_reason(exempt, module, name):
    reason = exempt.get(module, {}).get(name)
    if reason is not None:
        return reason
    for pattern, why in exempt.get("patterns", {}).items():
        if re.fullmatch(pattern, name):
            return why
    return None


@pytest.mark.parametrize("module", list(MODULES))
def test_every_classic_name_exists_with_its_kind(module, nvidia, exempt):
    import importlib

    ours = public_kinds(importlib.import_module(MODULES[module]))
    differences = []
    for name, kind in sorted(nvidia[module].items()):
        if _exempt_reason(exempt, module, name) is not None:
            continue
        if name not in ours:
            differences.append(f"{name}: missing (NVIDIA's is a {kind})")
        elif ours[name] != kind:
            differences.append(f"{name}: a {ours[name]} here, a {kind} in NVIDIA's")
    assert not differences, f"{MODULES[module]} against cuda.bindings.{module}:\n  " + "\n  ".join(differences)


@pytest.mark.parametrize("module", list(MODULES))
def test_every_exempt_name_is_still_left_out(module, nvidia, exempt):
    import importlib

    ours = public_kinds(importlib.import_module(MODULES[module]))
    stale = [name for name in exempt.get(module, {})
             if name not in nvidia[module] or ours.get(name) == nvidia[module][name]]
    assert not stale, f"{EXEMPT.name} [{module}] lists names that need no exemption now: {stale}"
