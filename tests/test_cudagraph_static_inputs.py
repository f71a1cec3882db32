"""mode="reduce-overhead" and static inputs (issue 23, item 3): a decode step that writes its
KV cache in place (index_copy_, copy_, slice assignment) is captured and replayed when the
cache is static, as torch's trees allow (cudagraph_trees.check_for_mutation: a mutated input
is fine when it is in static_input_idxs), and skipped with torch's message when it is not.
Static, as Dynamo marks them (node.meta["tensor_dict"]["_dynamo_static_input_type"]): the
parameters and buffers of an nn.Module, also one the compiled function reaches as a global,
and tensors marked with torch._dynamo.mark_static_address. Before the fix a global model's
buffer was an ordinary input (its in-place write skipped CUDA graphs) and
mark_static_address did not exist."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch

import fake_torch as ft
from fake_torch._dynamo.utils import counters
from fake_torch._inductor.cudagraph_trees import reset_cudagraph_trees
from fake_torch._simulated._dispatch import record_ops

CUDAGRAPH_LOG = "fake_torch._inductor.cudagraph_utils"
REPLAY = {"copy_": 2, "cudaGraphLaunch": 1}  # x and pos copied in (two dtypes), ONE launch


@pytest.fixture(autouse=True)
def trees(fresh_device: Any) -> Iterator[None]:
    ft._dynamo.reset()
    reset_cudagraph_trees()
    counters.clear()
    yield
    ft._dynamo.reset()
    reset_cudagraph_trees()
    counters.clear()


def launches(fn: Callable[..., Any], *args: Any) -> tuple[dict[str, int], Any]:
    """(launches by name, result) of one call."""
    with record_ops() as names:
        result = fn(*args)
    by_name: dict[str, int] = {}
    for name in names:
        by_name[name] = by_name.get(name, 0) + 1
    return by_name, result


def _inputs(i: int) -> tuple[ft.Tensor, ft.Tensor]:
    x = ft.tensor([[0.5 * i - 1.0, 1.0, 0.25 * i, -0.5]], device="cuda")
    return x, ft.tensor([i], device="cuda")


class Decoder(ft.nn.Module):
    """One layer that appends its key to a KV cache buffer and attends over the cache."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = ft.nn.Linear(4, 4)
        self.register_buffer("kv", ft.zeros(8, 4))

    def forward(self, x: ft.Tensor, pos: ft.Tensor) -> ft.Tensor:
        k = self.proj(x)
        self.kv.index_copy_(0, pos, k)
        return (self.kv @ k.T).softmax(0).T @ self.kv


def _decoder() -> Decoder:
    ft.manual_seed(0)
    return Decoder().cuda()


_MODEL: dict[str, Decoder] = {}


def _global_decode(x: ft.Tensor, pos: ft.Tensor) -> ft.Tensor:
    return _MODEL["m"](x, pos)  # the model is not an argument: reached as a global


def test_a_global_models_kv_buffer_written_in_place_is_captured_and_replayed(
        caplog: pytest.LogCaptureFixture) -> None:
    eager = _decoder()
    _MODEL["m"] = _decoder()
    step = ft.compile(_global_decode, mode="reduce-overhead")
    with caplog.at_level(logging.WARNING, logger=CUDAGRAPH_LOG), ft.no_grad():
        for i in range(6):
            counted, y = launches(step, *_inputs(i))
            np.testing.assert_allclose(y.cpu().numpy(), eager(*_inputs(i)).cpu().numpy(),
                                       rtol=1e-5, atol=1e-6)
            y = None
            if i >= 2:  # warmup, record, then replays
                assert counted == REPLAY
    np.testing.assert_allclose(_MODEL["m"].kv.cpu().numpy(), eager.kv.cpu().numpy(), rtol=1e-6)
    assert counters["inductor"]["cudagraph_skips"] == 0
    assert counters["inductor"]["cudagraph_recorded_non_static_inputs"] == 2  # x, pos
    assert [r for r in caplog.records if r.name == CUDAGRAPH_LOG] == []


def _write_index_copy(kv: ft.Tensor, pos: ft.Tensor, x: ft.Tensor) -> None:
    kv.index_copy_(0, pos, x)


def _write_copy(kv: ft.Tensor, pos: ft.Tensor, x: ft.Tensor) -> None:
    kv.copy_(kv.roll(1, 0))
    kv[0].copy_(x[0] + pos)


def _write_slice(kv: ft.Tensor, pos: ft.Tensor, x: ft.Tensor) -> None:
    kv[2:4] = x * 2 + pos


WRITES = [_write_index_copy, _write_copy, _write_slice]


def _step_writing(write: Callable[..., None]) -> Callable[..., ft.Tensor]:
    def step(x: ft.Tensor, kv: ft.Tensor, pos: ft.Tensor) -> ft.Tensor:
        write(kv, pos, x)
        return kv.sum(0) * 2

    return step


@pytest.mark.parametrize("write", WRITES, ids=[w.__name__ for w in WRITES])
def test_a_kv_cache_marked_static_is_written_in_the_graph_and_replayed(
        write: Callable[..., None]) -> None:
    step = _step_writing(write)
    compiled = ft.compile(step, mode="reduce-overhead")
    kv, eager_kv = ft.zeros(8, 4, device="cuda"), ft.zeros(8, 4, device="cuda")
    ft._dynamo.mark_static_address(kv)
    for i in range(5):
        x, pos = _inputs(i)
        counted, y = launches(compiled, x, kv, pos)
        expected = step(x, eager_kv, pos)
        np.testing.assert_allclose(y.cpu().numpy(), expected.cpu().numpy(), rtol=1e-6)
        y = None
        np.testing.assert_allclose(kv.cpu().numpy(), eager_kv.cpu().numpy(), rtol=1e-6)
        if i >= 2:
            assert counted == REPLAY  # kv is not copied: the graph writes it where it lives
    assert counters["inductor"]["cudagraph_skips"] == 0


def test_a_parameter_argument_updated_in_place_is_static() -> None:
    """An optimizer-like step: Dynamo marks every nn.Parameter input static."""
    def sgd(p: ft.Tensor, grad: ft.Tensor) -> ft.Tensor:
        p.sub_(grad * 0.5)
        return p.sum()

    compiled = ft.compile(sgd, mode="reduce-overhead")
    with ft.no_grad():
        p = ft.nn.Parameter(ft.ones(4, device="cuda"))
        for i in range(4):
            counted, total = launches(compiled, p, ft.ones(4, device="cuda"))
            assert total.item() == 4.0 - 2.0 * (i + 1)
            total = None
            if i >= 2:
                assert counted == {"_foreach_copy_": 1, "cudaGraphLaunch": 1}  # grad only
    assert counters["inductor"]["cudagraph_skips"] == 0


def test_an_unmarked_kv_cache_written_in_place_skips_with_torchs_message(
        caplog: pytest.LogCaptureFixture) -> None:
    step = _step_writing(_write_index_copy)
    compiled = ft.compile(step, mode="reduce-overhead")
    kv, eager_kv = ft.zeros(8, 4, device="cuda"), ft.zeros(8, 4, device="cuda")
    with caplog.at_level(logging.WARNING, logger=CUDAGRAPH_LOG):
        for i in range(4):
            x, pos = _inputs(i)
            counted, y = launches(compiled, x, kv, pos)
            np.testing.assert_allclose(y.cpu().numpy(), step(x, eager_kv, pos).cpu().numpy())
            assert "cudaGraphLaunch" not in counted
    messages = [r.getMessage() for r in caplog.records if r.name == CUDAGRAPH_LOG]
    assert len(messages) == 1
    assert messages[0].startswith(
        "skipping cudagraphs due to mutated inputs (1 instances). Found from : \n")
    assert "kv.index_copy_(0, pos, x)" in messages[0]
    assert counters["inductor"]["cudagraph_skips"] == 1


torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")


@pytest.mark.parametrize("guard", [False, True])
def test_mark_static_address_guards_like_torch(guard: bool) -> None:
    """guard=True guards the tensor's identity: another tensor recompiles; guard=False not."""
    graphs = []
    for lib in (torch, ft):
        lib._dynamo.reset()
        lib._dynamo.utils.counters.clear()
        f = lib.compile(lambda kv, x: kv.add_(x), backend="eager")
        kvs = [lib.zeros(4) for _ in range(3)]  # all alive: no id is reused
        for kv in kvs:
            lib._dynamo.mark_static_address(kv, guard=guard)
            f(kv, lib.ones(4))
            assert kv.tolist() == [1.0] * 4
            assert kv._dynamo_static_input_type == ("guarded" if guard else "unguarded")
        graphs.append(lib._dynamo.utils.counters["stats"]["unique_graphs"])
    torch._dynamo.reset()
    assert graphs[1] == graphs[0] == (3 if guard else 1)


def test_mark_static_address_refuses_a_non_tensor_like_torch() -> None:
    assert_raises_like_torch(lambda lib: lib._dynamo.mark_static_address([1.0]))


class MarkedCache:
    """transformers' StaticCache: a new one per generate(), its tensors marked static."""

    def __init__(self) -> None:
        self.keys = [ft.zeros(8, 4, device="cuda") for _ in range(2)]
        for t in self.keys:
            ft._dynamo.mark_static_address(t)

    def update(self, x: ft.Tensor, layer: int, pos: ft.Tensor) -> ft.Tensor:
        self.keys[layer].index_copy_(0, pos, x)
        return self.keys[layer]


def _cached_step(x: ft.Tensor, cache: MarkedCache, pos: ft.Tensor) -> ft.Tensor:
    for layer in range(len(cache.keys)):
        x = x + cache.update(x, layer, pos).sum(0)
    return x


def test_a_new_static_cache_per_generate_compiles_once_and_records_once_per_cache() -> None:
    """One graph for every cache (guarded by its type: item 2); each new cache's tensors are
    static inputs at new addresses, so the trees record once more for it (torch: "cudagraphs
    will re-record if guard=False"), then replay."""
    compiled = ft.compile(_cached_step, mode="reduce-overhead")
    for generate in range(2):
        cache, eager = MarkedCache(), MarkedCache()
        record = 1 if generate == 0 else 0  # the first call of all warms up
        for i in range(4):
            x, pos = _inputs(i)
            counted, y = launches(compiled, x, cache, pos)
            np.testing.assert_allclose(y.cpu().numpy(),
                                       _cached_step(x, eager, pos).cpu().numpy(), rtol=1e-6)
            y = None
            assert ("fill_" in counted) == (i == record)  # a capture begins with fill_s
            if i > record:
                assert counted == REPLAY
        for ours, theirs in zip(cache.keys, eager.keys, strict=True):
            np.testing.assert_allclose(ours.cpu().numpy(), theirs.cpu().numpy(), rtol=1e-6)
    assert counters["stats"]["unique_graphs"] == 1
    assert counters["inductor"]["cudagraph_skips"] == 0
