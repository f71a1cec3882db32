"""CUDA graph modes, capture sizes and the padding table (vLLM's CompilationConfig, in small)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class CUDAGraphMode(enum.Enum):
    """vLLM's five modes. A tuple value is (mode for uniform decode batches, mode for mixed
    batches); a plain value serves both."""

    NONE = 0
    PIECEWISE = 1
    FULL = 2
    FULL_DECODE_ONLY = (2, 0)
    FULL_AND_PIECEWISE = (2, 1)

    def decode_mode(self) -> CUDAGraphMode:
        return CUDAGraphMode(self.value[0]) if self.separate_routine() else self

    def mixed_mode(self) -> CUDAGraphMode:
        return CUDAGraphMode(self.value[1]) if self.separate_routine() else self

    def separate_routine(self) -> bool:
        """Decode and mixed batches take different routes."""
        return isinstance(self.value, tuple)

    def has_full_cudagraphs(self) -> bool:
        return CUDAGraphMode.FULL in (self.decode_mode(), self.mixed_mode())

    def has_piecewise_cudagraphs(self) -> bool:
        return self.mixed_mode() is CUDAGraphMode.PIECEWISE


class AttentionCGSupport(enum.Enum):
    """How far the attention backend can live inside a full CUDA graph."""

    NEVER = 0
    UNIFORM_BATCH = 1  # decode batches only (each request has the same query length)
    ALWAYS = 2


def resolve_mode(mode: CUDAGraphMode, support: AttentionCGSupport) -> CUDAGraphMode:
    """The mode actually used when attention cannot be captured everywhere the mode asks."""
    if not mode.has_full_cudagraphs() or support is AttentionCGSupport.ALWAYS:
        return mode
    if support is AttentionCGSupport.UNIFORM_BATCH:
        # full graphs for decode, piecewise for mixed batches
        if mode is CUDAGraphMode.FULL:
            print("vllm_runner: attention supports full graphs for uniform decode only; "
                  "FULL -> FULL_AND_PIECEWISE")
            return CUDAGraphMode.FULL_AND_PIECEWISE
        return mode
    print(f"vllm_runner: attention cannot be captured; {mode.name} -> PIECEWISE")
    return CUDAGraphMode.PIECEWISE


def default_capture_sizes(max_num_seqs: int) -> list[int]:
    """vLLM's default list, up to its default max capture size min(2 * max_num_seqs, 512)."""
    largest = min(2 * max_num_seqs, 512)
    sizes = [1, 2, 4, *range(8, 256, 8), *range(256, largest + 1, 16)]
    return [s for s in sizes if s <= largest]


@dataclass
class CompilationConfig:
    """What the backend, wrappers and dispatcher are configured with."""

    cudagraph_mode: CUDAGraphMode = CUDAGraphMode.PIECEWISE
    cudagraph_capture_sizes: list[int] | None = None  # None: vLLM's default list
    max_num_seqs: int = 8
    splitting_ops: list[str] = field(default_factory=lambda: ["silly::attention"])
    debug_mode: bool = False  # check input addresses at every replay
    weak_ref_outputs: bool = True  # graph wrappers do not keep their outputs' memory alive

    def __post_init__(self) -> None:
        if self.max_num_seqs < 1:
            raise ValueError(f"max_num_seqs must be at least 1, got {self.max_num_seqs}")
        sizes = self.cudagraph_capture_sizes
        if sizes is None:
            sizes = default_capture_sizes(self.max_num_seqs)
        bad = [s for s in sizes if not isinstance(s, int) or isinstance(s, bool) or s < 1]
        if bad:
            raise ValueError(f"cudagraph_capture_sizes must be positive token counts, got {bad}")
        self.cudagraph_capture_sizes = sorted(set(sizes))
        self.padding = PaddingTable(self.cudagraph_capture_sizes)

    @property
    def capture_sizes(self) -> list[int]:
        assert self.cudagraph_capture_sizes is not None  # set in __post_init__
        return self.cudagraph_capture_sizes


class PaddingTable:
    """O(1) map from a batch's token count to the smallest capture size that holds it."""

    def __init__(self, capture_sizes: list[int]) -> None:
        self.max_size = max(capture_sizes) if capture_sizes else 0
        self.padded = [0] * (self.max_size + 1)  # padded[n] for n in 0..max_size
        size_iter = iter(sorted(capture_sizes))
        size = next(size_iter, 0)
        for n in range(1, self.max_size + 1):
            while size < n:
                size = next(size_iter)
            self.padded[n] = size

    def pad(self, num_tokens: int) -> int | None:
        """The capture size for `num_tokens`, or None above the largest (run eagerly)."""
        if num_tokens > self.max_size:
            return None
        return self.padded[num_tokens]
