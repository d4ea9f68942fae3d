"""The ``cuda.bindings`` names a released consumer reads, from its own
installed files: what ``tests/bindings/test_compat_consumers.py`` checks
cubind serves.

Python sources are read with ``ast``: every ``import cuda.bindings...`` and
``from cuda.bindings... import ...``, every attribute chain on a name those
bind (``driver.CUresult.CUDA_SUCCESS``), ``getattr``/``hasattr`` with a
constant name, and ``importlib.import_module`` / ``sys.modules.get`` of a
constant ``cuda.bindings`` name. A use is *guarded* where the consumer copes
with its absence: inside a ``try`` whose handler catches what the missing name
raises (``ImportError`` for an import, ``AttributeError`` for an attribute),
or a ``hasattr`` / ``getattr`` with a default. Compiled modules (Cython, their
sources not shipped) give only the module names they import, which are plain
strings in the binary; the attributes they read are in compressed string
tables and are not listed.

Each use is a dotted path from ``cuda.bindings`` (``cuda.bindings.driver.cuInit``)
that a checker resolves by attribute access from ``cuda.bindings``, since
``from P import X`` may name a module or an attribute.
"""

import ast
import importlib.metadata
import re
from dataclasses import dataclass
from pathlib import Path

ROOT_NAME = "cuda.bindings"
IMPORT_ERRORS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
ATTRIBUTE_ERRORS = {"AttributeError", "Exception", "BaseException"}


@dataclass(frozen=True)
class Use:
    path: str        # "cuda.bindings.driver.cuInit"
    guarded: bool
    where: str       # "cuda/core/_utils/foo.py:12"


def installed_files(distribution, search_path):
    """The files of ``distribution`` installed under ``search_path`` (a list of
    directories, as ``sys.path``), or None where it is not installed there."""
    found = list(importlib.metadata.distributions(name=distribution, path=search_path))
    if not found:
        return None
    dist = found[0]
    return dist.version, [Path(dist.locate_file(f)) for f in dist.files or ()]


def is_library_file(path):
    """The consumer's own code, not its test suite."""
    return "tests" not in path.parts and "testing" not in path.stem


def scan_python(path, label):
    """The ``cuda.bindings`` uses of one Python source file."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    return _Scanner(tree, label).uses


def scan_compiled(path, label):
    """The ``cuda.bindings`` module names a compiled module imports (cimports
    included), as unguarded uses."""
    names = set(re.findall(rb"cuda\.bindings(?:\.[A-Za-z_][A-Za-z_0-9]*)+", path.read_bytes()))
    return {Use(name.decode(), False, label) for name in names}


class _Scanner(ast.NodeVisitor):
    def __init__(self, tree, label):
        self.label = label
        self.uses = set()
        self.aliases = {}   # a local name -> the dotted path it is bound to
        self.parents = {}
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        # Bindings first (a function may use a name bound further down the file).
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._bind(node)
        self.visit(tree)

    def _bind(self, node):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _ours(alias.name):
                    if alias.asname:
                        self.aliases[alias.asname] = alias.name
                    else:
                        self.aliases.setdefault("cuda", "cuda")
                    self._use(alias.name, node, IMPORT_ERRORS)
        elif node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if _ours(full) or (node.module == "cuda" and alias.name == "bindings"):
                    self.aliases[alias.asname or alias.name] = full
                    self._use(full, node, IMPORT_ERRORS)

    def _use(self, path, node, errors, guarded=False):
        if _ours(path) and path != ROOT_NAME or path == ROOT_NAME and isinstance(node, ast.Attribute):
            self.uses.add(Use(path, guarded or self._in_try(node, errors), f"{self.label}:{node.lineno}"))

    def _in_try(self, node, errors):
        child, parent = node, self.parents.get(node)
        while parent is not None:
            if isinstance(parent, ast.Try) and child in parent.body and _catches(parent, errors):
                return True
            child, parent = parent, self.parents.get(parent)
        return False

    def visit_Attribute(self, node):
        chain, base = _chain(node)
        if base is not None and base in self.aliases and not isinstance(self.parents.get(node), ast.Attribute):
            path = ".".join([self.aliases[base], *chain])
            if _ours(path):
                self._use(path, node, ATTRIBUTE_ERRORS)
        self.generic_visit(node)

    def visit_Call(self, node):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        args = node.args
        if name in ("getattr", "hasattr") and len(args) >= 2 and isinstance(args[1], ast.Constant):
            chain, base = _chain(args[0]) if isinstance(args[0], ast.Attribute) else ([], getattr(args[0], "id", None))
            if base in self.aliases and isinstance(args[1].value, str):
                path = ".".join([self.aliases[base], *chain, args[1].value])
                self._use(path, node, ATTRIBUTE_ERRORS, guarded=name == "hasattr" or len(args) == 3)
        elif name in ("import_module", "get") and args and isinstance(args[0], ast.Constant):
            if isinstance(args[0].value, str) and _ours(args[0].value):
                self._use(args[0].value, node, IMPORT_ERRORS, guarded=name == "get")
        self.generic_visit(node)


def _ours(path):
    return path == ROOT_NAME or path.startswith(ROOT_NAME + ".")


def _chain(node):
    """``a.b.c`` -> (["b", "c"], "a"); (.., None) where the chain does not start at a name."""
    chain = []
    while isinstance(node, ast.Attribute):
        chain.append(node.attr)
        node = node.value
    return chain[::-1], (node.id if isinstance(node, ast.Name) else None)


def _catches(try_node, errors):
    for handler in try_node.handlers:
        if handler.type is None:
            return True
        types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
        if any(getattr(t, "id", getattr(t, "attr", None)) in errors for t in types):
            return True
    return False
