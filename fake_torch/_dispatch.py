"""The one door: every would-be GPU launch (kernel, memcpy, memset) passes through `launch`.

It is the only place that counts launches, and it asks the current mode what to do:
  - eager: run the numpy kernel now, into the output buffer it was given;
  - capture / trace modes (later) push themselves on the mode stack and record instead.
Views and metadata never come here: on a GPU they launch nothing.

A kernel is a plain function `kernel(*outs, *inputs, **params) -> None` that writes into the
numpy buffers it is given. Nothing in this module knows about Tensor.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fake_torch._allocator import DEVICE, Storage
from fake_torch._counter import LaunchCounter

Kernel = Callable[..., None]
Observer = Callable[[str, str], None]  # (op name, kind) of each counted launch


class Mode:
    """What happens to a launch. Eager runs it now; later modes record it."""

    name = "eager"
    counts_launches = True  # a tracing mode runs nothing and counts nothing

    def allocate(self, shape: tuple[int, ...], np_dtype: np.dtype[Any],
                 on_cuda: bool) -> tuple[np.ndarray, Storage | None]:
        if not on_cuda:
            return np.empty(shape, dtype=np_dtype), None
        return device_buffer(DEVICE.allocate(_nbytes(shape, np_dtype)), shape, np_dtype)

    def run(self, op: str, kernel: Kernel, outs: tuple[np.ndarray, ...],
            inputs: tuple[Any, ...], params: dict[str, Any], kind: str, on_cuda: bool) -> None:
        kernel(*outs, *inputs, **params)

    def host_sync(self, what: str) -> None:
        """Called before the host waits on the device (`.item()`, synchronize, D2H copies)."""


_EAGER = Mode()
_modes: list[Mode] = [_EAGER]
_observers: list[Observer] = []
# the sanitizer's hook while it is on: (op, outs, inputs, kind) of every launch
_input_checks: list[Callable[[str, tuple[np.ndarray, ...], tuple[Any, ...], str], None]] = []


def current_mode() -> Mode:
    return _modes[-1]


def enter_mode(mode: Mode) -> None:
    """Make `mode` current until `exit_mode(mode)` (capture_begin / capture_end use this)."""
    _modes.append(mode)


def exit_mode(mode: Mode) -> None:
    _modes.remove(mode)


@contextmanager
def push_mode(mode: Mode) -> Iterator[Mode]:
    """Make `mode` current inside the block (tracing uses this)."""
    enter_mode(mode)
    try:
        yield mode
    finally:
        exit_mode(mode)


def allocate(shape: tuple[int, ...], np_dtype: np.dtype[Any],
             on_cuda: bool) -> tuple[np.ndarray, Storage | None]:
    """A fresh output buffer from the current mode (capture takes it from the graph's pool),
    with the allocator Storage that owns it (None on cpu)."""
    return _modes[-1].allocate(shape, np_dtype, on_cuda)  # (current_mode(), one call less)


def device_buffer(storage: Storage, shape: tuple[int, ...],
                  np_dtype: np.dtype[Any]) -> tuple[np.ndarray, Storage]:
    """A typed, shaped view of a fresh allocator block (its `.base` is the root, as
    `storage_of` needs; one ndarray call costs less than `.view(...).reshape(...)`)."""
    return np.ndarray(shape, np_dtype, buffer=storage.root), storage


def _nbytes(shape: tuple[int, ...], np_dtype: np.dtype[Any]) -> int:
    n = np_dtype.itemsize
    for s in shape:
        n *= s
    return n


def launch(op: str, kernel: Kernel, outs: tuple[np.ndarray, ...], inputs: tuple[Any, ...],
           params: dict[str, Any] | None = None, *, on_cuda: bool, kind: str = "kernel") -> None:
    """THE door. Count one launch of `op` (on the cuda device only) and let the mode run it."""
    for check in _input_checks:
        check(op, outs, inputs, kind)
    mode = _modes[-1]  # current_mode(), one call less: this runs for every launch
    if on_cuda and mode.counts_launches:
        if _fused:  # inside one fused kernel: only its first launch is counted, under its name
            group = _fused[-1]
            if group.launched:
                group.absorbed.append(op)
            else:
                group.launched = True
                group.absorbed.append(op)
                _count(group.name, "kernel")
        else:
            _count(op, kind)
    mode.run(op, kernel, outs, inputs, params or {}, kind, on_cuda)


def _count(op: str, kind: str) -> None:
    LaunchCounter._add(1, op, kind)  # unchecked: the door always counts one valid launch
    for observer in _observers:
        observer(op, kind)


@dataclass
class FusedKernel:
    """A group of launches that a compiler fused into one kernel (see `fused`)."""

    name: str
    launched: bool = False
    absorbed: list[str] = field(default_factory=list)  # the op names it stands for


_fused: list[FusedKernel] = []


@contextmanager
def fused(name: str) -> Iterator[FusedKernel]:
    """The launches inside the block are ONE kernel named `name` (torch.compile's fusion):
    the first counts, the rest are absorbed. The numpy work still runs op by op."""
    group = FusedKernel(name)
    _fused.append(group)
    try:
        yield group
    finally:
        _fused.pop()


def host_sync(what: str) -> None:
    """The host waits for the device: forbidden while capturing."""
    current_mode().host_sync(what)


@contextmanager
def observe(observer: Observer) -> Iterator[None]:
    """Call `observer(op, kind)` for every counted launch inside the block."""
    _observers.append(observer)
    try:
        yield
    finally:
        _observers.remove(observer)


@contextmanager
def record_ops() -> Iterator[list[str]]:
    """Collect the op names of the counted launches inside the block, in order."""
    names: list[str] = []
    with observe(lambda op, kind: names.append(op)):
        yield names
