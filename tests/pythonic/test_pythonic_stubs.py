"""The Pythonic layer's types: each signature is written once, in the
implementation's annotations (or, for a compiled module, the ``.pyi`` beside it).

- cubind/__init__.pyi only re-exports, and is what scripts/gen-stubs.py makes
  from ``_LAZY`` and ``__all__``; cubind.compute has no stub (its
  ``__init__.py`` imports its names).
- The hand-written stub of a compiled module (cubind/_memory/memory.pyi) is
  read with ``ast`` and compared with the runtime objects: the names exported,
  each class's members and their kinds, and each signature that ``inspect``
  can read (parameter names, kinds, which have defaults).
- mypy, run over a typed program, sees every public name with its real
  signature and rejects wrong calls. No GPU is needed.
"""

import ast
import builtins
import importlib
import importlib.util
import inspect
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import cubind

ROOT = Path(__file__).resolve().parents[2]
STUBS = {"cubind._memory.memory": ROOT / "cubind" / "_memory" / "memory.pyi"}
P = inspect.Parameter

# Dunders that are part of the classes' interface (protocols, operators, context
# managers): the stubs must declare each one a public class defines.
INTERFACE_DUNDERS = {
    "__call__", "__enter__", "__exit__", "__len__", "__iter__", "__getitem__", "__setitem__", "__sub__", "__int__",
    "__index__", "__bytes__", "__class_getitem__", "__cuda_stream__", "__cuda_array_interface__", "__dlpack__",
    "__dlpack_device__",
}
# Left out of the stubs on purpose: Array.__array__ only raises TypeError, and
# declaring it would make type checkers take an Array for host data (ArrayLike).
NOT_IN_STUBS = {("Array", "__array__")}
# The interop protocols: public, so documented like public methods.
DOCUMENTED_DUNDERS = {"__cuda_stream__", "__cuda_array_interface__", "__dlpack__", "__dlpack_device__"}

# -- reading the stubs --------------------------------------------------------------------

def stub_tree(module_name):
    return ast.parse(STUBS[module_name].read_text(), filename=str(STUBS[module_name]))


def top_level(tree):
    """The module's statements, those of its ``if`` blocks (version checks) included."""
    for node in tree.body:
        if isinstance(node, ast.If):
            yield from node.body
            yield from node.orelse
        else:
            yield node


def exported_names(tree):
    """What a type checker sees as the stub's public names: definitions, and
    imports only in the re-exporting ``import X as X`` form."""
    names = set()
    for node in top_level(tree):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname for a in node.names if a.asname is not None and a.asname == a.name)
    return {n for n in names if not n.startswith("_")}


def stub_all(tree):
    for node in top_level(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return ast.literal_eval(node.value)
    return None


def decorators(node):
    return {d.id if isinstance(d, ast.Name) else ast.unparse(d) for d in node.decorator_list}


def stub_kind(node):
    """"property", "static", "class" or "method" for a def in a class body;
    ``__new__`` and ``__class_getitem__`` are implicitly static and class methods."""
    marks = decorators(node)
    if "property" in marks:
        return "property"
    if "staticmethod" in marks or node.name == "__new__":
        return "static"
    if "classmethod" in marks or node.name in ("__class_getitem__", "__init_subclass__"):
        return "class"
    return "method"


def stub_params(node):
    """``[(name, kind, has default)]`` of a stub def."""
    a = node.args
    positional = [(x, P.POSITIONAL_ONLY) for x in a.posonlyargs] + [(x, P.POSITIONAL_OR_KEYWORD) for x in a.args]
    first_default = len(positional) - len(a.defaults)
    params = [(x.arg, kind, i >= first_default) for i, (x, kind) in enumerate(positional)]
    if a.vararg:
        params.append((a.vararg.arg, P.VAR_POSITIONAL, False))
    params += [(x.arg, P.KEYWORD_ONLY, d is not None) for x, d in zip(a.kwonlyargs, a.kw_defaults)]
    if a.kwarg:
        params.append((a.kwarg.arg, P.VAR_KEYWORD, False))
    return params


def stub_classes():
    """``(module name, ClassDef, runtime class)`` of every stub class that
    exists at runtime (the typing-only Protocols and aliases are private and
    do not)."""
    for module_name in STUBS:
        module = importlib.import_module(module_name)
        for node in top_level(stub_tree(module_name)):
            if isinstance(node, ast.ClassDef):
                cls = getattr(module, node.name, None)
                if cls is None and node.name.startswith("_"):
                    continue
                yield module_name, node, cls


def class_members(node):
    """``{name: def or AnnAssign}`` of a stub class body."""
    members = {}
    for item in node.body:
        if isinstance(item, ast.FunctionDef):
            members[item.name] = item
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            members[item.target.id] = item
    return members


def stub_members_with_bases(module_name, node):
    """The names a stub class declares, with those of its bases in the same stub."""
    classes = {n.name: n for n in top_level(stub_tree(module_name)) if isinstance(n, ast.ClassDef)}
    names = set(class_members(node))
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            names |= stub_members_with_bases(module_name, classes[base.id])
    return names


# -- reading the runtime --------------------------------------------------------------------

def cubind_classes(cls):
    """The classes of ``cls``'s MRO that cubind defines (not object, RuntimeError...)."""
    return [k for k in cls.__mro__ if k.__module__.split(".")[0] == "cubind"]


def self_assigned(cls):
    """Names the Python source of ``cls`` and its cubind bases assigns as ``self.name``."""
    names = set()
    for klass in cubind_classes(cls):
        try:
            source = textwrap.dedent(inspect.getsource(klass))
        except (OSError, TypeError):  # a compiled class: its attributes are descriptors
            continue
        for node in ast.walk(ast.parse(source)):
            if (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store)
                    and isinstance(node.value, ast.Name) and node.value.id == "self"):
                names.add(node.attr)
    return names


def runtime_kind(cls, name):
    raw = inspect.getattr_static(cls, name)
    if isinstance(raw, staticmethod):
        return "static"
    if isinstance(raw, classmethod) or type(raw).__name__ == "classmethod_descriptor":
        return "class"
    if isinstance(raw, property) or (inspect.isdatadescriptor(raw) and not callable(raw)):
        return "property"
    if callable(raw):
        return "method"
    return "attribute"


def runtime_params(obj):
    """``[(name, kind, has default)]``, or None where no signature can be read."""
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return None
    return [(p.name, p.kind, p.default is not P.empty) for p in signature.parameters.values()]


def is_generic(params):
    """A compiled slot's ``(self, /, *args, **kwargs)``: says nothing of the real parameters."""
    rest = [kind for _, kind, _ in params if kind not in (P.POSITIONAL_ONLY,)]
    return rest == [P.VAR_POSITIONAL, P.VAR_KEYWORD] and len(params) <= 3


def normalize_self(params):
    """The first parameter of a method as one form: compiled methods make
    ``self`` positional-only."""
    if params:
        name, _, default = params[0]
        params = [(name, P.POSITIONAL_OR_KEYWORD, default), *params[1:]]
    return params


def compare(where, stub_node, runtime, kind, checked, skipped, problems):
    """Compares a stub def with the runtime callable's signature; appends
    ``where`` to ``checked`` or, where the runtime's cannot be read, ``skipped``."""
    expected = stub_params(stub_node)
    got = runtime_params(runtime)
    if kind == "class":
        expected = expected[1:]  # the runtime object is bound to the class
    if got is None or (is_generic(got) and not is_generic(expected)):
        skipped.append(where)
        return
    if kind == "method":
        expected, got = normalize_self(expected), normalize_self(got)
    if expected != got:
        show = lambda ps: ", ".join(f"{n}:{k.name}{'=...' if d else ''}" for n, k, d in ps)  # noqa: E731
        problems.append(f"{where}: stub ({show(expected)}) != runtime ({show(got)})")
    checked.append(where)


def check_stubs():
    """``(signatures compared, properties checked, signatures skipped, problems)``
    over every stub function and class member."""
    checked, properties, skipped, problems = [], [], [], []
    for module_name in STUBS:
        module = importlib.import_module(module_name)
        for node in top_level(stub_tree(module_name)):
            if isinstance(node, ast.FunctionDef) and not node.name.startswith("_"):
                runtime = getattr(module, node.name, None)
                if not callable(runtime) or inspect.isclass(runtime):
                    problems.append(f"{module_name}.{node.name}: not a function at runtime ({runtime!r})")
                    continue
                compare(f"{module_name}.{node.name}", node, runtime, "function", checked, skipped, problems)
    for module_name, node, cls in stub_classes():
        where = f"{module_name}.{node.name}"
        if not inspect.isclass(cls):
            problems.append(f"{where}: not a class at runtime ({cls!r})")
            continue
        for base in node.bases:
            if not isinstance(base, ast.Name):
                continue
            base_cls = getattr(builtins, base.id, None) or getattr(importlib.import_module(module_name), base.id, None)
            if not inspect.isclass(base_cls) or not issubclass(cls, base_cls):
                problems.append(f"{where}: the stub's base {base.id} is not a base at runtime")
        assigned = None
        for name, item in class_members(node).items():
            member = f"{where}.{name}"
            if isinstance(item, ast.AnnAssign):
                if "ClassVar" in ast.unparse(item.annotation):
                    if name not in vars(cls) and not any(name in vars(k) for k in cubind_classes(cls)):
                        problems.append(f"{member}: no such class attribute at runtime")
                    continue
                if assigned is None:
                    assigned = self_assigned(cls)
                if not hasattr(cls, name) and name not in assigned:
                    problems.append(f"{member}: no such attribute at runtime")
                continue
            try:
                got_kind = runtime_kind(cls, name)
            except AttributeError:
                problems.append(f"{member}: missing at runtime")
                continue
            kind = stub_kind(item)
            if kind != got_kind:
                problems.append(f"{member}: a {kind} in the stub, a {got_kind} at runtime")
                continue
            if kind != "property":
                compare(member, item, getattr(cls, name), kind, checked, skipped, problems)
            else:
                properties.append(member)
    return checked, properties, skipped, problems


# -- the names ----------------------------------------------------------------------------------

def gen_stubs():
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "scripts" / "gen-stubs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_package_stub_is_the_generated_re_export_of_lazy():
    stub = ROOT / "cubind" / "__init__.pyi"
    assert stub.read_text() == gen_stubs().expected(), "cubind/__init__.pyi: run python scripts/gen-stubs.py"
    tree = ast.parse(stub.read_text())
    assert exported_names(tree) == set(cubind.__all__) == set(cubind._LAZY)
    assert stub_all(tree) == cubind.__all__
    # Nothing but re-exports: a signature written here would be a second copy.
    assert not [n for n in tree.body if isinstance(n, (ast.ClassDef, ast.FunctionDef))]


def test_the_generator_refuses_lazy_and_all_apart():
    with pytest.raises(SystemExit, match="Device"):
        gen_stubs().render({"Device": "._core.device_stream_event"}, [])


def test_compute_has_no_hand_written_stub():
    assert not (ROOT / "cubind" / "compute" / "__init__.pyi").exists()
    import cubind.compute

    names = cubind.compute.__all__
    assert all(getattr(cubind.compute, name).__module__.startswith("cubind.compute.") for name in names)


def test_memory_stub_exports_exactly_its_all():
    from cubind._memory import memory as _memory

    tree = stub_tree("cubind._memory.memory")
    assert exported_names(tree) == set(_memory.__all__)
    assert stub_all(tree) == _memory.__all__


def test_every_name_in_all_resolves():
    for name in cubind.__all__:
        assert getattr(cubind, name) is not None, name


# -- the members and signatures ------------------------------------------------------------------

def test_stub_members_exist_at_runtime_as_the_same_kind_and_signature():
    checked, properties, skipped, problems = check_stubs()
    assert not problems, "\n".join(problems)
    # Only compiled slots with no readable signature (the __init__ and __del__
    # of the Cython memory owners) may be skipped.
    assert len(skipped) <= 5, skipped
    assert len(checked) >= 7, f"only {len(checked)} signatures compared: {checked}"
    assert len(properties) >= 2, f"only {len(properties)} properties checked: {properties}"


def test_signature_comparison_detects_a_drift():
    # The comparison is not vacuous: a stub def differing from the runtime in a
    # name, a kind or a default is reported.
    def runtime(a, b=1, *, c):
        pass

    for text, drifted in [("def f(a, b=..., *, c): ...", False), ("def f(a, b, *, c): ...", True),
                          ("def f(a, c=..., *, b): ...", True), ("def f(a, b=..., c=...): ...", True)]:
        node = ast.parse(text).body[0]
        checked, skipped, problems = [], [], []
        compare("f", node, runtime, "function", checked, skipped, problems)
        assert bool(problems) == drifted, (text, problems)


# -- docstrings -----------------------------------------------------------------------------------

def test_every_public_name_has_a_docstring():
    assert [name for name in cubind.__all__ if not (getattr(cubind, name).__doc__ or "").strip()] == []


def undocumented_members():
    missing = set()
    for name in cubind.__all__:
        cls = getattr(cubind, name)
        if not inspect.isclass(cls):
            continue
        for klass in cubind_classes(cls):
            for attr, raw in vars(klass).items():
                if attr.startswith("_") and attr not in DOCUMENTED_DUNDERS:
                    continue
                if isinstance(raw, (staticmethod, classmethod)):
                    raw = raw.__func__
                if not (callable(raw) or inspect.isdatadescriptor(raw)):
                    continue  # plain data: the class docstring says what it is
                if not (raw.__doc__ or "").strip():
                    missing.add(f"{name}.{attr}")
    return missing


def test_every_public_method_and_property_has_a_docstring():
    missing = undocumented_members()
    assert not missing, f"public members without a docstring: {sorted(missing)}"


# -- mypy through the re-export into the annotated modules ------------------------------------

GOOD = '''
import numpy as np
import numpy.typing as npt

import cubind

SRC = r"""
extern "C" __global__ void saxpy(float a, const float *x, const float *y, float *out, size_t n)
{
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a * x[i] + y[i];
}
"""


def saxpy(a: float, hx: npt.NDArray[np.float32], hy: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    device = cubind.Device(0)
    name: str = device.name
    major, minor = device.compute_capability
    free, total = device.mem_info()
    print(name, device.arch, major + minor, free / total, device.attribute("max_threads_per_block") + 1)
    try:
        headers: dict[str, str] = {"scale.h": "#define SCALE 1"}
        program = cubind.Program(SRC, options=["-std=c++17"], headers=headers, name="saxpy.cu")
        module = program.compile(arch=cubind.default_arch())
    except cubind.CompileError as exc:
        raise SystemExit(exc.log + " ".join(exc.options))
    kernel = module.get_kernel("saxpy")
    regs: int = kernel.num_regs
    n = hx.size
    with cubind.Stream(non_blocking=True) as stream, cubind.to_gpu(hx, stream=stream) as x:
        y = cubind.to_gpu(hy, stream=stream)
        out = cubind.empty(n, np.float32, stream=stream)
        start = cubind.Event()
        start.record(stream)
        kernel((n + 255) // 256, 256, a, x, y, out, n, stream=stream)
        block: list[int] = [256, 1]
        config = cubind.LaunchConfig(grid=(n + 255) // 256, block=block, attributes={"priority": 0})
        cubind.launch(stream, config, kernel, a, x, y, out, n)
        with stream:
            current: cubind.Stream | None = cubind.current_stream()
            kernel((n + 255) // 256, 256, a, x, y, out, n)
        end = stream.record()
        end.synchronize()
        ms: float = end - start
        handle: int = int(stream)
        version, raw = stream.__cuda_stream__()
        other = cubind.Stream.from_handle(raw)
        other.wait(end)
        print(ms, start.elapsed_time(end), handle == raw, version, regs, other.query())
        result = out.get()
        view = out[1::2]
        view.fill(0.0)
        copied: cubind.Array = out.reshape(2, -1).T.astype(np.float64)
        shape: tuple[int, ...] = copied.shape
        print(shape, copied.ptr + 0, copied.device.ordinal, view.__cuda_array_interface__["data"])
        shared = cubind.from_dlpack(out)
        shared.copy_to(np.empty(n, np.float32))
        cubind.zeros_like(hx).set(hx)
        cubind.asarray(hy, stream=stream).free()
    try:
        cubind.Device(0).synchronize()
    except cubind.CUDAError as exc:
        print(exc.code, exc.name, exc.message, exc.call)
    device_copy = cubind.to_gpu(hx)
    address: int = device_copy.ptr
    print(address, device_copy.get(out=hx).sum(), cubind.current_device().total_memory, cubind.ensure_context())
    return result
'''

# Each line must draw an error from mypy.
BAD = '''
import cubind

a = cubind.to_gpu()
b = cubind.Device(0).name + 1
c = cubind.Stream(True)
d = cubind.Program("src").compile(target="sass")
e: cubind.Kernel = cubind.Program("src")
f = cubind.Event().elapsed_time(1.5)
g = cubind.no_such_name
h: str = cubind.empty(3).get()
i = cubind.to_gpu(cubind.empty(3))
'''


def test_mypy_accepts_real_use_and_rejects_wrong_calls(tmp_path):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed in this interpreter: the stubs cannot be type-checked")
    (tmp_path / "good_use.py").write_text(GOOD)
    (tmp_path / "bad_use.py").write_text(BAD)
    done = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", str(tmp_path / "cache"),
                           "--no-error-summary", "--hide-error-context", str(tmp_path / "good_use.py"),
                           str(tmp_path / "bad_use.py")], cwd=ROOT, capture_output=True, text=True, timeout=120)
    lines = done.stdout.splitlines()
    good_errors = [line for line in lines if "good_use.py" in line or ".pyi:" in line]
    assert good_errors == [], "\n".join(good_errors) + done.stderr[-2000:]
    flagged = {int(line.split(":")[1]) for line in lines if "bad_use.py:" in line and ": error:" in line}
    wanted = {i for i, line in enumerate(BAD.splitlines(), 1) if line and not line.startswith("import")}
    assert flagged == wanted, done.stdout
