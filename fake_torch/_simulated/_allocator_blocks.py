"""The caching allocator's pieces: segments, the blocks that tile them, pools, the Storage that
owns a block, and c10's size rules (how a request rounds, how big a new segment is).

The allocator that moves blocks between them is fake_torch/_simulated/_allocator.py.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from fake_torch._simulated._allocator_config import AllocatorConfig

KB, MB, GB = 1024, 1024**2, 1024**3
MIN_BLOCK = 512  # kMinBlockSize: every request rounds up to a multiple of this
SMALL_SIZE = 1 * MB  # kSmallSize: requests up to this come from the small pool
SMALL_BUFFER = 2 * MB  # kSmallBuffer: the segment size of the small pool
MIN_LARGE_ALLOC = 10 * MB  # kMinLargeAlloc
ROUND_LARGE = 2 * MB  # kRoundLarge: larger segments round up to this

PoolId = tuple[int, int]
DEFAULT_POOL: PoolId = (0, 0)
FreeEntry = tuple[int, int, int, "Block"]  # (stream, size, address, block): c10's order


def round_size(nbytes: int, config: AllocatorConfig | None = None) -> int:
    """The bytes a request really takes: at least 512, a multiple of 512, or the next
    power-of-two division when roundup_power2_divisions asks for it."""
    if nbytes < MIN_BLOCK:
        return MIN_BLOCK
    if config is not None and config.rounds_up:
        divisions = config.divisions(nbytes)
        if divisions > 1 and nbytes > MIN_BLOCK * divisions:
            return _next_division(nbytes, divisions)
    return -(-nbytes // MIN_BLOCK) * MIN_BLOCK


def _next_division(size: int, divisions: int) -> int:
    """c10's roundup_power2_next_division: the interval between two powers of two cut into
    `divisions` equal steps; round up to the next step."""
    if size & (size - 1) == 0:
        return size
    floor = 1 << (size.bit_length() - 1)
    step = floor >> (divisions.bit_length() - 1)
    if step == 0:
        return floor << 1
    rounded = size & ~(step - 1)
    return size if rounded == size else rounded + step


def segment_size(size: int, config: AllocatorConfig | None = None) -> int:
    """The size of the segment cudaMalloc'd for a (rounded) request that found no free block."""
    if size <= SMALL_SIZE:
        return SMALL_BUFFER
    if size < MIN_LARGE_ALLOC:
        return config.large_segment_size if config is not None else 20 * MB
    return -(-size // ROUND_LARGE) * ROUND_LARGE


@dataclass(eq=False)
class Segment:
    buf: np.ndarray  # (size,) uint8: the "device" memory itself
    pool: Pool
    is_small: bool
    stream: int  # the cuda_stream handle it was allocated on; its blocks serve that stream
    # looked up once: a segment never moves or changes pool, and every allocation needs these
    base: int = field(init=False)  # the address of its first byte
    mem: memoryview = field(init=False)  # buf's bytes, sliced for each block's root
    free: list[FreeEntry] = field(init=False, repr=False)  # its pool's free list
    head: Block = field(init=False, repr=False)  # its first block (blocks tile it in order)

    def __post_init__(self) -> None:
        self.base = int(self.buf.__array_interface__["data"][0])
        self.mem = self.buf.data
        self.free = self.pool.free_list(self.is_small)

    @property
    def size(self) -> int:
        return int(self.buf.shape[0])


@dataclass(eq=False, slots=True)
class Block:
    """A piece of a segment. A segment's blocks tile it as a list linked in address order
    (c10's Block::prev / Block::next), so a split or a merge with a neighbour is O(1)."""

    segment: Segment
    address: int  # of its first byte (the segment's base + its offset in the segment)
    size: int
    allocated: bool = False
    requested: int = 0  # the last request it served (c10 keeps it after the free)
    prev: Block | None = field(default=None, repr=False)
    next: Block | None = field(default=None, repr=False)
    stream_uses: set[int] | None = None  # other streams that used it (record_stream)
    pending: bool = False  # freed, waiting for those streams' events
    gc_base: int = 0  # its pool's free-block searches when it was cached (its age's origin)

    def is_split(self) -> bool:
        return self.prev is not None or self.next is not None


@dataclass(eq=False)
class Pool:
    id: PoolId
    segments: list[Segment] = field(default_factory=list)
    free_small: list[FreeEntry] = field(default_factory=list)
    free_large: list[FreeEntry] = field(default_factory=list)
    use_count: int = 0  # graphs capturing into or owning this pool
    released: bool = False  # its last owner let go: empty_cache gives its free segments back
    searches: int = 0  # large-block searches (c10's get_free_blocks_call_count, for GC ages)
    device: int = 0  # the index of the cuda device whose allocator it belongs to

    def free_list(self, small: bool) -> list[FreeEntry]:
        return self.free_small if small else self.free_large


class Storage:
    """The owner of one block. Tensors (and views) hold it; its death frees the block.

    `hazard` is set by the sanitizer when reading the memory would read garbage on a GPU (a
    capture's output before any replay, an output another graph's replay overwrote). `view`:
    the typed array an op's output was made as (`CachingAllocator.allocate_array`), else None."""

    __slots__ = ("__weakref__", "_on_death", "block", "hazard", "root", "view")

    def __init__(self, block: Block | None, root: np.ndarray,
                 on_death: Callable[[Storage], None] | None = None) -> None:
        self.block = block
        self.root = root
        self.hazard: str | None = None
        self.view: np.ndarray | None = None
        self._on_death = on_death  # the allocator's bookkeeping for a storage that is gone

    def __del__(self) -> None:
        # the last tensor or view holding this storage is gone (a __del__, not a
        # weakref.finalize: one of those per allocation cost more than the allocation itself)
        if self._on_death is not None:
            self._on_death(self)

    def span(self) -> tuple[int, int]:
        """[start, end) addresses of the bytes this storage owns."""
        start = int(self.root.__array_interface__["data"][0])
        return start, start + int(self.root.nbytes)
