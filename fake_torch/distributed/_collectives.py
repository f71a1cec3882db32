"""torch.distributed's collectives for one rank: each is the identity, and launches on cuda
what NCCL and ProcessGroupNCCL launch for a one-rank communicator.

NCCL runs a one-rank collective without its ring kernels (`ncclLaunchOneRank`): nothing at
all when it works in place (all_reduce, broadcast, reduce: the buffer already holds the
result), one device-to-device memcpy when its output is another buffer (all_gather_into_tensor,
reduce_scatter_tensor), and one kernel where the op pre-multiplies (AVG of a floating tensor is
a sum pre-multiplied by 1/world_size). ProcessGroupNCCL adds its own copies around some:
all_gather of a list gathers into a flat buffer then copies each piece out (`copy_`),
reduce_scatter of a list copies the pieces into a flat buffer first, gather and scatter copy
the root's own piece with `copy_`, and barrier all-reduces a fresh `zeros(1)` (one fill) and
then waits for it on the host. Launches are named after the c10d op the dispatcher records
(`allreduce_`, `_allgather_base_`, ...). cpu tensors go to gloo: no launches.
"""

from __future__ import annotations

import pickle
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from fake_torch._dtype import bool_
from fake_torch._kernels import _common
from fake_torch._kernels.cast import copy_
from fake_torch._opdef import EXTERN, aten_op
from fake_torch._simulated import _dispatch
from fake_torch._tensor import Tensor
from fake_torch.distributed import _p2p, _several
from fake_torch.distributed._groups import Backend, ProcessGroup, ReduceOp, Work, resolve
from fake_torch.distributed._meet import host_meets
from fake_torch.distributed._p2p import P2POp as P2POp

for _name in ("allreduce_", "reduce_", "_allgather_base_", "allgather_",
              "_reduce_scatter_base_", "reduce_scatter_", "barrier", "alltoall_base_"):
    aten_op(_name, EXTERN)


# --- checks -------------------------------------------------------------------------------

def _tensor(t: Any, name: str) -> Tensor:
    if not isinstance(t, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"torch.Tensor\n             but got {type(t)} instead.")
    return t


def _tensor_list(ts: Any, name: str) -> list[Tensor]:
    if not isinstance(ts, list) or not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[torch.Tensor]\n             but got {type(ts)} instead.")
    return ts


def _not_tracing() -> bool:
    return False


# whether torch.compile is tracing this thread: fake_torch/_compile.py registers dynamo's
# is_tracing here when it is imported (compile sits above distributed: fake_torch/_tools/_layers.py)
is_tracing: Callable[[], bool] = _not_tracing


def _backend(pg: ProcessGroup, tensors: list[Tensor], fn: str) -> str:
    """The backend the tensors' device goes to; what fake_torch does not emulate raises."""
    if is_tracing():
        raise NotImplementedError(f"torch.distributed.{fn} inside torch.compile is not "
                                  "emulated by fake_torch (Dynamo would trace it as a "
                                  "functional collective): call it outside the compiled code")
    dev = tensors[0].device.type if tensors else "cpu"
    backend = pg.device_backends.get(dev)
    if backend is None:
        raise RuntimeError(f"No backend type associated with device type {dev}")
    if dev == "cuda" and backend == Backend.GLOO:
        raise NotImplementedError(f"torch.distributed.{fn} of cuda tensors on a gloo group is "
                                  "not emulated by fake_torch (gloo stages them through host "
                                  "memory): use the nccl backend")
    for t in tensors:
        if backend == Backend.NCCL and not t.is_contiguous():
            raise ValueError("Tensors must be contiguous")
    return backend


def _check_op(given: Any, t: Tensor, backend: str) -> ReduceOp.RedOpType:
    op = ReduceOp.RedOpType(given)
    if op is ReduceOp.PREMUL_SUM:
        raise NotImplementedError("torch.distributed ReduceOp.PREMUL_SUM is not emulated by "
                                  "fake_torch")
    if backend == Backend.GLOO and t.device.type == "cpu":
        _several.check_gloo_op(op, t)
    if backend == Backend.NCCL:
        if op in (ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR):
            raise ValueError(f"Cannot use ReduceOp.{op.name} with NCCL")
        if op is ReduceOp.AVG and t.dtype is bool_:
            raise TypeError("Cannot use ReduceOp.AVG with boolean inputs")
    return op


def _premultiplies(op: ReduceOp.RedOpType, t: Tensor) -> bool:
    """NCCL runs AVG of a floating type as a sum pre-multiplied by 1/world_size: a kernel."""
    return op is ReduceOp.AVG and t.dtype.is_floating_point


def _done(async_op: bool, on_wait: Callable[[], None] | None = None) -> Work | None:
    if async_op:
        return Work(on_wait)
    if on_wait is not None:
        on_wait()
    return None


# --- the NCCL one-rank launches ---------------------------------------------------------------

def _one_rank(op_name: str, dst: Tensor, src: Tensor, premultiply: bool) -> None:
    """ncclLaunchOneRank: a pre-multiplying kernel, else a memcpy unless dst is src."""
    if dst.numel() == 0 or dst.device.type != "cuda":
        if dst.data_ptr() != src.data_ptr():
            dst._a.reshape(-1)[...] = src._a.reshape(-1)
        return
    if premultiply:
        _common.launch(op_name, _scale_kernel, dst, (src,), {"factor": 1.0})
    elif dst.data_ptr() != src.data_ptr():
        _common.launch(op_name, _copy_kernel, dst, (src,), kind="memcpy_d2d")


def _copy_kernel(out: np.ndarray, src: np.ndarray) -> None:
    out.reshape(-1)[...] = src.reshape(-1)


def _scale_kernel(out: np.ndarray, src: np.ndarray, *, factor: float) -> None:
    out.reshape(-1)[...] = src.reshape(-1) * np.asarray(factor, dtype=out.dtype)


def _flat_like(ts: list[Tensor]) -> Tensor:
    """ProcessGroupNCCL's newLikeFlat: one buffer holding the list's tensors (no launch)."""
    first = ts[0]
    return _common.new_tensor((len(ts), *first.shape), first.dtype, first.device)


# --- the collectives --------------------------------------------------------------------------

def all_reduce(tensor: Tensor, op: Any = ReduceOp.SUM, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """In place: `tensor` already holds the sum over one rank."""
    pg = resolve(group)
    backend = _backend(pg, [_tensor(tensor, "tensor")], "all_reduce")
    red = _check_op(op, tensor, backend)
    if pg.size() > 1:
        _several.all_reduce(pg, tensor, red)
        return _done(async_op)
    _one_rank("allreduce_", tensor, tensor, _premultiplies(red, tensor))
    return _done(async_op)


def reduce(tensor: Tensor, dst: int | None = None, op: Any = ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """In place on the destination, rank 0."""
    pg = resolve(group)
    root = _root(pg, dst, group_dst, "dst", "reduce")
    backend = _backend(pg, [_tensor(tensor, "tensor")], "reduce")
    red = _check_op(op, tensor, backend)
    if pg.size() > 1:
        _several.reduce(pg, tensor, root, red)
        return _done(async_op)
    _one_rank("reduce_", tensor, tensor, _premultiplies(red, tensor))
    return _done(async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """In place from rank 0 to itself: nothing to do."""
    pg = resolve(group)
    root = _root(pg, src, group_src, "src", "broadcast")
    _backend(pg, [_tensor(tensor, "tensor")], "broadcast")
    if pg.size() > 1:
        _several.broadcast(pg, tensor, root)
    return _done(async_op)


def all_gather_single(output_tensor: Tensor, input_tensor: Tensor,
                      group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """output <- input (world_size 1): one memcpy unless they are the same memory."""
    pg = resolve(group)
    out, inp = _tensor(output_tensor, "output_tensor"), _tensor(input_tensor, "input_tensor")
    _backend(pg, [inp, out], "all_gather_single")
    if out.dtype is not inp.dtype:
        raise TypeError("output tensor must have the same type as input tensor")
    if out.numel() != inp.numel() * pg.size():
        raise ValueError("output tensor size must be equal to world_size times input tensor "
                         "size")
    if pg.size() > 1:
        _several.all_gather(pg, [out], inp)
        return _done(async_op)
    _one_rank("_allgather_base_", out, inp, False)
    return _done(async_op)


def reduce_scatter_single(output: Tensor, input: Tensor, op: Any = ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """output <- input (world_size 1): a memcpy, or AVG's pre-multiplying kernel."""
    pg = resolve(group)
    out, inp = _tensor(output, "output"), _tensor(input, "input")
    backend = _backend(pg, [inp, out], "reduce_scatter_single")
    red = _check_op(op, inp, backend)
    if out.dtype is not inp.dtype:
        raise TypeError("input tensor must be the same type as the output tensor.")
    if inp.numel() != out.numel() * pg.size():
        raise ValueError("input tensor must be the same size as output size times world size")
    if pg.size() > 1:
        _several.reduce_scatter(pg, out, [inp], red)
        return _done(async_op)
    _one_rank("_reduce_scatter_base_", out, inp, _premultiplies(red, inp))
    return _done(async_op)


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor,
                           group: ProcessGroup | None = None,
                           async_op: bool = False) -> Work | None:
    """all_gather_single under its name before torch 2.13 (deprecated, as in torch)."""
    warnings.warn("`torch.distributed.all_gather_into_tensor` is deprecated. Please use "
                  "`torch.distributed.all_gather_single` instead.", FutureWarning, stacklevel=2)
    return all_gather_single(output_tensor, input_tensor, group, async_op)


def reduce_scatter_tensor(output: Tensor, input: Tensor, op: Any = ReduceOp.SUM,
                          group: ProcessGroup | None = None,
                          async_op: bool = False) -> Work | None:
    """reduce_scatter_single under its name before torch 2.13 (deprecated, as in torch)."""
    warnings.warn("`torch.distributed.reduce_scatter_tensor` is deprecated. Please use "
                  "`torch.distributed.reduce_scatter_single` instead.", FutureWarning,
                  stacklevel=2)
    return reduce_scatter_single(output, input, op, group, async_op)


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes: list[int] | None = None,
                      input_split_sizes: list[int] | None = None,
                      group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """output <- input: this rank's one split is sent to itself. ProcessGroupNCCL's
    alltoall_base sends and receives it with NCCL (one device-to-device memcpy); split sizes,
    when given, must be [size(0)] on each side, as c10d checks them."""
    pg = resolve(group)
    out, inp = _tensor(output, "output"), _tensor(input, "input")
    if out.dtype is not inp.dtype:
        raise ValueError("Invalid usage of tensors with different dtypesFound "
                         f"{out.dtype} and  {inp.dtype}")
    _backend(pg, [inp, out], "all_to_all_single")
    if not (inp.is_contiguous() and out.is_contiguous()):  # (gloo checks it too)
        raise ValueError("Tensors must be contiguous")
    if pg.size() > 1:
        n = pg.size()
        splits = [_check_splits(sizes or [], t, n)
                  for sizes, t in ((output_split_sizes, out), (input_split_sizes, inp))]
        _several.all_to_all_single(pg, out, inp, *splits)
        return _done(async_op)
    if output_split_sizes or input_split_sizes:
        for sizes, t in ((input_split_sizes or [], inp), (output_split_sizes or [], out)):
            _check_splits(sizes, t, 1)
    if out.numel() != inp.numel():  # what this rank sends to itself must fill what it receives
        raise RuntimeError(f"all_to_all_single: the output has {out.numel()} elements and the "
                           f"input {inp.numel()}; with world_size 1 they must be equal")
    _one_rank("alltoall_base_", out, inp, False)
    return _done(async_op)


def _check_splits(sizes: list[int], t: Tensor, n: int) -> list[int]:
    """c10d's checkSplitSizes: none (dim 0 splits evenly in n), or n sizes summing to
    size(0); the sizes."""
    rows = t.shape[0] if t.dim() else 1
    if not sizes:
        if rows % n:
            raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
        return [rows // n] * n
    if len(sizes) != n:
        raise RuntimeError("Number of tensor splits not equal to group size")
    if sum(sizes) != rows:
        raise RuntimeError("Split sizes doesn't match total dim 0 size")
    return list(sizes)


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """tensor_list[0] <- tensor: gathered into a flat buffer (a memcpy), then copied out."""
    pg = resolve(group)
    outs = _list_of_size(pg, _tensor_list(tensor_list, "tensor_list"), "allgather", "output")
    backend = _backend(pg, [_tensor(tensor, "tensor"), *outs], "all_gather")
    if pg.size() > 1:
        _several.all_gather(pg, outs, tensor)
        return _done(async_op)
    if backend == Backend.GLOO:
        copy_(outs[0], tensor)
        return _done(async_op)
    flat = _flat_like(outs)
    _one_rank("allgather_", flat, tensor, False)
    copy_(outs[0], flat[0])
    return _done(async_op)


def reduce_scatter(output: Tensor, input_list: list[Tensor], op: Any = ReduceOp.SUM,
                   group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """output <- input_list[0]: copied into a flat buffer, then reduce-scattered out."""
    pg = resolve(group)
    ins = _list_of_size(pg, _tensor_list(input_list, "input_list"), "reduce_scatter", "input")
    backend = _backend(pg, [_tensor(output, "output"), *ins], "reduce_scatter")
    red = _check_op(op, output, backend)
    if pg.size() > 1:
        _several.reduce_scatter(pg, output, ins, red)
        return _done(async_op)
    if backend == Backend.GLOO:
        copy_(output, ins[0])
        return _done(async_op)
    flat = _flat_like(ins)
    copy_(flat[0], ins[0])
    _one_rank("reduce_scatter_", output, flat, _premultiplies(red, output))
    return _done(async_op)


def gather(tensor: Tensor, gather_list: list[Tensor] | None = None, dst: int | None = None,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """gather_list[0] <- tensor on rank 0 (the root copies its own piece)."""
    pg = resolve(group)
    root = _root(pg, dst, group_dst, "dst", "gather")
    if pg.size() > 1:
        mine = pg.rank() == root
        if mine and gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        if not mine and gather_list:
            raise ValueError("Argument ``gather_list`` must NOT be specified on "
                             "non-destination ranks.")
        outs = (_list_of_size(pg, _tensor_list(gather_list, "gather_list"), "gather", "output")
                if mine else [])
        _backend(pg, [_tensor(tensor, "tensor"), *outs], "gather")
        _several.gather(pg, tensor, outs, root)
        return _done(async_op)
    if gather_list is None:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    outs = _list_of_size(pg, _tensor_list(gather_list, "gather_list"), "gather", "output")
    _backend(pg, [_tensor(tensor, "tensor"), *outs], "gather")
    copy_(outs[0], tensor)
    return _done(async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """tensor <- scatter_list[0] on rank 0 (the root copies its own piece)."""
    pg = resolve(group)
    root = _root(pg, src, group_src, "src", "scatter")
    if pg.size() > 1:
        mine = pg.rank() == root
        if mine and scatter_list is None:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        if not mine and scatter_list:
            raise ValueError("Argument ``scatter_list`` must NOT be specified on "
                             "non-source ranks.")
        ins = (_list_of_size(pg, _tensor_list(scatter_list, "scatter_list"), "scatter", "input")
               if mine else [])
        _backend(pg, [_tensor(tensor, "tensor"), *ins], "scatter")
        _several.scatter(pg, tensor, ins, root)
        return _done(async_op)
    if scatter_list is None:
        raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
    ins = _list_of_size(pg, _tensor_list(scatter_list, "scatter_list"), "scatter", "input")
    _backend(pg, [_tensor(tensor, "tensor"), *ins], "scatter")
    copy_(tensor, ins[0])
    return _done(async_op)


def barrier(group: ProcessGroup | None = None, async_op: bool = False,
            device_ids: list[int] | None = None, timeout: Any = None) -> Work | None:
    """Nothing to wait for among one rank; on an nccl group, what ProcessGroupNCCL does: one
    fill of a fresh zeros(1), its in-place all-reduce (no launch), a host wait for it."""
    pg = resolve(group)
    if pg.device_backends.get("cuda") != Backend.NCCL:
        if pg.size() > 1:
            _several.barrier(pg, None)
        return _done(async_op)
    from fake_torch._dtype import float32
    from fake_torch._torch_device import device as _device
    from fake_torch.cuda import current_device

    flag = _common.new_tensor((1,), float32, _device("cuda", current_device()))
    _common.launch("barrier", _zero_kernel, flag, kind="memset")
    if pg.size() > 1:
        _several.barrier(pg, flag)
    return _done(async_op, lambda: _dispatch.host_sync("barrier"))


def _zero_kernel(out: np.ndarray) -> None:
    out[...] = 0


# --- point to point -----------------------------------------------------------------------------

def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send `tensor` to rank `dst` (returns once posted; see _p2p)."""
    pg = resolve(group)
    peer = _peer(pg, dst, group_dst, "destination", "send", blocking=True, tensor=tensor)
    _p2p.send(pg, tensor, peer)


def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_dst: int | None = None) -> Work | None:
    """send, returning a done Work."""
    pg = resolve(group)
    _p2p.send(pg, tensor, _peer(pg, dst, group_dst, "destination", "isend", tensor=tensor))
    return Work()


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into `tensor` from rank `src`; returns `src`."""
    irecv(tensor, src, group, tag, group_src).wait()  # type: ignore[union-attr]
    pg = resolve(group)
    return pg.ranks[_peer(pg, src, group_src, "source", "recv", any_source=True)]


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_src: int | None = None) -> Work | None:
    """A Work whose wait() receives into `tensor` from rank `src`."""
    _tensor(tensor, "tensor")
    pg = resolve(group)
    return _p2p.receive(pg, tensor, _peer(pg, src, group_src, "source", "irecv",
                                          any_source=True))


def batch_isend_irecv(p2p_op_list: list[P2POp]) -> list[Work]:
    """Run the isend/irecv P2POps as one group (one NCCL kernel on a gpu)."""
    if not p2p_op_list or not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    pg = resolve(p2p_op_list[0].group)
    if any(resolve(p.group) is not pg for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    ops = []
    for p in p2p_op_list:
        is_send = p.op in (isend, send)
        if not is_send and p.op not in (irecv, recv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        ops.append((is_send, _tensor(p.tensor, "tensor"),
                    _peer(pg, p.peer, p.group_peer, "peer", "batch_isend_irecv")))
    return _p2p.batch(pg, ops)


def _peer(pg: ProcessGroup, rank: int | None, group_rank: int | None, kind: str, fn: str, *,
          blocking: bool = False, any_source: bool = False, tensor: Any = None) -> int:
    """The group rank of a point-to-point op's peer, checked as torch checks it."""
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    if tensor is not None:
        _tensor(tensor, "tensor")
    if rank is None and group_rank is None:
        if any_source:
            raise NotImplementedError(f"torch.distributed.{fn} from any source (src=None) is "
                                      "not emulated by fake_torch: name the source rank")
        raise ValueError("Must specify global_rank or group_rank")
    if group_rank is None:
        if rank not in pg.ranks:
            raise ValueError(f"Global rank {rank} is not part of group {pg}")
        group_rank = pg.ranks.index(rank)
    if group_rank == pg.rank() and blocking:
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank "
                         "of the current process.")
    if group_rank == pg.rank():
        raise NotImplementedError(f"torch.distributed.{fn} with this process itself "
                                  f"(rank {pg.ranks[group_rank]}) as the peer is not emulated "
                                  "by fake_torch")
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return group_rank


def _root(pg: ProcessGroup, rank: int | None, group_rank: int | None, name: str,
          fn: str) -> int:
    """The group rank of a rooted collective's root, given as a global `rank` or a
    `group_rank` (torch's checks)."""
    if rank is not None and group_rank is not None:
        raise ValueError(f"Can't specify both {name} and group_{name}")
    if group_rank is not None:
        if not 0 <= group_rank < pg.size():
            raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
        return group_rank
    given = 0 if rank is None else rank
    if given not in pg.ranks:
        raise ValueError(f"Global rank {given} is not part of group {pg}")
    return pg.ranks.index(given)


def _list_of_size(pg: ProcessGroup, ts: list[Tensor], fn: str, what: str) -> list[Tensor]:
    if len(ts) != pg.size():
        raise RuntimeError(f"ProcessGroupNCCL::{fn}: invalid {what} tensor list size "
                           f"{len(ts)} (expected {pg.size()}, the world size)")
    return ts


# --- objects (pickled, as torch sends them) ----------------------------------------------------

def all_gather_object(object_list: list[Any], obj: Any,
                      group: ProcessGroup | None = None) -> None:
    """object_list[r] <- a copy of rank r's obj (pickled and unpickled, as torch sends it)."""
    pg = _object_group(group, "all_gather_object")
    if len(object_list) != pg.size():
        raise ValueError(f"object_list must have one entry per rank (world_size {pg.size()})")
    if pg.size() == 1:
        object_list[0] = pickle.loads(pickle.dumps(obj))
        return
    posts = pg.exchange.collective("all_gather_object()", pickle.dumps(obj))
    object_list[:] = [pickle.loads(p.data) for p in posts]


def gather_object(obj: Any, object_gather_list: list[Any] | None = None,
                  dst: int | None = None, group: ProcessGroup | None = None,
                  group_dst: int | None = None) -> None:
    """On dst, object_gather_list[r] <- a copy of rank r's obj."""
    pg = _object_group(group, "gather_object")
    root = _root(pg, dst, group_dst, "dst", "gather_object")
    mine = pg.rank() == root
    if mine and (object_gather_list is None or len(object_gather_list) != pg.size()):
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    data = pickle.dumps(obj)
    posts = (pg.exchange.collective(f"gather_object(dst={root})", data) if pg.size() > 1
             else [None])
    if mine and object_gather_list is not None:
        object_gather_list[:] = [pickle.loads(data if p is None else p.data) for p in posts]


def broadcast_object_list(object_list: list[Any], src: int | None = None,
                          group: ProcessGroup | None = None, device: Any = None,
                          group_src: int | None = None) -> None:
    """Every rank's list <- copies of the source rank's objects."""
    pg = _object_group(group, "broadcast_object_list")
    root = _root(pg, src, group_src, "src", "broadcast_object_list")
    if device is not None and str(device).startswith("cuda"):
        raise NotImplementedError("torch.distributed.broadcast_object_list(device='cuda') is "
                                  "not emulated by fake_torch: use a cpu (gloo) group")
    if pg.size() == 1:
        return
    mine = pg.rank() == root
    posts = pg.exchange.collective(f"broadcast_object_list(src={root}, {len(object_list)})",
                                   pickle.dumps(object_list) if mine else None)
    if not mine:
        object_list[:] = pickle.loads(posts[root].data)


def _object_group(group: ProcessGroup | None, fn: str) -> ProcessGroup:
    """Object collectives run on the cpu backend; torch stages them through the GPU on an
    nccl-only group, which fake_torch does not emulate."""
    pg = resolve(group)
    if "cpu" not in pg.device_backends:
        raise NotImplementedError(f"torch.distributed.{fn} on an nccl-only group is not "
                                  "emulated by fake_torch: use a group with a gloo (cpu) backend")
    if pg.size() > 1:
        host_meets()
    return pg
