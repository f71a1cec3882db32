"""torch.cuda streams and events, simulated.

Work runs at once on the host, so every stream is always idle and every event has completed:
`query()` is True. What matters is what CUDA allows: a capture must run on a non-default
stream, and waiting on the device from the host (`synchronize`) is illegal while capturing.
"""

from __future__ import annotations

import itertools
import threading
from typing import Any, NoReturn

from fake_torch import _dispatch
from fake_torch._device import DeviceLike, canonical

_stream_ids = itertools.count(1)


class Stream:
    """torch.cuda.Stream: an ordered queue of work on the device."""

    def __init__(self, device: DeviceLike | None = None, priority: int = 0, **kwargs: Any) -> None:
        self.device = canonical("cuda" if device is None else device)
        self.priority = priority
        self.stream_id = kwargs.get("stream_id", next(_stream_ids))

    @property
    def cuda_stream(self) -> int:
        return 0 if self.stream_id == 0 else 0x7F0000 + self.stream_id  # a stable fake handle

    def wait_event(self, event: Event) -> None:
        """Later work on this stream waits for `event` (already complete here)."""

    def wait_stream(self, stream: Stream) -> None:
        """Later work on this stream waits for the work queued so far on `stream`."""

    def record_event(self, event: Event | None = None) -> Event:
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        _dispatch.host_sync("stream synchronize")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self) -> int:
        return hash(("cuda_stream", self.stream_id))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event:
    """torch.cuda.Event. Timing is not simulated yet: `elapsed_time` raises."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False) -> None:
        self.enable_timing = enable_timing
        self.blocking = blocking
        self.interprocess = interprocess
        self._recorded = False

    def record(self, stream: Stream | None = None) -> None:
        self._recorded = True

    def wait(self, stream: Stream | None = None) -> None:
        (current_stream() if stream is None else stream).wait_event(self)

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        _dispatch.host_sync("event synchronize")

    def elapsed_time(self, end_event: Event) -> NoReturn:
        raise NotImplementedError("torch.cuda.Event.elapsed_time: fake_torch does not simulate "
                                  "device time; count launches with LaunchCounter instead")


_DEFAULT = Stream(stream_id=0)


class _Current(threading.local):
    """The current stream is per thread, as in torch (a new thread starts on the default)."""

    stream: Stream = _DEFAULT


_current = _Current()


def current_stream(device: DeviceLike | None = None) -> Stream:
    return _current.stream


def default_stream(device: DeviceLike | None = None) -> Stream:
    return _DEFAULT


def set_stream(stream: Stream) -> None:
    if stream is not None:
        _current.stream = stream


class StreamContext:
    """torch.cuda.StreamContext: makes `stream` current inside the block (None: no change)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self._prev: Stream | None = None

    def __enter__(self) -> None:
        if self.stream is None:
            return
        self._prev = _current.stream
        set_stream(self.stream)

    def __exit__(self, *args: object) -> None:
        if self.stream is not None and self._prev is not None:
            set_stream(self._prev)


def stream(stream: Stream | None) -> StreamContext:
    """Context manager: run the block's work on `stream`."""
    return StreamContext(stream)


__all__ = ["Event", "Stream", "StreamContext", "current_stream", "default_stream", "set_stream",
           "stream"]
