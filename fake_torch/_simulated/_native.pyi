# The native block book (fake_torch/_simulated/_native.c); the pure book's signatures
# (fake_torch/_simulated/_allocator_book.py) are its documentation.
from typing import Any

FOLD_AT: int
MIN_BLOCK: int
SMALL_SIZE: int

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
