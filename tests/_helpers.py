"""Helpers the test files share (imported, not fixtures): the one ``ok``, the
one ``error``, the import of cubind's driver package and a snippet run on the
emulated driver, the C-level modules of NVIDIA's each spec serves, the
stress tests' thread switch interval.

Kept out of conftest.py so that test files and the snippets they run in fresh
interpreters (PYTHONPATH from tests/_toolkit.pythonpath) can import them.
"""

import contextlib
import functools
import re
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]


def ok(result, *args):
    """Assert a binding's status is success (0) and return its outputs.

    ``ok(fn, *args)`` calls ``fn(*args)`` and names ``fn`` on failure;
    ``ok(result)`` checks a result the caller already has. Every module's
    bindings return ``(status, *outputs)``: no output gives None, one output
    itself, several a tuple.
    """
    name = None
    if callable(result):
        name = getattr(result, "__name__", repr(result))
        result = result(*args)
    status, *outputs = result
    assert status == 0, f"{name} returned {status!r}" if name else status
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def error(fn):
    """What calling ``fn()`` raises, as "Type: message", or "no error": the
    snippets run in fresh interpreters print it for the test to compare."""
    try:
        fn()
    except Exception as exc:
        return type(exc).__name__ + ": " + str(exc)
    return "no error"


def import_cubind_driver():
    """cubind's ``cuda`` module, or None where it is not built.

    NVIDIA's ``cuda`` namespace package (cuda.bindings, cuda.pathfinder) makes
    a bare ``import cuda`` succeed too; cubind's has the driver functions.
    """
    try:
        import cuda
    except ImportError:
        return None
    return cuda if hasattr(cuda, "cuInit") else None


def public_kinds(module):
    """Each public name of ``module`` with its kind: "function", "enum" (a
    class that is an int), "class" or "constant"; submodules left out. The
    names test classifies NVIDIA's modules and cubind's by this one rule."""
    import types

    kinds = {}
    for name in dir(module):
        if name.startswith("_"):
            continue
        value = getattr(module, name)
        if isinstance(value, types.ModuleType):
            continue
        if isinstance(value, type):
            kinds[name] = "enum" if issubclass(value, int) else "class"
        elif callable(value):
            kinds[name] = "function"
        elif isinstance(value, (int, float, str, bytes)):
            kinds[name] = "constant"
        else:
            kinds[name] = type(value).__name__
    return kinds


def run_on_fake(fake_driver, body, **env):
    """``body`` in a fresh interpreter on tests/fake_driver (after ``import
    cuda``); its stdout split into words."""
    import os
    import subprocess
    import sys
    import textwrap

    from tests._toolkit import pythonpath

    code = "import cuda\n" + textwrap.dedent(body)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=pythonpath(), CUBIND_CUDA_LIBRARY=str(fake_driver), **env))
    assert done.returncode == 0, done.stderr
    return done.stdout.split()


def run_json_on_fake(fake_driver, code, env=None):
    """``code`` in a fresh interpreter on tests/fake_driver with one device;
    the JSON its last line of output holds, and its stderr."""
    import json
    import os
    import subprocess
    import sys

    from tests._toolkit import ROOT, pythonpath

    full_env = dict(os.environ, CUBIND_CUDA_LIBRARY=str(fake_driver), PYTHONPATH=pythonpath(ROOT),
                    FAKE_DEVICE_COUNT="1", **(env or {}))
    done = subprocess.run([sys.executable, "-c", code], env=full_env, cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


def compat_modules():
    """{NVIDIA's module (cydriver): cubind's module serving it (cuda._cydriver)}, from the specs."""
    found = {}
    for path in sorted((_ROOT / "bindings").glob("*.toml")):
        # Read without tomllib, which Python 3.10 lacks: [library]'s name is
        # the file's first `name =`, [compat] the last table.
        text = path.read_text()
        compat = text.split("\n[compat]\n", 1)[1] if "\n[compat]\n" in text else None
        if compat is None:
            continue
        package = re.search(r'^name\s*=\s*"([^"]+)"', text, re.M)[1]
        module = re.search(r'^module\s*=\s*"([^"]+)"', compat, re.M)[1]
        serves = re.search(r'^serves\s*=\s*"([^"]+)"', compat, re.M)[1]
        found[serves.rsplit(".", 1)[1]] = f"{package}.{module}"
    return found


def free_port():
    """bench/two_parts.py's ``free_port`` (a TCP port a listener can bind,
    below the kernel's ephemeral range): the benches' parts and the tests'
    choose their ports one way."""
    return _two_parts().free_port()


@functools.cache
def _two_parts():
    """bench/two_parts.py, loaded once (bench/ is no package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("_bench_two_parts", _ROOT / "bench" / "two_parts.py")
    two_parts = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(two_parts)
    return two_parts


@contextlib.contextmanager
def switching(interval):
    """The interpreter switches threads every ``interval`` seconds meanwhile
    (1e-6: as often as CPython allows), for the thread stress tests."""
    previous = sys.getswitchinterval()
    sys.setswitchinterval(interval)
    try:
        yield
    finally:
        sys.setswitchinterval(previous)
