"""Shared fixtures for the CUDA-graph, memory and stream tests.

`fresh_device` gives a test the simulated GPU as a new process would see it
(`torch.cuda.fresh_simulated_device()`: an empty caching allocator, so memory figures and block
addresses follow from the test alone, whatever other test modules still hold; pool ids counting
from 1; the default stream current; no capture underway). The previous device comes back
afterwards, and a test that leaks a capture or a stream fails.

`torch` is real torch, the oracle (the test skips without it); `no_default_device` leaves
neither library with a default device set, nor a default dtype but float32, after a test.

`fresh_dynamo` resets Dynamo (its caches and `utils.counters`) in real torch and in fake_torch
before and after a test, for the modules that run one program in both and compare counters.

This folder goes on sys.path so that test modules, imported by path (--import-mode=importlib),
can `from oracles import ...`: the oracles they share (tests/oracles.py).

FAKE_TORCH_TEST_MKLDNN=0 runs the session with real torch's oneDNN backend off
(`torch.backends.mkldnn.enabled = False`), as torch runs on a machine where it does not pick
oneDNN: the oracles must hold on any x86-64 CPU (ATEN_CPU_CAPABILITY and ONEDNN_MAX_CPU_ISA vary
the rest from the environment).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import fake_torch as ft
from fake_torch._simulated import _dispatch, _machine
from fake_torch._simulated._allocator import CachingAllocator
from fake_torch.cuda import _sanitizer, fresh_simulated_device, streams

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

from skip_summary import pytest_terminal_summary  # noqa: E402,F401  (the hook, registered here)
from xdist_groups import pytest_xdist_make_scheduler  # noqa: E402,F401  (the hook, registered here)

if os.environ.get("FAKE_TORCH_TEST_MKLDNN") == "0":
    import torch as _real_torch  # only under the switch: without it, torch is imported lazily

    _real_torch.backends.mkldnn.enabled = False  # type: ignore[attr-defined]


@pytest.fixture
def fresh_device() -> Iterator[CachingAllocator]:
    with fresh_simulated_device():
        try:
            yield _machine.MACHINE.devices[0].allocator
        finally:
            leaked_modes = _dispatch.reset_modes()  # never poison later tests
            leaked_stream = streams.current_stream()
            streams.set_stream(streams.default_stream())
            assert not leaked_modes, "the test left a capture underway"
            assert leaked_stream == streams.default_stream(), "the test left a side stream current"


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")


@pytest.fixture
def no_default_device() -> Iterator[None]:
    yield
    ft.set_default_device(None)
    ft.set_default_dtype(ft.float32)
    real = sys.modules.get("torch")
    if real is not None and real is not ft:
        real.set_default_device(None)
        real.set_default_dtype(real.float32)


@pytest.fixture
def fresh_dynamo() -> Iterator[None]:
    libs = [pytest.importorskip("torch"), ft]

    def reset() -> None:
        for lib in libs:
            lib._dynamo.reset()
            lib._dynamo.utils.counters.clear()

    reset()
    yield
    reset()


@pytest.fixture
def sanitizer() -> Iterator[None]:
    """The CUDA sanitizer on for one test (off again afterwards unless it was on before)."""
    was_on = _sanitizer.is_enabled()
    _sanitizer.enable_cuda_sanitizer()
    try:
        yield
    finally:
        if not was_on:
            _sanitizer.disable_cuda_sanitizer()


@pytest.fixture
def no_sanitizer() -> Iterator[None]:
    """The sanitizer off for one test, as by default (even under TORCH_CUDA_SANITIZER=1)."""
    was_on = _sanitizer.is_enabled()
    _sanitizer.disable_cuda_sanitizer()
    try:
        yield
    finally:
        if was_on:
            _sanitizer.enable_cuda_sanitizer()

