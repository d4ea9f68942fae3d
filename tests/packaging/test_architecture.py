"""ARCHITECTURE.md's package layers hold in the code: every import of one of
the project's modules (at module level or inside a function: a deferred
import is still a dependency; one under ``if TYPE_CHECKING:``, for
annotations only, is not) points to its own package or a lower layer, no
two modules import each other through any chain, no module sits in
``cubind/``'s root but the package's ``__init__`` and ``__main__``, and no
module reaches a lower layer at run time the other way round: registering
itself there (``register_*``/``on_*`` calls) or setting attributes on what it
imported from another package (patching). Inside a layer with rooms
(ARCHITECTURE.md's rooms table: ``cubind.graph``), each room imports only
its own modules and the rooms its row names, and the layer's folder holds no
module but its ``__init__`` and ``__main__``.

The layers are the generated packages' runtime (``_cubind``, the floor), the
generated packages (``cuda``, ``nvrtc``, ...: one layer, which may import the
floor and each other) and cubind's subpackages above them."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "cubind"
SOURCES = (".py", ".pyx", ".pxd")


def layers():
    """The layers in ARCHITECTURE.md's table: {package: rank}. A row may name
    several packages of one rank (the generated ones)."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    table = text.split("<!-- layers -->")[1].split("<!-- /layers -->")[0]
    found = {}
    for rank, cell in re.findall(r"^\|\s*(\d+)\s*\|([^|]*)\|", table, re.M):
        for name in re.findall(r"`([\w.]+)`", cell):
            found[name] = int(rank)
    assert found, "ARCHITECTURE.md: no layer table between <!-- layers --> markers"
    return found


def tops():
    """The top-level packages the layers are made of (``cubind``, ``_cubind``,
    ``cuda``, ...)."""
    return {name.split(".")[0] for name in layers()} | {"cubind"}


def generated_packages():
    """The packages bindings/*.toml make."""
    names = set()
    for spec in (ROOT / "bindings").glob("*.toml"):
        # [library] name = "...": read without tomllib, which Python 3.10 lacks
        found = re.search(r'^\[library\][^\[]*?^name\s*=\s*"([\w.]+)"', spec.read_text(), re.M | re.S)
        assert found, f"{spec.name}: no [library] name"
        names.add(found.group(1))
    return names


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
    # What only type checkers read (``if TYPE_CHECKING:``) is not a dependency at
    # run time: an annotation may name a class of a higher layer.
    for node in [n for n in ast.walk(tree) if isinstance(n, ast.If)]:
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            node.body = [ast.Pass()]
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
    return {m for m in out if m.split(".")[0] in tops()} - {own}


def module_path(name):
    base = ROOT.joinpath(*name.split("."))
    return any(base.with_suffix(s).exists() for s in SOURCES) or (base / "__init__.py").exists()


def modules():
    return sorted(p for top in sorted(tops()) for p in ROOT.joinpath(top).rglob("*")
                  if p.suffix in SOURCES and "__pycache__" not in p.parts)


def package_of(name):
    """The layer a module belongs to: cubind's subpackage, else its top-level package."""
    parts = name.split(".")
    if parts[0] == "cubind":
        return ".".join(parts[:2]) if len(parts) > 1 else name
    return parts[0]


def graph():
    return {module_name(p): imports(p) for p in modules()}


# The package's own entry points: its __init__, and __main__ (``python -m cubind``).
ENTRY_POINTS = ("cubind", "cubind.__main__")


def test_no_module_in_the_package_root_but_init():
    stray = [p.name for p in PACKAGE.iterdir() if p.suffix in SOURCES and p.name not in ("__init__.py", "__main__.py")]
    assert stray == []


def test_every_subpackage_has_a_layer():
    ranks = layers()
    subpackages = {f"cubind.{p.name}" for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    expected = subpackages | generated_packages() | {"_cubind"}
    assert expected == set(ranks), "ARCHITECTURE.md's layer table differs from _cubind, the generated packages " \
                                   "and cubind/'s subpackages"


def test_the_floor_is_alone_at_the_bottom_and_the_generated_packages_just_above():
    ranks = layers()
    assert [name for name, rank in ranks.items() if rank == min(ranks.values())] == ["_cubind"]
    above = {ranks[name] for name in generated_packages()}
    assert above == {ranks["_cubind"] + 1}
    assert all(rank > ranks["_cubind"] + 1 for name, rank in ranks.items() if name.startswith("cubind."))


def test_the_generated_packages_are_scanned():
    # the scan reads them (their cimports too): cuda's Python layer cimports its C layer and the floor
    found = graph()
    assert {"_cubind.convert", "cuda.cdriver"} <= found["cuda._driver"]
    assert "_cubind.exports" in found["nvrtc"]


def upward_imports():
    """Every import of a module of a higher layer, as "module -> imported"."""
    ranks = layers()
    wrong = []
    for module, deps in graph().items():
        if module in ENTRY_POINTS:
            continue  # the package's __init__ re-exports from every layer (lazily), __main__ runs the top one
        own = ranks[package_of(module)]
        for dep in deps:
            if dep == "cubind":
                continue  # the package itself: its __init__ loads nothing
            if ranks[package_of(dep)] > own:
                wrong.append(f"{module} -> {dep}")
    return wrong


def test_imports_point_down_the_layers():
    assert upward_imports() == []


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


def rooms():
    """ARCHITECTURE.md's rooms table: {room: the rooms it may import}, full
    names (``cubind.graph.model``); a room's own modules are always allowed."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    assert "<!-- rooms -->" in text, "ARCHITECTURE.md: no rooms table between <!-- rooms --> markers"
    table = text.split("<!-- rooms -->")[1].split("<!-- /rooms -->")[0]
    found = {}
    for room, allowed in re.findall(r"^\|\s*`([\w.]+)`\s*\|[^|]*\|([^|]*)\|", table, re.M):
        layer = room.rpartition(".")[0]
        found[room] = {f"{layer}.{name}" for name in re.findall(r"`(\w+)`", allowed)}
    assert found, "ARCHITECTURE.md: the rooms table has no row"
    return found


def room_of(name, known):
    return next((room for room in known if name == room or name.startswith(room + ".")), None)


def crossings():
    """Every import from a room into a room its row does not name, or into
    its layer's ``__init__`` (which imports every room), as "module -> imported"."""
    known = rooms()
    layers_with_rooms = {room.rpartition(".")[0] for room in known}
    wrong = []
    for module, deps in graph().items():
        own = room_of(module, known)
        if own is None:
            continue
        for dep in deps:
            target = room_of(dep, known)
            if (target is None and dep in layers_with_rooms) or target not in (None, own, *known[own]):
                wrong.append(f"{module} -> {dep}")
    return wrong


def test_rooms_import_only_the_rooms_their_row_names():
    assert crossings() == []


def test_a_layer_with_rooms_is_its_rooms_its_init_and_its_main():
    known = rooms()
    for layer in {room.rpartition(".")[0] for room in known}:
        folder = ROOT.joinpath(*layer.split("."))
        subpackages = {f"{layer}.{p.name}" for p in folder.iterdir() if (p / "__init__.py").exists()}
        assert subpackages == {room for room in known if room.startswith(layer + ".")}, \
            f"ARCHITECTURE.md's rooms table differs from {layer}'s subpackages"
        stray = [p.name for p in folder.iterdir()
                 if p.suffix in SOURCES and p.name not in ("__init__.py", "__main__.py")]
        assert stray == [], f"{layer}: modules outside its rooms"


def test_the_checker_sees_an_import_across_rooms(tmp_path):
    fake = tmp_path / "cubind" / "lay"
    for room in ("low", "high", "side"):
        (fake / room).mkdir(parents=True)
        (fake / room / "__init__.py").write_text("")
    (tmp_path / "cubind" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("from .high import h\n")
    (fake / "low" / "l.py").write_text("def f():\n    from cubind.lay.high import h\n")  # up, deferred
    (fake / "high" / "h.py").write_text("from ..low import l\nfrom cubind.lay import high\n")  # down; its own room
    (fake / "side" / "s.py").write_text("from cubind.lay.high import h\nimport cubind.lay\n")  # not named; the layer
    (tmp_path / "ARCHITECTURE.md").write_text(
        "<!-- layers -->\n| 9 | `cubind.lay` |\n<!-- /layers -->\n<!-- rooms -->\n| room | holds | imports |\n"
        "|-|-|-|\n| `cubind.lay.low` | x | none |\n| `cubind.lay.high` | x | `low` |\n"
        "| `cubind.lay.side` | x | `low` |\n<!-- /rooms -->\n")
    global ROOT, PACKAGE
    saved = ROOT, PACKAGE
    ROOT, PACKAGE = tmp_path, tmp_path / "cubind"
    try:
        assert sorted(crossings()) == ["cubind.lay.low.l -> cubind.lay.high.h", "cubind.lay.side.s -> cubind.lay",
                                       "cubind.lay.side.s -> cubind.lay.high.h"]
    finally:
        ROOT, PACKAGE = saved


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


def test_the_checker_sees_the_floor_or_a_generated_package_import_upwards(tmp_path):
    # _cubind importing a generated package, a generated package importing
    # cubind (as they all did before the floor was its own package).
    (tmp_path / "cubind" / "_core").mkdir(parents=True)
    (tmp_path / "_cubind").mkdir()
    (tmp_path / "gen").mkdir()
    (tmp_path / "cubind" / "__init__.py").write_text("")
    (tmp_path / "cubind" / "_core" / "__init__.py").write_text("import gen\n")
    (tmp_path / "_cubind" / "__init__.py").write_text("")
    (tmp_path / "_cubind" / "loader.pyx").write_text("def f():\n    import gen\n")
    (tmp_path / "gen" / "__init__.py").write_text("from _cubind.loader import f\nfrom cubind._core import x\n")
    (tmp_path / "ARCHITECTURE.md").write_text(
        "<!-- layers -->\n| 0 | `_cubind` |\n| 1 | `gen` |\n| 2 | `cubind._core` |\n<!-- /layers -->\n")
    global ROOT, PACKAGE
    saved = ROOT, PACKAGE
    ROOT, PACKAGE = tmp_path, tmp_path / "cubind"
    try:
        assert graph()["gen"] == {"_cubind.loader", "cubind._core"}
        assert sorted(upward_imports()) == ["_cubind.loader -> gen", "gen -> cubind._core"]
    finally:
        ROOT, PACKAGE = saved


ABOVE_CUBIND = ("cubind.compute", "cubind.graph")


def private_uses():
    """Each import by ``cubind.compute`` or ``cubind.graph`` of one of
    cubind's private modules (``cubind._*``), as "module -> imported"."""
    return sorted(f"{module} -> {dep}" for module, deps in graph().items()
                  if module.startswith(ABOVE_CUBIND) for dep in deps if dep.startswith("cubind._"))


def listed_private_uses():
    """ARCHITECTURE.md's table of them, as "module -> imported"."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    assert "<!-- private-uses -->" in text, "ARCHITECTURE.md: no table between <!-- private-uses --> markers"
    table = text.split("<!-- private-uses -->")[1].split("<!-- /private-uses -->")[0]
    return sorted(f"{module} -> {dep}" for module, deps in re.findall(r"^\|\s*`([\w.]+)`\s*\|([^|]*)\|", table, re.M)
                  for dep in re.findall(r"`([\w.]+)`", deps))


def test_the_layers_above_cubind_take_only_the_private_modules_listed():
    assert private_uses() == listed_private_uses()
