"""torch.Stream and torch.Event: a device's queue of work and a marker in it, for any device
(the current accelerator, the simulated cuda, unless told). Their CUDA forms, and which stream
is current, live in fake_torch/cuda/streams.py.

On the cuda device they are the simulated device's (fake_torch/_simulated/_timeline.py): a stream's
work runs in order, a wait makes a stream's later work start after an event or another stream's work
so far, `query()` says whether the device has got there by the host's clock, and a host wait
(`synchronize`) moves the host clock there. A capture forbids both (cudaStreamQuery and
cudaEventQuery fail with cudaErrorStreamCaptureUnsupported, and invalidate the capture).
Events record device time: `elapsed_time` is the simulated milliseconds between two of them.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from fake_torch._simulated import _allocator, _allocator_capture, _dispatch
from fake_torch._simulated._timeline import TIMELINE
from fake_torch._torch_device import DeviceLike, canonical

_stream_ids = itertools.count(1)
_event_ids = itertools.count(1)
_DEVICE_TYPES = {"cpu": 0, "cuda": 1}  # c10::DeviceType values, as Stream.device_type reads
capturing: set[int] = set()  # cuda stream ids a capture is underway on (cuda/graphs.py)


class SyncObserver(Protocol):
    """Who hears of each cuda event record, stream wait and host wait: the CUDA sanitizer's
    stream checker while it is on (fake_torch/cuda/_sanitizer_streams.py). Streams are handles."""

    def event_record(self, event: Event, stream: int) -> None: ...

    def stream_wait_event(self, stream: int, event: Event) -> None: ...

    def stream_wait_stream(self, stream: int, other: int) -> None: ...

    def synchronize(self, stream: int | None = None, event: Event | None = None) -> None:
        """The host waited for `stream`, or `event`, or (neither given) the whole device."""


sync_observer: SyncObserver | None = None  # None (the default): nobody listens, nothing is paid
# torch.cuda.StreamContext, what `with stream:` enters on cuda: fake_torch/cuda/streams.py
# registers it when imported (cuda sits above the tensor core: fake_torch/_tools/_layers.py)
cuda_stream_context: Callable[[Stream], Any] | None = None


class Stream:
    """torch.Stream: an ordered queue of work on a device (the current accelerator, cuda,
    unless told). A context manager: inside `with stream:` it is the current stream."""

    def __init__(self, device: DeviceLike | None = None, *, priority: int = 0,
                 **kwargs: Any) -> None:
        self.device = canonical("cuda" if device is None else device)
        self.priority = priority
        default_id = 0 if self.device.type == "cpu" else next(_stream_ids)
        self.stream_id: int = kwargs.get("stream_id", default_id)
        self._context: Any = None  # the cuda StreamContext of a `with`
        # the stream's handle (a cudaStream_t on a GPU): 0 for the default stream, else a
        # stable fake one; the caching allocator reads it at every allocation
        self.handle = 0 if self.stream_id == 0 else 0x7F0000 + self.stream_id

    @property
    def device_index(self) -> int:
        return -1 if self.device.index is None else self.device.index

    @property
    def device_type(self) -> int:
        return _DEVICE_TYPES[self.device.type]

    def native_handle(self) -> int:
        return self.handle

    def wait_event(self, event: Event) -> None:
        """Later work on this stream waits for `event` (during a capture the wait is an edge
        of the graph)."""
        if self.device.type == "cuda":
            _allocator_capture.wait(self.handle, event)
            TIMELINE.wait_event(self.handle, event)
            if sync_observer is not None:
                sync_observer.stream_wait_event(self.handle, event)

    def wait_stream(self, stream: Stream) -> None:
        """Later work on this stream waits for the work queued so far on `stream`."""
        if self.device.type == "cuda" and stream.device.type == "cuda":
            _allocator_capture.wait_stream(self.handle, stream.handle)
            TIMELINE.wait_stream(self.handle, stream.handle)
            if sync_observer is not None:
                sync_observer.stream_wait_stream(self.handle, stream.handle)

    def record_event(self, event: Event | None = None) -> Event:
        event = self._new_event() if event is None else event
        event.record(self)
        return event

    def _new_event(self) -> Event:
        return Event(self.device)

    def query(self) -> bool:
        """Whether all work queued on this stream has finished."""
        if self.device.type != "cuda":
            return True
        _refuse_in_capture("stream query")
        return TIMELINE.stream_idle(self.handle)

    def synchronize(self) -> None:
        _dispatch.host_sync("stream synchronize", stream=self.handle)
        if sync_observer is not None and self.device.type == "cuda":
            sync_observer.synchronize(stream=self.handle)

    def is_capturing(self) -> bool:
        """True while a CUDA graph capture is underway on this stream."""
        return self.device.type == "cuda" and self.stream_id in capturing

    def __enter__(self) -> Stream:
        if self.device.type == "cuda":
            assert cuda_stream_context is not None, "fake_torch/cuda/streams.py registers it"
            context = cuda_stream_context(self)
            context.__enter__()
            self._context = context
        return self

    def __exit__(self, *args: object) -> None:
        context, self._context = self._context, None
        if context is not None:
            context.__exit__(*args)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Stream) and other.stream_id == self.stream_id
                and other.device.type == self.device.type)

    def __hash__(self) -> int:
        return hash((self.device.type, self.stream_id))

    def __repr__(self) -> str:
        return (f"torch.Stream device_type={self.device.type}, device_index={self.device_index}, "
                f"stream_id={self.stream_id}")


class Event:
    """torch.Event: a marker in a stream's work, with its simulated device time."""

    _api = "torch.Event"

    def __init__(self, device: DeviceLike | None = None, *, enable_timing: bool = False,
                 blocking: bool = False, interprocess: bool = False) -> None:
        self.device = canonical("cuda" if device is None else device)
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self.event_id = 0  # an event is created on the device when first recorded
        self._recorded = False

    def record(self, stream: Stream | None = None) -> None:
        if not self._recorded:
            self.event_id = next(_event_ids)
        self._recorded = True
        if self.device.type == "cuda":  # (a capture notes the stream's work so far)
            handle = _allocator._current_stream() if stream is None else stream.handle
            _allocator_capture.record(self, handle)
            _dispatch.record_event(self, handle)
            if sync_observer is not None:
                sync_observer.event_record(self, handle)

    def wait(self, stream: Stream | None = None) -> None:
        if stream is not None:
            stream.wait_event(self)

    def query(self) -> bool:
        """Whether the device has reached the event (an unrecorded one: True, asking CUDA
        nothing, as c10's CUDAEvent)."""
        if not self._recorded:
            return True
        if self.device.type == "cuda":
            _refuse_in_capture("event query")
        return TIMELINE.event_done(self)

    def synchronize(self) -> None:
        """The host waits until the device reaches the event (an unrecorded one: at once)."""
        if not self._recorded:
            return
        _dispatch.host_sync("event synchronize", event=self)
        if sync_observer is not None and self.device.type == "cuda":
            sync_observer.synchronize(event=self)

    def elapsed_time(self, end_event: Event) -> float:
        """Milliseconds of simulated device time from this event to `end_event`."""
        if not (self.enable_timing and end_event.enable_timing):
            raise ValueError("Both events must be created with argument 'enable_timing=True'.")
        start, end = TIMELINE.event_time(self), TIMELINE.event_time(end_event)
        if not (self._recorded and end_event._recorded) or start is None or end is None:
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        if not (self.query() and end_event.query()):
            raise RuntimeError("Both events must be completed before calculating elapsed time.")
        return float(np.float32((end - start) / 1e6))  # cudaEventElapsedTime: a float, ms

    def __repr__(self) -> str:
        index = -1 if self.device.index is None else self.device.index
        return (f"torch.Event device_type={self.device.type}, device_index={index}, "
                f"event_flag=0, event_id={self.event_id}")


def _refuse_in_capture(what: str) -> None:
    """A query while this thread captures: CUDA refuses it ("operation not permitted when stream
    is capturing", as for a host wait) and invalidates the capture. c10's caching allocator
    defers its own event queries past a capture for this reason ("process_events involves
    cudaEventQueries, illegal during CUDA graph capture", CUDACachingAllocator.cpp)."""
    mode = _dispatch.current_mode()
    if mode.name == "capture":
        mode.host_sync(what)


__all__ = ["Event", "Stream"]
