"""The build finds the CUDA headers in every layout CUDA is installed in, and
only there.

Each test lays out real CUDA headers as an installer does (a runfile/deb
toolkit with ``nvvm/include``, its ``targets/<arch>`` form found through
``nvcc`` on PATH, a conda environment, NVIDIA's per-component pip wheels;
with CUBIND_LAYOUT_SITES, the wheels as CI downloaded them) and runs the
package's real ``setup.py build_ext`` with tests/packaging/layouts/preprocess_cc.py as
compiler: each module is preprocessed, not compiled, with the compiler's
default include directories cut down to the C library's, and every header it
opened is recorded. A CUDA header found anywhere but the layout fails the
test, as does one not found at all (what a user's build did on b53cf2a).

The headers come from the toolkit this machine builds with; the package must
have been built in place first (its generated C is reused, not regenerated).
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CC = ROOT / "tests" / "packaging" / "layouts" / "preprocess_cc.py"
sys.path.insert(0, str(ROOT / "_cubind"))
import cuda_paths as _cuda_paths  # noqa: E402  (loaded by path, as setup.py loads it)

sys.path.pop(0)

# The headers the modules include, and where each layout keeps them apart.
HEADERS = ["cuda.h", "cudaProfiler.h", "cuda_runtime_api.h", "cuda_profiler_api.h", "driver_functions.h",
           "driver_types.h", "vector_types.h", "surface_types.h", "texture_types.h", "library_types.h",
           "nvrtc.h", "nvJitLink.h", "nvvm.h"]
ARCH_TARGET = f"{_cuda_paths._ARCH}-linux"


@pytest.fixture(scope="module")
def headers():
    """{relative path: real file} of the toolkit at hand's include tree."""
    try:
        _root, dirs = _cuda_paths.find_headers(HEADERS, module="tests")
    except _cuda_paths.HeaderNotFound as exc:
        pytest.skip(f"no CUDA toolkit to take headers from: {exc}")
    entries = {}
    for d in dirs:
        for name in sorted(os.listdir(d)):
            entries.setdefault(name, Path(d) / name)
    return entries


@pytest.fixture(scope="module")
def built():
    """The in-place build's cythonized sources (reused, so nothing is cythonized again)."""
    stamp = ROOT / "build" / "cubind-cython.json"
    if not stamp.exists() or not (ROOT / "cuda" / "cdriver.c").exists():
        pytest.skip("the package is not built in place (setup.py build_ext --inplace)")
    return ROOT / "build"


def _place(entries, into, skip=()):
    into.mkdir(parents=True, exist_ok=True)
    for name, real in entries.items():
        if name not in skip:
            (into / name).symlink_to(real)


def runfile(entries, tmp):
    """NVIDIA's runfile/deb tree: include/, with nvvm.h in nvvm/include/; CUDA_HOME."""
    root = tmp / "cuda-13.0"
    _place(entries, root / "include", skip={"nvvm.h"})
    _place({"nvvm.h": entries["nvvm.h"]}, root / "nvvm" / "include")
    return root, {"CUDA_HOME": str(root)}


def targets_via_nvcc(entries, tmp):
    """The toolkit's targets/<arch>/include with include/ a link to it, found
    through the nvcc on PATH (no CUDA_HOME)."""
    root = tmp / "toolkit"
    _place(entries, root / "targets" / ARCH_TARGET / "include", skip={"nvvm.h"})
    (root / "include").symlink_to(Path("targets") / ARCH_TARGET / "include")
    _place({"nvvm.h": entries["nvvm.h"]}, root / "nvvm" / "include")
    (root / "bin").mkdir()
    nvcc = root / "bin" / "nvcc"
    nvcc.write_text("#!/bin/sh\nexit 0\n")
    nvcc.chmod(0o755)
    return root, {"PATH": f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}"}


def conda(entries, tmp):
    """conda's cuda-* packages: $CONDA_PREFIX/targets/<arch>/include and nvvm/include."""
    root = tmp / "env"
    _place(entries, root / "targets" / ARCH_TARGET / "include", skip={"nvvm.h"})
    (root / "include").mkdir()
    _place({"nvvm.h": entries["nvvm.h"]}, root / "nvvm" / "include")
    return root, {"CONDA_PREFIX": str(root)}


def wheels(entries, tmp):
    """NVIDIA's per-component wheels in site-packages: the runtime's include/,
    nvrtc's, nvJitLink's, and nvcc's nvvm/include."""
    site = tmp / "site-packages"
    nvidia = site / "nvidia"
    apart = {"nvrtc.h": "cuda_nvrtc/include", "nvJitLink.h": "nvjitlink/include", "nvvm.h": "cuda_nvcc/nvvm/include"}
    _place(entries, nvidia / "cuda_runtime" / "include", skip=set(apart))
    for name, sub in apart.items():
        _place({name: entries[name]}, nvidia / sub)
    return nvidia, {"PYTHONPATH": str(site)}


def wheels_via_cuda_home(entries, tmp):
    """The same wheels named by CUDA_HOME (site-packages/nvidia)."""
    nvidia, _env = wheels(entries, tmp)
    return nvidia, {"CUDA_HOME": str(nvidia)}


LAYOUTS = [runfile, targets_via_nvcc, conda, wheels, wheels_via_cuda_home]


def _clean_env(extra):
    """The environment of a user who has only this layout: no CUDA variables,
    no nvcc on PATH, no compiler search paths."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CUDA_HOME", "CUDA_PATH", "CONDA_PREFIX", "CPATH", "C_INCLUDE_PATH", "VIRTUAL_ENV",
                        "PYTHONPATH")}
    env["PATH"] = os.pathsep.join(d for d in env["PATH"].split(os.pathsep)
                                  if d and not os.path.exists(os.path.join(d, "nvcc")))
    env.update(extra)
    return env


def build(tmp, env, built):
    """setup.py build_ext through the preprocessing compiler; returns
    (completed process, {module source: [files opened]})."""
    work = tmp / "build"
    work.mkdir()
    # The in-place build's stamp and wrappers: the sources are up to date, nothing is cythonized.
    shutil.copy2(built / "cubind-cython.json", work / "cubind-cython.json")
    if (built / "cython-src").exists():
        shutil.copytree(built / "cython-src", work / "cython-src", symlinks=True)
    record = tmp / "record.jsonl"
    record.touch()
    cc = f"{sys.executable} {CC}"
    env = dict(env, CC=cc, LDSHARED=f"{cc} -shared", CUBIND_LAYOUT_RECORD=str(record))
    run = subprocess.run([sys.executable, "setup.py", "build_ext", "--build-temp", str(work / "temp"),
                          "--build-lib", str(tmp / "lib")],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    opened = {}
    for line in record.read_text().splitlines():
        entry = json.loads(line)
        opened[entry["source"]] = entry["files"]
    return run, opened


@pytest.mark.parametrize("layout", LAYOUTS, ids=[f.__name__ for f in LAYOUTS])
def test_every_module_builds_from_the_layout_alone(layout, headers, built, tmp_path):
    if layout is wheels and any(os.path.isdir(os.path.join(d, "nvidia")) for d in _cuda_paths.site_dirs()):
        pytest.skip("this Python environment has NVIDIA's wheels of its own, which come before PYTHONPATH's "
                    "in the search (wheels_via_cuda_home covers the layout)")
    root, extra = layout(headers, tmp_path)
    run, opened = build(tmp_path, _clean_env(extra), built)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    # cubind._core.allocations made it 16, cubind._launch.capsule 17, the five
    # modules serving NVIDIA's C level (cuda._cydriver, ...) 22, cubind.graph's
    # compiled queue stages and scheduler loop 24, its device edges 25, the
    # scheduler's idle workers' waits 26, cubind._core.event 27, the UCX
    # data path (cubind.graph.ucx.pump) 28, cubind._core.current 29, a UCX
    # transmitter's per-message path (cubind.graph.ucx.sendpath) 30, a UCX
    # receiver's (cubind.graph.ucx.recvpath) 31; nvFatbin's,
    # NVML's and cuFile's three each where their wheel is installed in this
    # environment (the layouts have no nvFatbin.h, nvml.h or cufile.h of their own).
    # UCX's two (ucx.cucp, ucx._ucp) where the libucx wheel's headers are, and
    # without them the UCX data path's pump, which calls it, is left out too.
    optional = sum(3 for h in ("nvFatbin.h", "nvml.h", "cufile.h") if h in headers or _environment_has(h))
    ucx = any(os.path.isfile(os.path.join(d, "libucx", "include", "ucp", "api", "ucp.h"))
              for d in _cuda_paths.site_dirs())
    assert len(opened) == 31 + optional + (2 if ucx else -1), sorted(opened)
    cuda_names = set(headers)
    for source, files in opened.items():
        for f in files:
            inside = os.path.abspath(f).startswith(str(root) + os.sep)
            if not inside and os.path.basename(f) in cuda_names:
                pytest.fail(f"{source}: {f} is a CUDA header found outside the layout ({root}): "
                            "the compiler's default paths found it, a user's would not")
    # memory.c is cubind._memory.memory, which includes cuda.h
    by_module = {Path(s).name: files for s, files in opened.items()}
    assert any(f.endswith("nvvm.h") for f in by_module["cnvvm.c"])
    assert any(f.endswith("cuda.h") for f in by_module["memory.c"])


def test_a_missing_header_stops_the_build_before_anything_is_compiled(headers, built, tmp_path):
    root, extra = runfile(headers, tmp_path)
    shutil.rmtree(root / "nvvm")
    run, opened = build(tmp_path, _clean_env(extra), built)
    assert run.returncode != 0
    assert opened == {}
    assert "nvvm._nvvm" in run.stderr and "nvvm.cnvvm" in run.stderr and "nvvm.h" in run.stderr
    assert str(root / "include") in run.stderr
    assert "cythonizing" not in run.stdout


def _environment_has(header):
    return any(os.path.isfile(os.path.join(d, header)) for w in _cuda_paths._environment_wheels() for d in w.includes)


def test_an_optional_librarys_missing_header_leaves_its_package_out(headers, tmp_path, monkeypatch, capsys):
    # A toolkit without nvFatbin.h, nvml.h and cufile.h, and no
    # nvidia-nvfatbin, nvidia-nvml-dev or nvidia-cufile wheel: the other
    # modules keep their headers, the three packages' modules are left out
    # with one line each naming the wheel, and the build goes on.
    import importlib.util

    spec = importlib.util.spec_from_file_location("cubind_setup", ROOT / "setup.py")
    setup = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(setup)
    root, extra = runfile({k: v for k, v in headers.items() if k not in ("nvFatbin.h", "nvml.h", "cufile.h")}, tmp_path)
    monkeypatch.setenv("CUDA_HOME", extra["CUDA_HOME"])
    monkeypatch.setattr(_cuda_paths, "_environment_wheels", lambda: [])
    monkeypatch.setattr(setup, "_load_cuda_paths", lambda: _cuda_paths)
    monkeypatch.chdir(ROOT)

    class Command:   # what build_ext._find_headers reads of its command
        include_dirs = []
        extensions = setup.extensions(str(ROOT))

    command = Command()
    setup.build_ext._find_headers(command)
    names = [ext.name for ext in command.extensions]
    assert not [n for n in names if n.startswith(("nvfatbin.", "nvml.", "cufile."))]
    assert "nvjitlink._nvjitlink" in names and len(names) == len(setup.module_names(str(ROOT))) - 9
    lines = sorted(line for line in capsys.readouterr().out.splitlines() if "skipped" in line)
    assert lines == ["cubind build: cufile: skipped, cufile.h not found "
                     "(pip install nvidia-cufile (nvidia-cufile-cu12 for CUDA 12))",
                     "cubind build: nvfatbin: skipped, nvFatbin.h not found "
                     "(pip install nvidia-nvfatbin (nvidia-nvfatbin-cu12 for CUDA 12))",
                     "cubind build: nvml: skipped, nvml.h not found "
                     "(pip install nvidia-nvml-dev (nvidia-nvml-dev-cu12 for CUDA 12))"]


def test_a_toolkit_lacking_a_library_is_completed_by_its_wheel(headers, tmp_path, monkeypatch):
    # nvidia-nvfatbin installed beside a toolkit without nvFatbin.h (also
    # under CUDA_HOME): its header comes from the wheel, cuda.h from the toolkit.
    root, extra = runfile({k: v for k, v in headers.items() if k != "nvFatbin.h"}, tmp_path)
    wheel = tmp_path / "site-packages" / "nvidia" / "cu13" / "include"
    wheel.mkdir(parents=True)
    (wheel / "nvFatbin.h").write_text("/* nvFatbin */\n")
    monkeypatch.setenv("CUDA_HOME", extra["CUDA_HOME"])
    monkeypatch.setattr(_cuda_paths, "_environment_wheels",
                        lambda: [_cuda_paths._wheels("site-packages", str(wheel.parent.parent))])
    found, dirs = _cuda_paths.find_headers(["nvFatbin.h", "cuda.h"])
    assert found.where == "CUDA_HOME" and dirs == [str(root / "include"), str(wheel)]
    found, dirs = _cuda_paths.find_headers(["nvFatbin.h"])
    assert found.where == "site-packages" and dirs == [str(wheel)]
    # A header the toolkit has is never taken from a wheel.
    (wheel / "cuda.h").write_text("/* another cuda.h */\n")
    assert _cuda_paths.find_headers(["nvFatbin.h", "cuda.h"])[1] == [str(root / "include"), str(wheel)]
    assert _cuda_paths.find_headers(["cuda.h"])[1] == [str(root / "include")]


def test_cuda_home_is_the_choice_when_set(tmp_path, monkeypatch):
    a, b = tmp_path / "a", tmp_path / "b"
    for d in (a, b):
        (d / "include").mkdir(parents=True)
    monkeypatch.setenv("CUDA_HOME", str(a))
    monkeypatch.setenv("CUDA_PATH", str(b))
    monkeypatch.setenv("CONDA_PREFIX", str(tmp_path / "conda"))
    assert [(r.where, r.path) for r in _cuda_paths.roots()] == [("CUDA_HOME", str(a)), ("CUDA_PATH", str(b))]


def test_without_variables_nvcc_conda_wheels_then_the_system(headers, tmp_path, monkeypatch):
    nvcc_root, env = targets_via_nvcc(headers, tmp_path)
    nvidia, _ = wheels(headers, tmp_path)
    for var in ("CUDA_HOME", "CUDA_PATH"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.setenv("CONDA_PREFIX", str(tmp_path / "env"))
    monkeypatch.syspath_prepend(str(nvidia.parent))
    wheres = [r.where for r in _cuda_paths.roots()]
    assert wheres[:3] == ["nvcc on PATH", "CONDA_PREFIX", "site-packages"]
    assert wheres[-3:] == ["Debian's nvidia-cuda-toolkit", "/usr/local/cuda", "/opt/cuda"][-len(wheres[3:]):]
    assert _cuda_paths.roots()[0].path == str(nvcc_root)


def test_cuda_home_may_name_the_wheels_directory(headers, tmp_path, monkeypatch):
    nvidia, _env = wheels(headers, tmp_path)
    monkeypatch.setenv("CUDA_HOME", str(nvidia))
    root, dirs = _cuda_paths.find_headers(["cuda.h", "nvrtc.h", "nvvm.h"])
    assert root.where == "CUDA_HOME"
    assert dirs == [str(nvidia / "cuda_nvcc" / "nvvm" / "include"), str(nvidia / "cuda_nvrtc" / "include"),
                    str(nvidia / "cuda_runtime" / "include")]


@pytest.mark.skipif(not os.environ.get("CUBIND_LAYOUT_SITES"), reason="CUBIND_LAYOUT_SITES names no unpacked "
                    "wheels (scripts/test-toolkits.sh sets it to the wheels CI downloaded)")
@pytest.mark.parametrize("site", os.environ.get("CUBIND_LAYOUT_SITES", "").split(os.pathsep) or [""])
def test_nvidias_wheels_as_they_install(site, built, tmp_path):
    """The real wheels' tree (per-component for 12.x, cu13/ for 13.x): the
    headers of another version preprocess all the same."""
    run, opened = build(tmp_path, _clean_env({"PYTHONPATH": site}), built)
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    nvidia = os.path.join(os.path.abspath(site), "nvidia")
    for source, files in opened.items():
        for f in files:
            if os.path.basename(f) in HEADERS:
                assert os.path.abspath(f).startswith(nvidia), f"{source}: {f} is not from the wheels in {site}"


def test_the_search_for_a_specs_headers_takes_its_abi_typedefs_headers_too():
    # The generator reads the loader's typedefs headers as it reads the spec's
    # own: a layout without one is named by the search (HeaderNotFound).
    driver = _cuda_paths.spec_headers(str(ROOT / "bindings" / "driver.toml"))
    assert driver[:2] == ["cuda.h", "cudaProfiler.h"]
    assert {"cudaTypedefs.h", "cudaGLTypedefs.h", "cudaProfilerTypedefs.h"} <= set(driver)
