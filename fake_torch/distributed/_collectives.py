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
from fake_torch.distributed._groups import Backend, ProcessGroup, ReduceOp, Work, resolve

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
    _one_rank("allreduce_", tensor, tensor, _premultiplies(red, tensor))
    return _done(async_op)


def reduce(tensor: Tensor, dst: int | None = None, op: Any = ReduceOp.SUM,
           group: ProcessGroup | None = None, async_op: bool = False,
           group_dst: int | None = None) -> Work | None:
    """In place on the destination, rank 0."""
    pg = resolve(group)
    _root(dst, group_dst, "dst", "reduce")
    backend = _backend(pg, [_tensor(tensor, "tensor")], "reduce")
    red = _check_op(op, tensor, backend)
    _one_rank("reduce_", tensor, tensor, _premultiplies(red, tensor))
    return _done(async_op)


def broadcast(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
              async_op: bool = False, group_src: int | None = None) -> Work | None:
    """In place from rank 0 to itself: nothing to do."""
    pg = resolve(group)
    _root(src, group_src, "src", "broadcast")
    _backend(pg, [_tensor(tensor, "tensor")], "broadcast")
    return _done(async_op)


def all_gather_single(output_tensor: Tensor, input_tensor: Tensor,
                      group: ProcessGroup | None = None, async_op: bool = False) -> Work | None:
    """output <- input (world_size 1): one memcpy unless they are the same memory."""
    pg = resolve(group)
    out, inp = _tensor(output_tensor, "output_tensor"), _tensor(input_tensor, "input_tensor")
    _backend(pg, [inp, out], "all_gather_single")
    if out.dtype is not inp.dtype:
        raise TypeError("output tensor must have the same type as input tensor")
    if out.numel() != inp.numel():
        raise ValueError("output tensor size must be equal to world_size times input tensor "
                         "size")
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
    if inp.numel() != out.numel():
        raise ValueError("input tensor must be the same size as output size times world size")
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
    if output_split_sizes or input_split_sizes:
        for sizes, t in ((input_split_sizes or [], inp), (output_split_sizes or [], out)):
            _check_splits(sizes, t)
    if out.numel() != inp.numel():  # what this rank sends to itself must fill what it receives
        raise RuntimeError(f"all_to_all_single: the output has {out.numel()} elements and the "
                           f"input {inp.numel()}; with world_size 1 they must be equal")
    _one_rank("alltoall_base_", out, inp, False)
    return _done(async_op)


def _check_splits(sizes: list[int], t: Tensor) -> None:
    """c10d's checkSplitSizes for one rank: none (dim 0 splits evenly in one), or [size(0)]."""
    if not sizes:
        return
    if len(sizes) != 1:
        raise RuntimeError("Number of tensor splits not equal to group size")
    if sizes[0] != t.shape[0]:
        raise RuntimeError("Split sizes doesn't match total dim 0 size")


def all_gather(tensor_list: list[Tensor], tensor: Tensor, group: ProcessGroup | None = None,
               async_op: bool = False) -> Work | None:
    """tensor_list[0] <- tensor: gathered into a flat buffer (a memcpy), then copied out."""
    pg = resolve(group)
    outs = _list_of_one(_tensor_list(tensor_list, "tensor_list"), "allgather", "output")
    backend = _backend(pg, [_tensor(tensor, "tensor"), *outs], "all_gather")
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
    ins = _list_of_one(_tensor_list(input_list, "input_list"), "reduce_scatter", "input")
    backend = _backend(pg, [_tensor(output, "output"), *ins], "reduce_scatter")
    red = _check_op(op, output, backend)
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
    _root(dst, group_dst, "dst", "gather")
    if gather_list is None:
        raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
    outs = _list_of_one(_tensor_list(gather_list, "gather_list"), "gather", "output")
    _backend(pg, [_tensor(tensor, "tensor"), *outs], "gather")
    copy_(outs[0], tensor)
    return _done(async_op)


def scatter(tensor: Tensor, scatter_list: list[Tensor] | None = None, src: int | None = None,
            group: ProcessGroup | None = None, async_op: bool = False,
            group_src: int | None = None) -> Work | None:
    """tensor <- scatter_list[0] on rank 0 (the root copies its own piece)."""
    pg = resolve(group)
    _root(src, group_src, "src", "scatter")
    if scatter_list is None:
        raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
    ins = _list_of_one(_tensor_list(scatter_list, "scatter_list"), "scatter", "input")
    _backend(pg, [_tensor(tensor, "tensor"), *ins], "scatter")
    copy_(tensor, ins[0])
    return _done(async_op)


def barrier(group: ProcessGroup | None = None, async_op: bool = False,
            device_ids: list[int] | None = None, timeout: Any = None) -> Work | None:
    """Nothing to wait for among one rank; on an nccl group, what ProcessGroupNCCL does: one
    fill of a fresh zeros(1), its in-place all-reduce (no launch), a host wait for it."""
    pg = resolve(group)
    if pg.device_backends.get("cuda") != Backend.NCCL:
        return _done(async_op)
    from fake_torch._dtype import float32
    from fake_torch._torch_device import CUDA0

    flag = _common.new_tensor((1,), float32, CUDA0)
    _common.launch("barrier", _zero_kernel, flag, kind="memset")
    return _done(async_op, lambda: _dispatch.host_sync("barrier"))


def _zero_kernel(out: np.ndarray) -> None:
    out[...] = 0


# --- point to point: there is no other process --------------------------------------------------

def send(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Refused as torch refuses it: this process is rank 0, the only one."""
    resolve(group)
    _peer(dst, group_dst, "destination", "send", blocking=True, tensor=tensor)


def isend(tensor: Tensor, dst: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_dst: int | None = None) -> Work | None:
    resolve(group)
    _peer(dst, group_dst, "destination", "isend", tensor=tensor)
    return None  # (unreachable: _peer raises)


def recv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None, tag: int = 0,
         group_src: int | None = None) -> int:
    _tensor(tensor, "tensor")
    resolve(group)
    _peer(src, group_src, "source", "recv", any_source=True)
    return -1  # (unreachable: _peer raises)


def irecv(tensor: Tensor, src: int | None = None, group: ProcessGroup | None = None,
          tag: int = 0, group_src: int | None = None) -> Work | None:
    _tensor(tensor, "tensor")
    resolve(group)
    _peer(src, group_src, "source", "irecv", any_source=True)
    return None  # (unreachable: _peer raises)


def _peer(rank: int | None, group_rank: int | None, kind: str, fn: str, *,
          blocking: bool = False, any_source: bool = False, tensor: Any = None) -> None:
    """The peer of a point-to-point op, checked as torch checks it; then, since the one
    process has no peer, the error that says so (torch would wait forever, or fail in the
    transport)."""
    if rank is not None and group_rank is not None:
        raise ValueError("Can't specify both group_rank and global_rank")
    given = rank if group_rank is None else group_rank
    if given is None and not any_source:
        raise ValueError("Must specify global_rank or group_rank")
    if given == 0 and blocking:
        raise ValueError(f"Invalid {kind} rank: {kind} rank should not be the same as the rank "
                         "of the current process.")
    if tensor is not None:
        _tensor(tensor, "tensor")
    if given == 0:
        raise NotImplementedError(f"torch.distributed.{fn} with this process itself (rank 0) "
                                  "as the peer is not emulated by fake_torch")
    raise RuntimeError(f"torch.distributed.{fn}: no {kind} process "
                       f"{'' if given is None else f'{given} '}to talk to: fake_torch runs one "
                       "process (rank 0, world_size 1)")


def _root(rank: int | None, group_rank: int | None, name: str, fn: str) -> None:
    """The root of a rooted collective must be rank 0, the only one."""
    given = group_rank if rank is None else rank
    if given not in (None, 0):
        raise ValueError(f"torch.distributed.{fn}: invalid {name} rank {given}: fake_torch "
                         "runs one process (rank 0, world_size 1)")


def _list_of_one(ts: list[Tensor], fn: str, what: str) -> list[Tensor]:
    if len(ts) != 1:
        raise RuntimeError(f"ProcessGroupNCCL::{fn}: invalid {what} tensor list size "
                           f"{len(ts)} (expected 1, the world size)")
    return ts


# --- objects (pickled, as torch sends them) ----------------------------------------------------

def all_gather_object(object_list: list[Any], obj: Any,
                      group: ProcessGroup | None = None) -> None:
    """object_list[0] <- a copy of obj (pickled and unpickled, as torch sends it)."""
    _object_group(group, "all_gather_object")
    if len(object_list) != 1:
        raise ValueError("object_list must have one entry per rank (world_size 1)")
    object_list[0] = pickle.loads(pickle.dumps(obj))


def broadcast_object_list(object_list: list[Any], src: int | None = None,
                          group: ProcessGroup | None = None, device: Any = None,
                          group_src: int | None = None) -> None:
    """The source rank's list stays as it is."""
    _object_group(group, "broadcast_object_list")
    _root(src, group_src, "src", "broadcast_object_list")
    if device is not None and str(device).startswith("cuda"):
        raise NotImplementedError("torch.distributed.broadcast_object_list(device='cuda') is "
                                  "not emulated by fake_torch: use a cpu (gloo) group")


def _object_group(group: ProcessGroup | None, fn: str) -> None:
    """Object collectives run on the cpu backend; torch stages them through the GPU on an
    nccl-only group, which fake_torch does not emulate."""
    pg = resolve(group)
    if "cpu" not in pg.device_backends:
        raise NotImplementedError(f"torch.distributed.{fn} on an nccl-only group is not "
                                  "emulated by fake_torch: use a group with a gloo (cpu) backend")
