"""Tests of _cubind.loader: finding and opening the CUDA shared libraries."""

import itertools
import os
import shutil
import site
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cubind
from _cubind import cuda_paths as _cuda_paths
from _cubind import loader as _loader
from tests._toolkit import cuda_major_minor, library, pythonpath

CUDA = Path("/usr/local/cuda")   # the toolkit whose driver stub the stub tests use
STUB = CUDA / "lib64" / "stubs" / "libcuda.so"
# NVRTC of the build's major version (libnvrtc.so.12 for 12.x headers), from NVIDIA's
# wheels on sys.path or a toolkit: what this process opens, the nvrtc package later
# finds already loaded, so it must be the library the package itself would open.
NVRTC_MAJOR = (cuda_major_minor() or (13, 0))[0]
NVRTC_SONAME = f"libnvrtc.so.{NVRTC_MAJOR}"
NVRTC_WHEEL_DIRS = (f"nvidia/cu{NVRTC_MAJOR}/lib", "nvidia/cuda_nvrtc/lib")
NVRTC = library(NVRTC_SONAME, NVRTC_WHEEL_DIRS)
NVRTC_HOME = NVRTC.parent.parent if NVRTC else CUDA   # a root whose lib64/ or lib/ holds it, as CUDA_HOME
NVRTC_ARGS = ((NVRTC_SONAME,), "CUBIND_NVRTC_LIBRARY", NVRTC_WHEEL_DIRS)
LibraryNotFoundError = _loader.LibraryNotFoundError
REPO = Path(cubind.__file__).resolve().parent.parent

needs_nvrtc = pytest.mark.skipif(NVRTC is None, reason=f"no {NVRTC_SONAME} in a wheel or toolkit")
needs_stub = pytest.mark.skipif(not STUB.exists(), reason="no CUDA driver stub")

_counter = itertools.count()


def fresh(name):
    """A libname never used before, so the per-libname cache does not interfere."""
    return f"{name}-test{next(_counter)}"


def copy(src, dst):
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(src, dst)
    return dst


def nvrtc_version(handle):
    import ctypes

    addr = _loader._symbol_address(handle, b"nvrtcVersion")
    assert addr != 0
    proto = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
    major, minor = ctypes.c_int(), ctypes.c_int()
    assert proto(addr)(ctypes.byref(major), ctypes.byref(minor)) == 0   # NVRTC_SUCCESS
    return major.value, minor.value


def run_python(code, **env):
    """Run `code` in a fresh interpreter (a clean set of loaded libraries); return stdout."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("CUDA_HOME", "CUDA_PATH")}
    full_env.update(env, PYTHONPATH=pythonpath(REPO))
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=full_env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture
def clean_env(monkeypatch):
    for var in ("CUDA_HOME", "CUDA_PATH", "CUBIND_NVRTC_LIBRARY", "CUBIND_CUDA_LIBRARY", "CONDA_PREFIX", "VIRTUAL_ENV"):
        monkeypatch.delenv(var, raising=False)
    return monkeypatch


def test_import_is_light():
    out = run_python("""
        import sys, _cubind.loader
        print("ctypes" in sys.modules)
    """)
    assert out.strip() == "False"


@needs_nvrtc
@pytest.mark.parametrize("cuda_home", [True, False])
def test_finds_nvrtc(clean_env, cuda_home):
    if cuda_home:
        clean_env.setenv("CUDA_HOME", str(NVRTC_HOME))
    handle = _loader.load(fresh("nvrtc"), *NVRTC_ARGS)
    assert handle
    path = _loader.library_path(handle)
    assert os.path.basename(path) == NVRTC_SONAME
    assert "stubs" not in Path(os.path.realpath(path)).parts
    assert nvrtc_version(handle)[0] == NVRTC_MAJOR
    assert _loader._symbol_address(handle, "nvrtcNoSuchFunction") == 0


@needs_nvrtc
def test_empty_toolkit_subdirs_are_the_default(tmp_path):
    """A spec naming no toolkit_subdirs makes its C layer pass an empty tuple
    (its _LIBRARY): the toolkit's lib64 is searched, as by default, before
    the system loader (a toolkit of links of its own, in a fresh process)."""
    (tmp_path / "lib64").mkdir()
    (tmp_path / "lib64" / NVRTC_SONAME).symlink_to(NVRTC)
    code = (f"from _cubind import loader\n"
            f"print(loader.library_path(loader.load('nvrtc', ({NVRTC_SONAME!r},), 'CUBIND_NO_SUCH_VAR', (), ())))")
    env = {k: v for k, v in os.environ.items() if k not in ("CUDA_PATH", "CUBIND_NVRTC_LIBRARY")}
    env.update(CUDA_HOME=str(tmp_path), PYTHONPATH=pythonpath(REPO))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(tmp_path / "lib64" / NVRTC_SONAME)


@needs_nvrtc
def test_handle_is_cached(clean_env, tmp_path):
    name = fresh("nvrtc")
    handle = _loader.load(name, *NVRTC_ARGS)
    clean_env.setenv("CUBIND_NVRTC_LIBRARY", str(tmp_path / "missing.so"))   # would raise if searched again
    assert _loader.load(name, *NVRTC_ARGS) == handle


def test_bad_handle_is_refused():
    with pytest.raises(ValueError):
        _loader.library_path(12345)
    with pytest.raises(ValueError):
        _loader._symbol_address(12345, b"nvrtcVersion")


@needs_nvrtc
def test_env_override_wins(clean_env, tmp_path):
    lib = copy(NVRTC, tmp_path / "override" / NVRTC_SONAME)
    clean_env.setenv("CUBIND_NVRTC_LIBRARY", str(lib))
    clean_env.setenv("CUDA_HOME", str(NVRTC_HOME))
    handle = _loader.load(fresh("nvrtc"), *NVRTC_ARGS)
    assert _loader.library_path(handle) == str(lib)
    assert nvrtc_version(handle)[0] == NVRTC_MAJOR


def test_env_override_missing_file_raises(clean_env, tmp_path):
    missing = tmp_path / "nope" / NVRTC_SONAME
    clean_env.setenv("CUBIND_NVRTC_LIBRARY", str(missing))
    clean_env.setenv("CUDA_HOME", str(NVRTC_HOME))   # would succeed if the search fell through
    with pytest.raises(LibraryNotFoundError) as info:
        _loader.load(fresh("nvrtc"), *NVRTC_ARGS)
    msg = str(info.value)
    assert "CUBIND_NVRTC_LIBRARY" in msg and str(missing) in msg
    assert "No such file" in msg   # the dlerror text


def test_a_missing_library_is_a_cudaerror_and_an_oserror(clean_env, tmp_path):
    """One ``except cubind.CUDAError`` catches a missing library as well as a failed
    call, and the code written for the loader's OSError still catches it."""
    assert cubind.LibraryNotFoundError is LibraryNotFoundError
    assert "LibraryNotFoundError" in cubind.__all__
    clean_env.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    for caught in (cubind.CUDAError, OSError, LibraryNotFoundError):
        with pytest.raises(caught) as info:
            _loader.load(fresh("doesnotexist"), ("libdoesnotexist_cubind.so.1",), "CUBIND_DOESNOTEXIST_LIBRARY", ())
    exc = info.value
    assert (exc.code, exc.call, exc.sticky, exc.name) == (None, None, False, "LibraryNotFoundError")
    assert exc.message == str(exc) and "libdoesnotexist_cubind.so.1" in exc.message


def test_a_function_the_library_lacks_is_the_loaders_one_error(fake_driver):
    """Every generated module raises the loader's FunctionNotFoundError (one
    class to catch, a CUDAError), naming the symbol and the library's file:
    here NVRTC's functions looked up in a library that is not NVRTC."""
    assert cubind.FunctionNotFoundError is _loader.FunctionNotFoundError
    assert issubclass(_loader.FunctionNotFoundError, (cubind.CUDAError, RuntimeError))
    code = textwrap.dedent("""
        import _cubind.loader, nvrtc, nvrtc.cnvrtc
        from cubind.compat import _internal_utils
        assert nvrtc.cnvrtc.FunctionNotFoundError is _cubind.loader.FunctionNotFoundError
        assert _internal_utils.FunctionNotFoundError is _cubind.loader.FunctionNotFoundError
        for attempt in range(2):   # the slot stays empty: the second call raises again
            try:
                nvrtc.nvrtcVersion()
            except _cubind.loader.FunctionNotFoundError as exc:
                print(type(exc).__name__, exc.name, exc.code, exc.message == str(exc), str(exc))
    """)
    env = dict(os.environ, PYTHONPATH=pythonpath(REPO), CUBIND_NVRTC_LIBRARY=str(fake_driver))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and lines[0] == lines[1]
    assert lines[0] == f"FunctionNotFoundError FunctionNotFoundError None True nvrtcVersion is not in {fake_driver}"


def test_the_pythonic_layer_reports_no_driver_as_a_cudaerror():
    code = textwrap.dedent("""
        import cubind
        try:
            cubind.Device(0)
        except cubind.CUDAError as exc:
            print(type(exc).__name__, isinstance(exc, OSError), "libcuda.so.1" in str(exc))
    """)
    env = dict(os.environ, PYTHONPATH=pythonpath(REPO), CUBIND_CUDA_LIBRARY="/nonexistent/libcuda.so.1")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["LibraryNotFoundError", "True", "True"], done.stdout


def test_missing_library_lists_every_place(clean_env, tmp_path):
    clean_env.setenv("CUDA_HOME", str(tmp_path / "toolkit"))
    sonames = ("libdoesnotexist_cubind.so.1",)
    with pytest.raises(LibraryNotFoundError) as info:
        _loader.load(fresh("doesnotexist"), sonames, "CUBIND_DOESNOTEXIST_LIBRARY", ("nvidia/cu13/lib",))
    assert isinstance(info.value, OSError)
    msg = str(info.value)
    for part in ("CUBIND_DOESNOTEXIST_LIBRARY", "CUDA_HOME", "CUDA_PATH", "/usr/local/cuda",
                 "libdoesnotexist_cubind.so.1", "already loaded", "site-packages", "system loader",
                 str(tmp_path / "toolkit" / "lib64" / "libdoesnotexist_cubind.so.1"),
                 "cannot open shared object file"):   # dlerror of the system loader
        assert part in msg, part
    candidates = _loader.search_candidates("x", sonames, "CUBIND_DOESNOTEXIST_LIBRARY", ("nvidia/cu13/lib",))
    for where, target in candidates:
        assert f"{where}: {target}: " in msg


# A toolkit's library directories, in the loader's order: its own, then targets/<arch>-linux's.
LIB_DIRS = ["lib64", "lib", f"targets/{_cuda_paths._ARCH}-linux/lib64", f"targets/{_cuda_paths._ARCH}-linux/lib"]


def test_search_candidates_order(clean_env, tmp_path):
    site_dir, user_dir, path_dir = (tmp_path / d for d in ("site", "user", "path"))
    for d in (site_dir, user_dir, path_dir):
        d.mkdir()
    clean_env.setattr(site, "getsitepackages", lambda: [str(site_dir)])
    clean_env.setattr(site, "getusersitepackages", lambda: str(user_dir))
    clean_env.setattr(sys, "path", [str(path_dir), str(site_dir), str(tmp_path / "not-a-dir")])
    clean_env.setenv("CUBIND_X_LIBRARY", str(tmp_path / "x.so"))
    clean_env.setenv("CUDA_HOME", str(tmp_path / "home"))
    clean_env.setenv("CUDA_PATH", str(tmp_path / "cpath"))
    sonames = ("libx.so.1", "libx.so")
    got = _loader.search_candidates("x", sonames, "CUBIND_X_LIBRARY", ("a/lib", "b/lib"))

    want = [("CUBIND_X_LIBRARY", str(tmp_path / "x.so"))]
    want += [("already loaded", s) for s in sonames]
    want += [("site-packages", str(d / sub / s))
             for d in (site_dir, user_dir, path_dir) for sub in ("a/lib", "b/lib") for s in sonames]
    want += [(var, str(tmp_path / root / lib / s))
             for var, root in (("CUDA_HOME", "home"), ("CUDA_PATH", "cpath"))
             for lib in LIB_DIRS for s in sonames]
    want += [("system loader", s) for s in sonames]
    assert got[:len(want)] == want
    # then the system's installations (_cubind/cuda_paths.py's fallback roots), after the system loader
    assert [w for w, _ in got[len(want):]] == sorted(
        (w for w, _ in got[len(want):]), key=["Debian's nvidia-cuda-toolkit", "/usr/local/cuda", "/opt/cuda"].index)
    assert ("/usr/local/cuda", "/usr/local/cuda/lib64/libx.so.1") in got


def test_search_candidates_without_env(clean_env):
    clean_env.setenv("CUDA_HOME", "/usr/local/cuda")
    got = _loader.search_candidates("x", ("libx.so.1",), "CUBIND_X_LIBRARY", ())
    assert got[:6] == [("already loaded", "libx.so.1")] + [
        ("CUDA_HOME", f"/usr/local/cuda/{lib}/libx.so.1") for lib in LIB_DIRS] + [("system loader", "libx.so.1")]
    assert all(where != "/usr/local/cuda" for where, _ in got)   # it duplicates CUDA_HOME's: listed once


@needs_stub
def test_driver_stub_is_never_picked(clean_env):
    clean_env.setenv("CUDA_HOME", str(CUDA))
    try:
        handle = _loader.load(fresh("cuda"), ("libcuda.so.1", "libcuda.so"), "CUBIND_CUDA_LIBRARY",
                              ("nvidia/cu13/lib",))
    except LibraryNotFoundError as e:   # no driver on this machine
        msg = str(e)
        assert "libcuda.so.1" in msg and "CUBIND_CUDA_LIBRARY" in msg
        assert "CUDA_HOME: /usr/local/cuda/lib64/libcuda.so: not found" in msg
    else:   # a real driver is installed
        assert "stubs" not in Path(os.path.realpath(_loader.library_path(handle))).parts


@needs_stub
def test_stub_paths_are_skipped(clean_env, tmp_path):
    soname = "libcubindstubtest.so.1"
    copy(STUB, tmp_path / "site" / "stubs" / soname)
    copy(STUB, tmp_path / "stubs" / "toolkit" / "lib64" / soname)
    clean_env.setattr(sys, "path", [str(tmp_path / "site")] + sys.path)
    clean_env.setenv("CUDA_HOME", str(tmp_path / "stubs" / "toolkit"))
    with pytest.raises(LibraryNotFoundError) as info:
        _loader.load(fresh("stubtest"), (soname,), "CUBIND_STUBTEST_LIBRARY", ("stubs",))
    msg = str(info.value)
    assert f"site-packages: {tmp_path}/site/stubs/{soname}: skipped (driver stub directory)" in msg
    assert f"CUDA_HOME: {tmp_path}/stubs/toolkit/lib64/{soname}: skipped (driver stub directory)" in msg


LOAD_CUDA = """
    import ctypes, sys
    from _cubind import loader as _loader
    {setup}
    try:
        h = _loader.load("cuda", ("libcuda.so.1",), "CUBIND_CUDA_LIBRARY", ())
        print("FOUND", _loader.library_path(h))
    except _loader.LibraryNotFoundError as e:
        print(e)
"""


@needs_stub
def test_stub_found_by_symlink_is_rejected(tmp_path):
    # A file whose path looks fine but resolves into a stubs directory.
    stub = copy(STUB, tmp_path / "stubs" / "libcuda.so.1")
    link = tmp_path / "toolkit" / "lib64" / "libcuda.so.1"
    link.parent.mkdir(parents=True)
    link.symlink_to(stub)
    out = run_python(LOAD_CUDA.format(setup=""), CUDA_HOME=str(tmp_path / "toolkit"))
    if out.startswith("FOUND"):
        # A real driver is installed: CUDA_HOME comes before the system loader,
        # so finding anything but the link proves the link was passed over.
        found = out.split(None, 1)[1].strip()
        assert found != str(link)
        assert "stubs" not in os.path.realpath(found).split(os.sep)
    else:
        assert f"CUDA_HOME: {link}: skipped, {os.path.realpath(stub)} is a driver stub" in out


@needs_stub
def test_stub_already_loaded_is_rejected(tmp_path):
    stub = copy(STUB, tmp_path / "stubs" / "libcuda.so.1")   # its SONAME is libcuda.so.1
    out = run_python(LOAD_CUDA.format(setup=f"ctypes.CDLL({str(stub)!r})"))
    assert f"already loaded: libcuda.so.1: skipped, {os.path.realpath(stub)} is a driver stub" in out


@needs_stub
def test_stub_from_system_loader_is_rejected(tmp_path):
    stub = copy(STUB, tmp_path / "stubs" / "libcuda.so.1")
    out = run_python(LOAD_CUDA.format(setup=""), LD_LIBRARY_PATH=str(stub.parent))
    assert f"system loader: libcuda.so.1: skipped, {os.path.realpath(stub)} is a driver stub" in out


@needs_nvrtc
def test_cuda_home_beats_system_loader(tmp_path):
    lib = copy(NVRTC, tmp_path / "toolkit" / "lib64" / NVRTC_SONAME)
    code = f"""
        from _cubind import loader as _loader
        h = _loader.load("nvrtc", ({NVRTC_SONAME!r},), "CUBIND_NVRTC_LIBRARY", ())
        print(_loader.library_path(h))
    """
    assert run_python(code, CUDA_HOME=str(lib.parent.parent)).strip() == str(lib)


@needs_nvrtc
def test_already_loaded_beats_cuda_home(tmp_path):
    lib = copy(NVRTC, tmp_path / "preloaded" / NVRTC_SONAME)
    code = f"""
        import ctypes
        from _cubind import loader as _loader
        ctypes.CDLL({str(lib)!r})
        h = _loader.load("nvrtc", ({NVRTC_SONAME!r},), "CUBIND_NVRTC_LIBRARY", ())
        print(_loader.library_path(h))
    """
    assert run_python(code, CUDA_HOME=str(NVRTC_HOME)).strip() == str(lib)


# -- what the not-found message advises --------------------------------------------

MISSING_DRIVER = """
    from _cubind import loader as _loader
    try:
        _loader.load("cuda-missing", ("libcuda.so.cubind-missing",), "CUBIND_CUDA_LIBRARY", ())
    except OSError as exc:
        print(exc)
"""
MISSING_TOOLKIT_LIBRARY = """
    from _cubind import loader as _loader
    try:
        _loader.load("nvrtc-missing", ("libnvrtc_cubind_missing.so.13",), "CUBIND_NVRTC_LIBRARY", ())
    except OSError as exc:
        print(exc)
"""


def advice(message):
    """The message's lines before the list of places searched."""
    return message.split("Searched, in order:")[0]


@pytest.mark.parametrize("cuda_home", [None, "/opt/some-toolkit"])
def test_a_missing_driver_points_at_the_nvidia_driver_not_the_toolkit(tmp_path, cuda_home):
    # libcuda.so.1 comes with the NVIDIA driver: CUDA_HOME can never supply it,
    # set or not, so the message must not send the user there.
    env = {"CUDA_HOME": cuda_home} if cuda_home else {}
    msg = run_python(MISSING_DRIVER, CUBIND_CUDA_LIBRARY="", **env)  # a soname no machine has
    head = advice(msg)
    assert head.startswith("cubind: cannot find the CUDA driver library (libcuda.so.cubind-missing).")
    assert "NVIDIA GPU driver, not with the CUDA toolkit" in head
    assert "set CUBIND_CUDA_LIBRARY to the full path" in head
    assert "CUDA_HOME to" not in msg and "CUDA_HOME=" not in msg
    assert msg.rstrip().endswith("(not set: CUBIND_CUDA_LIBRARY)")


def test_a_missing_toolkit_library_advises_cuda_home_only_where_unset():
    unset = run_python(MISSING_TOOLKIT_LIBRARY, CUBIND_NVRTC_LIBRARY="")
    assert "Set CUBIND_NVRTC_LIBRARY to the full path of the library file, or CUDA_HOME to the CUDA toolkit root." \
        in advice(unset)
    assert "(not set: CUBIND_NVRTC_LIBRARY, CUDA_HOME, CUDA_PATH)" in unset
    given = run_python(MISSING_TOOLKIT_LIBRARY, CUBIND_NVRTC_LIBRARY="", CUDA_HOME="/opt/some-toolkit")
    head = advice(given)
    assert "CUDA_HOME to" not in head
    assert "Set CUBIND_NVRTC_LIBRARY to the full path of the library file; CUDA_HOME=/opt/some-toolkit does not " \
           "hold it." in head
    assert "(not set: CUBIND_NVRTC_LIBRARY, CUDA_PATH)" in given
