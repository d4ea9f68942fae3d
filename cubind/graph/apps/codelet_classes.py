"""Finding a codelet's class from a YAML app: by file (``codelet_file``,
relative to the app's directory, as GXF's ``PyCodeletV0``) or by module
(``codelet_module``, importable)."""

import importlib
import importlib.util
import sys
import threading
from pathlib import Path

from cubind.graph.model.codelet import Codelet
from cubind.graph.model.errors import GraphError

_lock = threading.Lock()
_by_file: dict = {}  # resolved path -> module: one module per file, however many components use it


def _module_from_file(where, path):
    path = path.resolve()
    with _lock:
        if path in _by_file:
            return _by_file[path]
        if not path.is_file():
            raise GraphError(f"{where}: codelet_file {str(path)!r} does not exist")
        name = f"_cubind_graph_codelets_{len(_by_file)}_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        # The file's directory goes on the path so that it may import its neighbours.
        folder = str(path.parent)
        if folder not in sys.path:
            sys.path.append(folder)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
        _by_file[path] = module
        return module


def codelet_class(where, name, file=None, module=None, base=None):
    """The :class:`Codelet` subclass ``name`` from ``file`` (relative to
    ``base``) or ``module``."""
    if not name:
        raise GraphError(f"{where}: codelet_name is missing (the Codelet subclass's name)")
    if (file is None) == (module is None):
        raise GraphError(f"{where}: give codelet_file or codelet_module (one of them) for codelet {name!r}")
    if file is not None:
        path = Path(file)
        if not path.is_absolute() and base is not None:
            path = Path(base) / path
        source = _module_from_file(where, path)
    else:
        try:
            source = importlib.import_module(module)
        except ImportError as exc:
            raise GraphError(f"{where}: codelet_module {module!r} does not import: {exc}") from exc
    cls = getattr(source, name, None)
    if cls is None:
        raise GraphError(f"{where}: {getattr(source, '__file__', module)} has no class {name!r}")
    if not (isinstance(cls, type) and issubclass(cls, Codelet)):
        raise GraphError(f"{where}: {name} is not a subclass of cubind.graph.Codelet")
    return cls
