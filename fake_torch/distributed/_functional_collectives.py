"""torch.distributed._functional_collectives on one rank: a functional collective returns a
new tensor holding its result, and `wait_tensor` waits for it. `all_reduce` clones its input
and all-reduces the clone in place (see there). With world_size 1,
`all_to_all_single` sends the whole input to this rank itself: a new tensor equal to the
input, made by ProcessGroupNCCL's alltoall_base, whose NCCL send-to-self is one
device-to-device copy (launch `alltoall_base_`; cpu tensors go to gloo: no launch). Its work is
done when it returns, so `wait_tensor` returns its input."""

from __future__ import annotations

import warnings
from typing import Any

from fake_torch._kernels import _common
from fake_torch._kernels.join import cat
from fake_torch._kernels.shape import clone
from fake_torch._memory_format import contiguous_format
from fake_torch._tensor import Tensor
from fake_torch.distributed._collectives import _backend, _one_rank, _tensor
from fake_torch.distributed._collectives import all_gather_single as _all_gather_single
from fake_torch.distributed._collectives import all_reduce as _all_reduce
from fake_torch.distributed._collectives import all_to_all_single as _c10d_all_to_all
from fake_torch.distributed._collectives import broadcast as _broadcast
from fake_torch.distributed._collectives import reduce_scatter_single as _reduce_scatter_single
from fake_torch.distributed._groups import (
    ProcessGroup,
    ReduceOp,
    default_group,
    resolve,
    world,
)

__all__ = ["all_gather_single", "all_gather_tensor", "all_reduce", "all_to_all_single",
           "all_to_all_single_autograd", "broadcast", "reduce_scatter_single",
           "reduce_scatter_tensor", "wait_tensor"]

# the reduce ops c10d's functional collectives take, by name
_REDUCE_OPS = {"sum": ReduceOp.SUM, "avg": ReduceOp.AVG, "product": ReduceOp.PRODUCT,
               "min": ReduceOp.MIN, "max": ReduceOp.MAX, "band": ReduceOp.BAND,
               "bor": ReduceOp.BOR, "bxor": ReduceOp.BXOR}


def _group(group: Any, fn: str) -> ProcessGroup:
    """A functional collective's `group`: a ProcessGroup, a list of ranks ([0]) or a group's
    name."""
    if isinstance(group, ProcessGroup):
        return resolve(group)
    if isinstance(group, list):
        for pg in world.groups:
            if pg.ranks == sorted(group):
                return pg
        if group == [0]:
            return default_group()
    if isinstance(group, str):
        for pg in world.groups:
            if pg.group_name == group:
                return pg
        raise ValueError(f"Invalid process group specified: {group!r}")
    raise NotImplementedError(f"torch.distributed._functional_collectives.{fn}(group="
                              f"{group!r}): fake_torch takes a ProcessGroup, [0] or a group "
                              "name (device meshes are not emulated)")


def _splits(sizes: list[int] | None, total: int) -> None:
    if sizes is not None and (len(sizes) != 1 or sizes[0] != total):
        raise RuntimeError("Split sizes doesn't match total dim 0 size")


def all_reduce(self: Tensor, reduceOp: str, group: Any, tag: str = "") -> Tensor:
    """A new tensor holding the reduction of `self` over the group (`self` is left as it is):
    c10d's functional all_reduce clones it (one `clone`), then all-reduces the clone in place,
    which on one rank launches nothing (AVG of floats: NCCL's pre-multiplying kernel). torch
    wraps the result in an AsyncCollectiveTensor; here it is done, and a plain Tensor."""
    inp = _tensor(self, "self")
    pg = _group(group, "all_reduce")
    out = clone(inp, memory_format=contiguous_format)
    op = _REDUCE_OPS.get(reduceOp.lower())
    if op is None:
        raise RuntimeError(f"Unrecognized reduce_op: {reduceOp.lower()}")
    _all_reduce(out, op, group=pg)
    return out


def all_to_all_single(self: Tensor, output_split_sizes: list[int] | None,
                      input_split_sizes: list[int] | None, group: Any,
                      tag: str = "") -> Tensor:
    """Each rank's `input_split_sizes` rows to each rank; on one rank a copy of `self`."""
    inp = _tensor(self, "self")
    pg = _group(group, "all_to_all_single")
    _backend(pg, [inp], "all_to_all_single")
    if pg.size() > 1:  # the output's rows: what every rank sends here
        n = pg.size()
        rows = sum(output_split_sizes) if output_split_sizes else inp.shape[0]
        out = _common.new_tensor((rows, *inp.shape[1:]), inp.dtype, inp.device)
        _c10d_all_to_all(out, inp.contiguous(), output_split_sizes or [rows // n] * n,
                         input_split_sizes, group=pg)
        return out
    rows = inp.shape[0] if inp.dim() else 1
    _splits(input_split_sizes, rows)
    _splits(output_split_sizes, rows)
    out = _common.new_tensor(tuple(inp.shape), inp.dtype, inp.device)
    _one_rank("alltoall_base_", out, inp.contiguous(), False)
    return out


def all_to_all_single_autograd(self: Tensor, output_split_sizes: list[int] | None,
                               input_split_sizes: list[int] | None, group: Any,
                               tag: str = "") -> Tensor:
    """all_to_all_single (torch's has autograd; fake_torch runs forward only)."""
    return all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag)


def wait_tensor(tensor: Tensor) -> Tensor:
    """Wait for the collective that made `tensor`: done already; returns `tensor`."""
    return tensor


def _op(reduceOp: str) -> Any:
    op = _REDUCE_OPS.get(reduceOp.lower())
    if op is None:
        raise RuntimeError(f"Unrecognized reduce_op: {reduceOp.lower()}")
    return op


def broadcast(self: Tensor, src: int, group: Any, tag: str = "") -> Tensor:
    """A new tensor holding rank `src`'s `self` (a clone broadcast in place)."""
    pg = _group(group, "broadcast")
    out = clone(_tensor(self, "self"), memory_format=contiguous_format)
    _broadcast(out, src, group=pg)
    return out


def all_gather_single(self: Tensor, gather_dim: int, group: Any, tag: str = "") -> Tensor:
    """Every rank's `self`, concatenated along `gather_dim` in rank order."""
    inp = _tensor(self, "self").contiguous()
    pg = _group(group, "all_gather_single")
    n = pg.size()
    out = _common.new_tensor((n * inp.shape[0], *inp.shape[1:]), inp.dtype, inp.device)
    _all_gather_single(out, inp, group=pg)
    if gather_dim != 0:  # gathered along dim 0, then the rank blocks laid along gather_dim
        out = cat(out.chunk(n, 0), dim=gather_dim)
    return out


def reduce_scatter_single(self: Tensor, reduceOp: str, scatter_dim: int, group: Any,
                          tag: str = "") -> Tensor:
    """This rank's block (of n along `scatter_dim`) of the ranks' reduced `self`."""
    inp = _tensor(self, "self")
    pg = _group(group, "reduce_scatter_single")
    n = pg.size()
    if inp.shape[scatter_dim] % n:
        raise AssertionError(f"input dimension 0 ({inp.shape[0]} must be a multiple of "
                             f"group_size {n})")
    if scatter_dim != 0:  # the blocks laid along dim 0 first
        inp = cat(inp.chunk(n, scatter_dim), dim=0)
    inp = inp.contiguous()
    out = _common.new_tensor((inp.shape[0] // n, *inp.shape[1:]), inp.dtype, inp.device)
    _reduce_scatter_single(out, inp, _op(reduceOp), group=pg)
    return out


def all_gather_tensor(self: Tensor, gather_dim: int, group: Any, tag: str = "") -> Tensor:
    """all_gather_single under its name before torch 2.13 (deprecated, as in torch)."""
    warnings.warn("`torch.distributed._functional_collectives.all_gather_tensor` is deprecated. "
                  "Please use `torch.distributed._functional_collectives.all_gather_single` "
                  "instead.", FutureWarning, stacklevel=2)
    return all_gather_single(self, gather_dim, group, tag)


def reduce_scatter_tensor(self: Tensor, reduceOp: str, scatter_dim: int, group: Any,
                          tag: str = "") -> Tensor:
    """reduce_scatter_single under its name before torch 2.13 (deprecated, as in torch)."""
    warnings.warn("`torch.distributed._functional_collectives.reduce_scatter_tensor` is "
                  "deprecated. Please use "
                  "`torch.distributed._functional_collectives.reduce_scatter_single` instead.",
                  FutureWarning, stacklevel=2)
    return reduce_scatter_single(self, reduceOp, scatter_dim, group, tag)
