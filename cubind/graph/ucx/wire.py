"""What of a ``Message`` crosses a process, and how: a header (JSON, UTF-8)
describing each component in order, then one buffer per tensor with bytes,
each sent as its own UCX message from where the data lies (host memory, or
device memory for a ``cubind.Array``: never staged through the host here).

What crosses (``CROSSES``): tensors of host, pinned or device storage whose
dtype is a number or bool (C-contiguous; a strided host tensor is made
contiguous, a strided device one is refused), ``Timestamp``s, and values
JSON holds exactly: None, bool, int, float, str, and lists and str-keyed dicts of
them. Anything else is refused at ``publish`` with the component's name and
type. The header is bounded by the serialization buffer's ``buffer_size``."""

import functools
import json
import math
import sys

import numpy as np

from cubind.graph.model.errors import GraphError
from cubind.graph.model.message import Message, Tensor, Timestamp

# Both sides' layout: compared when a transmitter connects, refused before the first tick when they differ.
# 2: headers and notes framed as one UCX message with their length (transport.send_note), not send_obj's two.
# 3: the hello's answer carries the credits granted (a queue may still hold a lost connection's messages).
# 4: messages, credits and the transmitter's goodbye on the pumps' data path (pump.pyx), not the connection.
PROTOCOL = "cubind.graph.ucx/4"
LAYOUT = {"protocol": PROTOCOL, "byteorder": sys.byteorder, "header": "json", "kinds": ["tensor", "timestamp", "value"]}
CROSSES = "tensors (host, pinned, device; numeric or bool dtypes), Timestamps, and JSON values (None, bool, int, " \
          "float, str, lists and str-keyed dicts of them)"
_DTYPE_KINDS = "biufc"


class WireError(GraphError):
    """A message (or a component of one) that cannot cross a process, or a
    header that cannot be decoded."""


def _check_value(where, value):
    if value is None or isinstance(value, (bool, str)):
        return
    if type(value) is int:
        return
    if type(value) is float:
        if not math.isfinite(value):
            raise WireError(f"{where}: {value!r} does not cross a process (JSON has no inf or nan)")
        return
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            _check_value(f"{where}[{i}]", item)
        return
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise WireError(f"{where}: a dict key {key!r} is not a str; only str keys cross a process")
            _check_value(f"{where}[{key!r}]", item)
        return
    raise WireError(f"{where}: a {type(value).__name__} does not cross a process; what does: {CROSSES}")


# The header's text of each dtype that crosses (numbers and bool: a few dozen at most):
# numpy makes ``dtype.str`` anew on every read, a fifth of a cached encoding's time.
# Read by sendpath.pyx's publish too, as are ENCODED's headers.
DTYPE_TEXT = {}


def _tensor_key(where, tensor, device_allowed):
    """The tensor's header entry as a tuple (name, storage, shape, dtype, nbytes), checked."""
    data = tensor.data
    dtype = data.dtype
    text = DTYPE_TEXT.get(dtype)
    if text is None:
        if dtype.kind not in _DTYPE_KINDS or dtype.fields is not None:
            raise WireError(f"{where}: dtype {dtype} does not cross a process (numbers and bool only)")
        text = DTYPE_TEXT[dtype] = dtype.str
    if tensor.storage == "device":
        if not device_allowed:
            raise WireError(f"{where}: a device tensor, but the UcxContext is cpu_data_only")
        if not data.c_contiguous:
            raise WireError(f"{where}: a strided device tensor does not cross a process; copy it to a "
                            f"contiguous one first (it would be staged otherwise)")
    return (tensor.name, tensor.storage, tuple(data.shape), text, int(data.nbytes))


def _tensor_entry(key):
    name, storage, shape, dtype, nbytes = key
    return {"name": name, "kind": "tensor", "storage": storage, "shape": list(shape), "dtype": dtype,
            "nbytes": nbytes}


# Headers of tensors only, by their entries' tuples: a stream's messages mostly repeat one
# header. The encoding took 13-15 us of a 1 MiB device message's 47 on the H200's
# transmitting scheduler, about half of it json.dumps and the entries' dicts (measured on
# the emulated driver here). Each step is one dict operation, and a lost race encodes again.
ENCODED = {}
# Headers kept by each of ENCODED and DECODED (``_keep``).
HEADERS_KEPT = 64


def encode(message, where, device_allowed=True, limit=None):
    """``(header bytes, buffers)`` of ``message``; ``where`` names the
    transmitter in errors. Buffers are numpy arrays or ``cubind.Array``s."""
    if not isinstance(message, Message):
        raise WireError(f"{where}: published a {type(message).__name__}, not a Message")
    entries, buffers, keys = [], [], []
    for name, value in message:
        if isinstance(value, Tensor):
            key = _tensor_key(f"{where}: component {name!r}", value, device_allowed)
            if keys is not None:
                keys.append(key)
            else:
                entries.append(_tensor_entry(key))
            data = value.data
            if value.storage != "device":
                data = np.ascontiguousarray(data)
            if data.nbytes:
                buffers.append(data)
            continue
        if keys is not None:  # not tensors only: the header is made here
            entries.extend(_tensor_entry(key) for key in keys)
            keys = None
        if isinstance(value, Timestamp):
            entries.append({"name": name, "kind": "timestamp", "acqtime": value.acqtime, "pubtime": value.pubtime})
        else:
            _check_value(f"{where}: component {name!r}", value)
            entries.append({"name": name, "kind": "value", "value": value})
    if keys is not None:
        keys = tuple(keys)
        header = ENCODED.get(keys)
        if header is None:
            header = _keep(ENCODED, keys, _dumps([_tensor_entry(key) for key in keys]))
    else:
        header = _dumps(entries)
    if limit is not None and len(header) > limit:
        raise WireError(f"{where}: the message's header is {len(header)} bytes, more than the serialization "
                        f"buffer's buffer_size ({limit}); raise buffer_size or carry the data as a tensor")
    return header, buffers


def _dumps(entries):
    return json.dumps({"components": entries}, separators=(",", ":")).encode()


@functools.lru_cache(maxsize=256)
def _dtype(text):
    """numpy's dtype of a header's dtype string (a message's own: a few, each made once)."""
    return np.dtype(text)


# Decoded headers of tensors only, by their bytes: a stream's messages mostly repeat one
# header (json.loads and the checks cost a ping a tenth of its rate). Values are not kept:
# each message gets JSON objects of its own. Cleared when full; each step is one dict
# operation, and a lost race decodes again. Read by recvpath.pyx's delivery too.
DECODED = {}


def decode_header(raw, where):
    """The component entries of a header (shared between messages with the
    same header: read, never changed); ``WireError`` naming ``where`` (the
    receiving entity and queue) when it is not one."""
    raw = bytes(raw)
    entries = DECODED.get(raw)
    if entries is None:
        entries = _decode_header(raw, where)
        if all(entry["kind"] == "tensor" for entry in entries):
            _keep(DECODED, raw, entries)
    return entries


def _keep(cache, key, value):
    """``value`` kept in ``cache`` (``ENCODED``, ``DECODED``) under ``key``; a full cache is
    emptied first (a stream repeats a few headers: a new one past the limit starts over)."""
    if len(cache) >= HEADERS_KEPT:
        cache.clear()
    cache[key] = value
    return value


def _decode_header(raw, where):
    from cubind._memory.layout import c_strides  # here: importing cubind.graph loads no layer below

    try:
        head = json.loads(raw.decode())
        entries = head["components"]
        if not isinstance(entries, list):
            raise TypeError("components is not a list")
        for entry in entries:
            kind = entry["kind"]
            if not isinstance(entry["name"], str) or not entry["name"]:
                raise ValueError(f"component name {entry['name']!r}")
            if kind == "tensor":
                entry["dtype"] = _dtype(entry["dtype"])
                if entry["dtype"].kind not in _DTYPE_KINDS:
                    raise ValueError(f"dtype {entry['dtype']}")
                entry["shape"] = tuple(int(n) for n in entry["shape"])
                if any(n < 0 for n in entry["shape"]):
                    raise ValueError(f"shape {entry['shape']}")
                expected = math.prod(entry["shape"]) * entry["dtype"].itemsize  # numpy's prod: 5 us a message
                if entry["nbytes"] != expected:
                    raise ValueError(f"{entry['name']}: nbytes {entry['nbytes']} for shape {entry['shape']}")
                # Tensors cross C-ordered: a received one's byte strides, worked out once per header.
                entry["strides"] = c_strides(entry["shape"], entry["dtype"].itemsize)
                if entry["storage"] not in ("host", "pinned", "device"):
                    raise ValueError(f"storage {entry['storage']!r}")
            elif kind not in ("timestamp", "value"):
                raise ValueError(f"kind {kind!r}")
        return entries
    except (ValueError, TypeError, KeyError, UnicodeDecodeError) as exc:
        raise WireError(f"{where}: a message that cannot be decoded ({type(exc).__name__}: {exc})") from None

