"""One collective among several ranks: the meeting through the group's Exchange, and on a gpu
the one NCCL kernel each rank launches for it.

A collective is two functions of the launch's arrays (outputs first, then inputs):
`payload(arrays)` is what this rank posts, `finish(posts, arrays)` writes this rank's outputs
from every rank's post. Three phases:

  - gloo (cpu tensors): the host meets the others now and writes the outputs; no launch.
  - eager (cuda): the queued work this rank's inputs wait for runs first (the timeline's flush),
    then the ranks meet, each posting when its stream reaches the collective; the kernel
    starts there on every rank and ends, on all of them, when the last rank has arrived plus
    the interconnect's time (_nccl_cost): a straggler makes everyone wait, as NCCL's kernels
    spin until their peers arrive. The kernel writes the outputs when the device runs it.
  - capture: nothing meets; the kernel is recorded as a graph node whose every replay meets
    the others (the graph's collective, in the order the graph runs it) and is timed at the
    interconnect's cost only (a replayed graph's node durations are fixed at capture).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from fake_torch._kernels import _common
from fake_torch._simulated import _cost, _machine
from fake_torch._tensor import Tensor
from fake_torch.distributed._exchange import Post
from fake_torch.distributed._groups import ProcessGroup

__all__ = ["host_meets", "meet"]

Payload = Callable[[list[np.ndarray]], Any]
Finish = Callable[[list[Post], list[np.ndarray]], None]


def meet(pg: ProcessGroup, what: str, outs: list[Tensor], ins: list[Tensor], dev: Tensor,
         payload: Payload, finish: Finish, nccl: tuple[str, float] | None) -> None:
    """Run one collective on this rank. `dev`: the tensor whose device says where it runs;
    `nccl`: (kernel name, interconnect ns) on a gpu."""
    exchange = pg.exchange
    if dev.device.type != "cuda" or nccl is None:  # gloo: the host does it now
        host_meets()
        arrays = [t._a for t in (*outs, *ins)]
        finish(exchange.collective(what, payload(arrays)), arrays)
        return
    name, cost_ns = nccl
    device = _machine.MACHINE.device(dev.device.index)  # c10d: the tensor's device's stream
    stream = device.current_stream()
    if device.captures.is_capturing(stream):  # capture: a node that meets at each replay
        def replay(posts_of: Any = exchange.collective) -> Callable[..., None]:
            def kernel(*arrays: np.ndarray, duration_ns: float) -> None:
                finish(posts_of(what, payload(list(arrays))), list(arrays))
            return kernel

        _common.launch(name, replay(), outs, ins, {"duration_ns": cost_ns}, kind="nccl",
                       dev=dev.device)
        return
    # eager
    timeline = _machine.MACHINE.timeline
    ready = timeline.ready.get(stream)
    host = timeline.host_ns + _cost.host_ns("nccl")
    gap = _cost.STREAM_QUEUE_GAP_NS
    start = host if ready is None or ready + gap <= host else ready + gap
    timeline.flush()  # the inputs as the stream will have them when it gets here
    arrays = [t._a for t in (*outs, *ins)]
    posts = exchange.collective(what, payload(arrays), start)
    waited = max(p.start_ns for p in posts) - start
    _common.launch(name, _write, outs, ins,
                   {"posts": posts, "finish": finish, "duration_ns": waited + cost_ns},
                   kind="nccl", dev=dev.device)


def host_meets() -> None:
    """Before the host itself meets the other ranks (gloo, objects, a cpu barrier): the device
    work queued so far runs first, so that a replayed graph's collectives take their numbers
    before this one on every rank, whenever each rank's device got to them."""
    _machine.MACHINE.timeline.flush()


def _write(*arrays: np.ndarray, posts: list[Post], finish: Finish, duration_ns: float) -> None:
    """An eager collective's kernel: the ranks have met; write this rank's outputs."""
    finish(posts, list(arrays))
