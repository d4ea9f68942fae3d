"""A stand-in C compiler and linker for tests/packaging/test_build_layouts.py.

Given as CC and LDSHARED to ``setup.py build_ext``: a compile (``-c``) runs
the real compiler's preprocessor only, with its default include directories
cut down to the C library's (``-nostdinc``, then gcc's own headers and
/usr/include): CUDA headers that a machine keeps in /usr/local/include, or
anywhere else a user's compiler would not look, cannot be found by accident.
Every file the preprocessor opened is appended, as one JSON line, to the file
named by CUBIND_LAYOUT_RECORD. A link only creates its output file.
"""

import json
import os
import subprocess
import sys


def _system_dirs(cc):
    out = subprocess.run([cc, "-print-file-name=include"], capture_output=True, text=True, check=True).stdout
    arch = subprocess.run([cc, "-dumpmachine"], capture_output=True, text=True, check=True).stdout.strip()
    return [out.strip(), f"/usr/include/{arch}", "/usr/include"]


def _compile(args):
    source = next(a for a in args if a.endswith(".c"))
    obj = args[args.index("-o") + 1]
    keep = [a for a in args if a.startswith(("-I", "-D", "-U"))]
    cc = os.environ.get("CUBIND_LAYOUT_REAL_CC", "gcc")
    cmd = [cc, "-M", "-nostdinc"] + [f"-isystem{d}" for d in _system_dirs(cc)] + keep + [source]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode:
        sys.stderr.write(run.stderr)
        return run.returncode
    files = run.stdout.replace("\\\n", " ").split(":", 1)[1].split()
    with open(os.environ["CUBIND_LAYOUT_RECORD"], "a") as f:
        f.write(json.dumps({"source": source, "includes": keep, "files": files}) + "\n")
    open(obj, "w").close()
    return 0


def _link(args):
    open(args[args.index("-o") + 1], "w").close()
    return 0


if __name__ == "__main__":
    argv = sys.argv[1:]
    sys.exit(_compile(argv) if "-c" in argv else _link(argv))
