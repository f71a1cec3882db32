"""What the current forward pass is: its runtime CUDA graph mode, batch key and phase."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from vllm_runner.config import CUDAGraphMode


@dataclass(frozen=True)
class BatchDescriptor:
    """The dispatcher's key: padded token count and whether every request decodes one token."""

    num_tokens: int
    num_reqs: int | None = None
    uniform_decode: bool = False

    def non_uniform(self) -> BatchDescriptor:
        return BatchDescriptor(self.num_tokens, None, False)


@dataclass
class ForwardContext:
    runtime_mode: CUDAGraphMode = CUDAGraphMode.NONE
    batch_descriptor: BatchDescriptor | None = None
    capturing: bool = False  # inside the runner's explicit capture phase


_context = ForwardContext()


def get_forward_context() -> ForwardContext:
    return _context


@contextmanager
def set_forward_context(runtime_mode: CUDAGraphMode,
                        batch_descriptor: BatchDescriptor | None = None) -> Iterator[None]:
    """Run a forward pass under `runtime_mode` keyed by `batch_descriptor`."""
    global _context
    saved = _context
    _context = ForwardContext(runtime_mode, batch_descriptor, saved.capturing)
    try:
        yield
    finally:
        _context = saved


@contextmanager
def capture_phase() -> Iterator[None]:
    """The only place a CUDA graph wrapper may capture."""
    saved = _context.capturing
    _context.capturing = True
    try:
        yield
    finally:
        _context.capturing = saved
