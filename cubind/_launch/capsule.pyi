"""Types of cubind/_launch/capsule.pyx: a DLPack producer's address for a launch."""

from typing import Any

def dlpack_address(value: Any, token: int) -> int: ...
