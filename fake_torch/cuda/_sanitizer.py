"""The sanitizer: turns the silent CUDA-graph hazards and stream races into errors.

Off by default (a GPU does not check either). Turn it on with the environment variable
TORCH_CUDA_SANITIZER=1 or `torch.cuda._sanitizer.enable_cuda_sanitizer()` (torch's names for
its own CUDA sanitizer). It catches:
  1. reading a tensor a capture produced before the graph was ever replayed;
  2. replaying a graph whose captured input tensor was freed since capture, where its memory
     may now belong to another tensor (a freed output of an earlier graph, whose block stays
     in a live graph pool, is no such input: unless another graph's replay overwrote it
     since its own graph's replay wrote it, a replay order other than the capture order);
  3. reading a graph's output after another graph sharing its pool overwrote that memory;
  4. replaying on a captured input the program forgot to copy new values into: after a
     replay, one it wrote since the capture but not since the previous replay, while it wrote
     another tensor of that shape; at the first replay, one nothing wrote since the capture,
     while new data of that shape (from the host, a random draw) was made since and never read
     (fake_torch/cuda/_sanitizer_replays.py has the exact rules);
  5. reading a tensor taken from a graph's output after one replay once a later replay has
     overwritten it (fake_torch/cuda/_sanitizer_replays.py);
  6. as torch's CSAN does, a kernel on one stream accessing a tensor that a kernel on another
     stream accessed, with no event, stream wait or synchronize ordering the two (at least one
     a write): CUDASanitizerErrors, after printing each race to stderr
     (fake_torch/cuda/_sanitizer_streams.py).
The first five are fake_torch's own ("fake_torch sanitizer: ..." RuntimeErrors). A hazard of
1, 3 and 5 raises where the host reads it: a device-to-host copy (`.item()`, `.tolist()`,
`.cpu()`, `bool(t)`...) or a read without one that `_dispatch.host_sync(reads=...)` names (a
print or repr, a data-dependent size as nonzero's or a mask index's, `torch.equal`); an eager
kernel reading it passes it on to what it writes.
"""

from __future__ import annotations

import enum
import io
import os
import threading
import traceback
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fake_torch._simulated import _dispatch, _machine
from fake_torch._simulated._allocator import PoolId, Storage
from fake_torch._simulated._allocator_blocks import DEFAULT_POOL, Block
from fake_torch.cuda import _sanitizer_replays

if TYPE_CHECKING:
    from fake_torch.cuda.graphs import CapturedInput, CUDAGraph

# the door's input check and read check, while on
_registrations: tuple[_dispatch.Registration, _dispatch.Registration] | None = None


# --- torch's error classes for stream races (torch.cuda._sanitizer's names and texts) ----------

class AccessType(enum.Enum):
    """Whether a kernel read or wrote a tensor."""

    READ = enum.auto()
    WRITE = enum.auto()

    def __str__(self) -> str:
        return "reading from" if self is AccessType.READ else "writing to"


@dataclass
class Access:
    """One kernel's access to one tensor: its kernel's sequence number, its stream's handle,
    the kernel ("aten::<op>"), the argument names it reached the tensor by (fake_torch's door
    knows none), whether the tensor is the kernel's output, and where the host launched it."""

    type: AccessType
    seq_num: int
    stream: int
    operator: str
    aliases: list[str]
    is_output: bool
    stack_trace: traceback.StackSummary


class SynchronizationError(Exception):
    """Base class for errors detected by CUDA Sanitizer."""


class UnsynchronizedAccessError(SynchronizationError):
    """Two accesses to one data pointer that no synchronization orders, one of them a write."""

    def __init__(self, data_ptr: int, allocation_stack_trace: traceback.StackSummary | None,
                 current_access: Access, previous_access: Access) -> None:
        self.data_ptr = data_ptr
        self.allocation_stack_trace = allocation_stack_trace
        self.current_access = current_access
        self.previous_access = previous_access

    def __str__(self) -> str:
        # torch's layout, line for line: the two accesses, each with its kernel and stack
        with io.StringIO() as message:
            message.write("============================\n"
                          "CSAN detected a possible data race on tensor with data pointer "
                          f"{self.data_ptr}\n"
                          f"Access by stream {self.current_access.stream} during kernel:\n")
            _write_access(message, self.current_access)
            message.write(f"Previous access by stream {self.previous_access.stream} during "
                          "kernel:\n")
            _write_access(message, self.previous_access)
            if self.allocation_stack_trace:
                message.write("Tensor was allocated with stack trace:\n"
                              f"{''.join(self.allocation_stack_trace.format())}")
            else:
                message.write("Trace for tensor allocation not found.")
            return message.getvalue()


def _write_access(message: io.StringIO, access: Access) -> None:
    message.write(f"{access.operator}\n{access.type}")
    if access.aliases:
        message.write(" argument(s) " + ", ".join(access.aliases))
        if access.is_output:
            message.write(", and to")
    if access.is_output:
        message.write(" the output")
    message.write(f"\nWith stack trace:\n{''.join(access.stack_trace.format())}\n")


class CUDASanitizerErrors(Exception):
    """Wrapper class for errors reported by CUDA Sanitizer."""

    def __init__(self, errors: list[SynchronizationError]) -> None:
        self.errors = errors

    def __str__(self) -> str:
        return f"detected {len(self.errors)} errors"


# --- on and off ---------------------------------------------------------------------------------

def enable_cuda_sanitizer() -> None:
    """Check every kernel's inputs and every host read for CUDA-graph hazards, and every
    kernel's accesses for stream races (from a clean slate: what ran before is not known)."""
    global _registrations
    if _registrations is None:
        from fake_torch.cuda import _sanitizer_streams  # (it imports the classes above)

        _registrations = (_dispatch.add_input_check(_check_inputs),
                          _dispatch.add_read_check(_check_read))
        _sanitizer_replays.enable()
        _sanitizer_streams.enable()


def disable_cuda_sanitizer() -> None:
    """fake_torch only: turn the checks off again."""
    global _registrations
    if _registrations is not None:
        from fake_torch.cuda import _sanitizer_streams

        for registration in _registrations:
            registration.remove()
        _registrations = None
        _sanitizer_replays.disable()
        _sanitizer_streams.disable()


def is_enabled() -> bool:
    return _registrations is not None


def _check_inputs(op: str, outs: tuple[np.ndarray, ...], inputs: tuple[Any, ...],
                  kind: str) -> None:
    """A host read of hazardous memory (or of a stale reference to a graph's output) raises; an
    eager kernel reading it passes the hazard on to what it writes (so `out.argmax().item()` is
    caught too)."""
    hazard = _hazard_of(inputs)
    eager = _dispatch.current_mode().name == "eager"
    if eager:
        _sanitizer_replays.eager_launched(op, kind, outs, inputs)
    if hazard is None:  # clean inputs: what the kernel writes is defined again
        for out in outs:
            storage = _machine.MACHINE.storage_of(out)
            if storage is not None and storage.hazard is not None:
                storage.hazard = None
        return
    if kind == "memcpy_d2h":
        _raise_host_read(op, hazard)
    if eager:
        for out in outs:
            storage = _machine.MACHINE.storage_of(out)
            if storage is not None:
                _mark(storage, hazard)


def _check_read(what: str, arrays: tuple[np.ndarray, ...]) -> None:
    """The host reads device memory without a launch (a print, a data-dependent size): a
    hazard raises as a device-to-host copy's does."""
    hazard = _hazard_of(arrays)
    if hazard is not None:
        _raise_host_read(what, hazard)


def _hazard_of(arrays: tuple[Any, ...]) -> str | None:
    """The first hazard among the device arrays read: their memory's, or a stale reference's."""
    for x in arrays:
        if isinstance(x, np.ndarray):
            storage = _machine.MACHINE.storage_of(x)
            if storage is not None:
                hazard = storage.hazard or _sanitizer_replays.stale_reference(x)
                if hazard is not None:
                    return hazard
    return None


def _raise_host_read(what: str, hazard: str) -> None:
    raise RuntimeError(f"fake_torch sanitizer: {what} copies to the host {hazard}")


# --- bookkeeping called by CUDAGraph ----------------------------------------------------------

def capture_ended(graph: CUDAGraph, made: list[weakref.ref[Storage]]) -> None:
    """Outputs of a capture hold garbage until the first replay. (While on: watch the graph's
    inputs and outputs across its replays.)"""
    _sanitizer_replays.capture_ended(graph)
    for ref in made:
        storage = ref()
        if storage is not None:
            _mark(storage, f"a tensor produced inside the capture of {graph!r}, which was "
                           "never replayed: capture only records kernels, so its values are "
                           "unspecified. Call g.replay() before reading the graph's outputs.")


def before_replay(graph: CUDAGraph, inputs: list[CapturedInput], check_liveness: bool) -> None:
    """A captured input freed since capture. torch's check_input_liveness counts every dead
    input whose address is not inside a live (active) block of the graph's pool; the sanitizer
    counts the dead inputs whose bytes the allocator may hand to another tensor (see
    `_reusable`): a freed input still in a live graph pool's segment is no hazard."""
    if not (is_enabled() or check_liveness):
        return
    dead = [i for i in inputs if i.ref() is None]
    if dead:
        if check_liveness:
            num_dead = sum(not _in_active_block(i, graph._pool_id) for i in dead)
        else:
            num_dead = 0
        if not num_dead and is_enabled():
            num_dead = sum(_reusable(i) for i in dead)
            if not num_dead:
                _check_rewritten(graph, dead)
        if num_dead:  # torch's leading text (check_input_liveness), then the fix
            raise RuntimeError(
                f"CUDA graph replay detected {num_dead} dead tensor(s).\n"
                f"A tensor captured as an input of {graph!r} was freed after capture, so replay "
                "reads memory that may now belong to another tensor. Keep the static input "
                "tensor alive and copy new values into it with static_input.copy_(new) instead "
                "of rebinding it.")
    _sanitizer_replays.check_inputs_refreshed(graph)


def _in_active_block(captured: CapturedInput, pool_id: PoolId | None) -> bool:
    """torch's exemption (torch.utils._cuda_debug, from a memory snapshot of the graph's pool):
    the dead input's address lies in a block of that pool that is allocated, or waiting for
    other streams before it is free ("active")."""
    device = captured.segment.pool.device if captured.segment is not None else 0
    pools = _machine.MACHINE.devices[device].allocator.pools if device < len(
        _machine.MACHINE.devices) else {}
    pool = pools.get(pool_id) if pool_id is not None else None
    if pool is None:
        return False
    address = captured.span[0]
    for segment in pool.segments:
        block: Block | None = segment.head
        while block is not None:
            if block.address <= address < block.address + block.size:
                return block.allocated or block.pending
            block = block.next
    return False


def _check_rewritten(graph: CUDAGraph, dead: list[CapturedInput]) -> None:
    """Freed inputs kept in a live pool hold what the last replay writing them left: that must
    be the replay of the graph whose capture made them, not another graph of the pool whose
    capture reused the bytes since (a replay order other than the capture order)."""
    from fake_torch.cuda.graphs import graphs_of_pool

    for captured in dead:
        producer = captured.producer() if captured.producer is not None else None
        if producer is None or captured.segment is None:
            continue  # (no graph rewrites those bytes any more: they keep what it left)
        lo, hi = captured.span
        for other in graphs_of_pool(captured.segment.pool.id):
            if (other is producer or other is graph
                    or other._replayed_at <= producer._replayed_at
                    or not any(start < hi and lo < end for start, end in other._written)):
                continue
            raise RuntimeError(
                f"fake_torch sanitizer: the replay of {graph!r} reads a captured input freed "
                f"after capture: its memory stays in the graphs' pool, where the replay of "
                f"{producer!r} writes it, but the replay of {other!r} overwrote it since. "
                "The graphs share a memory pool, so replay them in the order they were "
                "captured, or keep the input alive.")


def _reusable(captured: CapturedInput) -> bool:
    """Whether a freed input's bytes may now belong to another tensor. A block of the default
    pool goes back to the cache, for any allocation. A block of a CUDA graph's private pool
    goes back to that pool, and only a capture into the pool allocates from it (eager code
    never does) while some graph owns the pool: it stays the graphs' memory, which the graph
    that wrote it rewrites at each replay (vLLM's piecewise graphs: one piece's output, freed
    after the capture, is the next piece's input). Reusable again once the pool is released
    (its last graph gone) or the segment given back to the device."""
    segment = captured.segment
    if segment is None:
        return True
    pool = segment.pool
    devices = _machine.MACHINE.devices
    pools = devices[pool.device].allocator.pools if pool.device < len(devices) else {}
    return (pool.id == DEFAULT_POOL or pool.released or pools.get(pool.id) is not pool
            or not any(s is segment for s in pool.segments))


def after_replay(graph: CUDAGraph, made: list[weakref.ref[Storage]]) -> None:
    """The replay made `graph`'s own outputs valid and overwrote whatever else lives in the
    memory its kernels wrote: outputs of other graphs that share the pool (`graph._peers()`)."""
    marks = _marks
    if graph._cleared_at != marks:  # a hazard was set since this graph last cleared its own
        for ref in made:
            storage = ref()
            if storage is not None:
                storage.hazard = None
        graph._cleared_at = marks  # (read before the loop: a mark meanwhile is seen next time)
    if not is_enabled():
        return
    written = graph._written
    for other in graph._peers():
        for ref in other._made:
            storage = ref()
            if storage is None or storage.hazard is not None:
                continue
            lo, hi = storage.span()
            if any(start < hi and lo < end for start, end in written):
                _mark(storage, f"an output of {other!r} that the replay of {graph!r} "
                               "overwrote: the two graphs share a memory pool, so replay them "
                               "in the order they were captured, or .clone() the output "
                               "before replaying the other graph.")


_marks = 0  # hazards set so far, on any storage (a replay clears its outputs' only after one)
_mark_lock = threading.Lock()


def _mark(storage: Storage, hazard: str) -> None:
    """Set a storage's hazard, and count it (see after_replay)."""
    global _marks
    with _mark_lock:
        storage.hazard = hazard
        _marks += 1


if os.environ.get("TORCH_CUDA_SANITIZER", "") not in ("", "0"):
    enable_cuda_sanitizer()
