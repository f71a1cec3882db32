"""The sanitizer: turns the silent CUDA-graph hazards into errors that name the fix.

Off by default (a GPU does not check either). Turn it on with the environment variable
TORCH_CUDA_SANITIZER=1 or `torch.cuda._sanitizer.enable_cuda_sanitizer()` (torch's names for
its own CUDA sanitizer). It catches:
  1. reading a tensor a capture produced before the graph was ever replayed;
  2. replaying a graph whose captured input tensor was freed since capture;
  3. reading a graph's output after another graph sharing its pool overwrote that memory.
"""

from __future__ import annotations

import os
import weakref
from typing import TYPE_CHECKING, Any

import numpy as np

from fake_torch import _dispatch
from fake_torch._allocator import DEVICE, Storage

if TYPE_CHECKING:
    from fake_torch.cuda.graphs import CUDAGraph

_registration: _dispatch.Registration | None = None  # the door's input check, while on


def enable_cuda_sanitizer() -> None:
    """Check every kernel's inputs and every host read for CUDA-graph hazards."""
    global _registration
    if _registration is None:
        _registration = _dispatch.add_input_check(_check_inputs)


def disable_cuda_sanitizer() -> None:
    """fake_torch only: turn the checks off again."""
    global _registration
    if _registration is not None:
        _registration.remove()
        _registration = None


def is_enabled() -> bool:
    return _registration is not None


def _check_inputs(op: str, outs: tuple[np.ndarray, ...], inputs: tuple[Any, ...],
                  kind: str) -> None:
    """A host read of hazardous memory raises; an eager kernel reading it passes the hazard on
    to what it writes (so `out.argmax().item()` is caught too)."""
    hazard = None
    for x in inputs:
        if isinstance(x, np.ndarray):
            storage = DEVICE.storage_of(x)
            if storage is not None and storage.hazard is not None:
                hazard = storage.hazard
                break
    if hazard is None:  # clean inputs: what the kernel writes is defined again
        for out in outs:
            storage = DEVICE.storage_of(out)
            if storage is not None and storage.hazard is not None:
                storage.hazard = None
        return
    if kind == "memcpy_d2h":
        raise RuntimeError(f"fake_torch sanitizer: {op} copies to the host {hazard}")
    if _dispatch.current_mode().name == "eager":
        for out in outs:
            storage = DEVICE.storage_of(out)
            if storage is not None:
                storage.hazard = hazard


# --- bookkeeping called by CUDAGraph ----------------------------------------------------------

def capture_ended(graph: CUDAGraph, made: list[weakref.ref[Storage]]) -> None:
    """Outputs of a capture hold garbage until the first replay."""
    for ref in made:
        storage = ref()
        if storage is not None:
            storage.hazard = (f"a tensor produced inside the capture of {graph!r}, which was "
                              "never replayed: capture only records kernels, so its values are "
                              "unspecified. Call g.replay() before reading the graph's outputs.")


def before_replay(graph: CUDAGraph, inputs: list[weakref.ref[Storage]],
                  check_liveness: bool) -> None:
    if not (is_enabled() or check_liveness):
        return
    num_dead = sum(ref() is None for ref in inputs)
    if num_dead:  # torch's leading text (check_input_liveness), then the fix
        raise RuntimeError(f"CUDA graph replay detected {num_dead} dead tensor(s).\n"
                           f"A tensor captured as an input of {graph!r} was freed after capture, "
                           "so replay reads memory that may now belong to another tensor. Keep "
                           "the static input tensor alive and copy new values into it with "
                           "static_input.copy_(new) instead of rebinding it.")


def after_replay(graph: CUDAGraph, made: list[weakref.ref[Storage]],
                 written: list[tuple[int, int]], others: list[CUDAGraph]) -> None:
    """The replay made `graph`'s own outputs valid and overwrote whatever else lives in the
    memory its kernels wrote: outputs of other graphs that share the pool."""
    for ref in made:
        storage = ref()
        if storage is not None:
            storage.hazard = None
    if not is_enabled():
        return
    for other in others:
        for ref in other._made:
            storage = ref()
            if storage is None or storage.hazard is not None:
                continue
            lo, hi = storage.span()
            if any(start < hi and lo < end for start, end in written):
                storage.hazard = (f"an output of {other!r} that the replay of {graph!r} "
                                  "overwrote: the two graphs share a memory pool, so replay them "
                                  "in the order they were captured, or .clone() the output "
                                  "before replaying the other graph.")


if os.environ.get("TORCH_CUDA_SANITIZER", "") not in ("", "0"):
    enable_cuda_sanitizer()
