"""Where a CUDA installation keeps its headers and libraries, in every layout
it comes in: one search for the build (setup.py), the scripts that
regenerate the bindings, the library loader and ``cubind.Program``.

The layouts:

- a toolkit tree, NVIDIA's runfile/deb/rpm (``/usr/local/cuda``): ``include/``,
  ``nvvm/include/``, ``targets/<arch>-linux/include/``; ``lib64/``, ``nvvm/lib64/``;
- conda's ``cuda-*`` packages (``$CONDA_PREFIX``): ``targets/<arch>-linux/include``,
  ``include/``, ``nvvm/include/``; ``lib/``, ``nvvm/lib64/``;
- NVIDIA's pip wheels (``site-packages/nvidia``): ``cu13/include`` (CUDA 13's
  merged wheels) and one ``<component>/include`` per wheel (``cuda_runtime``,
  ``cuda_nvrtc``, ``cuda_nvcc/nvvm/include``, ...);
- Debian's ``nvidia-cuda-toolkit``: ``/usr/include``, ``/usr/lib/nvidia-cuda-toolkit``.

``CUDA_HOME`` (then ``CUDA_PATH``), when set, is the installation: nothing else
is searched, and it may be any of the layouts
(``CUDA_HOME=.../site-packages/nvidia/cu13`` too). Otherwise roots are taken in
this order: the toolkit of the ``nvcc`` on ``PATH``, ``CONDA_PREFIX``, the wheels
in the Python environment (and in ``VIRTUAL_ENV``, which a build-isolated
``pip install`` leaves set), Debian's, ``/usr/local/cuda``, ``/opt/cuda``.

This file imports nothing of cubind: setup.py loads it by path before
anything is built, and ``python _cubind/cuda_paths.py include-dirs cuda.h ...``
serves the shell scripts.
"""

import os
import sys

# Run as a script (scripts/_common.sh), this file's folder is sys.path[0], where
# _cubind/enum.py would shadow the standard library's enum, which re and
# glob import: CPython 3.10 and 3.13 import enum only then (3.11 at start-up).
if sys.path and os.path.abspath(sys.path[0] or ".") == os.path.dirname(os.path.abspath(__file__)):
    del sys.path[0]

import glob  # noqa: E402
import platform  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import sysconfig  # noqa: E402

__all__ = ["Root", "roots", "site_dirs", "find_headers", "HeaderNotFound", "get_include"]

_ARCH = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "sbsa", "arm64": "sbsa"}.get(
    platform.machine().lower(), platform.machine().lower())


class HeaderNotFound(Exception):
    """A header none of the roots holds; the message names every place looked,
    ``headers`` the headers asked for, ``missing`` those no root holds (cufile.h,
    where cuda.h, asked for with it, is the toolkit's)."""

    def __init__(self, message, headers=(), missing=None):
        super().__init__(message)
        self.headers = list(headers)
        self.missing = list(headers if missing is None else missing)


class Root:
    """One CUDA installation: where it was found (``where``), its directory, and
    its include and library directories that exist, in search order."""

    def __init__(self, where, path, includes, libs):
        self.where, self.path = where, path
        self.includes = _existing(includes)
        self.libs = _existing(libs)

    def __repr__(self):
        return f"Root({self.where!r}, {self.path!r})"

    def lib_dirs(self, subdirs):
        """The library directories for a library kept in ``subdirs`` of a
        toolkit (``("lib64", "lib")``, libNVVM's ``("nvvm/lib64",)``), in
        this layout: the toolkit's own, then under ``targets/<arch>``."""
        if self.where == "site-packages":
            return []   # wheels are searched by their own subdirectories (the spec's wheel_subdirs)
        if self.path == "/usr":   # Debian: the multiarch directory, and the toolkit's own (libNVVM)
            return [f"/usr/lib/{platform.machine()}-linux-gnu"] + [
                os.path.join("/usr/lib/nvidia-cuda-toolkit", sub) for sub in subdirs if sub.startswith("nvvm")]
        dirs = [os.path.join(self.path, sub) for sub in subdirs]
        dirs += [os.path.join(self.path, "targets", f"{_ARCH}-linux", sub) for sub in subdirs]
        return dirs


def _existing(paths):
    out = []
    for path in paths:
        if os.path.isdir(path) and path not in out:
            out.append(path)
    return out


def _tree(where, path):
    """A toolkit, conda or merged-wheel tree rooted at ``path``."""
    if os.path.realpath(path) == "/usr":   # Debian's nvcc is /usr/bin/nvcc
        return _debian(where)
    includes = [os.path.join(path, "include"),
                os.path.join(path, "targets", f"{_ARCH}-linux", "include"),
                os.path.join(path, "nvvm", "include")]
    libs = [os.path.join(path, "lib64"), os.path.join(path, "lib"),
            os.path.join(path, "targets", f"{_ARCH}-linux", "lib"), os.path.join(path, "nvvm", "lib64")]
    if os.path.isdir(os.path.join(path, "cu13")) or os.path.isdir(os.path.join(path, "cuda_runtime")):
        return _wheels(where, path)   # the variable names site-packages/nvidia itself
    return Root(where, path, includes, libs)


def _wheels(where, nvidia):
    """NVIDIA's wheels under ``nvidia``: the merged ``cu<major>`` trees first
    (newest), then each component's directories."""
    merged = sorted(glob.glob(os.path.join(nvidia, "cu[0-9]*")), reverse=True)
    parts = [d for d in sorted(glob.glob(os.path.join(nvidia, "*"))) if d not in merged]
    includes, libs = [], []
    for d in merged + parts:
        includes += [os.path.join(d, "include"), os.path.join(d, "nvvm", "include")]
        libs += [os.path.join(d, "lib"), os.path.join(d, "nvvm", "lib64")]
    return Root(where, nvidia, includes, libs)


def _debian(where):
    """Debian's packages: headers in /usr/include, the toolkit's own files in
    /usr/lib/nvidia-cuda-toolkit, libraries in the multiarch directory."""
    return Root(where, "/usr",
                ["/usr/include", "/usr/lib/nvidia-cuda-toolkit/include", "/usr/lib/nvidia-cuda-toolkit/nvvm/include"],
                [f"/usr/lib/{platform.machine()}-linux-gnu", "/usr/lib/nvidia-cuda-toolkit/nvvm/lib64"])


def site_dirs():
    """The Python environment's package directories: ``site``'s, then
    ``sys.path``'s, then ``VIRTUAL_ENV``'s, existing ones once each."""
    import site

    dirs = []
    if hasattr(site, "getsitepackages"):   # missing in some old virtualenvs
        dirs += site.getsitepackages()
    if hasattr(site, "getusersitepackages"):
        dirs.append(site.getusersitepackages())
    dirs += sys.path
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        dirs += glob.glob(os.path.join(venv, "lib", "python3*", "site-packages"))
    out = []
    for d in dirs:
        d = os.path.abspath(d) if d else d   # sys.path may hold "" or relative entries
        if d and d not in out and os.path.isdir(d):
            out.append(d)
    return out


def _nvcc_root():
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return None
    root = os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))
    return root


def roots(wheels=True):
    """Every CUDA installation to search, in order (see the module's
    docstring); the same directory only once, at its first place. When
    CUDA_HOME or CUDA_PATH is set, it is the choice: nothing else is searched,
    so that a header missing there is an error, not one of another CUDA."""
    chosen = [_tree(var, os.path.abspath(os.path.expanduser(os.environ[var])))
              for var in ("CUDA_HOME", "CUDA_PATH") if os.environ.get(var)]
    if chosen:
        return _once(chosen)
    found = []
    nvcc = _nvcc_root()
    if nvcc:
        found.append(_tree("nvcc on PATH", nvcc))
    if os.environ.get("CONDA_PREFIX"):
        found.append(_tree("CONDA_PREFIX", os.environ["CONDA_PREFIX"]))
    if wheels:
        for d in site_dirs():
            if os.path.isdir(os.path.join(d, "nvidia")):
                found.append(_wheels("site-packages", os.path.join(d, "nvidia")))
    found += fallback_roots()
    return _once(found)


def fallback_roots():
    """The places searched last, whatever else is found: the system's."""
    return [_debian("Debian's nvidia-cuda-toolkit"), _tree("/usr/local/cuda", "/usr/local/cuda"),
            _tree("/opt/cuda", "/opt/cuda")]


def _once(found):
    out, seen = [], set()
    for root in found:
        key = os.path.realpath(root.path)
        if key not in seen:
            seen.add(key)
            out.append(root)
    return out


def find_headers(headers, module="cubind", candidates=None, wheels=None):
    """``(root, include_dirs)``: the first root that holds every one of
    ``headers``, and the include directories of its that they and the headers
    they include need (in the root's order: a wheel's ``cuda_runtime.h``
    includes ``crt/`` headers another wheel holds). Where no one root holds
    them all, the first holding some completed by ``wheels`` (by default the
    environment's NVIDIA wheels: _completed_by_wheels). Raises HeaderNotFound
    naming the module, the headers missing and every place looked."""
    if wheels is None and candidates is not None:
        wheels = [root for root in candidates if root.where == "site-packages"]
    candidates = roots() if candidates is None else candidates
    looked = []
    for root in candidates:
        missing = [h for h in headers if _locate(h, root.includes) is None]
        if not missing:
            return root, _needed_dirs(headers, root.includes)
        looked.append((root, missing))
    completed = _completed_by_wheels(headers, candidates, _environment_wheels() if wheels is None else wheels)
    if completed:
        return completed
    lines = [f"{module}: cannot find the CUDA header{'s' if len(headers) > 1 else ''} "
             f"{', '.join(headers)}. Looked in:"]
    for root, missing in looked:
        places = ", ".join(root.includes) or f"{root.path} (no include directory)"
        lines.append(f"  {root.where}: {places}: missing {', '.join(missing)}")
    unset = [v for v in ("CUDA_HOME", "CUDA_PATH") if not os.environ.get(v)]
    lines.append("Set CUDA_HOME to a CUDA toolkit (/usr/local/cuda-13.0), a conda environment with "
                 "cuda-* packages, or site-packages/nvidia/cu13 of NVIDIA's wheels"
                 + (f" (not set: {', '.join(unset)})." if unset else "."))
    nowhere = [h for h in headers if all(h in missing for _root, missing in looked)]
    raise HeaderNotFound("\n".join(lines), headers, nowhere or headers)


def _environment_wheels():
    """The NVIDIA wheel trees of the Python environment, whatever CUDA_HOME says."""
    return [_wheels("site-packages", os.path.join(d, "nvidia")) for d in site_dirs()
            if os.path.isdir(os.path.join(d, "nvidia"))]


def _completed_by_wheels(headers, candidates, wheels):
    """``(root, include_dirs)`` where no one root holds every header but the
    first that holds some is completed by the environment's NVIDIA wheels: a
    library its toolkit lacks, installed as a wheel of its own (nvFatbin, NVML,
    cuFile: ``pip install nvidia-nvfatbin`` beside /usr/local/cuda, as the
    loader finds its library there too), each missing header from the first
    wheel tree holding it. CUDA_HOME's headers still win: a header it has is
    never taken from a wheel."""
    for root in candidates:
        if root.where == "site-packages":
            continue
        have = [h for h in headers if _locate(h, root.includes) is not None]
        if not have:
            continue
        dirs = _needed_dirs(have, root.includes)
        for header in headers:
            if header in have:
                continue
            wheel = next((w for w in wheels if _locate(header, w.includes) is not None), None)
            if wheel is None:
                return None
            dirs += [d for d in _needed_dirs([header], wheel.includes) if d not in dirs]
        return root, dirs
    # None of the installation's headers asked for (a module of nvFatbin's
    # alone): a wheel tree holding them all.
    return next(((w, _needed_dirs(headers, w.includes)) for w in wheels
                 if all(_locate(h, w.includes) is not None for h in headers)), None)


def _locate(header, dirs):
    return next((d for d in dirs if os.path.isfile(os.path.join(d, header))), None)


_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)


def _needed_dirs(headers, dirs):
    """The directories of ``dirs`` that ``headers`` and everything they
    include resolve through; an include none of them holds is the C
    library's (or behind a condition) and is left to the compiler."""
    needed, pending, seen = set(), [(h, None) for h in headers], set()
    while pending:
        header, beside = pending.pop()
        if beside and os.path.isfile(os.path.join(beside, header)):
            path = os.path.join(beside, header)   # "x.h" next to the file including it
        else:
            where = _locate(header, dirs)
            if where is None:
                continue
            needed.add(where)
            path = os.path.join(where, header)
        if path in seen:
            continue
        seen.add(path)
        try:
            with open(path, encoding="latin-1") as f:
                text = f.read()
        except OSError:
            continue
        pending += [(name, os.path.dirname(path)) for name in _INCLUDE.findall(text)]
    return [d for d in dirs if d in needed]


def python_include_dirs():
    """Python's own header directories (where Python.h is), not CUDA's."""
    paths = sysconfig.get_paths()
    return _existing([paths.get("include", ""), paths.get("platinclude", "")])


def spec_headers(spec):
    """The headers a bindings/*.toml spec makes the generator read: its
    ``headers = [...]``, then its loader's ``abi_typedefs_headers = [...]``
    (cudaTypedefs.h, cudaGLTypedefs.h...), so that a layout lacking one is
    named by the search, not by the generator. Read without a TOML parser:
    the scripts run under any Python 3."""
    with open(spec, encoding="utf-8") as f:
        text = f.read()
    found = []
    for key in ("headers", "abi_typedefs_headers"):
        match = re.search(rf"^{key}\s*=\s*\[([^\]]*)\]", text, re.M)
        found += re.findall(r'"([^"]+)"', match.group(1)) if match else []
    return found


def spec_wheel_includes(spec):
    """The include directories a spec's ``[build] wheel_includes`` names
    under the environment's site-packages (UCX's ``libucx/include``), those
    that exist: a library not CUDA's has its headers in its own wheel."""
    with open(spec, encoding="utf-8") as f:
        match = re.search(r"^wheel_includes\s*=\s*\[([^\]]*)\]", f.read(), re.M)
    subs = re.findall(r'"([^"]+)"', match.group(1)) if match else []
    return [os.path.join(d, sub) for sub in subs for d in site_dirs() if os.path.isdir(os.path.join(d, sub))]


# The packages setup.py makes from bindings/*.toml, whose .pxd files a
# consumer cimports (tests/packaging/test_cimport.py checks this against setup.py).
GENERATED_PACKAGES = ("cuda", "nvrtc", "nvjitlink", "nvvm", "nvfatbin", "nvml", "cufile", "ucx")
# Stand-ins for platform headers the CUDA headers include (cudaEGL.h includes
# EGL/egl.h, cudaGL.h GL/gl.h; cudaVDPAU.h needs vdpau/vdpau.h): each defers
# to the system's header where there is one.
FALLBACK_INCLUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "platform_fallback")
# The .pxd files of NVIDIA's C-level modules (cuda/bindings/cydriver.pxd, ...)
# for an extension built from source (`from cuda.bindings cimport cydriver`)
# against cubind: generated (cubind-gen, spec [compat]), searched by Cython
# through get_include() and never installed where NVIDIA's wheel puts its own.
CIMPORT_INCLUDE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cimport")
# How cubind's own build searches them: after every system directory, so that
# a system header always wins, and told so, since then nothing follows them to
# defer to (GCC refuses __has_include_next in the search's last directory).
FALLBACK_FLAGS = ("-idirafter", FALLBACK_INCLUDE, "-DCUBIND_PLATFORM_FALLBACK_LAST")
_EXTERN = re.compile(r'^\s*cdef\s+extern\s+from\s+"([^"]+)"', re.M)


def _pxd_headers():
    """The C headers the generated packages' .pxd files declare from."""
    import importlib.util

    headers = []
    for package in GENERATED_PACKAGES:
        spec = importlib.util.find_spec(package)
        for where in (spec.submodule_search_locations or []) if spec else []:
            for pxd in sorted(glob.glob(os.path.join(where, "*.pxd"))):
                with open(pxd, encoding="utf-8") as f:
                    headers += [h for h in _EXTERN.findall(f.read()) if h not in headers and h != "Python.h"]
    return headers


def get_include() -> list[str]:
    """The include directories a C or Cython extension that cimports cubind's
    ``.pxd`` files (``from cuda cimport cdriver``) adds to its
    ``include_dirs``, as ``numpy.get_include()``: the CUDA headers those files
    declare from, found as cubind's own build finds them (CUDA_HOME, nvcc,
    conda, NVIDIA's wheels, the system), and cubind's stand-ins for the
    platform headers they include (EGL), which defer to the system's where it
    has them. A header found nowhere is left out (the compiler then names it).
    The first directory holds the .pxd files of NVIDIA's C-level modules
    (``from cuda.bindings cimport cydriver``): pass the list to Cython too
    (``cythonize(..., include_path=cubind.get_include())``)."""
    dirs = [CIMPORT_INCLUDE]
    candidates = roots()
    for header in _pxd_headers():
        try:   # the build's search: a library the installation lacks from its wheel too (nvFatbin.h)
            _root, found = find_headers([header], candidates=candidates, wheels=_environment_wheels())
        except HeaderNotFound:
            continue
        dirs += [d for d in found if d not in dirs]
    return dirs + [FALLBACK_INCLUDE]


def _main(argv):
    usage = ("usage: _cuda_paths.py include-dirs (HEADER | --spec FILE)...\n"
             "prints the include directories holding the headers (and what they include), one a line")
    if len(argv) < 2 or argv[0] != "include-dirs":
        sys.exit(usage)
    headers, wheels, args = [], [], iter(argv[1:])
    for arg in args:
        spec = next(args, "") if arg == "--spec" else None
        wheels += [d for d in (spec_wheel_includes(spec) if spec else []) if d not in wheels]
        for header in (spec_headers(spec) if spec else [arg]):
            if header not in headers and _locate(header, wheels) is None:
                headers.append(header)
    try:
        _root, dirs = find_headers(headers, module="cubind-gen")
    except HeaderNotFound as exc:
        sys.exit(str(exc))
    print("\n".join(dirs + wheels))


if __name__ == "__main__":
    _main(sys.argv[1:])
