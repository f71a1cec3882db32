"""torch.distributed's collectives among several ranks (each process one rank), exact: every
rank computes its result from all ranks' posts in rank order (see _reduce.py), so results equal
the same reduction done in one process. _collectives.py checks the arguments and comes here
when its group has more than one rank.

What each rank posts, and what it writes (n ranks, r this rank's group rank):
  all_reduce      its tensor                    -> the reduction of all
  reduce          its tensor                    -> on dst: the reduction (others unchanged)
  broadcast       src: its tensor               -> src's tensor
  all_gather*     its tensor                    -> all, in rank order
  reduce_scatter* its whole input               -> the reduction of every rank's chunk r
  gather          its tensor                    -> on dst: all, in rank order
  scatter         src: its list                 -> src's piece r
  all_to_all      its input, split by its sizes -> piece r of every rank, in rank order
On a gpu each is one NCCL kernel named as torch's profiler shows it (_nccl_cost.kernel_name):
all_reduce/reduce/broadcast/all_gather/reduce_scatter NCCL's own collectives; gather, scatter
and all_to_all grouped send/recv (ncclDevKernel_SendRecv), as ProcessGroupNCCL issues them.
"""

from __future__ import annotations

import numpy as np

from fake_torch._tensor import Tensor
from fake_torch.distributed._exchange import Post
from fake_torch.distributed._groups import ProcessGroup, ReduceOp
from fake_torch.distributed._meet import host_meets, meet
from fake_torch.distributed._nccl_cost import collective_ns, kernel_name
from fake_torch.distributed._reduce import GLOO_DTYPES, reduce_arrays

__all__ = ["all_gather", "all_reduce", "all_to_all_single", "broadcast", "gather", "reduce",
           "reduce_scatter", "scatter"]


def _dtype_name(t: Tensor) -> str:
    return str(t.dtype).removeprefix("torch.")


def _nccl(coll: str, pg: ProcessGroup, t: Tensor, nbytes: int,
          op: ReduceOp.RedOpType | None = None) -> tuple[str, float]:
    name = kernel_name(coll, pg.size(), nbytes, _dtype_name(t), op.name if op else "",
                       t.dtype.is_floating_point)
    return name, collective_ns(coll, pg.size(), nbytes)


def check_gloo_op(op: ReduceOp.RedOpType, t: Tensor) -> None:
    """ProcessGroupGloo's refusals: its dtypes, bitwise ops on integers, AVG's division."""
    if _dtype_name(t) not in GLOO_DTYPES:
        raise RuntimeError("Invalid scalar type")
    floating = t.dtype.is_floating_point
    if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR) and floating:
        raise RuntimeError(f"Cannot use ReduceOp.{op.name} with non-integral dtype")
    if op is ReduceOp.AVG and not floating:
        names = {"int64": "Long", "int32": "Int", "int8": "Char", "uint8": "Byte",
                 "bool": "Bool"}
        raise RuntimeError("result type Float can't be cast to the desired output type "
                           f"{names[_dtype_name(t)]}")


def _reduce(op: ReduceOp.RedOpType, t: Tensor, arrays: list[np.ndarray]) -> np.ndarray:
    return reduce_arrays(op, arrays, on_gpu=t.device.type == "cuda",
                         floating=t.dtype.is_floating_point)


def _flat(a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).reshape(-1)


def _what(fn: str, t: Tensor, *extra: object) -> str:
    return f"{fn}({', '.join([*map(str, extra), str(t.dtype)])})"


# --- the collectives (pg has several ranks; arguments checked by _collectives) -----------------

def all_reduce(pg: ProcessGroup, tensor: Tensor, op: ReduceOp.RedOpType) -> None:
    def finish(posts: list[Post], arrays: list[np.ndarray]) -> None:
        arrays[0][...] = _reduce(op, tensor, [p.data for p in posts]).reshape(arrays[0].shape)

    meet(pg, _what("all_reduce", tensor, op.name, list(tensor.shape)), [tensor], [], tensor,
         lambda arrays: _flat(arrays[0]).copy(), finish,
         _nccl("AllReduce", pg, tensor, tensor.nbytes, op))


def reduce(pg: ProcessGroup, tensor: Tensor, dst: int, op: ReduceOp.RedOpType) -> None:
    def finish(posts: list[Post], arrays: list[np.ndarray]) -> None:
        if pg.rank() == dst:
            arrays[0][...] = _reduce(op, tensor, [p.data for p in posts]).reshape(
                arrays[0].shape)

    meet(pg, _what("reduce", tensor, op.name, f"dst={dst}", list(tensor.shape)), [tensor], [],
         tensor, lambda arrays: _flat(arrays[0]).copy(), finish,
         _nccl("Reduce", pg, tensor, tensor.nbytes, op))


def broadcast(pg: ProcessGroup, tensor: Tensor, src: int) -> None:
    def payload(arrays: list[np.ndarray]) -> np.ndarray | None:
        return _flat(arrays[0]).copy() if pg.rank() == src else None

    def finish(posts: list[Post], arrays: list[np.ndarray]) -> None:
        if pg.rank() != src:
            arrays[0][...] = posts[src].data.reshape(arrays[0].shape)

    meet(pg, _what("broadcast", tensor, f"src={src}", list(tensor.shape)), [tensor], [],
         tensor, payload, finish, _nccl("Broadcast", pg, tensor, tensor.nbytes))


def all_gather(pg: ProcessGroup, outs: list[Tensor], tensor: Tensor) -> None:
    """outs: one tensor per rank (all_gather), or one tensor of n pieces (into_tensor)."""
    def finish(posts: list[Post], arrays: list[np.ndarray]) -> None:
        pieces = [p.data for p in posts]
        if len(outs) == 1:
            arrays[0][...] = np.concatenate(pieces).reshape(arrays[0].shape)
        else:
            for a, piece in zip(arrays[:len(outs)], pieces, strict=True):
                a[...] = piece.reshape(a.shape)

    meet(pg, _what("all_gather", tensor, tensor.numel()), outs, [tensor], tensor,
         lambda arrays: _flat(arrays[-1]).copy(), finish,
         _nccl("AllGather", pg, tensor, tensor.nbytes * pg.size()))


def reduce_scatter(pg: ProcessGroup, out: Tensor, ins: list[Tensor],
                   op: ReduceOp.RedOpType) -> None:
    """ins: one tensor per rank (reduce_scatter), or one tensor of n pieces (_tensor)."""
    n, r = pg.size(), pg.rank()

    def payload(arrays: list[np.ndarray]) -> np.ndarray:
        return np.concatenate([_flat(a) for a in arrays[1:]])

    def finish(posts: list[Post], arrays: list[np.ndarray]) -> None:
        chunk = out.numel()
        pieces = [p.data[r * chunk:(r + 1) * chunk] for p in posts]
        arrays[0][...] = _reduce(op, out, pieces).reshape(arrays[0].shape)

    meet(pg, _what("reduce_scatter", out, op.name, out.numel()), [out], ins, out, payload,
         finish, _nccl("ReduceScatter", pg, out, out.nbytes * n, op))


def gather(pg: ProcessGroup, tensor: Tensor, outs: list[Tensor], dst: int) -> None:
    def finish(posts: list[Post], arrays: list[np.ndarray]) -> None:
        if pg.rank() == dst:
            for a, p in zip(arrays[:len(outs)], posts, strict=True):
                a[...] = p.data.reshape(a.shape)

    nbytes = tensor.nbytes * (pg.size() - 1 if pg.rank() == dst else 1)
    meet(pg, _what("gather", tensor, f"dst={dst}", tensor.numel()), outs, [tensor], tensor,
         lambda arrays: _flat(arrays[-1]).copy(), finish,
         _nccl("SendRecv", pg, tensor, nbytes))


def scatter(pg: ProcessGroup, tensor: Tensor, ins: list[Tensor], src: int) -> None:
    def payload(arrays: list[np.ndarray]) -> list[np.ndarray] | None:
        return [_flat(a).copy() for a in arrays[1:]] if pg.rank() == src else None

    def finish(posts: list[Post], arrays: list[np.ndarray]) -> None:
        arrays[0][...] = posts[src].data[pg.rank()].reshape(arrays[0].shape)

    nbytes = tensor.nbytes * (pg.size() - 1 if pg.rank() == src else 1)
    meet(pg, _what("scatter", tensor, f"src={src}", tensor.numel()), [tensor], ins, tensor,
         payload, finish, _nccl("SendRecv", pg, tensor, nbytes))


def all_to_all_single(pg: ProcessGroup, out: Tensor, inp: Tensor, out_splits: list[int],
                      in_splits: list[int]) -> None:
    """Rows in_splits[j] of this rank's input go to rank j; out takes out_splits[j] rows from
    rank j (both lists of n row counts, checked by the caller)."""
    r = pg.rank()
    row_in = inp.numel() // max(inp.shape[0], 1) if inp.dim() else 1
    row_out = out.numel() // max(out.shape[0], 1) if out.dim() else 1

    def payload(arrays: list[np.ndarray]) -> list[np.ndarray]:
        flat, pieces, at = _flat(arrays[1]), [], 0
        for rows in in_splits:
            pieces.append(flat[at:at + rows * row_in].copy())
            at += rows * row_in
        return pieces

    def finish(posts: list[Post], arrays: list[np.ndarray]) -> None:
        got = [p.data[r] for p in posts]
        for j, (piece, rows) in enumerate(zip(got, out_splits, strict=True)):
            if piece.size != rows * row_out:
                raise RuntimeError(f"all_to_all_single: rank {j} sends {piece.size} elements "
                                   f"to rank {r}, which expects {rows * row_out} "
                                   "(output_split_sizes)")
        arrays[0][...] = np.concatenate(got).reshape(arrays[0].shape)

    nbytes = max(inp.nbytes, out.nbytes)
    meet(pg, _what("all_to_all_single", inp), [out], [inp], inp, payload, finish,
         _nccl("SendRecv", pg, inp, nbytes))


def barrier(pg: ProcessGroup, flag: Tensor | None) -> None:
    """Every rank arrives before any leaves; on nccl, an all_reduce of a 1-element `flag`."""
    if flag is None:
        host_meets()
        pg.exchange.collective("barrier()", None)
        return
    all_reduce(pg, flag, ReduceOp.SUM)
