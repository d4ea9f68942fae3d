"""What the build hands users: signatures of the built functions, the wheel and the sdist.

The signatures come from the build (setup.py: Cython's ``embedsignature`` in
the "clinic" format, with ``binding=False``), not from the generator: every
public function of ``cuda`` and ``nvrtc`` has an ``inspect.signature`` with the
stubs' parameter names, which are the header's less the outputs.

The wheel is built from the in-place build that scripts/ make (``build/``),
with ``CUBIND_NO_COMPILE=1``: where that build is missing or stale the test
skips (fails under CI, where scripts/test.sh has just made it) rather than
spend minutes compiling.
"""

import ast
import importlib
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

from _cubind.built import record_name
from tests._toolkit import header as find_header

ROOT = Path(__file__).resolve().parents[2]
# Public modules: (module, its stubs, the header its functions come from).
PUBLIC = [("cuda", "cuda/__init__.pyi", "cuda.h"), ("cuda.cudart", "cuda/cudart.pyi", "cuda_runtime_api.h"),
          ("nvrtc", "nvrtc/__init__.pyi", "nvrtc.h"), ("nvjitlink", "nvjitlink/__init__.pyi", "nvJitLink.h"),
          ("nvvm", "nvvm/__init__.pyi", "nvvm.h"), ("nvfatbin", "nvfatbin/__init__.pyi", "nvFatbin.h"),
          ("nvml", "nvml/__init__.pyi", "nvml.h"), ("cufile", "cufile/__init__.pyi", "cufile.h")]
MODULES = ("cuda._driver", "cuda.cdriver", "cuda.cudart", "cuda.cruntime", "nvrtc._nvrtc", "nvrtc.cnvrtc",
           "nvjitlink._nvjitlink", "nvjitlink.cnvjitlink", "nvvm._nvvm", "nvvm.cnvvm",
           "nvfatbin._nvfatbin", "nvfatbin.cnvfatbin", "nvml._nvml", "nvml.cnvml",
           "cufile._cufile", "cufile.ccufile",
           # NVIDIA's C level under its names (bindings/*.toml [compat]).
           "cuda._cydriver", "cuda._cyruntime", "nvrtc._cynvrtc", "nvjitlink._cynvjitlink", "nvvm._cynvvm",
           "nvfatbin._cynvfatbin", "nvml._cynvml", "cufile._cycufile",
           "_cubind.convert", "_cubind.loader", "cubind._core.allocations", "cubind._core.current",
           "cubind._core.event", "cubind._launch.capsule", "cubind._launch.launch", "cubind._interop.dlpack",
           "cubind._memory.memory", "cubind.graph.model.buffer", "cubind.graph.model.ordering",
           "cubind.graph.scheduling.idle", "cubind.graph.scheduling.loop", "cubind.graph.ucx.pump",
           "cubind.graph.ucx.recvpath", "cubind.graph.ucx.sendpath", "ucx._ucp", "ucx.cucp")
# Every module but the Pythonic layer's own ships its C level for cimport (the
# modules serving NVIDIA's C level export theirs through __pyx_capi__ alone).
PXD = [name.replace(".", "/") + ".pxd" for name in MODULES
       if name not in ("cubind._core.current", "cubind._core.event", "cubind._launch.capsule", "cubind._launch.launch",
                       "cubind._interop.dlpack", "cubind._memory.memory", "cubind.graph.model.ordering",
                       "cubind.graph.scheduling.loop", "cubind.graph.ucx.pump", "cubind.graph.ucx.recvpath",
                       "cubind.graph.ucx.sendpath")
       and "._cy" not in name]
STUBS = [stubs for _, stubs, _ in PUBLIC]
# The Pythonic layer's: the generated re-export of `import cubind`, and the
# hand-written ones of compiled modules (the .py modules carry their annotations).
STUBS += ["cubind/__init__.pyi", "cubind/_launch/launch.pyi", "cubind/_launch/capsule.pyi", "cubind/_memory/memory.pyi",
          "cubind/_core/allocations.pyi", "cubind/_core/current.pyi",
          "cubind/_core/event.pyi", "cubind/_interop/dlpack.pyi", "_cubind/loader.pyi",
          "cubind/graph/model/buffer.pyi", "cubind/graph/model/ordering.pyi",
          "cubind/graph/scheduling/idle.pyi", "cubind/graph/scheduling/loop.pyi", "cubind/graph/ucx/pump.pyi",
          "cubind/graph/ucx/recvpath.pyi", "cubind/graph/ucx/sendpath.pyi"]
# The floor's Python modules and the EGL stand-ins cubind.get_include() names (package data).
FLOOR = ["_cubind/__init__.py", "_cubind/compat.py", "_cubind/cuda_paths.py", "_cubind/enum.py",
         "_cubind/errors.py", "_cubind/exports.py", "_cubind/platform_fallback/EGL/egl.h",
         "_cubind/platform_fallback/EGL/eglext.h", "_cubind/platform_fallback/GL/gl.h",
         "_cubind/platform_fallback/vdpau/vdpau.h"]
# The .pxd of NVIDIA's C-level modules for source consumers, found through get_include().
FLOOR += ["_cubind/cimport/cuda/__init__.pxd", "_cubind/cimport/cuda/bindings/__init__.pxd"]
FLOOR += [f"_cubind/cimport/cuda/bindings/{m}.pxd"
          for m in ("cydriver", "cyruntime", "cynvrtc", "cynvjitlink", "cynvvm", "cynvfatbin", "cynvml", "cycufile")]


def _built(package):
    try:
        return importlib.import_module(package)
    except ImportError:
        pytest.skip(f"{package} is not built")


def _cuda_include(header):
    """The include directory of ``header`` where the build finds it (the one
    search, _cubind/cuda_paths.py: NVIDIA's wheels in the environment too), or None."""
    path = find_header(header)
    return str(path.parent) if path else None


def stub_parameters(stubs):
    """{function: [parameter names]} of generated stubs."""
    tree = ast.parse((ROOT / stubs).read_text())
    functions = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            args = node.args
            functions[node.name] = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        elif (isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in functions
              and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            functions[node.targets[0].id] = functions[node.value.id]  # a helper: `name = function`
    return functions


def public_functions(module):
    return {name: getattr(module, name) for name in module.__all__ if inspect.isbuiltin(getattr(module, name))}


def load_setup():
    """setup.py as a module: imported, it defines its functions and builds nothing."""
    spec = importlib.util.spec_from_file_location("cubind_setup", ROOT / "setup.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_setup_takes_the_modules_and_packages_from_the_specs():
    setup = load_setup()
    assert sorted(setup.module_names(str(ROOT))) == sorted(MODULES)
    # Every package under cubind/, at any depth (cubind.graph's rooms too).
    subpackages = sorted(".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "cubind").rglob("*/__init__.py")
                         if "__pycache__" not in p.parts)
    assert sorted(setup.packages(str(ROOT))) == sorted(["_cubind", "cubind", *subpackages,
                                                        "cuda", "cufile", "nvfatbin", "nvjitlink", "nvml", "nvrtc",
                                                        "nvvm", "ucx"])
    # The largest first: the driver's Python layer takes most of the build.
    assert setup.module_names(str(ROOT))[0] == "cuda._driver"


# -- signatures ------------------------------------------------------------------------------


@pytest.mark.parametrize("package,stubs", [(package, stubs) for package, stubs, _ in PUBLIC])
def test_every_public_function_has_the_stubs_signature(package, stubs):
    module = _built(package)
    stubs = stub_parameters(stubs)
    functions = public_functions(module)
    assert len(functions) > 10
    missing, different = [], []
    for name, function in functions.items():
        try:
            parameters = list(inspect.signature(function).parameters)
        except (ValueError, TypeError) as exc:
            missing.append(f"{name}: {exc}")
            continue
        if name not in stubs or parameters != stubs[name]:
            different.append(f"{name}{tuple(parameters)} != stub {stubs.get(name)}")
    assert not missing, missing
    assert not different, different


def test_cuLaunchKernel_signature():
    cuda = _built("cuda")
    assert list(inspect.signature(cuda.cuLaunchKernel).parameters) == [
        "f", "gridDimX", "gridDimY", "gridDimZ", "blockDimX", "blockDimY", "blockDimZ",
        "sharedMemBytes", "hStream", "kernelParams", "extra"]


@pytest.mark.parametrize("name,parameters", [
    ("nvrtcCreateProgram", ["src", "name", "numHeaders", "headers", "includeNames"]),
    ("nvrtcCompileProgram", ["prog", "numOptions", "options"]),
    ("nvrtcGetPTX", ["prog", "ptx"]),
    ("nvrtcGetPTXSize", ["prog"]),
    ("nvrtcVersion", []),
])
def test_nvrtc_signatures(name, parameters):
    nvrtc = _built("nvrtc")
    assert list(inspect.signature(getattr(nvrtc, name)).parameters) == parameters


def test_signatures_keep_the_call_plain():
    """binding=False stays: functions are builtins, not cyfunctions (whose calls cost more)."""
    cuda = _built("cuda")
    assert type(cuda.cuInit).__name__ == "builtin_function_or_method"
    assert cuda.cuInit.__text_signature__ == "(Flags)"
    assert "(Flags)\n--\n" not in cuda.cuInit.__doc__


def _header_declarations(text):
    """{function: [[parameter names] per declaration]} of a CUDA header's prototypes."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.DOTALL)
    declarations = {}
    # Declarations end with ';', nvJitLink.h's inline wrappers with their body.
    for name, params in re.findall(r"\b((?:cu|nvrtc|nvJitLink|nvvm|nvFatbin|nvml)\w+)\s*\(([^;{}]*?)\)\s*[;{]", text):
        names, depth, part = [], 0, ""
        for ch in params + ",":
            if ch == "," and depth == 0:
                pointer = re.search(r"\(\s*(?:CUDA_CB\s*)?\*\s*(\w+)\s*\)", part)  # int (*callback)(void*)
                words = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[[^\]]*\]|=.*|__dv\(.*", "", part))  # arrays, defaults
                if pointer:
                    names.append(pointer.group(1))
                elif words and words != ["void"]:
                    names.append(words[-1])
                part = ""
                continue
            depth += (ch == "(") - (ch == ")")
            part += ch
        declarations.setdefault(name, []).append(names)
    # A name the header #defines to another (nvml.h: nvmlDeviceRemoveGpu ->
    # nvmlDeviceRemoveGpu_v2) is called as that one: its declarations count too.
    for alias, target in re.findall(r"^\s*#\s*define\s+(\w+)\s+(\w+)\s*$", text, re.M):
        if target in declarations:
            declarations.setdefault(alias, []).extend(declarations[target])
    return declarations


def _subsequence(python_names, c_names):
    """In order; a C name that is a Python keyword or builtin has a "_" appended (bytes -> bytes_)."""
    it = iter(c_names)
    return all(any(p == c or p == c + "_" for c in it) for p in python_names)


@pytest.mark.parametrize("package,header", [(package, header) for package, _, header in PUBLIC])
def test_parameter_names_are_the_headers(package, header):
    """Each function's parameters are its C parameters, in order, less the outputs."""
    module = _built(package)
    include = _cuda_include(header)
    if include is None:
        pytest.skip(f"{header} not found")
    declared = _header_declarations((Path(include) / header).read_text())
    checked, wrong = 0, []
    for name, function in public_functions(module).items():
        if name not in declared:
            continue
        checked += 1
        parameters = list(inspect.signature(function).parameters)
        if not any(_subsequence(parameters, c_names) for c_names in declared[name]):
            wrong.append(f"{name}{tuple(parameters)} vs {declared[name]}")
    assert checked > 0.9 * len(public_functions(module))
    assert not wrong, wrong


# -- the wheel -------------------------------------------------------------------------------


def _run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, **kwargs)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    if importlib.util.find_spec("build") is None:
        pytest.skip("the 'build' package is not installed (scripts/test.sh installs it)")
    _built("cuda")
    out = tmp_path_factory.mktemp("wheel")
    done = _run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(ROOT)],
                cwd=ROOT, env={**os.environ, "CUBIND_NO_COMPILE": "1"}, timeout=600)
    if done.returncode != 0 and "CUBIND_NO_COMPILE is set" in done.stdout + done.stderr:
        reason = "no up-to-date in-place build to make the wheel from (scripts/run-example.sh makes one)"
        if os.environ.get("CI"):
            pytest.fail(reason + "\n" + done.stdout[-3000:] + done.stderr[-3000:])
        pytest.skip(reason)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-5000:]
    (path,) = out.glob("cubind-*.whl")
    return path


# Built where the libucx wheel's headers are (bindings/ucx.toml [build]): UCX's
# binding and the graph's data path's pump over it; the wheel of an environment
# without them leaves them out (scripts/_common.sh installs it from Python 3.11).
UCX_MODULES = ("ucx._ucp", "ucx.cucp", "cubind.graph.ucx.pump")


def test_wheel_contents(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    files = [n for n in names if ".dist-info/" not in n]
    with_ucx = importlib.util.find_spec("libucx") is not None
    for module in MODULES:
        if module in UCX_MODULES and not with_ucx:
            continue
        stem = module.replace(".", "/")
        assert [n for n in files if n.startswith(stem + ".") and n.endswith(".so")], module
    for expected in PXD + STUBS + ["cubind/py.typed", "cuda/py.typed",
                           "nvrtc/py.typed", "nvjitlink/py.typed", "cuda/__init__.py", "nvrtc/__init__.py",
                           "nvjitlink/__init__.py", "nvvm/py.typed", "nvvm/__init__.py", "nvfatbin/py.typed",
                           "nvfatbin/__init__.py", "nvml/py.typed", "nvml/__init__.py", "cufile/py.typed",
                           "cufile/__init__.py", "cubind/__init__.py",
                           *FLOOR]:
        assert expected in files, expected
    # the build's record of itself (_cubind/built.py), written by the build for the wheel
    assert f"_cubind/{record_name()}" in files
    assert not [n for n in files if n.endswith((".c", ".pyx", ".o"))]
    # NVIDIA's cuda-bindings owns cuda/bindings/: cubind serves those names from its own modules
    assert not [n for n in files if n.startswith("cuda/bindings/")]
    # build/lib keeps what earlier builds put there, and the wheel takes it all
    stale = [n for n in files if n.startswith("cubind/_bind/")]
    assert not stale, f"cubind/_bind is _cubind now: remove the stale build/lib/cubind/_bind ({stale[:3]})"
    assert all(n.split("/")[0] in ("_cubind", "cuda", "nvrtc", "nvjitlink", "nvvm", "nvfatbin", "nvml", "cufile",
                                     "ucx", "cubind")
               for n in files), files
    assert wheel.stat().st_size < 12_000_000, wheel.stat().st_size
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    requires = [line for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist:")]
    assert "Requires-Dist: numpy" in requires, requires  # the Pythonic layer's arrays need it


@pytest.fixture(scope="module")
def unpacked_wheel(wheel, tmp_path_factory):
    site = tmp_path_factory.mktemp("site")
    zipfile.ZipFile(wheel).extractall(site)
    return site


# Run with the unpacked wheel first on the path and the source tree off it
# (scripts/ put the tree on the venv's path).
WITHOUT_TREE = f"""
import os, sys
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != {str(ROOT)!r}]
"""


def test_wheel_imports_with_signatures(unpacked_wheel):
    code = WITHOUT_TREE + textwrap.dedent("""
        import inspect, cuda, nvrtc
        assert cuda.__file__.startswith(sys.argv[1]), cuda.__file__
        print(len(inspect.signature(cuda.cuLaunchKernel).parameters))
        print(nvrtc.nvrtcVersion.__text_signature__)
    """)
    done = _run([sys.executable, "-c", code, str(unpacked_wheel)], cwd=unpacked_wheel,
                env={**os.environ, "PYTHONPATH": str(unpacked_wheel)}, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["11", "()"]


def test_wheel_is_enough_to_cimport(unpacked_wheel, tmp_path):
    """tests/packaging/cimport_ext/consumer.pyx builds against the wheel's .pxd files alone and runs."""
    pytest.importorskip("Cython")
    include = _cuda_include("cuda.h")
    if include is None:
        pytest.skip("CUDA headers not found")
    shutil.copy(ROOT / "tests" / "packaging" / "cimport_ext" / "consumer.pyx", tmp_path / "consumer.pyx")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(unpacked_wheel)])}
    setup = WITHOUT_TREE + textwrap.dedent(f"""
        from setuptools import Extension, setup
        from Cython.Build import cythonize
        setup(script_args=["build_ext", "--inplace", "-q"],
              ext_modules=cythonize([Extension("consumer", ["consumer.pyx"], include_dirs=[{include!r}])],
                                    include_path=[{str(unpacked_wheel)!r}], quiet=True))
    """)
    done = _run([sys.executable, "-c", setup], cwd=tmp_path, env=env, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    code = WITHOUT_TREE + textwrap.dedent("""
        import consumer, cuda
        assert cuda.__file__.startswith(sys.argv[1]), cuda.__file__
        print(consumer.stream_value(cuda.CUstream(0x1234)))
    """)
    done = _run([sys.executable, "-c", code, str(unpacked_wheel)], cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(0x1234)


# -- the sdist -------------------------------------------------------------------------------


def test_sdist_has_the_sources_and_no_generated_c(tmp_path):
    """The sdist builds with Cython and the CUDA headers alone: the generated .pyx/.pxd are in it,
    the generator (libclang) and Cython's C output are not."""
    if importlib.util.find_spec("build") is None:
        pytest.skip("the 'build' package is not installed (scripts/test.sh installs it)")
    done = _run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
                cwd=ROOT, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (sdist,) = tmp_path.glob("cubind-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for module in MODULES:
        assert module.replace(".", "/") + ".pyx" in names, module
    specs = [f"bindings/{spec.name}" for spec in (ROOT / "bindings").glob("*.toml")]
    assert specs  # setup.py takes its packages and modules from them
    for expected in PXD + STUBS + FLOOR + specs + ["setup.py", "pyproject.toml", "cuda/py.typed"]:
        assert expected in names, expected
    assert not [n for n in names if n.endswith((".c", ".so")) or n.startswith("_cubind/built.")
                and n.endswith(".json")]
    assert not [n for n in names if n.startswith(("generator/", "build/", "tests/"))]
