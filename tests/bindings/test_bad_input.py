"""The type-fuzz of every generated package, from its spec's model (issue 45):
every input of every bound function, given each wrong value while the other
arguments are harmless, is a TypeError, ValueError or OverflowError whose
message starts with the parameter's name, raised by the conversion before the
library is opened or called. One test for every bindings/*.toml whose package
is built; what a library checks of its own functions stays in its file
(test_nvrtc_bad_input.py, test_driver_arguments.py, ...).

The calls run in a fresh interpreter whose library is a file that does not
exist (the spec's ``[loader] env_var``): a wrong value the conversion took
would reach the loader and come back as LibraryNotFoundError, never as a C
call with a bad argument in the test's process."""

import importlib
import json
import os
import re
import subprocess
import sys

import pytest

from tests._toolkit import pythonpath
from tests.generator_integration.test_generator_cuda_h import ROOT, run_generator


def specs():
    """{spec name: (module, loader env_var)} for bindings/*.toml, read
    without tomllib (Python 3.10 lacks it): [library]'s name, and its
    py_module where that is a public submodule (``cuda.cudart``)."""
    found = {}
    for path in sorted((ROOT / "bindings").glob("*.toml")):
        text = path.read_text()
        library = re.search(r"^\[library\]\n(.*?)(?=^\[)", text, re.M | re.S)[1]
        package = re.search(r'^name\s*=\s*"([\w.]+)"', library, re.M)[1]
        py_module = re.search(r'^py_module\s*=\s*"(\w+)"', library, re.M)
        module = package if py_module is None or py_module[1].startswith("_") else f"{package}.{py_module[1]}"
        env_var = re.search(r'^env_var\s*=\s*"(\w+)"', text.split("\n[loader]\n", 1)[1], re.M)[1]
        found[path.stem] = (module, env_var)
    return found


SPECS = specs()

# What each library's own copy of this test held it to (test_cufile.py,
# test_nvml.py, test_nvfatbin.py), and about what the others check today:
# fewer checks than these is a model that lost its functions (a new spec: one
# function, at least).
AT_LEAST = {"cufile": 4 * 40, "nvml": 4 * 400, "nvfatbin": 4 * 20, "nvrtc": 4 * 30, "nvjitlink": 4 * 20,
            "nvvm": 4 * 20, "driver": 4 * 1000, "runtime": 4 * 750}

# A message the generated code fails to write: (spec, function, parameter)
# and why. Each must still be refused before the library (a TypeError); it
# fails this test once it names its parameter, so that it leaves this list.
KNOWN_UNNAMED = {}

# Run in the child: each call's outcome, as [function, parameter, wrong value,
# exception type (or "returned"), message].
FUZZ = r"""
import importlib, json, sys

module = importlib.import_module(sys.argv[1])
with open(sys.argv[2]) as f:
    functions = json.load(f)

# A stranger object, NaN, an int past 64 bits, a list of one. An int
# parameter takes a finite float as C converts it (docs/API.md), not NaN; a
# float parameter takes the NaN and converts the int: not wrong there.
BAD_VALUES = [("object()", object()), ("nan", float("nan")), ("1 << 70", 1 << 70), ("[1 << 70]", [1 << 70])]
FLOATS_TAKE = ("nan", "1 << 70")
ARRAYS = ("params/array", "params/in_string_array", "params/option_values")
NULLS = ("params/in_handle", "params/record_in", "params/array", "params/in_voidptr", "params/in_string_array",
         "params/option_values", "params/in_callback", "params/in_userdata")


def enum_member(name):
    return next(iter(getattr(module, name)))


def harmless(param):
    # A value the parameter's conversion takes (no library call needs it).
    name = param["conversion"]["name"]
    if name == "params/record_value":
        return getattr(module, param["conversion"]["record_class"])()
    if param["type"].get("kind") == "enum":
        return enum_member(param["type"]["name"])
    if name == "params/in_string":
        return b"x"
    if name == "params/in_float":
        return 0.0
    return None if name in NULLS else 0


def item(param):
    # One item an array parameter takes.
    element = param["conversion"].get("element", {}).get("name")
    if element == "params/element_enum":
        return enum_member(param["type"]["inner"][0]["name"])
    if element == "params/element_record":
        return getattr(module, param["type"]["inner"][0]["name"])()
    if param["conversion"]["name"] == "params/in_string_array":
        return b"x"
    return 0


def arguments(inputs, p, bad):
    # An array's count makes it one item long, so that its item is converted
    # (a count of 0 reads none, as in C, and the call would go to the
    # library), or longer where another array of that count is counted less
    # (cuTensorMapEncodeIm2col's corners: tensorRank - 2); the other arrays
    # of that count get as many good items as it says.
    count = p.get("count_param") if p["conversion"]["name"] in ARRAYS else None
    shared = [q for q in inputs if count and q.get("count_param") == count and q["conversion"]["name"] in ARRAYS]
    n = max([1 - p.get("count_offset", 0)] + [-q.get("count_offset", 0) for q in shared])
    args = []
    for q in inputs:
        if q is p:
            args.append(bad)
        elif count and q["name"] == count:
            args.append(n)
        elif q in shared:
            args.append([item(q)] * (n + q.get("count_offset", 0)))
        else:
            args.append(harmless(q))
    return args


outcomes = []
for f in functions:
    inputs = [p for p in f["params"] if p["conversion"].get("input") is not False]
    for p in inputs:
        for shown, bad in BAD_VALUES:
            if p["conversion"]["name"] == "params/in_float" and shown in FLOATS_TAKE:
                continue
            name = p.get("py_name", p["name"])
            try:
                getattr(module, f["name"])(*arguments(inputs, p, bad))
                outcomes.append([f["name"], name, shown, "returned", ""])
            except Exception as exc:   # LibraryNotFoundError: the call reached the loader
                outcomes.append([f["name"], name, shown, type(exc).__name__, str(exc)])
print(json.dumps(outcomes))
"""


@pytest.mark.parametrize("spec", sorted(SPECS))
def test_every_parameter_refuses_a_wrong_type_naming_itself(spec, tmp_path):
    module_name, env_var = SPECS[spec]
    try:  # first: where the build left the package out, the generator lacks its headers too (UCX's)
        module = importlib.import_module(module_name)
    except ImportError:
        module = None
    if module is None:
        pytest.skip(f"cubind's {module_name} package is not built ({spec}.toml's headers missing)")
    model = json.loads(run_generator("--spec", str(ROOT / "bindings" / f"{spec}.toml"), "--dump-model"))
    functions = [f for f in model["functions"] if "skip_reason" not in f]
    if not hasattr(module, functions[0]["name"]):
        pytest.skip(f"cubind's {module_name} package is not built ({spec}.toml's headers missing)")
    (tmp_path / "functions.json").write_text(json.dumps(functions))
    env = dict(os.environ, PYTHONPATH=pythonpath(), **{env_var: str(tmp_path / "no-such-library.so")})
    done = subprocess.run([sys.executable, "-c", FUZZ, module_name, str(tmp_path / "functions.json")], env=env,
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    outcomes = json.loads(done.stdout.strip().splitlines()[-1])

    wrong, unnamed = [], set()
    for function, name, bad, raised, message in outcomes:
        known = (spec, function, name) in KNOWN_UNNAMED
        if raised == "LibraryNotFoundError":
            wrong.append(f"{function}({name}={bad}): taken, the call went to the library")
        elif raised not in ("TypeError", "ValueError", "OverflowError"):
            wrong.append(f"{function}({name}={bad}): {raised} {message[:200]}")
        elif not message.startswith(name) and not (known and raised == "TypeError"):
            wrong.append(f"{function}({name}={bad}): {raised} not naming {name!r}: {message[:200]}")
        elif not message.startswith(name):
            unnamed.add((spec, function, name))
    assert not wrong, f"{len(wrong)} of {len(outcomes)} wrong values of {spec} not refused by name:\n" + \
        "\n".join(wrong[:40])
    fixed = {key for key in KNOWN_UNNAMED if key[0] == spec} - unnamed
    assert not fixed, f"these now name their parameter: drop them from KNOWN_UNNAMED: {sorted(fixed)}"
    assert len(outcomes) >= AT_LEAST.get(spec, 4), len(outcomes)
    # Every input of every function, each wrong value (a float's two fewer).
    floats = sum(p["conversion"]["name"] == "params/in_float" for f in functions for p in f["params"])
    inputs = sum(p["conversion"].get("input") is not False for f in functions for p in f["params"])
    assert len(outcomes) == 4 * inputs - 2 * floats, (len(outcomes), inputs, floats)
