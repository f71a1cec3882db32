"""The CUDA sanitizer's stream checker: torch's CSAN over the simulated device's launches.

Per data pointer it keeps the last write and the reads since; per stream, a vector clock: the
sequence number, on each stream, of the last kernel this stream is known to run after. A
kernel gets the next sequence number; its access conflicts with an earlier one when either is
a write, they ran on different streams, and the kernel's stream has not caught up with the
earlier kernel's number. What catches a stream up, as in torch: `event.record()` copies the
stream's clock into the event and `stream.wait_event(event)` (or `event.wait`) merges it in;
`stream.wait_stream(other)` merges `other`'s clock; a host wait makes every stream (and the host)
catch up with what was waited for: `torch.cuda.synchronize()` (all streams), a stream's or an
event's `synchronize()`, and a blocking copy through pageable host memory (`.item()`,
`.tolist()`, `.cpu()`, `torch.tensor(..., device="cuda")`: c10 syncs the stream there).

A race raises CUDASanitizerErrors before the kernel runs, after printing each race to stderr.

Like CSAN it forgets a tensor's accesses when the tensor's memory is freed (its Storage dies).
Unlike CSAN it does not see work recorded by a CUDA graph capture, nor what a replay runs (one
launch whose reads and writes the door does not list): CSAN would charge captured kernels to
the capture stream, where they never run.
"""

from __future__ import annotations

import functools
import sys
import threading
import traceback
import weakref
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fake_torch import _torch_stream
from fake_torch._simulated import _allocator, _dispatch, _pinned
from fake_torch._simulated._allocator import DEVICE, Storage
from fake_torch._torch_stream import Event
from fake_torch.cuda._sanitizer import (
    Access,
    AccessType,
    CUDASanitizerErrors,
    SynchronizationError,
    UnsynchronizedAccessError,
)

Clock = dict[int, int]  # stream handle -> the last sequence number on it this clock covers


@dataclass
class _TensorAccesses:
    """What CSAN keeps per data pointer; `storage` tells a reused address from the old one."""

    storage: weakref.ref[Storage]
    write: Access | None = None
    reads: list[Access] = field(default_factory=list)  # since the last write


def _catch_up(clock: Clock, other: Clock) -> None:
    for stream, seq in other.items():
        if seq > clock.get(stream, -1):
            clock[stream] = seq


class StreamChecker:
    """The vector clocks and the accesses; the door's input check and `_streams`' observer."""

    def __init__(self) -> None:
        self.seq_num = 0
        self.host: Clock = {0: 0}  # what the host has waited for
        self.streams: dict[int, Clock] = {0: {0: 0}}
        self.events: weakref.WeakKeyDictionary[Event, Clock] = weakref.WeakKeyDictionary()
        self.tensors: dict[int, _TensorAccesses] = {}
        self.lock = threading.Lock()

    def _clock(self, stream: int) -> Clock:
        """A stream seen for the first time starts from what the host has waited for."""
        clock = self.streams.get(stream)
        if clock is None:
            self.host.setdefault(stream, 0)
            clock = self.streams[stream] = dict(self.host)
        return clock

    # --- the observer: event records, stream waits, host waits (eager work only) ----------------

    def event_record(self, event: Event, stream: int) -> None:
        if _eager():
            with self.lock:
                self.events[event] = dict(self._clock(stream))

    def stream_wait_event(self, stream: int, event: Event) -> None:
        if _eager():
            with self.lock:
                _catch_up(self._clock(stream), self.events.get(event, {}))

    def stream_wait_stream(self, stream: int, other: int) -> None:
        if _eager():
            with self.lock:
                _catch_up(self._clock(stream), dict(self._clock(other)))

    def synchronize(self, stream: int | None = None, event: Event | None = None) -> None:
        with self.lock:
            self._synchronize(stream, event)

    def _synchronize(self, stream: int | None, event: Event | None) -> None:
        if event is not None:
            waited = self.events.get(event, {})
        elif stream is not None:
            waited = dict(self._clock(stream))
        else:  # the device: every stream's own last kernel
            waited = {s: clock[s] for s, clock in self.streams.items()}
        _catch_up(self.host, waited)
        for clock in self.streams.values():
            _catch_up(clock, waited)

    # --- the input check: each eager launch's accesses ----------------------------------------

    def check_launch(self, op: str, outs: tuple[np.ndarray, ...], inputs: tuple[Any, ...],
                     kind: str) -> None:
        if kind == "graph" or not _eager():
            return
        written = _device_arrays(outs)
        read = _device_arrays(inputs)
        if not (written or read):
            return
        stream = _allocator._current_stream()
        with self.lock:
            if _blocking_copy(kind, outs, inputs):  # c10's memcpy_and_sync, before the access
                self._synchronize(stream, None)
            self.seq_num += 1
            self._clock(stream)[stream] = self.seq_num
            errors = self._accesses(op, stream, written, read)
        if errors:
            for error in errors:
                print(error, file=sys.stderr)
            raise CUDASanitizerErrors(errors)

    def _accesses(self, op: str, stream: int, written: dict[int, Storage],
                  read: dict[int, Storage]) -> list[SynchronizationError]:
        clock = self.streams[stream]
        errors: list[SynchronizationError] = []
        stack = _launch_stack()
        operator = f"aten::{op}"

        def check(ptr: int, now: Access, before: Access | None) -> None:
            if before is not None and before.seq_num > clock.get(before.stream, -1):
                errors.append(UnsynchronizedAccessError(ptr, None, now, before))

        for ptr, storage in read.items():
            if ptr in written:
                continue  # read and written: a write
            info = self._tensor(ptr, storage)
            now = Access(AccessType.READ, self.seq_num, stream, operator, [], False, stack)
            check(ptr, now, info.write)
            info.reads.append(now)
        for ptr, storage in written.items():
            info = self._tensor(ptr, storage)
            now = Access(AccessType.WRITE, self.seq_num, stream, operator, [], True, stack)
            if info.reads:  # the reads since the last write, else that write
                for before in info.reads:
                    check(ptr, now, before)
            else:
                check(ptr, now, info.write)
            info.write, info.reads = now, []
        return errors

    def _tensor(self, ptr: int, storage: Storage) -> _TensorAccesses:
        info = self.tensors.get(ptr)
        if info is None or info.storage() is not storage:  # new, or the memory was freed since
            ref = weakref.ref(storage, functools.partial(self._freed, ptr))
            info = self.tensors[ptr] = _TensorAccesses(ref)
        return info

    def _freed(self, ptr: int, ref: weakref.ref[Storage]) -> None:
        """The memory at `ptr` was freed: forget its accesses, as CSAN does at a free (no lock:
        a free may come from the garbage collector while this thread holds it)."""
        info = self.tensors.get(ptr)
        if info is not None and info.storage is ref:
            self.tensors.pop(ptr, None)


def _eager() -> bool:
    """Whether launches run now (not recorded by a capture, nor traced by torch.compile)."""
    return _dispatch.current_mode().name == "eager"


def _device_arrays(arrays: tuple[Any, ...]) -> dict[int, Storage]:
    """data pointer -> Storage of each device buffer among `arrays` (one list level deep);
    host buffers and empty tensors have none."""
    found: dict[int, Storage] = {}
    for a in arrays:
        for x in a if isinstance(a, (list, tuple)) else (a,):
            if isinstance(x, np.ndarray) and x.size:
                storage = DEVICE.storage_of(x)
                if storage is not None:
                    found[int(x.__array_interface__["data"][0])] = storage
    return found


def _blocking_copy(kind: str, outs: tuple[np.ndarray, ...], inputs: tuple[Any, ...]) -> bool:
    """A host<->device copy through pageable memory: the host waits for the stream (fake_torch
    copies through pinned memory only when asked for non_blocking)."""
    if kind == "memcpy_d2h":
        return not (outs and _pinned.is_pinned_array(outs[0]))
    if kind == "memcpy_h2d":
        return not (inputs and _pinned.is_pinned_array(inputs[0]))
    return False


def _launch_stack() -> traceback.StackSummary:
    """Where the host launched the kernel, outermost frame first (this module's left out)."""
    frame = sys._getframe(3)  # _accesses <- check_launch <- the door
    stack = traceback.StackSummary.extract(traceback.walk_stack(frame), lookup_lines=False)
    stack.reverse()
    return stack


_checker: StreamChecker | None = None
_registration: _dispatch.Registration | None = None


def enable() -> None:
    """Start checking, with nothing known of earlier work (as CSAN backfills what it missed)."""
    global _checker, _registration
    if _registration is None:
        _checker = StreamChecker()
        _registration = _dispatch.add_input_check(_checker.check_launch)
        _torch_stream.sync_observer = _checker


def disable() -> None:
    global _checker, _registration
    if _registration is not None:
        _registration.remove()
        _registration = None
        _torch_stream.sync_observer = None
        _checker = None
