"""torch.Stream and torch.Event: a device's queue of work and a marker in it, for any device
(the current accelerator, the simulated cuda, unless told). Their CUDA forms, and which stream
is current, live in fake_torch/cuda/streams.py.

Work runs at once on the host, so every stream is idle and every event complete: `query()` is
True and waits order nothing; a host wait (`synchronize`) is what a capture forbids.
"""

from __future__ import annotations

import itertools
from typing import Any, NoReturn

from fake_torch import _allocator, _allocator_capture, _dispatch
from fake_torch._device import DeviceLike, canonical

_stream_ids = itertools.count(1)
_event_ids = itertools.count(1)
_DEVICE_TYPES = {"cpu": 0, "cuda": 1}  # c10::DeviceType values, as Stream.device_type reads
capturing: set[int] = set()  # cuda stream ids a capture is underway on (cuda/graphs.py)


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
        """Later work on this stream waits for `event` (already complete here; during a
        capture the wait is an edge of the graph)."""
        if self.device.type == "cuda":
            _allocator_capture.wait(self.handle, event)

    def wait_stream(self, stream: Stream) -> None:
        """Later work on this stream waits for the work queued so far on `stream`."""
        if self.device.type == "cuda" and stream.device.type == "cuda":
            _allocator_capture.wait_stream(self.handle, stream.handle)

    def record_event(self, event: Event | None = None) -> Event:
        event = self._new_event() if event is None else event
        event.record(self)
        return event

    def _new_event(self) -> Event:
        return Event(self.device)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        _dispatch.host_sync("stream synchronize")

    def is_capturing(self) -> bool:
        """True while a CUDA graph capture is underway on this stream."""
        return self.device.type == "cuda" and self.stream_id in capturing

    def __enter__(self) -> Stream:
        if self.device.type == "cuda":
            from fake_torch.cuda.streams import StreamContext

            context = StreamContext(self)
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
    """torch.Event: a marker in a stream's work. Timing is not simulated: `elapsed_time`
    raises."""

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
            _allocator_capture.record(
                self, _allocator._current_stream() if stream is None else stream.handle)

    def wait(self, stream: Stream | None = None) -> None:
        if stream is not None:
            stream.wait_event(self)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        _dispatch.host_sync("event synchronize")

    def elapsed_time(self, end_event: Event) -> NoReturn:
        raise NotImplementedError(f"{self._api}.elapsed_time: fake_torch does not simulate "
                                  "device time; count launches with LaunchCounter instead")

    def __repr__(self) -> str:
        index = -1 if self.device.index is None else self.device.index
        return (f"torch.Event device_type={self.device.type}, device_index={index}, "
                f"event_flag=0, event_id={self.event_id}")


__all__ = ["Event", "Stream"]
