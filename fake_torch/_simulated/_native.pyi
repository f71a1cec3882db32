# The native core (fake_torch/_simulated/_native*.c); the pure Python it mirrors is its
# documentation: the block book (_allocator_book.py), the allocator's fast path (_allocator.py
# allocate_array and _release), the door's eager branch (_dispatch.py `launch`).
from typing import Any

FOLD_AT: int
MIN_BLOCK: int
SMALL_SIZE: int
COUNT_FOLD_AT: int

class Block:
    segment: Any
    address: int
    size: int
    allocated: bool
    requested: int
    prev: Block | None
    next: Block | None
    stream_uses: set[int] | None
    pending: bool
    gc_base: int
    def __init__(self, segment: Any, address: int, size: int, allocated: bool = ...,
                 requested: int = ..., prev: Block | None = ..., next: Block | None = ...,
                 stream_uses: set[int] | None = ..., pending: bool = ...,
                 gc_base: int = ...) -> None: ...
    def is_split(self) -> bool: ...

def take(free: list[Any], size: int, stream: int, max_split_size: int,
         max_non_split_rounding_size: int, /) -> Block | None: ...
def push_free(block: Block, track_age: bool, /) -> None: ...
def remove_free(block: Block, /) -> None: ...
def hand_out(block: Block, size: int, nbytes: int, max_split_size: int, track_age: bool,
             stats: Any, /) -> None: ...
def free_block(block: Block, freed: bool, track_age: bool, stats: Any, /) -> None: ...
def apply_rows(v: list[int], rows: list[Any], event_stats: tuple[int, ...], /) -> None: ...

class Storage:
    block: Block | None
    root: Any
    hazard: str | None
    view: Any
    _on_death: Any
    def __init__(self, block: Block | None, root: Any, on_death: Any = ...) -> None: ...
    def span(self) -> tuple[int, int]: ...

class FastPath:
    def __init__(self, allocator: Any, lock: Any, late: list[Any], free_late: Any,
                 allocate_array: Any, release: Any, /) -> None: ...
    def allocate_array(self, shape: tuple[int, ...], np_dtype: Any, nbytes: int,
                       /) -> tuple[Any, Storage]: ...

class RLock:
    def acquire(self, blocking: bool = ..., timeout: float = ...) -> bool: ...
    def release(self) -> None: ...
    def _is_owned(self) -> bool: ...
    def __enter__(self) -> bool: ...
    def __exit__(self, *args: object) -> None: ...

class Door:
    __wrapped__: Any
    def __init__(self, launch: Any, dispatch: dict[str, Any], machine: dict[str, Any],
                 cost: dict[str, Any], gpus: dict[str, Any], counter: type,
                 ndarray: type) -> None: ...
    def __call__(self, op: str, kernel: Any, outs: tuple[Any, ...], inputs: tuple[Any, ...],
                 params: dict[str, Any] | None = ..., *, on_cuda: bool, kind: str = ...,
                 source: Any = ...) -> None: ...
