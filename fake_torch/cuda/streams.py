"""torch.cuda streams and events, simulated, and which stream is current; torch.cuda._sleep;
Tensor.record_stream.

torch.cuda.Stream and torch.cuda.Event are the CUDA forms of torch.Stream and torch.Event
(fake_torch/_torch_stream.py), over the simulated device's streams and clocks
(fake_torch/_simulated/_timeline.py). What CUDA allows matters too: a capture must run on a
non-default stream, and waiting on the device from the host (`synchronize`) is illegal while
capturing. Which stream is current matters to the caching allocator: a free block serves only
allocations on the stream it was allocated on.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from fake_torch import _torch_stream
from fake_torch._opdef import COMPOSITE, EXTERN, aten_op, method
from fake_torch._simulated import _allocator, _dispatch
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike, canonical


class Stream(_torch_stream.Stream):
    """torch.cuda.Stream: an ordered queue of work on the (one simulated) CUDA device."""

    def __init__(self, device: DeviceLike | None = None, priority: int = 0,
                 **kwargs: Any) -> None:
        dev = canonical("cuda" if device is None else device)
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        super().__init__("cuda:0", priority=priority, **kwargs)

    @property
    def cuda_stream(self) -> int:
        return self.handle

    def _new_event(self) -> Event:
        return Event()

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Stream) and other.stream_id == self.stream_id

    def __hash__(self) -> int:
        return hash(("cuda_stream", self.stream_id))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device={self.device} cuda_stream={self.cuda_stream:#x}>"


class Event(_torch_stream.Event):
    """torch.cuda.Event. Recorded inside a capture it is a node of the graph: each replay
    sets its time (`external=True` marks it for other graphs or streams to wait on; the
    simulation treats both alike)."""

    _api = "torch.cuda.Event"

    def __init__(self, enable_timing: bool = False, blocking: bool = False,
                 interprocess: bool = False, external: bool = False) -> None:
        super().__init__("cuda", enable_timing=enable_timing, blocking=blocking,
                         interprocess=interprocess)
        self.external = external

    def wait(self, stream: _torch_stream.Stream | None = None) -> None:
        (current_stream() if stream is None else stream).wait_event(self)

    def __repr__(self) -> str:
        if not self._recorded:
            return "<torch.cuda.Event uninitialized>"
        return f"<torch.cuda.Event {0x7E0000 + self.event_id:#x}>"


_DEFAULT = Stream(stream_id=0)


class _Current(threading.local):
    """The current stream is per thread, as in torch (a new thread starts on the default)."""

    stream: Stream = _DEFAULT


_current = _Current()
_allocator.set_stream_source(lambda: _current.stream.handle)


def current_stream(device: DeviceLike | None = None) -> Stream:
    return _current.stream


def default_stream(device: DeviceLike | None = None) -> Stream:
    return _DEFAULT


def set_stream(stream: _torch_stream.Stream) -> None:
    """Make `stream` current on this thread (None: no change). A torch.Stream of the cuda
    device stands for the cuda stream of its id."""
    if stream is None:
        return
    if not isinstance(stream, Stream):
        if stream.device.type != "cuda":
            raise ValueError(f"Expected a cuda stream, but got a stream of {stream.device}")
        stream = Stream(stream_id=stream.stream_id, priority=stream.priority)
    _current.stream = stream


class StreamContext:
    """torch.cuda.StreamContext: makes `stream` current inside the block (None: no change)."""

    def __init__(self, stream: _torch_stream.Stream | None) -> None:
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


_torch_stream.cuda_stream_context = StreamContext  # `with torch.Stream("cuda"):`


def stream(stream: _torch_stream.Stream | None) -> StreamContext:
    """Context manager: run the block's work on `stream`."""
    return StreamContext(stream)


# --- torch.cuda._sleep and Tensor.record_stream --------------------------------------------------

aten_op("_sleep", EXTERN)  # the spin kernel of torch.cuda._sleep: no aten op, one launch


def _spin_kernel(*, cycles: int) -> None:
    """On a GPU: busy-wait `cycles` clock cycles. Nothing to wait for here."""


def _sleep(cycles: int) -> None:
    """torch.cuda._sleep: one kernel that keeps the current stream busy for `cycles` clock
    cycles (tests use it to make a stream lag). One launch; legal while capturing."""
    if isinstance(cycles, bool) or not isinstance(cycles, (int, np.integer)):
        raise TypeError("_cuda_sleep(): incompatible function arguments. The following argument "
                        "types are supported:\n    1. (arg0: typing.SupportsInt) -> None\n\n"
                        f"Invoked with: {cycles!r}")
    _dispatch.launch("_sleep", _spin_kernel, (), (), {"cycles": int(cycles)}, on_cuda=True)


@method(COMPOSITE, aten=())
def record_stream(self: Tensor, s: _torch_stream.Stream) -> None:
    """Mark the tensor's memory as used by stream `s`: when the tensor dies, its block is not
    reused until the work queued on `s` by then is done (the caching allocator's rule)."""
    if not isinstance(s, _torch_stream.Stream):
        raise TypeError(f"record_stream(): argument 's' (position 1) must be Stream, not "
                        f"{type(s).__name__}")
    if self._device.type != "cuda":
        raise NotImplementedError(
            "Could not run 'aten::record_stream' with arguments from the 'CPU' backend. This "
            "could be because the operator doesn't exist for this backend, or was omitted "
            "during the selective/custom build process (if using custom build).")
    if self._storage is not None:
        _allocator.DEVICE.record_stream(self._storage, s.handle)


__all__ = ["Event", "Stream", "StreamContext", "current_stream", "default_stream", "set_stream",
           "stream"]
