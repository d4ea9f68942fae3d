"""ARCHITECTURE.md's package layers hold in the code: every import of a
cubind module (at module level or inside a function: a deferred import is
still a dependency) points to its own package or a lower layer, no two
modules import each other through any chain, no module sits in
``cubind/``'s root but the package's ``__init__``, and no module reaches a
lower layer at run time the other way round: registering itself there
(``register_*``/``on_*`` calls) or setting attributes on what it imported
from another package (patching)."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "cubind"
SOURCES = (".py", ".pyx", ".pxd")


def layers():
    """The layers in ARCHITECTURE.md's table, lowest first: [(package, rank)]."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    table = text.split("<!-- layers -->")[1].split("<!-- /layers -->")[0]
    found = re.findall(r"^\|\s*(\d+)\s*\|\s*`(cubind\.\w+)`", table, re.M)
    assert found, "ARCHITECTURE.md: no layer table between <!-- layers --> markers"
    return {name: int(rank) for rank, name in found}


def module_name(path):
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def cython_to_python(text):
    """Enough of a .pyx/.pxd for ast: its import lines (cimports as imports)."""
    lines = []
    for line in text.splitlines():
        stripped = line.strip()
        m = re.match(r"(from\s+[\w.]+\s+)c?(import\s+.*)$", stripped)
        if m and not stripped.startswith("from libc") and not stripped.startswith("from cpython"):
            lines.append(" " * (len(line) - len(line.lstrip())) + m.group(1) + m.group(2).split("#")[0])
        elif re.match(r"c?import\s+[\w.]+", stripped):
            lines.append(" " * (len(line) - len(line.lstrip())) + re.sub(r"^cimport", "import", stripped).split("#")[0])
    # Indentation is meaningless here: flatten so that ast accepts it.
    return "\n".join(line.strip() for line in lines)


def imports(path):
    """The cubind modules ``path`` imports (absolute names)."""
    text = path.read_text()
    tree = ast.parse(text if path.suffix == ".py" else cython_to_python(text))
    own = module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                out.add(candidate if module_path(candidate) else base)
    return {m for m in out if m == "cubind" or m.startswith("cubind.")} - {own}


def module_path(name):
    base = ROOT.joinpath(*name.split("."))
    return any(base.with_suffix(s).exists() for s in SOURCES) or (base / "__init__.py").exists()


def modules():
    return sorted(p for p in PACKAGE.rglob("*") if p.suffix in SOURCES and "__pycache__" not in p.parts)


def package_of(name):
    parts = name.split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else name


def graph():
    return {module_name(p): imports(p) for p in modules()}


def test_no_module_in_the_package_root_but_init():
    stray = [p.name for p in PACKAGE.iterdir() if p.suffix in SOURCES and p.name != "__init__.py"]
    assert stray == []


def test_every_subpackage_has_a_layer():
    ranks = layers()
    subpackages = {f"cubind.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert subpackages == set(ranks), "ARCHITECTURE.md's layer table and cubind/'s subpackages differ"


def test_imports_point_down_the_layers():
    ranks = layers()
    wrong = []
    for module, deps in graph().items():
        if module == "cubind":
            continue  # the package's __init__ re-exports from every layer (lazily)
        own = ranks[package_of(module)]
        for dep in deps:
            if dep == "cubind":
                continue  # the package itself: its __init__ loads nothing
            if ranks[package_of(dep)] > own:
                wrong.append(f"{module} -> {dep}")
    assert wrong == []


def imported_names(tree, own):
    """Names bound by (absolute) imports from other cubind modules than ``own``."""
    names = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("cubind."):
                    names[alias.asname or alias.name.split(".")[0]] = alias.name
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("cubind"):
            for alias in node.names:
                names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return {n: m for n, m in names.items() if m != own and not m.startswith(own + ".")}


def run_time_ties(path):
    """Registrations into, and patches of, other cubind modules in ``path``."""
    own = module_name(path)
    text = path.read_text()
    tree = ast.parse(text if path.suffix == ".py" else cython_to_python(text))
    foreign = imported_names(tree, own)
    found = []
    if path.suffix != ".py":  # the import lines alone were parsed: read the calls and assignments as text
        for name in foreign:
            for m in re.finditer(rf"^\s*{re.escape(name)}\.(register\w*|on_\w+)\(|^\s*{re.escape(name)}\.\w+\s*=[^=]",
                                 text, re.M):
                found.append(f"{own}: {m.group(0).strip()}")
        return found
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fn = node.func
            called = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
            base = fn.value.id if isinstance(fn, ast.Attribute) and isinstance(fn.value, ast.Name) else called
            if base in foreign and re.match(r"register|on_", called):
                found.append(f"{own}: calls {base}.{called}" if base != called else f"{own}: calls {called}")
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                while isinstance(target, ast.Attribute) and isinstance(target.value, ast.Attribute):
                    target = target.value
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                        and target.value.id in foreign:
                    found.append(f"{own}: sets {target.value.id}.{target.attr}")
    return found


def test_no_layer_registers_itself_into_or_patches_another():
    # A lower layer never learns about a higher one at run time: where it
    # must act on higher objects, it defines the protocol (a base class, a
    # method it calls) and they implement it.
    ties = [tie for path in modules() for tie in run_time_ties(path)]
    assert ties == []


def test_no_import_circle():
    edges = {m: {d for d in deps if d != "cubind"} for m, deps in graph().items() if m != "cubind"}
    # a package's __init__ that imports its own modules is an edge from the
    # package into them, not a module depending on its package
    for module in edges:
        edges[module] = {d for d in edges[module] if not module.startswith(d + ".")}
    circles, state = [], {}

    def visit(node, path):
        state[node] = "open"
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == "open":
                circles.append(" -> ".join(path[path.index(nxt):] + [nxt]))
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[node] = "done"

    for node in sorted(edges):
        if node not in state:
            visit(node, [node])
    assert circles == []


def test_the_checker_sees_a_circle_and_a_wrong_arrow(tmp_path):
    # The scan itself: a deferred import inside a function counts, relative
    # imports resolve, and cimports are read from Cython sources.
    fake = tmp_path / "cubind"
    (fake / "_low").mkdir(parents=True)
    (fake / "_high").mkdir()
    for d in (fake, fake / "_low", fake / "_high"):
        (d / "__init__.py").write_text("")
    (fake / "_low" / "a.py").write_text("def f():\n    from cubind._high import b\n")
    (fake / "_high" / "b.pyx").write_text("from cubind._low.a cimport thing\n")
    (tmp_path / "ARCHITECTURE.md").write_text(
        "<!-- layers -->\n| 0 | `cubind._low` |\n| 1 | `cubind._high` |\n<!-- /layers -->\n")
    global ROOT, PACKAGE
    saved = ROOT, PACKAGE
    ROOT, PACKAGE = tmp_path, fake
    try:
        (fake / "_high" / "c.py").write_text("from cubind._low import a\na.hook = print\na.register_thing(print)\n")
        assert sorted(run_time_ties(fake / "_high" / "c.py")) == ["cubind._high.c: calls a.register_thing",
                                                                  "cubind._high.c: sets a.hook"]
        (fake / "_high" / "c.py").unlink()
        assert graph()["cubind._low.a"] == {"cubind._high.b"}
        assert graph()["cubind._high.b"] == {"cubind._low.a"}
        for check in (test_imports_point_down_the_layers, test_no_import_circle):
            try:
                check()
            except AssertionError:
                continue
            raise AssertionError(f"{check.__name__} passed on a tree that breaks it")
    finally:
        ROOT, PACKAGE = saved
