"""One spec file binds a library: a tiny C library (a header and its shared
object, compiled here with the system's C compiler) and a spec beside it
give, through cubind-gen and setup.py's own functions, an importable
package whose functions return ``(status, value)``. Nothing else is edited:
no module list, no package list, no __init__.py. No GPU, no CUDA."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = Path(os.environ.get("CUBIND_GEN", ROOT / "generator" / "build" / "cubind-gen"))

HEADER = """\
#ifndef TINY_H
#define TINY_H

typedef enum { TINY_SUCCESS = 0, TINY_ERROR_OVERFLOW = 1 } tinyResult;

/**
 * \\brief Adds two numbers.
 * \\param[in] a The first.
 * \\param[in] b The second.
 * \\param[out] sum Returned a + b.
 * \\return TINY_SUCCESS, or TINY_ERROR_OVERFLOW when the sum is not an int.
 */
tinyResult tinyAdd(int a, int b, int *sum);

#endif
"""

SOURCE = """\
#include <limits.h>
#include "tiny.h"

tinyResult tinyAdd(int a, int b, int *sum) {
    if ((b > 0 && a > INT_MAX - b) || (b < 0 && a < INT_MIN - b)) return TINY_ERROR_OVERFLOW;
    *sum = a + b;
    return TINY_SUCCESS;
}
"""

# All a library needs: its package and modules, its header and status type,
# and where the loader finds its shared object.
SPEC = """\
[library]
name = "tiny"
c_module = "ctiny"
py_module = "_tiny"
headers = ["tiny.h"]
status_type = "tinyResult"

[loader]
sonames = ["libtiny.so"]
env_var = "CUBIND_TINY_LIBRARY"
"""

# Builds the spec's package in place with setup.py's functions and its
# build_ext (the ones `python setup.py build_ext --inplace` uses), run in the
# library's own tree; the header is found with -I, as for any library not CUDA's.
BUILD = """
import importlib.util, os, sys
spec = importlib.util.spec_from_file_location("cubind_setup", sys.argv[1])
setup_py = importlib.util.module_from_spec(spec)
spec.loader.exec_module(setup_py)
setup_py.setup(script_args=["build_ext", "--inplace", "-q", "-I", os.getcwd()], packages=setup_py.packages("."),
               ext_modules=setup_py.extensions("."), cmdclass={"build_ext": setup_py.build_ext})
"""

CALL = """
import tiny
assert tiny.__file__.startswith(sys.argv[1]), tiny.__file__
print(tiny.tinyAdd(2, 3))
print(tiny.tinyAdd(2**31 - 1, 1))
import inspect
print("tinyAdd" + str(inspect.signature(tiny.tinyAdd)), sorted(tiny.__all__))
"""


def _missing(what):
    if os.environ.get("CI"):
        pytest.fail(what)
    pytest.skip(what)


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """The tiny library's tree: tiny.h, libtiny.so and bindings/tiny.toml."""
    if not GENERATOR.exists():
        _missing(f"the generator is not built ({GENERATOR})")
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("no C compiler")
    for support in ("_cubind.loader", "_cubind.convert"):
        if importlib.util.find_spec(support) is None:
            _missing(f"{support} is not built (setup.py build_ext --inplace)")
    tree = tmp_path_factory.mktemp("tiny")
    (tree / "tiny.h").write_text(HEADER)
    (tree / "tiny.c").write_text(SOURCE)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tree / "libtiny.so"), str(tree / "tiny.c")], check=True)
    (tree / "bindings").mkdir()
    (tree / "bindings" / "tiny.toml").write_text(SPEC)
    return tree


def _run(args, tree, **env):
    pythonpath = os.pathsep.join([str(tree), str(ROOT)])
    return subprocess.run(args, cwd=tree, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": pythonpath, **env})


def test_one_spec_file_binds_a_library(library):
    generated = _run([str(GENERATOR), "--spec", str(library / "bindings" / "tiny.toml"), "-I", str(library),
                      "--templates", str(ROOT / "generator" / "templates"), "--out", str(library)], library)
    assert generated.returncode == 0, generated.stderr
    made = sorted(p.name for p in (library / "tiny").iterdir())
    assert made == ["__init__.py", "__init__.pyi", "_tiny.pxd", "_tiny.pyx", "ctiny.pxd", "ctiny.pyx", "py.typed"]

    built = _run([sys.executable, "-c", BUILD, str(ROOT / "setup.py")], library)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]

    called = _run([sys.executable, "-c", "import sys\n" + CALL, str(library)], library,
                  CUBIND_TINY_LIBRARY=str(library / "libtiny.so"))
    assert called.returncode == 0, called.stderr
    assert called.stdout.splitlines() == [
        "(<tinyResult.TINY_SUCCESS: 0>, 5)",
        "(<tinyResult.TINY_ERROR_OVERFLOW: 1>, None)",
        "tinyAdd(a, b) ['sizeof', 'tinyAdd', 'tinyResult']",
    ]


# A library whose nonblocking calls return a status or a request in one
# pointer (UCX's ucs_status_ptr_t), and whose flags are an enum naming no type.
REQUESTS_HEADER = """\
#ifndef REQS_H
#define REQS_H
#include <stddef.h>

typedef enum { REQS_OK = 0, REQS_INPROGRESS = 1, REQS_ERR_NO_MEMORY = -4, REQS_ERR_LAST = -100 } reqsStatus;
typedef void *reqsStatusPtr;
enum { REQS_FLAG_FAST = 1u << 0, REQS_FLAG_SYNC = 1u << 3 };

/** Sends `count` bytes: done at once (0), failing (1), or in progress (2). */
reqsStatusPtr reqsSend(int how, size_t count);
/** A request's status. */
reqsStatus reqsCheck(void *request);

#endif
"""

REQUESTS_SOURCE = """\
#include <stdint.h>
#include "reqs.h"

static int pending = 7;

reqsStatusPtr reqsSend(int how, size_t count) {
    (void)count;
    if (how == 0) return NULL;
    if (how == 1) return (reqsStatusPtr)(intptr_t)REQS_ERR_NO_MEMORY;
    return &pending;
}

reqsStatus reqsCheck(void *request) { return request == &pending ? REQS_INPROGRESS : REQS_OK; }
"""

REQUESTS_SPEC = """\
[library]
name = "reqs"
c_module = "creqs"
py_module = "_reqs"
headers = ["reqs.h"]
status_type = "reqsStatus"

[loader]
sonames = ["libreqs.so"]
env_var = "CUBIND_REQS_LIBRARY"

[conventions]
status_pointer = { type = "reqsStatusPtr", first_error = "REQS_ERR_LAST", pending = "REQS_INPROGRESS" }
failure_members = { reqsStatus = "REQS_ERR_LAST" }
"""

REQUESTS_CALL = """
import reqs
print(reqs.reqsSend(0, 8))
print(reqs.reqsSend(1, 8))
status, request = reqs.reqsSend(2, 8)
print(status, request != 0, reqs.reqsCheck(request))
print(reqs.REQS_FLAG_FAST, reqs.REQS_FLAG_SYNC)
"""


def test_a_status_pointer_gives_the_status_and_the_request(tmp_path):
    """conventions.status_pointer: NULL is the success member, an address
    from the first error up is that status, another is a request in progress
    whose address Python gets; an enum naming no type gives constants."""
    if not GENERATOR.exists():
        _missing(f"the generator is not built ({GENERATOR})")
    cc = shutil.which(os.environ.get("CC", "cc"))
    if cc is None:
        pytest.skip("no C compiler")
    tree = tmp_path
    (tree / "reqs.h").write_text(REQUESTS_HEADER)
    (tree / "reqs.c").write_text(REQUESTS_SOURCE)
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tree / "libreqs.so"), str(tree / "reqs.c")], check=True)
    (tree / "bindings").mkdir()
    (tree / "bindings" / "reqs.toml").write_text(REQUESTS_SPEC)
    generated = _run([str(GENERATOR), "--spec", str(tree / "bindings" / "reqs.toml"), "-I", str(tree),
                      "--templates", str(ROOT / "generator" / "templates"), "--out", str(tree)], tree)
    assert generated.returncode == 0, generated.stderr
    built = _run([sys.executable, "-c", BUILD, str(ROOT / "setup.py")], tree)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    called = _run([sys.executable, "-c", REQUESTS_CALL], tree, CUBIND_REQS_LIBRARY=str(tree / "libreqs.so"))
    assert called.returncode == 0, called.stderr
    assert called.stdout.splitlines() == [
        "(<reqsStatus.REQS_OK: 0>, None)",
        "(<reqsStatus.REQS_ERR_NO_MEMORY: -4>, None)",
        "reqsStatus.REQS_INPROGRESS True (<reqsStatus.REQS_INPROGRESS: 1>,)",
        "1 8",
    ]
