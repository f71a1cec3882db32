"""CudagraphDispatcher: batch descriptor -> (runtime mode, padded key), in vLLM's order."""

from __future__ import annotations

from vllm_runner.config import CompilationConfig, CUDAGraphMode
from vllm_runner.forward_context import BatchDescriptor


class CudagraphDispatcher:
    """Holds the keys each mode captures; `dispatch` picks the mode for one step."""

    def __init__(self, config: CompilationConfig, uniform_decode_query_len: int = 1) -> None:
        self.config = config
        self.mode = config.cudagraph_mode
        self.keys: dict[CUDAGraphMode, set[BatchDescriptor]] = {
            CUDAGraphMode.FULL: set(), CUDAGraphMode.PIECEWISE: set()}
        mixed = self.mode.mixed_mode()
        if mixed is not CUDAGraphMode.NONE:
            for size in config.capture_sizes:
                self.keys[mixed].add(BatchDescriptor(size))
        if self.mode.separate_routine() and self.mode.decode_mode() is CUDAGraphMode.FULL:
            largest_decode = config.max_num_seqs * uniform_decode_query_len
            for size in config.capture_sizes:
                if size <= largest_decode:
                    self.keys[CUDAGraphMode.FULL].add(
                        BatchDescriptor(size, size // uniform_decode_query_len, True))

    def pad(self, batch: BatchDescriptor) -> BatchDescriptor | None:
        """`batch` with its token count padded to a capture size; None above the largest."""
        padded = self.config.padding.pad(batch.num_tokens)
        if padded is None:
            return None
        num_reqs = padded if batch.uniform_decode else batch.num_reqs
        return BatchDescriptor(padded, num_reqs, batch.uniform_decode)

    def dispatch(self, batch: BatchDescriptor) -> tuple[CUDAGraphMode, BatchDescriptor]:
        """The runtime mode and key for `batch` (unpadded, mode NONE when no graph fits)."""
        padded = self.pad(batch)
        if self.mode is CUDAGraphMode.NONE or padded is None:
            return CUDAGraphMode.NONE, batch
        if padded.uniform_decode and padded in self.keys[CUDAGraphMode.FULL]:
            return CUDAGraphMode.FULL, padded
        mixed = padded.non_uniform()
        if mixed in self.keys[CUDAGraphMode.FULL]:
            return CUDAGraphMode.FULL, mixed
        if mixed in self.keys[CUDAGraphMode.PIECEWISE]:
            return CUDAGraphMode.PIECEWISE, mixed
        return CUDAGraphMode.NONE, batch
