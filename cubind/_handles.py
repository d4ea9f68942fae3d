"""Raw handle values from the many objects users hold for one thing.

A stream may come from cubind, from the 1:1 modules, or from another library
(CuPy, PyTorch, cuda.core); the layer accepts each wherever a stream is taken.
"""

__all__ = ["stream_handle"]


def stream_handle(stream, param="stream"):
    """The raw ``CUstream`` value (an int) of ``stream``: ``None`` (0, the
    default stream), an int, a ``CUstream``/``cudaStream_t``, any object with
    the ``__cuda_stream__`` protocol (cubind, cuda.core), a PyTorch stream
    (``.cuda_stream``) or a CuPy stream (``.ptr``)."""
    if stream is None:
        return 0
    if type(stream) is int:
        return stream
    protocol = getattr(stream, "__cuda_stream__", None)
    if protocol is not None:
        value = protocol() if callable(protocol) else protocol
        if isinstance(value, tuple):  # (version, handle)
            value = value[1]
        return int(value)
    for attr in ("cuda_stream", "ptr"):  # PyTorch, CuPy
        value = getattr(stream, attr, None)
        if value is not None and not callable(value):
            return int(value)
    try:
        return stream.__index__()  # CUstream, cudaStream_t, numpy ints
    except AttributeError:
        raise TypeError(
            f"{param}: expected a stream (cubind.Stream, CUstream, cudaStream_t, an object with "
            f"__cuda_stream__, a CuPy or PyTorch stream, an int or None), not {type(stream).__name__}"
        ) from None
