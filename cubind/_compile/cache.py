"""The on-disk compile cache.

An entry is one file named by the SHA-256 of everything the output depends
on (see :func:`key`). Files are written to a temporary name in the cache
directory and renamed over the final one, so a process reading the cache
sees a whole entry or none; an entry that does not parse (a foreign or
truncated file) is a miss and is overwritten.

``CUBIND_NO_COMPILE_CACHE=1`` turns the cache off; ``CUBIND_CACHE_DIR`` moves
it (default ``$XDG_CACHE_HOME/cubind``, else ``~/.cache/cubind``).
"""

import os
import struct

__all__ = ["cache_dir", "enabled", "key", "load", "store"]

_MAGIC = b"cubind-compile-cache 1\n"
_FORMAT = 1


def enabled():
    """False when ``CUBIND_NO_COMPILE_CACHE`` is set to anything but ""/0."""
    return os.environ.get("CUBIND_NO_COMPILE_CACHE", "") in ("", "0")


def cache_dir():
    """Where entries live (not created until an entry is stored)."""
    explicit = os.environ.get("CUBIND_CACHE_DIR")
    if explicit:
        return explicit
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "cubind")


def key(**parts):
    """The entry name for ``parts`` (JSON-able values; bytes are hashed as bytes)."""
    import hashlib
    import json

    digest = hashlib.sha256()
    digest.update(f"format {_FORMAT}\n".encode())
    for name in sorted(parts):
        value = parts[name]
        digest.update(name.encode() + b"\0")
        if isinstance(value, (bytes, bytearray)):
            digest.update(b"b" + struct.pack("<Q", len(value)) + bytes(value))
        else:
            text = json.dumps(value, sort_keys=True).encode()
            digest.update(b"j" + struct.pack("<Q", len(text)) + text)
    return digest.hexdigest()


def _path(name):
    return os.path.join(cache_dir(), name[:2], name + ".bin")


def load(name):
    """``(meta, blobs)`` of entry ``name``, or None for a miss."""
    import json

    try:
        with open(_path(name), "rb") as f:
            data = f.read()
    except OSError:
        return None
    try:
        if not data.startswith(_MAGIC):
            return None
        pos = len(_MAGIC)
        (header_len,) = struct.unpack_from("<Q", data, pos)
        pos += 8
        meta = json.loads(data[pos:pos + header_len])
        pos += header_len
        if meta.get("key") != name:
            return None
        blobs = {}
        for blob_name, size in meta["blobs"]:
            if pos + size > len(data):
                return None
            blobs[blob_name] = data[pos:pos + size]
            pos += size
        return (meta, blobs) if pos == len(data) else None
    except (ValueError, KeyError, TypeError, struct.error):
        return None


def store(name, meta, blobs):
    """Writes entry ``name`` atomically; returns False (and leaves no partial
    file) where the directory is not writable: a cache that cannot be written
    is only a slower compile."""
    import json
    import tempfile

    meta = dict(meta, key=name, blobs=[[k, len(v)] for k, v in blobs.items()])
    header = json.dumps(meta).encode()
    payload = b"".join([_MAGIC, struct.pack("<Q", len(header)), header, *blobs.values()])
    final = _path(name)
    tmp = None
    try:
        os.makedirs(os.path.dirname(final), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(final), prefix=".tmp-", suffix=".bin")
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
        os.replace(tmp, final)
        return True
    except OSError:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass
        return False
