def current_ordinal() -> int: ...

def default_stream_idle() -> bool:
    """Whether the current context's default stream has run all that was queued on it."""
