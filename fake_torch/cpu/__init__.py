"""torch.cpu: torch.cuda's queries for the CPU device, so device-agnostic code
(`torch.get_device_module("cpu").synchronize()`) runs. fake_torch runs cpu kernels when they are
called, as torch does: streams and events here have nothing to order or wait for."""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any

from fake_torch._torch_device import DeviceLike

__all__ = ["Event", "Stream", "StreamContext", "current_device", "current_stream",
           "device_count", "get_capabilities", "is_available", "is_initialized", "set_device",
           "stream", "synchronize"]


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def synchronize(device: DeviceLike | None = None) -> None:
    """Nothing to wait for: cpu work is done when its call returns."""


def device_count() -> int:
    return 1


def current_device() -> str:
    return "cpu"


def set_device(device: DeviceLike | None) -> None:
    """There is one cpu device: nothing to select."""


def get_capabilities() -> Mapping[str, Any]:
    """The host CPU's instruction sets, which torch reads through cpuinfo (not emulated)."""
    raise NotImplementedError("torch.cpu.get_capabilities: the host's instruction sets (read "
                              "by torch through cpuinfo) are not reported by fake_torch")


class Stream:
    """A cpu stream: work on it is already done."""

    def __init__(self, priority: int = -1) -> None:
        pass

    def wait_stream(self, stream: Stream) -> None:
        pass

    def record_event(self) -> None:
        pass

    def wait_event(self, event: Event) -> None:
        pass


class Event:
    """A cpu event: always reached."""

    def query(self) -> bool:
        return True

    def record(self, stream: Stream | None = None) -> None:
        pass

    def synchronize(self) -> None:
        pass

    def wait(self, stream: Stream | None = None) -> None:
        pass


_default_stream = Stream()
_current_stream = _default_stream


def current_stream(device: DeviceLike | None = None) -> Stream:
    return _current_stream


class StreamContext(AbstractContextManager["StreamContext"]):
    """Makes `stream` current inside the block (None: no change)."""

    def __init__(self, stream: Stream | None) -> None:
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self) -> StreamContext:
        global _current_stream
        if self.stream is not None:
            self.prev_stream, _current_stream = _current_stream, self.stream
        return self

    def __exit__(self, *exc: object) -> None:
        global _current_stream
        if self.stream is not None:
            _current_stream = self.prev_stream


def stream(stream: Stream) -> AbstractContextManager[StreamContext]:
    return StreamContext(stream)
