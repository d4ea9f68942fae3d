from typing import Any

DLPACK_MAJOR: int
DLPACK_MINOR: int
FLAG_READ_ONLY: int
FLAG_IS_COPIED: int

class DLPackOwner:
    versioned: bool
    @property
    def alive(self) -> bool: ...
    def release(self) -> None: ...

def make_capsule(owner: object, data: int, device_type: int, device_id: int, shape: tuple[int, ...],
                 strides: tuple[int, ...], code: int, bits: int, versioned: bool = ..., minor: int = ...,
                 flags: int = ...) -> Any: ...
def consume_capsule(capsule: Any) -> tuple[DLPackOwner, dict[str, Any]]: ...
def capsule_name(capsule: Any) -> str | None: ...
