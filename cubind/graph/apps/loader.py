"""YAML applications in GXF's shape: one document per entity (``name``,
``components``: each a ``name``, a ``type`` and ``parameters``), the
connections as ``Connection`` components, the clock and scheduler as
components too. ``--param entity/component/key=value`` overrides apply to
the documents before anything is built."""

from pathlib import Path

from cubind.graph.model.codelet import Codelet
from cubind.graph.model.component import component_type
from cubind.graph.model.errors import GraphError, ParameterError
from cubind.graph.model.resources import CudaStreamPool
from cubind.graph.scheduling.graph import Graph

from .codelet_classes import codelet_class

CODELET_TYPES = ("PyCodeletV0", "PythonCodelet")
ENTITY_KEYS = {"name", "components", "device"}
COMPONENT_KEYS = {"name", "type", "parameters"}


def yaml_module():
    """PyYAML, imported here (an optional dependency: graphs built in Python need none), or a
    ``GraphError`` saying how to install it."""
    try:
        import yaml  # type: ignore[import-untyped]  # types-PyYAML is not a dependency
    except ImportError:
        raise GraphError("YAML apps need PyYAML, which is not installed: pip install pyyaml "
                         "(or pip install 'cubind[graph]')") from None
    return yaml


def parse_value(text):
    """A ``--param`` value as YAML reads it (``5`` an int, ``true`` a bool, ``[a, b]`` a list)."""
    return yaml_module().safe_load(text) if text.strip() else ""


def parse_override(text):
    """``entity/component/key=value`` -> ``(entity, component, key, value)``."""
    path, sep, value = text.partition("=")
    parts = path.split("/")
    if not sep or len(parts) != 3 or not all(parts):
        raise ParameterError(f"--param {text!r}: expected entity/component/key=value")
    return (*parts, parse_value(value))


def load(path, overrides=()):
    """The :class:`Graph` of the YAML app at ``path``; ``overrides`` are
    ``entity/component/key=value`` strings or ``(entity, component, key, value)``."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise GraphError(f"cannot read the app {str(path)!r}: {exc.strerror}") from None
    return loads(text, base=path.parent, overrides=overrides, source=str(path))


def loads(text, base=None, overrides=(), source="<app>"):
    """The :class:`Graph` of YAML ``text``; codelet files are found relative to ``base``."""
    yaml = yaml_module()
    try:
        documents = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as exc:
        raise GraphError(f"{source}: not valid YAML: {exc}") from None
    documents = [d for d in documents if not (isinstance(d, dict) and set(d) <= {"dependencies"})]
    _apply(documents, [parse_override(o) if isinstance(o, str) else tuple(o) for o in overrides], source)
    return build(documents, base=base, source=source)


def _apply(documents, overrides, source):
    for entity, component, key, value in overrides:
        doc = next((d for d in documents if isinstance(d, dict) and d.get("name") == entity), None)
        if doc is None:
            raise ParameterError(f"--param {entity}/{component}/{key}: {source} has no entity {entity!r}")
        spec = next((c for c in doc.get("components") or () if c.get("name") == component), None)
        if spec is None:
            raise ParameterError(f"--param {entity}/{component}/{key}: entity {entity!r} has no component "
                                 f"{component!r}")
        spec.setdefault("parameters", {})
        if spec["parameters"] is None:
            spec["parameters"] = {}
        spec["parameters"][key] = value


def build(documents, base=None, source="<app>"):
    graph = Graph()
    for index, doc in enumerate(documents):
        where = f"{source}: document {index + 1}"
        if not isinstance(doc, dict):
            raise GraphError(f"{where}: an entity is a mapping (name, components), got {type(doc).__name__}")
        unknown = set(doc) - ENTITY_KEYS
        if unknown:
            raise GraphError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(sorted(unknown))}; "
                             f"an entity has {', '.join(sorted(ENTITY_KEYS))}")
        name = doc.get("name") or f"_entity_{index + 1}"
        entity = graph.entity(str(name), doc.get("device"))
        for position, spec in enumerate(doc.get("components") or ()):
            _add_component(entity, spec, f"{source}: entity {entity.name!r}, component {position + 1}", base)
    return graph


def _add_component(entity, spec, where, base):
    if not isinstance(spec, dict) or "type" not in spec:
        raise GraphError(f"{where}: a component is a mapping with a 'type'")
    unknown = set(spec) - COMPONENT_KEYS
    if unknown:
        raise GraphError(f"{where}: unknown key{'s' if len(unknown) > 1 else ''} {', '.join(sorted(unknown))}; "
                         f"a component has {', '.join(sorted(COMPONENT_KEYS))}")
    params = dict(spec.get("parameters") or {})
    kind = str(spec["type"])
    name = spec.get("name")
    if kind.split("::")[-1] in CODELET_TYPES:
        label = f"{entity.name}/{name or '?'}"
        cls = codelet_class(label, params.pop("codelet_name", None), params.pop("codelet_file", None),
                            params.pop("codelet_module", None), base)
    else:
        cls = component_type(where, kind)
    entity.add(cls(**params), None if name is None else str(name))


def gpu_needs(graph):
    """Why running ``graph`` needs a GPU (stream pools, device placement,
    device allocators), or None."""
    for entity in graph.entities:
        if entity.device is not None:
            return f"entity {entity.name!r} is placed on device {entity.device}"
    pools = graph.components(CudaStreamPool)
    if pools:
        return f"{pools[0].path} is a CUDA stream pool"
    for codelet in graph.components(Codelet):
        if getattr(codelet, "needs_gpu", False):
            return f"codelet {codelet.path} ({type(codelet).__name__}) uses device tensors"
    return None
