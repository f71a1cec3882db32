"""A stand-in for `triton`: `@triton.jit` kernels it knows by name run a plain-torch body.

Why by name: a Triton kernel's body is Triton's language (pointer arithmetic over `tl.load` /
`tl.store`, one program per grid cell) and runs only under Triton's compiler; running it here
would mean writing a Triton interpreter. Instead, `jit` wraps the kernel and, at launch
(`kernel[grid](*args)`), looks up a plain-torch body for the kernel's name, binds the launch's
arguments to the KERNEL's OWN signature (so a kernel that renamed or reordered its parameters
fails loudly) and calls the body with them by name. A kernel the stand-in does not know raises
NotImplementedError naming it, at its first launch: defining it (at import) is free, as in
Triton, and a kernel that is never launched costs nothing.

Known kernels:
  store_kvcache_kernel  nano-vllm's KV-cache write: token i's key / value row (D elements)
                        goes to row slot_mapping[i] of the cache viewed as (-1, D); slot -1 is
                        skipped. Grid (N,), one program per token.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor

from . import language

__all__ = ["jit", "language"]


def _store_kvcache_kernel(grid: tuple[int, ...], *, key_ptr: Tensor, key_stride: int,
                          value_ptr: Tensor, value_stride: int, k_cache_ptr: Tensor,
                          v_cache_ptr: Tensor, slot_mapping_ptr: Tensor, D: int) -> None:
    """cache_rows[slot[i]] = rows[i] for every i with slot[i] != -1, for key and value.

    Capture-safe (it runs inside CUDA-graph capture): no host read, no data-dependent shape.
    A skipped row cannot simply be left out of the write, so each one repeats the write of
    the first row that is not skipped (same slot, same value: duplicates agree); when every
    row is skipped they all write row 0's own value back. N rows of D elements each."""
    (num_programs,) = grid
    assert slot_mapping_ptr.numel() == num_programs
    slot = slot_mapping_ptr
    valid = slot >= 0  # (N,)
    first = valid.int().argmax()  # the first row that writes (0 when none does)
    rows = torch.where(valid, torch.arange(num_programs, device=slot.device), first)
    keep = valid[rows]  # all True, or all False when no row writes
    target = slot[rows].clamp_min(0).long()  # (N,) cache rows
    for src, stride, cache in ((key_ptr, key_stride, k_cache_ptr),
                               (value_ptr, value_stride, v_cache_ptr)):
        src_rows = src.as_strided((num_programs, D), (stride, 1), src.storage_offset())
        cache_rows = cache.view(-1, D)  # the cache's rows are D apart (asserted by the caller)
        cache_rows[target] = torch.where(keep[:, None], src_rows[rows], cache_rows[target])


_KERNELS: dict[str, Callable[..., None]] = {"store_kvcache_kernel": _store_kvcache_kernel}


class JITFunction:
    """A `@triton.jit` kernel: `kernel[grid](*args)` launches its plain-torch body."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn
        self.__name__ = fn.__name__
        self.signature = inspect.signature(fn)

    def __getitem__(self, grid: tuple[int, ...] | Callable[..., tuple[int, ...]]
                    ) -> Callable[..., None]:
        def launch(*args: Any, **kwargs: Any) -> None:
            body = _KERNELS.get(self.fn.__name__)
            if body is None:
                raise NotImplementedError(
                    f"triton stand-in: no plain-torch body for kernel {self.fn.__name__!r} "
                    f"({self.fn.__module__}); it knows {sorted(_KERNELS)}")
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            cells = grid(bound.arguments) if callable(grid) else grid
            body(tuple(cells), **bound.arguments)

        return launch

    def __call__(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError("Cannot call @triton.jit'd outside of the scope of a kernel")


def jit(fn: Callable[..., Any] | None = None, **options: Any
        ) -> JITFunction | Callable[[Callable[..., Any]], JITFunction]:
    """`@triton.jit`; options (`@triton.jit(do_not_specialize=...)`) are not emulated."""
    if options or fn is None:
        raise NotImplementedError(f"triton stand-in: jit options {sorted(options)} are not "
                                  "emulated")
    return JITFunction(fn)
