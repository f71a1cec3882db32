"""The simulated machine: one object that owns everything simulated.

    Machine
      timeline        the host clock and every stream's queue (one host, so one clock)
      host            the pinned host allocator (machine-wide, as c10's CachingHostAllocator)
      counter         the launch tally (LaunchCounter: process-wide, shared by every machine)
      devices[i]      SimulatedDevice, one per GPU (cuda:i)
        allocator     its caching allocator (memory, pools, statistics)
        captures      the stream captures underway on it (what c10 asks cudaStreamGetCaptureInfo)
        streams       the default stream, and the current stream of each thread
        graphs_by_pool, trees_manager, generator (set by the layers above, through the hooks)
      current device  per thread (cudaSetDevice is per host thread), cuda:0 in a new thread

`MACHINE` is the machine in use; `fresh()` swaps in a new one for a block (tests) and puts the
old one back after: nothing is saved or restored field by field. Objects made on a machine keep
it (a tensor's storage frees into the allocator that made it), so a block's garbage never
reaches another machine's books.

The number of devices: FAKE_TORCH_DEVICES (default 1) at import, or
`torch.cuda.set_simulated_devices(n, gpu=...)`, which swaps in a new machine of n devices.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from fake_torch._simulated._allocator import CachingAllocator, Storage
from fake_torch._simulated._allocator_capture import StreamCaptures
from fake_torch._simulated._counter import LaunchCounter
from fake_torch._simulated._host_allocator import CachingHostAllocator
from fake_torch._simulated._timeline import Timeline


class AcceleratorError(RuntimeError):
    """torch.AcceleratorError: an error the accelerator's runtime returned (C10_CUDA_CHECK)."""


INVALID_ORDINAL = ("CUDA error: invalid device ordinal\n"
                   "CUDA kernel errors might be asynchronously reported at some other API call, "
                   "so the stacktrace below might be incorrect.\n"
                   "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
                   "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")


def invalid_ordinal(num_devices: int) -> AcceleratorError:
    """CUDA's invalid-ordinal error, then how many devices are simulated and how to have more
    (a rank r of a distributed run does `torch.cuda.set_device(r)`: its machine needs r + 1)."""
    plural = "" if num_devices == 1 else "s"
    return AcceleratorError(f"{INVALID_ORDINAL}(fake_torch simulates {num_devices} "
                            f"device{plural}: set FAKE_TORCH_DEVICES, or call "
                            "torch.cuda.set_simulated_devices(n), for more)")


class _CurrentStream(threading.local):
    """One device's current stream on each thread: its handle (what the allocator and the
    timeline key streams by) and the stream object (None: the default stream)."""

    def __init__(self, handle: int) -> None:
        self.handle = handle
        self.stream: Any = None


class _CurrentDevice(threading.local):
    """The machine's current device on each thread (`Machine.thread.index`)."""

    index = 0  # a new thread starts on cuda:0, as CUDA's


class SimulatedDevice:
    """One simulated GPU, cuda:`index`, and the state that is its own."""

    def __init__(self, index: int, timeline: Timeline, total_bytes: int | None,
                 current_device: _CurrentDevice) -> None:
        self.index = index
        self.timeline = timeline
        self._current_device = current_device  # the machine's current device, per thread
        # the default stream's handle: CUDA's is 0 on every device; streams are keyed by handle
        # on the machine's one timeline, so device i's default stream is keyed -i (cuda_stream
        # still reads 0)
        self.default_handle = -index
        self._current = _CurrentStream(self.default_handle)
        self.captures = StreamCaptures(self)
        self.allocator = CachingAllocator(total_bytes, timeline=timeline, captures=self.captures,
                                          current_stream=self.current_stream, index=index,
                                          stream_local=self._current)
        self.capturing: set[int] = set()  # stream ids a CUDA graph capture is underway on
        self.graphs_by_pool: dict[Any, Any] = {}  # pool id -> its live CUDAGraphs (weakly)
        self.trees_manager: Any = None  # torch.compile's CUDA graph trees on this device
        self._generator: Any = None

    def is_current(self) -> bool:
        """Whether this is the calling thread's current device."""
        return self._current_device.index == self.index

    def current_stream(self) -> int:
        """The handle of the calling thread's current stream on this device (the allocator's
        native fast path reads `_current.handle` itself)."""
        return self._current.handle

    def current_stream_object(self) -> Any:
        """The calling thread's current stream object on this device (None: the default)."""
        return self._current.stream

    def set_current_stream(self, stream: Any, handle: int) -> None:
        self._current.stream, self._current.handle = stream, handle

    @property
    def generator(self) -> Any:
        """The device's default cuda generator (torch.cuda.default_generators[index]), made
        at first use by the factory the generator module registered."""
        if self._generator is None:
            self._generator = _generator_factory(self.index)
        return self._generator

    def __repr__(self) -> str:
        return f"SimulatedDevice(cuda:{self.index})"


class Machine:
    """The simulated machine: its devices, the host allocator, the clocks and the tally."""

    def __init__(self, num_devices: int = 1, total_bytes: int | None = None) -> None:
        if isinstance(num_devices, bool) or not isinstance(num_devices, int) or num_devices < 1:
            raise ValueError(f"a simulated machine needs at least one device (an int), got "
                             f"{num_devices!r}")
        self.timeline = Timeline()
        self.counter = LaunchCounter
        self.thread = _CurrentDevice()
        self.devices = tuple(SimulatedDevice(i, self.timeline, total_bytes, self.thread)
                             for i in range(num_devices))
        self.host = CachingHostAllocator(self)
        self.graph_debug_mode = False  # CUDAGraph.enable_debug_mode(): c10's one static flag

    @property
    def current(self) -> SimulatedDevice:
        """The calling thread's current device."""
        return self.devices[self.thread.index]

    @property
    def current_index(self) -> int:
        return self.thread.index

    def set_current(self, index: int) -> None:
        """cudaSetDevice: make cuda:`index` current on this thread."""
        if not 0 <= index < len(self.devices):
            raise invalid_ordinal(len(self.devices))
        self.thread.index = index

    def device(self, index: int | None = None) -> SimulatedDevice:
        """cuda:`index` (None: the current device); CUDA's invalid-ordinal error past them."""
        if index is None:
            return self.devices[self.thread.index]
        if not 0 <= index < len(self.devices):
            raise invalid_ordinal(len(self.devices))
        return self.devices[index]

    def storage_of(self, a: np.ndarray) -> Storage | None:
        """The allocator Storage (of any device) a numpy view of device memory belongs to."""
        for dev in self.devices:
            found = dev.allocator.storage_of(a)
            if found is not None:
                return found
        return None

    def fresh(self, total_bytes: int | None = None, num_devices: int | None = None) -> Machine:
        """A new machine of as many devices (unless told), each of this machine's memory size
        (unless told)."""
        size = self.devices[0].allocator.total_bytes if total_bytes is None else total_bytes
        return Machine(len(self.devices) if num_devices is None else num_devices, size)


def _no_generator(index: int) -> Any:
    raise RuntimeError("no cuda generator factory registered (fake_torch._generator does)")


_generator_factory: Callable[[int], Any] = _no_generator


def set_generator_factory(factory: Callable[[int], Any]) -> None:
    """How a device makes its default generator (registered by fake_torch/_generator.py, a
    layer above, which owns torch.Generator)."""
    global _generator_factory
    _generator_factory = factory


# every stream handle but the default streams' (0 and -i, on cuda:i) -> its device's index;
# handles are unique in the process (torch.Stream numbers them), so this names them all
_stream_devices: dict[int, int] = {}


def register_stream(handle: int, index: int) -> None:
    """A stream of cuda:`index` was made (fake_torch/_torch_stream.py tells)."""
    if handle > 0:
        _stream_devices[handle] = index


def stream_device(handle: int) -> int:
    """The index of the device a stream handle belongs to."""
    return -handle if handle <= 0 else _stream_devices.get(handle, 0)


def _devices_from_environment() -> int:
    env = os.environ.get("FAKE_TORCH_DEVICES", "1")
    try:
        n = int(env)
    except ValueError:
        raise ValueError(f"FAKE_TORCH_DEVICES must be a positive integer, got {env!r}") from None
    if n < 1:
        raise ValueError(f"FAKE_TORCH_DEVICES must be a positive integer, got {env!r}")
    return n


MACHINE = Machine(_devices_from_environment())


def swap(new: Machine) -> Machine:
    """Make `new` the machine in use; return the one it replaces."""
    global MACHINE
    old, MACHINE = MACHINE, new
    return old


@contextmanager
def fresh(total_bytes: int | None = None, num_devices: int | None = None) -> Iterator[Machine]:
    """Inside the block, a new machine (as a new process finds it: empty memory, pool ids
    from 1, the default streams current, cuda:0 current, clocks at 0), of `num_devices` GPUs
    unless it keeps the number; the old machine after."""
    old = swap(MACHINE.fresh(total_bytes, num_devices))
    try:
        yield MACHINE
    finally:
        swap(old)


def current_device() -> SimulatedDevice:
    """The calling thread's current device of the machine in use."""
    machine = MACHINE
    return machine.devices[machine.thread.index]


@contextmanager
def device_guard(index: int) -> Iterator[None]:
    """c10's DeviceGuard: cuda:`index` is this thread's current device inside the block (an op
    on a tensor of that device allocates from its allocator and launches on its current
    stream), the device before it after."""
    local = MACHINE.thread
    previous, local.index = local.index, index
    try:
        yield
    finally:
        local.index = previous


def add_listener(listener: Callable[[Any], None]) -> Callable[[], None]:
    """Call `listener(span)` for every host launch call and device kernel of the machine in
    use from now on (a Span of fake_torch/_simulated/_timeline.py); returns the function that
    removes it."""
    return MACHINE.timeline.add_listener(listener)
