"""cubind's stand-ins for the platform headers the CUDA interop headers
include (EGL/egl.h, EGL/eglext.h, GL/gl.h, vdpau/vdpau.h; _cubind/platform_fallback):
the package builds on a machine without libegl-dev, libgl-dev and
libvdpau-dev (most servers), with GCC and Clang, searched as the build
searches them (after every system directory, cuda_paths.FALLBACK_FLAGS) and
as a consumer of the .pxd files does (cubind.get_include(), a plain include
directory); where the system has a header, it is the one used.

The system's headers are hidden by mirroring the compiler's own include
directories without EGL/, KHR/, GL/ and vdpau/ (tests/_toolkit.py), as
scripts/without-platform-headers.sh does for the whole build in CI."""

import importlib.util
import os
import shutil
import subprocess
import sysconfig

import pytest

from tests._toolkit import ROOT, _default_include_dirs, _paths, compile_with_stand_ins, without_platform_headers

PLATFORM_HEADERS = ["EGL/egl.h", "EGL/eglext.h", "GL/gl.h", "vdpau/vdpau.h"]
# The modules whose generated C includes the interop headers: the driver's
# (cuda.h, cudaEGL.h, cudaGL.h, cudaVDPAU.h) and the runtime's (cuda_runtime_api.h,
# cuda_egl_interop.h, cuda_gl_interop.h, cuda_vdpau_interop.h).
INTEROP_MODULES = ["cuda._driver", "cuda.cudart"]


def _setup():
    spec = importlib.util.spec_from_file_location("cubind_setup", ROOT / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    return setup


def _build_flags(name):
    """The compile flags setup.py gives module ``name``."""
    return next(ext for ext in _setup().extensions() if ext.name == name).extra_compile_args


def _interop_source():
    """C including, in the generated C's order, every header the interop
    modules' sources declare from (their own and those of what they cimport)."""
    setup, headers = _setup(), []
    python = sysconfig.get_paths()["include"]
    for name in INTEROP_MODULES:
        pyx = os.path.join(ROOT, setup.module_source(name))
        headers += [h for h in setup.extern_headers(pyx)
                    if h not in headers and not os.path.isfile(os.path.join(python, h))]
    return "".join(f"#include <{h}>\n" for h in headers) + "int main(void) { return 0; }\n", headers


def _system_has(cc, header):
    return any(os.path.isfile(os.path.join(d, header)) for d in _default_include_dirs(cc))


def test_the_build_searches_the_stand_ins_after_the_system_and_says_so():
    fallback = _paths().FALLBACK_FLAGS
    assert fallback == ("-idirafter", str(ROOT / "_cubind" / "platform_fallback"), "-DCUBIND_PLATFORM_FALLBACK_LAST")
    for ext in _setup().extensions():
        flags = ext.extra_compile_args
        at = flags.index("-idirafter")
        assert tuple(flags[at:at + 3]) == fallback, ext.name


@pytest.mark.parametrize("hidden", [True, False], ids=["without_platform_headers", "with_the_systems"])
@pytest.mark.parametrize("searched", ["build", "consumer"])
@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_the_interop_headers_compile_with_the_stand_ins(tmp_path, cc, searched, hidden):
    source, headers = _interop_source()
    assert {"cudaEGL.h", "cudaGL.h", "cudaVDPAU.h", "cuda_egl_interop.h", "cuda_gl_interop.h",
            "cuda_vdpau_interop.h"} <= set(headers)
    cuda_headers = [h for h in headers if h not in PLATFORM_HEADERS]
    opened, fallback = compile_with_stand_ins(tmp_path, cuda_headers, source, PLATFORM_HEADERS, hidden, cc, searched)
    ours = {h for h in PLATFORM_HEADERS if os.path.join(fallback, h) in opened}
    systems = {h for h in PLATFORM_HEADERS if any(p.endswith("/" + h) and not p.startswith(fallback) for p in opened)}
    if hidden:
        assert ours == set(PLATFORM_HEADERS) and not systems, opened
        return
    has = {h for h in PLATFORM_HEADERS if _system_has(cc, h)}
    assert systems == has, opened   # a system header, where there is one, is the one used
    # After the system's directories, a stand-in is reached only for what the
    # system lacks; before them (a consumer's -I), each is opened and defers.
    assert ours == (set(PLATFORM_HEADERS) - has if searched == "build" else set(PLATFORM_HEADERS)), opened


@pytest.mark.parametrize("cc", ["gcc", "clang"])
def test_a_module_of_the_package_compiles_without_the_platform_headers(tmp_path, cc):
    # cuda.cdriver's C as the build made it (Cython's output beside its .pyx),
    # compiled with the build's own flags on a system without the headers.
    source = ROOT / "cuda" / "cdriver.c"
    if not source.is_file() or shutil.which(cc) is None:
        pytest.skip(f"needs the package's cythonized cuda/cdriver.c (scripts/run-example.sh) and {cc}")
    from _cubind import cuda_paths

    flags = _build_flags("cuda.cdriver")
    _root, dirs = cuda_paths.find_headers(["cuda.h", "cudaEGL.h", "cudaGL.h", "cudaVDPAU.h"])
    includes = [sysconfig.get_paths()["include"], *dirs]
    done = subprocess.run([cc, "-c", "-fPIC", *without_platform_headers(tmp_path, cc), *flags,
                           *(f"-I{d}" for d in includes), str(source), "-o", str(tmp_path / "cdriver.o")],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-4000:]
    assert (tmp_path / "cdriver.o").stat().st_size > 0
