"""Point-to-point among several ranks: send/recv/isend/irecv, P2POp and batch_isend_irecv.

A send leaves its tensor's values in the group's store for the peer (it returns at once, as a
small NCCL send does); a receive waits for the next message from its peer, within the group's
timeout. On a gpu each side launches one ncclDevKernel_SendRecv on its current stream (a batch
launches one for all its ops, as NCCL groups them), timed at the interconnect's one-step cost
(_nccl_cost). Receiving from any source (src=None) is not emulated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fake_torch._kernels import _common
from fake_torch._simulated import _machine
from fake_torch._tensor import Tensor
from fake_torch.distributed._groups import ProcessGroup, Work
from fake_torch.distributed._nccl_cost import collective_ns

__all__ = ["P2POp", "batch", "receive", "send"]


def _what(t: Tensor) -> str:
    return f"p2p({t.dtype}, {t.numel()} elements)"


def _on_gpu(tensors: list[Tensor], fn: str) -> bool:
    gpu = [t for t in tensors if t.device.type == "cuda"]
    device = _machine.MACHINE.device(gpu[0].device.index) if gpu else None
    if device is not None and device.captures.is_capturing(device.current_stream()):
        raise NotImplementedError(f"torch.distributed.{fn} inside CUDA graph capture is not "
                                  "emulated by fake_torch: capture collectives only")
    if gpu:
        _machine.MACHINE.timeline.flush()  # the values the stream will send when it gets there
    return bool(gpu)


def _launch(pg: ProcessGroup, tensors: list[Tensor], writes: list[tuple[Tensor, np.ndarray]]
            ) -> None:
    """One ncclDevKernel_SendRecv for `tensors`; it writes the received `writes`."""
    def kernel(*arrays: np.ndarray, duration_ns: float) -> None:
        for a, (_, values) in zip(arrays[:len(writes)], writes, strict=True):
            a[...] = values.reshape(a.shape)

    nbytes = max(t.nbytes for t in tensors)
    _common.launch("ncclDevKernel_SendRecv", kernel, [t for t, _ in writes],
                   [t for t in tensors if all(t is not w for w, _ in writes)],
                   {"duration_ns": collective_ns("SendRecv", pg.size(), nbytes)},
                   kind="nccl", dev=tensors[0].device)


def send(pg: ProcessGroup, tensor: Tensor, peer: int, launch: bool = True) -> None:
    """Post `tensor`'s values for group rank `peer`."""
    gpu = _on_gpu([tensor], "send") if launch else False
    pg.exchange.send(peer, _what(tensor), np.ascontiguousarray(tensor._a).reshape(-1).copy())
    if gpu:
        _launch(pg, [tensor], [])


def receive(pg: ProcessGroup, tensor: Tensor, peer: int) -> Work:
    """A Work whose wait() receives the next message from `peer` into `tensor`."""
    key = pg.exchange.recv_key(peer)

    def wait() -> None:
        post = pg.exchange.recv(key, peer, _what(tensor))
        if _on_gpu([tensor], "recv"):
            _launch(pg, [tensor], [(tensor, post.data)])
        else:
            tensor._a[...] = post.data.reshape(tensor._a.shape)

    return Work(wait, lambda: pg.exchange.ready(key))


@dataclass
class P2POp:
    """One point-to-point op for batch_isend_irecv: `op` is isend or irecv."""

    op: Any
    tensor: Tensor
    peer: int | None = None
    group: ProcessGroup | None = None
    tag: int = 0
    group_peer: int | None = None


def batch(pg: ProcessGroup, ops: list[tuple[bool, Tensor, int]]) -> list[Work]:
    """(is_send, tensor, group peer) ops as one group: sends first, then the receives; on a
    gpu one SendRecv kernel for them all."""
    tensors = [t for _, t, _ in ops]
    gpu = _on_gpu(tensors, "batch_isend_irecv")
    for is_send, t, peer in ops:
        if is_send:
            pg.exchange.send(peer, _what(t), np.ascontiguousarray(t._a).reshape(-1).copy())
    writes = []
    for is_send, t, peer in ops:
        if not is_send:
            post = pg.exchange.recv(pg.exchange.recv_key(peer), peer, _what(t))
            writes.append((t, post.data))
    if gpu:
        _launch(pg, tensors, writes)
    else:
        for t, values in writes:
            t._a[...] = values.reshape(t._a.shape)
    return [Work() for _ in ops]
