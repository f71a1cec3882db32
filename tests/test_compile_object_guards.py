"""An argument object (a KV cache made fresh for each generate()) is guarded as Dynamo guards
it: by its type and what the trace read (the tensors' metadata, the numbers and lists it
reached), not by identity (issue 23, item 2). Before the fix every new object recompiled
(unique_graphs 4 where torch has 2 in the first program). Each program runs in real torch
(backend="eager", the oracle) and in fake_torch; values and dynamo's counters must agree."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import to_numpy

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

LIBS = [torch, ft]


pytestmark = pytest.mark.usefixtures("fresh_dynamo")  # (conftest.py)


def _counts(lib: Any) -> tuple[int, int, int]:
    c = lib._dynamo.utils.counters
    return c["stats"]["unique_graphs"], c["frames"]["total"], c["frames"]["ok"]


class StaticCache:
    """transformers' StaticCache in small: per layer a preallocated key and value tensor,
    written in place at the decode position."""

    def __init__(self, lib: Any, layers: int, max_len: int, dim: int, scale: int) -> None:
        self.key_cache = [lib.zeros(max_len, dim) for _ in range(layers)]
        self.value_cache = [lib.zeros(max_len, dim) for _ in range(layers)]
        self.scale = scale  # read by the step's Python (a branch)
        self.note = "fresh"  # never read by the step

    def update(self, k: Any, v: Any, layer: int, pos: Any) -> tuple[Any, Any]:
        self.key_cache[layer].index_copy_(0, pos, k)
        self.value_cache[layer].index_copy_(0, pos, v)
        return self.key_cache[layer], self.value_cache[layer]


def _decode_step(x: Any, cache: StaticCache, pos: Any) -> Any:
    h = x
    for layer in range(len(cache.key_cache)):
        k, v = cache.update(h * 2, h + 1, layer, pos)
        h = h + (k * v).sum(0, keepdim=True)
    if cache.scale > 1:
        h = h * cache.scale
    return h


def _generate(lib: Any, step: Callable[..., Any], scales: list[int]) -> list[Any]:
    """One generate() per scale: a new cache each, three decode steps into it."""
    out = []
    for g, scale in enumerate(scales):
        cache = StaticCache(lib, 2, 4, 3, scale)
        cache.note = f"generate {g}"
        for i in range(3):
            x = lib.tensor((np.arange(3, dtype=np.float32)[None] + i + g) / 10)
            out.append(to_numpy(step(x, cache, lib.tensor([i]))))
        out += [to_numpy(t) for t in cache.key_cache + cache.value_cache]
    return out


@pytest.mark.parametrize("scales", [[1, 1, 1], [1, 1, 3]], ids=["same", "scale read changes"])
def test_a_new_cache_object_per_call_compiles_like_torch(
        scales: list[int], caplog: pytest.LogCaptureFixture) -> None:
    """A fresh cache of the same class: no recompile; a number the code branches on
    changes: one recompile, for torch's reason; an attribute nobody reads changes every call:
    none."""
    theirs = _generate(torch, torch.compile(_decode_step, backend="eager"), scales)
    with caplog.at_level(logging.DEBUG, logger="fake_torch._dynamo.guards"):
        ours = _generate(ft, ft.compile(_decode_step, backend="eager"), scales)
    reasons = [r.getMessage().rsplit("- ", 1)[-1] for r in caplog.records
               if r.getMessage().startswith("Recompiling")]
    # torch (TORCH_LOGS=recompiles): "- 0/0: cache.scale == 1"
    assert reasons == ([] if scales[-1] == 1 else ["0/0: cache.scale == 1"])
    eager = _generate(ft, _decode_step, scales)
    for o, t, e in zip(ours, theirs, eager, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-6)
        np.testing.assert_array_equal(o, e)
    assert _counts(ft) == _counts(torch)
    assert _counts(ft)[0] == (1 if scales[-1] == 1 else 2)


class DynamicCache:
    """transformers' DynamicCache in small: the key list grows by torch.cat (the step's
    Python changes the object, so it must run on every call)."""

    def __init__(self, lib: Any) -> None:
        self.lib = lib
        self.keys: list[Any] = []
        self.seen = 0

    def update(self, k: Any, layer: int) -> Any:
        if len(self.keys) <= layer:
            self.keys.append(k)
        else:
            self.keys[layer] = self.lib.cat([self.keys[layer], k])
        self.seen += 1
        return self.keys[layer]


def _grow_step(x: Any, cache: DynamicCache) -> Any:
    return cache.update(x * 2, 0).sum(0) + x


def test_a_cache_the_step_grows_runs_its_python_every_call_like_torch() -> None:
    results = []
    for lib in LIBS:
        step = lib.compile(_grow_step, backend="eager")
        seen = []
        for _ in range(2):
            cache = DynamicCache(lib)
            for i in range(3):
                x = lib.tensor(np.arange(3, dtype=np.float32)[None] + i)
                seen.append((to_numpy(step(x, cache)).tolist(),
                             [tuple(k.shape) for k in cache.keys], cache.seen))
        results.append(seen)
    assert results[1] == results[0]
    assert _counts(ft) == _counts(torch) == (3, 3, 3)


def _returns_its_argument(x: Any, cache: StaticCache) -> Any:
    cache.key_cache[0].add_(x)
    return cache.key_cache, cache, x * 2


def test_an_argument_object_returned_is_the_new_calls_object_like_torch() -> None:
    for lib in LIBS:
        step = lib.compile(_returns_its_argument, backend="eager")
        for i in range(3):
            cache = StaticCache(lib, 1, 2, 2, 1)
            keys, same, doubled = step(lib.ones(2, 2) * i, cache)
            assert same is cache and keys is cache.key_cache
            np.testing.assert_array_equal(to_numpy(cache.key_cache[0]), np.full((2, 2), i))
            np.testing.assert_array_equal(to_numpy(doubled), np.full((2, 2), 2 * i))
    assert _counts(ft) == _counts(torch)
