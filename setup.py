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
checks that must reuse that build (tests/packaging/test_packaging.py).
"""

import ast
import importlib.util
import json
import os
import platform
import re
import sys
import threading
import time

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext as _build_ext

try:
    import tomllib
except ImportError:  # Python < 3.11: pyproject.toml's build requirements bring tomli
    import tomli as tomllib

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

# What Cython prints, not the C it writes (so a change here regenerates
# nothing; the build's stamp leaves these out). Performance hints: Cython
# hints at the exception check after each call of a C-level function that
# returns a struct or nothing (cuFile's CUfileError_t functions,
# cudaCreateChannelDesc: 75 lines of them). The check is needed, since the
# first call opens the library and resolves the symbol, which can fail and
# must raise; such a return type has no value to signal the error with, so the
# check is Cython's `except *`, which takes the GIL after the call: a cost
# beside a cuFile call's I/O, or a function returning a struct by value, that
# nothing hot pays.
CYTHON_MESSAGE_DIRECTIVES = {"show_performance_hints": False}

# The generated Python layers say `# cython: embedsignature=False` in their
# header (their docstrings start with a plain signature line instead), and a
# header directive wins over any given to Cython. Those modules are compiled
# through a one-line wrapper: the header less these directives, the module
# docstring, and `include` of the unchanged source (whose header is then an
# ordinary comment; tracebacks still name it).
OVERRIDDEN_HEADER_DIRECTIVES = ("embedsignature",)

ROOT = os.path.dirname(os.path.abspath(__file__))


# -- what bindings/*.toml make ----------------------------------------------------------------
# Each spec is a library: its package (`[library] name`) holds a C layer and a
# Python layer (`c_module`, `py_module`), and with `[compat] module` the module
# serving NVIDIA's C level of it. Two specs may share a package (the driver and
# the runtime, both `cuda`). Nothing about one library is written here: a new
# spec is a new package and two (or three) new modules.


def spec_tables(root):
    """Every ``<root>/bindings/*.toml``, read, in file order."""
    tables = []
    for name in sorted(os.listdir(os.path.join(root, "bindings"))):
        if name.endswith(".toml"):
            with open(os.path.join(root, "bindings", name), "rb") as f:
                tables.append(tomllib.load(f))
    return tables


def spec_libraries(root):
    """The ``[library]`` tables of ``<root>/bindings/*.toml``, in file order."""
    return [spec["library"] for spec in spec_tables(root)]


def optional_packages(root):
    """``{package: missing_hint}`` of the specs whose ``[build]`` says
    ``optional = true``: a library not every CUDA installation has (nvFatbin,
    NVML, cuFile come as wheels of their own), whose package the build leaves
    out, with one line naming the hint, where its headers are missing."""
    found = {}
    for name in sorted(os.listdir(os.path.join(root, "bindings"))):
        if name.endswith(".toml"):
            with open(os.path.join(root, "bindings", name), "rb") as f:
                spec = tomllib.load(f)
            build = spec.get("build", {})
            if build.get("optional"):
                found[spec["library"]["name"]] = build.get("missing_hint", "")
    return found


def optional_headers(root):
    """``{header: package}`` of the optional specs' headers: a module of
    cubind's own that includes only such missing headers (the graph's UCX data
    path, which calls ucx.cucp) is left out with that package."""
    optional = optional_packages(root)
    return {h: spec["library"]["name"] for spec in spec_tables(root) if spec["library"]["name"] in optional
            for h in spec["library"].get("headers", [])}


def spec_packages(root):
    """The packages the specs make, each once."""
    return list(dict.fromkeys(library["name"] for library in spec_libraries(root)))


def spec_modules(root):
    """The extension modules the specs make: each library's C and Python
    layers, and the module serving NVIDIA's C level (``[compat] module``)."""
    found = []
    for spec in spec_tables(root):
        library = spec["library"]
        found += [f"{library['name']}.{library[layer]}" for layer in ("c_module", "py_module")]
        if "compat" in spec:
            found.append(f"{library['name']}.{spec['compat']['module']}")
    return found


def cubind_modules(root):
    """cubind's own compiled modules: every .pyx of _cubind (the generated
    modules' runtime) and of cubind (the Pythonic layer's compiled parts)."""
    found = []
    for folder, _dirs, files in (w for top in ("_cubind", "cubind") for w in os.walk(os.path.join(root, top))):
        package = os.path.relpath(folder, root).replace(os.sep, ".")
        found += [f"{package}.{name[:-len('.pyx')]}" for name in files if name.endswith(".pyx")]
    return found


def module_source(name):
    return name.replace(".", "/") + ".pyx"


def module_names(root):
    """Every module to build, the largest source first: the driver's and the
    runtime's Python layers take most of the build, so they start at once
    while the others share the rest."""
    names = spec_modules(root) + cubind_modules(root)
    return sorted(names, key=lambda name: -os.path.getsize(os.path.join(root, module_source(name))))


def packages(root):
    """_cubind (the generated packages' runtime), cubind (with any
    subpackages) and every package a spec makes."""
    return find_packages(root, include=["_cubind", "cubind", "cubind.*"]) + spec_packages(root)


def _load_floor(name):
    """A pure-Python module of _cubind (``cuda_paths``, ``built``), loaded by
    path: the package is not built yet."""
    path = os.path.join(ROOT, "_cubind", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_cubind_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _load_cuda_paths():
    return _load_floor("cuda_paths")


def _cuda_version(include_dirs):
    """"13.0" from the CUDA_VERSION of the cuda.h in ``include_dirs``; None without one."""
    for d in include_dirs:
        try:
            with open(os.path.join(d, "cuda.h"), encoding="latin-1") as f:
                found = re.search(r"^#define CUDA_VERSION (\d+)", f.read(), re.M)
        except OSError:
            continue
        if found:
            return f"{int(found[1]) // 1000}.{int(found[1]) % 1000 // 10}"
    return None


def spec_loaders(root):
    """``{libname: loader arguments and package}`` of every spec's library."""
    found = {}
    for library in spec_libraries(root):
        args = loader_arguments(os.path.join(root, module_source(f"{library['name']}.{library['c_module']}")))
        if args:
            found[args["libname"]] = dict(args, package=library["name"])
    return found


def loader_arguments(c_layer):
    """What a generated C layer's loader searches for (its ``_LIBRARY``:
    libname, sonames, env_var, wheel_subdirs and toolkit_subdirs, empty for
    the loader's default), recorded so that ``cubind.show_config()`` searches
    the same. None where the source has none."""
    try:
        with open(c_layer, encoding="utf-8") as f:
            text = f.read()
    except OSError:
        return None
    found = re.search(r"^_LIBRARY = (\{.*?\})$", text, re.M | re.S)
    if found is None:
        return None
    values = ast.literal_eval(found[1])
    return {name: list(v) if isinstance(v, tuple) else v for name, v in values.items()}


CIMPORT = re.compile(r"^\s*(?:from\s+([\w.]+)\s+cimport\s+([\w, ]+)|cimport\s+([\w.]+))", re.M)
EXTERN = re.compile(r'^\s*cdef\s+extern\s+from\s+"([^"<>*]+)"', re.M)


def _pxd(*parts):
    """A .pxd of the tree setup runs in, else of this one (a library built
    outside it cimports cubind's)."""
    here = os.path.join(*parts) + ".pxd"
    return here if os.path.isfile(here) else os.path.join(ROOT, here)


def extern_headers(pyx):
    """The headers the module's C includes: its ``cdef extern from "h"`` and
    those of every .pxd of this tree it cimports, its own .pxd first."""
    headers, seen = [], set()
    pending = [pyx[:-len(".pyx")] + ".pxd", pyx]
    while pending:
        path = pending.pop(0)
        if path in seen or not os.path.isfile(path):
            continue
        seen.add(path)
        with open(path, encoding="utf-8") as f:
            text = f.read()
        headers += [h for h in EXTERN.findall(text) if h not in headers]
        for package, names, module in CIMPORT.findall(text):
            if module:
                pending.append(_pxd(*module.split(".")))
            else:
                pending.append(_pxd(*package.split(".")))
                pending += [_pxd(*package.split("."), n.strip()) for n in names.split(",") if n.strip()]
    return headers


def cuda_include_dirs(ext, paths, given=()):
    """The include directories of the CUDA headers ``ext``'s sources include
    (Python's own headers, those in the ``given`` directories and the
    platform headers cubind has stand-ins for aside), from
    the first CUDA installation holding them all; raises paths.HeaderNotFound
    naming the module and every place looked."""
    # The platform headers the C layer includes first (vdpau/vdpau.h) are
    # no CUDA header: the system's or cubind's stand-in (-idirafter) serves.
    known = paths.python_include_dirs() + list(given) + [paths.FALLBACK_INCLUDE]
    headers = [h for pyx in ext.sources for h in extern_headers(pyx)
               if not any(os.path.isfile(os.path.join(d, h)) for d in known)]
    if not headers:
        return None, []
    return paths.find_headers(headers, module=ext.name)


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

    def run(self):
        self._start = time.monotonic()
        self._find_headers()
        self._cythonize()
        super().run()
        self._write_record()
        log(f"done in {time.monotonic() - self._start:.0f} s")

    def _find_headers(self):
        """Each module's CUDA include directories, all found before anything
        is cythonized or compiled; every missing header is reported at once."""
        paths = _load_cuda_paths()
        errors, used, skipped, self._skipped_modules = [], {}, {}, {}
        optional = optional_packages(os.getcwd())
        owners = optional_headers(os.getcwd())
        # The headers of a library not CUDA's, in its own wheel (UCX's: [build] wheel_includes).
        wheels = []
        for name in sorted(os.listdir("bindings")):
            if name.endswith(".toml"):
                wheels += [d for d in paths.spec_wheel_includes(os.path.join("bindings", name)) if d not in wheels]
        for ext in list(self.extensions):
            try:
                # A library that is not CUDA's has its headers where
                # `build_ext -I`, the Extension or its spec's wheel says.
                root, dirs = cuda_include_dirs(ext, paths, (self.include_dirs or []) + ext.include_dirs + wheels)
            except paths.HeaderNotFound as exc:
                package = ext.name.split(".")[0]
                needs = {owners.get(h) for h in exc.missing}
                if package not in optional and len(needs) == 1 and None not in needs:
                    # A module of cubind's own calling an optional library (the graph's UCX
                    # data path): left out with it; importing it says so (built.py).
                    self.extensions.remove(ext)
                    self._skipped_modules[ext.name] = needs.pop()
                    log(f"{ext.name}: skipped with {self._skipped_modules[ext.name]}")
                    continue
                if package not in optional:
                    errors.append(str(exc))
                    continue
                # An optional library's headers are missing: its package is
                # left out (import fails saying why: _cubind/built.py), the
                # rest still builds.
                self.extensions.remove(ext)
                skipped.setdefault(package, {"missing": exc.missing, "searched": str(exc),
                                             "hint": optional[package]})
                continue
            ext.include_dirs += [d for d in dirs if d not in ext.include_dirs]
            ext.include_dirs += [d for d in wheels if d not in ext.include_dirs and any(
                os.path.isfile(os.path.join(d, h)) for pyx in ext.sources for h in extern_headers(pyx))]
            if root is not None:
                used.setdefault((root.where, root.path), (root, []))[1].append(ext.name)
        if errors:
            sys.exit("\n\n".join(["cubind: CUDA headers missing, nothing was compiled."] + errors))
        for package, why in skipped.items():
            log(f"{package}: skipped, {', '.join(why['missing'])} not found "
                f"({optional[package] or 'an optional library'})")
        for (where, path), (_root, names) in used.items():
            log(f"CUDA headers from {path} ({where}) for {len(names)} modules")
        self._skipped = skipped
        self._headers = [{"where": root.where, "path": root.path, "cuda_version": _cuda_version(root.includes),
                          "modules": names} for root, names in used.values()]

    def build_record(self):
        """What this build made (after _find_headers), for ``_cubind/built.py``
        (the error of a package left out) and ``cubind.show_config()``: the
        spec packages built, those skipped with the search's reason and the
        spec's hint, the headers each module was compiled against, and each
        library's loader arguments."""
        import Cython

        root = os.getcwd()
        return {
            "python": platform.python_version(), "cython": Cython.__version__,
            "built": sorted({ext.name.split(".")[0] for ext in self.extensions} & set(spec_packages(root))),
            "skipped": self._skipped, "skipped_modules": self._skipped_modules, "headers": self._headers,
            "libraries": spec_loaders(root),
        }

    def _write_record(self):
        """The record, beside the compiled ``_cubind`` modules; a build of
        another tree (a library of its own on cubind's functions) has no
        ``_cubind`` to record for."""
        if "_cubind" not in (self.distribution.packages or []):
            return
        path = os.path.join(os.path.dirname(self.get_ext_fullpath("_cubind.built")),
                            _load_floor("built").record_name())
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(self.build_record(), f, indent=1)
            f.write("\n")

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
        own = {}  # each C file: its module's own sources, the wrapper and what it includes
        for ext in self.extensions:
            sources = ext.sources
            ext.sources = [_wrap(src, wrappers) for src in sources]
            for src, made in zip(sources, ext.sources):
                if made.endswith(".pyx"):
                    own[_c_file(made)] = {src, made}
        c_files = list(own)
        before = {c: (_mtime(c), _code_digest(c)) for c in c_files}
        # Cython finds a module out of date when any .pxd it cimports is
        # newer than its C, its own libc/ and cpython/ ones included, which
        # each venv's pip install makes new: the build after run-example.sh
        # and each Python's in CI cythonized 31 of 40 modules again for the
        # same C. C newer than its own sources and every .pxd and .pxi of the
        # tree is current (the stamp covers Cython and its directives): it is
        # dated now for Cython's look, and given its age back below.
        current = [] if force else _current(own, os.getcwd())
        now = time.time_ns()
        for c in current:
            os.utime(c, ns=(now, now))
        log(f"cythonizing {len(self.extensions)} modules where out of date (Cython {Cython.__version__}"
            + (", all: first build or options changed)" if force else ")"))
        generated = cythonize(self.extensions, nthreads=min(self.parallel, len(self.extensions)),
                              compiler_directives={**CYTHON_DIRECTIVES, **CYTHON_MESSAGE_DIRECTIVES}, force=force)
        # Keep setuptools' own Extension objects (finalize_options set them
        # up); take the C sources Cython wrote and, of the dependencies it
        # found, those the C compiler reads (headers): a .pxd's effect is in
        # the C already.
        by_name = {ext.name: ext for ext in generated}
        for ext in self.extensions:
            ext.sources = by_name[ext.name].sources
            ext.depends = [d for d in by_name[ext.name].depends if not d.endswith(_CYTHON_ONLY)]
        os.makedirs(os.path.dirname(stamp), exist_ok=True)
        with open(stamp, "w") as f:
            json.dump(options, f)
        # C whose code is as it was (Cython's metadata comment at its top
        # names the include directories, which differ between venvs) keeps
        # its age: the modules compiled from it, each Python's, stay up to
        # date.
        kept = [c for c in c_files if before[c][1] is not None and _code_digest(c) == before[c][1]]
        regenerated = [c for c in c_files if _mtime(c) != (now if c in current else before[c][0])]
        for c in kept:
            os.utime(c, ns=(before[c][0], before[c][0]))
        same = len([c for c in regenerated if c in kept])
        log(f"cythonized {len(regenerated)} of {len(c_files)}"
            + (f", {same} to the same code" if same else "") + f" ({self._elapsed()})")

    def build_extension(self, ext):
        target = self.get_ext_fullpath(ext.name)
        if not (self.force or newer_group(list(ext.sources) + list(ext.depends), target, "newer")):
            log(f"{ext.name}: up to date")
            return
        if os.environ.get("CUBIND_NO_COMPILE"):
            raise SystemExit(f"cubind: CUBIND_NO_COMPILE is set but {ext.name} would be compiled")
        size = sum(os.path.getsize(s) for s in ext.sources) / 1e6
        last = _last_times(self.build_temp).get(ext.name)
        log(f"{ext.name}: compiling {size:.1f} MB of C ({self._elapsed()})"
            + (f", {last:.0f} s the last time" if last else ""))
        start = time.monotonic()
        with _Heartbeat(ext.name, start, last):
            super().build_extension(ext)
        took = time.monotonic() - start
        _record_time(self.build_temp, ext.name, took)
        log(f"{ext.name}: compiled in {took:.0f} s ({self._elapsed()})")


class _Heartbeat:
    """A line every HEARTBEAT_S seconds while one module compiles: the
    driver's and the runtime's C take minutes each, and a build silent that
    long looks hung."""

    HEARTBEAT_S = 20

    def __init__(self, name, start, expected):
        self.name, self.start, self.expected = name, start, expected
        self.done = threading.Event()

    def __enter__(self):
        self.thread = threading.Thread(target=self._beat, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.done.set()
        self.thread.join()

    def _beat(self):
        while not self.done.wait(self.HEARTBEAT_S):
            spent = time.monotonic() - self.start
            of = f" of about {self.expected:.0f} s" if self.expected and self.expected > spent else ""
            log(f"{self.name}: still compiling, {spent:.0f} s{of}")


_times_lock = threading.Lock()


def _times_file(build_temp):
    return os.path.join(os.path.dirname(build_temp) or ".", "cubind-times.json")


def _last_times(build_temp):
    try:
        with open(_times_file(build_temp)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def _record_time(build_temp, name, seconds):
    with _times_lock:   # modules compile in parallel threads
        times = _last_times(build_temp)
        times[name] = round(seconds, 1)
        os.makedirs(os.path.dirname(_times_file(build_temp)), exist_ok=True)
        with open(_times_file(build_temp), "w") as f:
            json.dump(times, f, indent=1, sort_keys=True)


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


# What only Cython reads: a change there changes the C, or nothing.
_CYTHON_ONLY = (".pyx", ".pxd", ".pxi", ".py")


def _code_digest(path):
    """The SHA-256 of a Cython-made C file less its metadata comment (the
    Extension it was made for: flags and include directories, which do not
    change the code), or None where it is missing."""
    import hashlib

    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError:
        return None
    begin, end = text.find(b"/* BEGIN: Cython Metadata"), text.find(b"END: Cython Metadata */")
    if begin >= 0 and end > begin:
        text = text[:begin] + text[end:]
    return hashlib.sha256(text).hexdigest()


def _current(own, root):
    """Of the C files in ``own`` ({C file: its module's own sources}), those
    newer than their own sources and than every .pxd and .pxi under
    ``root`` (hidden folders such as venvs and .git left out): what a module
    cimports or includes from the tree."""
    newest = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        for name in files:
            if name.endswith((".pxd", ".pxi")):
                newest = max(newest, _mtime(os.path.join(folder, name)) or 0)
    return [c for c, sources in own.items()
            if (_mtime(c) or 0) > max([newest, *(_mtime(src) or 0 for src in sources)])]


def extensions(root=ROOT):
    """The Extension of each module; sources are relative to ``root``, where
    setup runs."""
    # -g0: Python's own CFLAGS ask for debug info, and gcc's variable
    # tracking for it on the driver's Python layer (one very large C file)
    # takes ten minutes at -O2; without it, -O2 takes under three, and the
    # module is 5 MB instead of 24. CUBIND_OPT overrides the level.
    # The generated C compares Py_ssize_t with size_t where Cython checks
    # lengths, and is too large for gcc's indentation check: those warnings
    # say nothing about the bindings. CUDA 13 marks long4, double4, ... as
    # deprecated (for their _16a/_32a forms); the runtime binding still offers
    # them as its headers do, and gcc would warn at every sizeof.
    # The interop headers include <EGL/egl.h>, <GL/gl.h> and <vdpau/vdpau.h>:
    # the system's (libegl-dev, libgl-dev, libvdpau-dev) where installed, else
    # cubind's stand-ins, searched after every system directory so that they
    # never shadow the real ones (cuda_paths.FALLBACK_FLAGS).
    flags = [os.environ.get("CUBIND_OPT", "-O2"), "-g0", "-Wno-sign-compare", "-Wno-misleading-indentation",
             "-Wno-deprecated-declarations", *_load_cuda_paths().FALLBACK_FLAGS]
    exts = []
    for name in module_names(root):
        # A module's own folder is on its include path: a header beside it (ucx/ucp_subset.h) is found.
        source = module_source(name)
        exts.append(Extension(name, [source], include_dirs=[os.path.dirname(source)], extra_compile_args=flags))
    return exts


# Run by `python setup.py` and by setuptools' build backend (both as
# __main__); imported, it only defines the functions above (the end-to-end
# test builds a spec's package with them).
if __name__ == "__main__":
    setup(packages=packages(ROOT), ext_modules=extensions(), cmdclass={"build_ext": build_ext})
