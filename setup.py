"""Builds the extension modules from the committed generated Cython sources.

Building needs Cython and the CUDA headers (for the types the C layer
declares with ``cdef extern``), not libclang: regenerating is separate
(scripts/regenerate.sh).

Cythonizing happens in ``build_ext``, not when this file is read, so an sdist
carries the ``.pyx``/``.pxd`` sources and no generated C. ``build_ext`` prints
a line per module with its elapsed time, compiles the modules in parallel
(a job per two CPUs unless ``-j`` says otherwise) and leaves up-to-date modules
alone: ``python setup.py build_ext --inplace`` (what scripts/ run) keeps its
objects in ``build/``, so a second run, or a wheel built from the same tree
with ``python -m build --wheel --no-isolation``, compiles nothing that did
not change. ``CUBIND_NO_COMPILE=1`` turns "would compile" into an error, for
checks that must reuse that build (tests/test_packaging.py).
"""

import json
import os
import re
import shutil
import sys
import time

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext as _build_ext

try:
    from setuptools.modified import newer_group
except ImportError:  # setuptools < 69
    from distutils.dep_util import newer_group

# binding=False keeps module functions plain builtins (the call overhead the
# benchmarks measure); embedsignature in the "clinic" format writes
# "name(params)\n--\n\n" before each docstring, which is where CPython's
# inspect.signature() finds a builtin's parameters.
CYTHON_DIRECTIVES = {
    "language_level": 3,
    "binding": False,
    "boundscheck": False,
    "wraparound": False,
    "embedsignature": True,
    "embedsignature.format": "clinic",
}

# The generated Python layers say `# cython: embedsignature=False` in their
# header (their docstrings start with a plain signature line instead), and a
# header directive wins over any given to Cython. Those modules are compiled
# through a one-line wrapper: the header less these directives, the module
# docstring, and `include` of the unchanged source (whose header is then an
# ordinary comment; tracebacks still name it).
OVERRIDDEN_HEADER_DIRECTIVES = ("embedsignature",)

# (module, needs the CUDA headers); the driver's Python layer first: it takes
# most of the build, so it starts at once while the others share the rest.
MODULES = [
    ("cuda._driver", True),
    ("cuda.cudart", True),
    ("cuda.cdriver", True),
    ("cuda.cruntime", True),
    ("nvrtc._nvrtc", True),
    ("nvrtc.cnvrtc", True),
    ("nvjitlink._nvjitlink", True),
    ("nvjitlink.cnvjitlink", True),
    ("nvvm._nvvm", True),
    ("nvvm.cnvvm", True),
    ("cubind._convert", False),
    ("cubind._loader", False),
    ("cubind._launch", True),
    ("cubind._dlpack", False),
    ("cubind._memory", False),
]


def cuda_include_dir():
    candidates = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")]
    nvcc = shutil.which("nvcc")
    if nvcc:
        candidates.append(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))))
    candidates.append("/usr/local/cuda")
    for root in filter(None, candidates):
        include = os.path.join(root, "include")
        if os.path.exists(os.path.join(include, "cuda.h")):
            return include
    sys.exit("cubind: CUDA headers not found; set CUDA_HOME to the toolkit (searched: "
             + ", ".join(filter(None, candidates)) + ")")


def log(message):
    # One write per line: the modules compile in parallel threads.
    sys.stdout.write(f"cubind build: {message}\n")
    sys.stdout.flush()


class build_ext(_build_ext):
    """Cythonizes, then compiles each module with a line of progress per step."""

    def finalize_options(self):
        super().finalize_options()
        if not self.parallel:
            # Half the CPUs (cloud vCPUs are mostly hyperthreads): on 2 vCPUs
            # the two large modules took 280 s compiled side by side, 211 s
            # one after the other. -j N overrides.
            self.parallel = max(1, (os.cpu_count() or 1) // 2)
        include = cuda_include_dir()
        for ext in self.extensions:
            if getattr(ext, "needs_cuda", False) and include not in ext.include_dirs:
                ext.include_dirs.append(include)

    def run(self):
        self._start = time.monotonic()
        self._cythonize()
        super().run()
        log(f"done in {time.monotonic() - self._start:.0f} s")

    def _elapsed(self):
        return f"{time.monotonic() - self._start:.0f} s"

    def _cythonize(self):
        import Cython
        from Cython.Build import cythonize

        # Cython regenerates a .c file when its .pyx or a .pxd it cimports is
        # newer, not when the directives or Cython change: those are recorded
        # here, and a change regenerates every module once.
        stamp = os.path.join(os.path.dirname(self.build_temp) or ".", "cubind-cython.json")
        options = json.loads(json.dumps({"cython": Cython.__version__, "directives": CYTHON_DIRECTIVES,
                                         "overridden": OVERRIDDEN_HEADER_DIRECTIVES}))
        try:
            with open(stamp) as f:
                force = json.load(f) != options
        except (OSError, ValueError):
            force = True
        force = force or self.force
        if force and os.environ.get("CUBIND_NO_COMPILE"):
            sys.exit("cubind: CUBIND_NO_COMPILE is set but every module would be cythonized "
                     f"(Cython or directives differ from {stamp})")
        wrappers = os.path.join(os.path.dirname(stamp), "cython-src")
        for ext in self.extensions:
            ext.sources = [_wrap(src, wrappers) for src in ext.sources]
        c_files = [_c_file(src) for ext in self.extensions for src in ext.sources if src.endswith(".pyx")]
        before = {c: _mtime(c) for c in c_files}
        log(f"cythonizing {len(self.extensions)} modules where out of date (Cython {Cython.__version__}"
            + (", all: first build or options changed)" if force else ")"))
        generated = cythonize(self.extensions, nthreads=min(self.parallel, len(self.extensions)),
                              compiler_directives=CYTHON_DIRECTIVES, force=force)
        # Keep setuptools' own Extension objects (finalize_options set them
        # up); take the C sources and dependencies Cython found.
        by_name = {ext.name: ext for ext in generated}
        for ext in self.extensions:
            ext.sources, ext.depends = by_name[ext.name].sources, by_name[ext.name].depends
        os.makedirs(os.path.dirname(stamp), exist_ok=True)
        with open(stamp, "w") as f:
            json.dump(options, f)
        regenerated = [c for c in c_files if _mtime(c) != before[c]]
        log(f"cythonized {len(regenerated)} of {len(c_files)} ({self._elapsed()})")

    def build_extension(self, ext):
        target = self.get_ext_fullpath(ext.name)
        if not (self.force or newer_group(list(ext.sources) + list(ext.depends), target, "newer")):
            log(f"{ext.name}: up to date")
            return
        if os.environ.get("CUBIND_NO_COMPILE"):
            raise SystemExit(f"cubind: CUBIND_NO_COMPILE is set but {ext.name} would be compiled")
        size = sum(os.path.getsize(s) for s in ext.sources) / 1e6
        log(f"{ext.name}: compiling {size:.1f} MB of C ({self._elapsed()})")
        start = time.monotonic()
        super().build_extension(ext)
        log(f"{ext.name}: compiled in {time.monotonic() - start:.0f} s ({self._elapsed()})")


def _wrap(pyx, wrappers):
    """pyx, or where its header sets an overridden directive the wrapper that
    includes it (written only when its text changes, so its age is the
    build's, not this run's)."""
    if not pyx.endswith(".pyx"):
        return pyx
    with open(pyx, encoding="utf-8") as f:
        lines = f.read().split("\n")
    header, i, changed = [], 0, False
    while i < len(lines) and (lines[i].startswith("#") or not lines[i].strip()):
        directives = re.match(r"#\s*cython\s*:(.*)$", lines[i])
        if directives:
            items = [item.strip() for item in directives.group(1).split(",")]
            kept = [item for item in items if item.split("=")[0].strip() not in OVERRIDDEN_HEADER_DIRECTIVES]
            changed = changed or kept != items
            header += ["# cython: " + ", ".join(kept)] if kept else []
        i += 1
    if not changed:
        return pyx
    doc = []
    quote = lines[i].lstrip()[:3] if i < len(lines) else ""
    if quote in ('"""', "'''"):
        for j in range(i, len(lines)):
            doc.append(lines[j])
            if lines[j].count(quote) >= (2 if j == i else 1):
                break
    text = "\n".join([f"# Built from {pyx} by setup.py: its header less {', '.join(OVERRIDDEN_HEADER_DIRECTIVES)}.",
                      *header, *doc, f"include {json.dumps(os.path.abspath(pyx))}", ""])
    wrapper = os.path.join(wrappers, pyx)
    try:
        with open(wrapper, encoding="utf-8") as f:
            if f.read() == text:
                return wrapper
    except OSError:
        pass
    os.makedirs(os.path.dirname(wrapper), exist_ok=True)
    with open(wrapper, "w", encoding="utf-8") as f:
        f.write(text)
    return wrapper


def _c_file(pyx):
    return pyx[:-len(".pyx")] + ".c"


def _mtime(path):
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def extensions():
    # -g0: Python's own CFLAGS ask for debug info, and gcc's variable
    # tracking for it on the driver's Python layer (one very large C file)
    # takes ten minutes at -O2; without it, -O2 takes under three, and the
    # module is 5 MB instead of 24. CUBIND_OPT overrides the level.
    # The generated C compares Py_ssize_t with size_t where Cython checks
    # lengths, and is too large for gcc's indentation check: those warnings
    # say nothing about the bindings. CUDA 13 marks long4, double4, ... as
    # deprecated (for their _16a/_32a forms); the runtime binding still offers
    # them as its headers do, and gcc would warn at every sizeof.
    flags = [os.environ.get("CUBIND_OPT", "-O2"), "-g0", "-Wno-sign-compare", "-Wno-misleading-indentation",
             "-Wno-deprecated-declarations"]
    exts = []
    for name, needs_cuda in MODULES:
        ext = Extension(name, [name.replace(".", "/") + ".pyx"], extra_compile_args=flags)
        ext.needs_cuda = needs_cuda
        exts.append(ext)
    return exts


setup(ext_modules=extensions(), cmdclass={"build_ext": build_ext})
