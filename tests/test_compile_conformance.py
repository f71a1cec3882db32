"""Behaviour and launch-count conformance against real torch (CPU build), differentially: the
same small program runs in both libraries and the test compares what each shows (no expected
numbers are written down here).

Compile (issue 6, item 4): `compile(backend="eager")` results, dynamo's counters
(`counters["stats"]["unique_graphs"]`, `counters["frames"]["total"/"ok"]`) after the same call
sequence, `_dynamo.explain` counts, the `fullgraph=True` error on a graph break, the
`recompile_limit` fallback to eager, and `mode="reduce-overhead"` on cpu tensors skipping the CUDA
graph (`counters["inductor"]["cudagraph_skips"]`).

Launches (issue 6, item 5): for programs that mix ops, fake_torch's launches on "cuda" are real
torch's non-view aten ops under a TorchDispatchMode, op by op, as torch's CUDA build dispatches
them (`oracles.torch_launches(cuda=True)`: rms_norm is one `_fused_rms_norm`).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import io
from collections.abc import Callable, Iterator
from typing import Any, cast

import numpy as np
import pytest
from oracles import first_line, launches, to_numpy, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

LIBS = [torch, ft]


def _reset(lib: Any) -> None:
    lib._dynamo.reset()
    lib._dynamo.utils.counters.clear()


@pytest.fixture(autouse=True)
def fresh_dynamo() -> Iterator[None]:
    """Both libraries' dynamo caches and counters start empty and are left empty."""
    for lib in LIBS:
        _reset(lib)
    yield
    for lib in LIBS:
        _reset(lib)


def _counts(lib: Any) -> tuple[int, int, int]:
    c = lib._dynamo.utils.counters
    return c["stats"]["unique_graphs"], c["frames"]["total"], c["frames"]["ok"]


def _same_values(ours: Any, theirs: Any) -> None:
    if isinstance(theirs, (list, tuple)):
        assert len(ours) == len(theirs)
        for o, t in zip(ours, theirs, strict=True):
            _same_values(o, t)
        return
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype)
    np.testing.assert_allclose(to_numpy(ours), to_numpy(theirs), rtol=1e-6, atol=1e-6)


def _data(lib: Any, n: int, sign: float = 1.0) -> Any:
    return lib.tensor(sign * (np.arange(n, dtype=np.float32) + 1) / n)


# --- compile: call sequences and dynamo's counters ----------------------------------------------


def _pointwise(lib: Any) -> list[Any]:
    f = lib.compile(lambda x: (x * 2 + 1).relu().sin() - x, backend="eager")
    return [f(_data(lib, 4)), f(_data(lib, 4))]


def _branch(lib: Any) -> list[Any]:
    def g(x: Any) -> Any:
        if x.sum() > 0:
            return x + 1
        return x - 1

    f = lib.compile(g, backend="eager")
    return [f(_data(lib, 4)), f(_data(lib, 4, -1.0)), f(_data(lib, 4))]


def _print(lib: Any) -> list[Any]:
    def g(x: Any) -> Any:
        y = x + 1
        print("conformance")
        return y * 2

    f = lib.compile(g, backend="eager")
    return [f(_data(lib, 3)), f(_data(lib, 3))]


def _tolist(lib: Any) -> list[Any]:
    def g(x: Any) -> Any:
        y = x + 1
        values = y.tolist()
        return y * len(values)

    f = lib.compile(g, backend="eager")
    return [f(_data(lib, 3))]


def _shapes(dynamic: bool | None) -> Callable[[Any], list[Any]]:
    def program(lib: Any) -> list[Any]:
        kw = {} if dynamic is None else {"dynamic": dynamic}
        f = lib.compile(lambda x: x * 2 + x.shape[0], backend="eager", **kw)
        return [f(_data(lib, n)) for n in (4, 8, 16)]

    return program


def _int_arg(lib: Any) -> list[Any]:
    f = lib.compile(lambda x, k: x * k, backend="eager")
    return [f(_data(lib, 3), k) for k in (2, 3, 4)]


def _rank_changes(lib: Any) -> list[Any]:
    """nano-vllm's rms_forward sees (tokens, hidden) and (tokens, heads, head_dim): a new rank
    makes every dim of the argument dynamic, so the later shapes of each rank reuse a graph."""
    f = lib.compile(lambda x: x.float().pow(2).mean(-1, keepdim=True), backend="eager")
    shapes = [(64, 64), (64, 4, 16), (64, 2, 16), (8, 64), (8, 4, 16), (1, 64)]
    return [f(lib.ones(*shape)) for shape in shapes]


COMPILE_PROGRAMS: list[tuple[str, Callable[[Any], list[Any]]]] = [
    ("pointwise chain", _pointwise),
    ("data-dependent branch +/-", _branch),
    ("print() graph break", _print),
    (".tolist() graph break", _tolist),
    ("shapes 4-8-16 default", _shapes(None)),
    ("shapes 4-8-16 dynamic=False", _shapes(False)),
    ("shapes 4-8-16 dynamic=True", _shapes(True)),
    ("int argument changes", _int_arg),
    ("a rank change makes all dims dynamic", _rank_changes),
]


@pytest.mark.parametrize("program", [p for _, p in COMPILE_PROGRAMS],
                         ids=[n for n, _ in COMPILE_PROGRAMS])
def test_compile_results_and_counters_match_torch(program: Callable[[Any], list[Any]]) -> None:
    their_out, our_out = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(their_out):
        theirs = program(torch)
    their_counts = _counts(torch)
    with contextlib.redirect_stdout(our_out):
        ours = program(ft)
    our_counts = _counts(ft)
    assert our_out.getvalue() == their_out.getvalue()
    _same_values(ours, theirs)
    assert our_counts == their_counts, "(unique_graphs, frames total, frames ok)"


# --- what the tracer sees: ops through any reference; modules guarded as Dynamo guards them ----


def _graphs_and_counts(lib: Any, build: Callable[[Any, Any], Callable[..., Any]],
                       calls: Callable[[Any], list[tuple[Any, ...]]]
                       ) -> tuple[list[list[tuple[str, str]]], tuple[int, int, int]]:
    """Every graph the backend got, as (call kind, target name) per node, and the counters."""
    graphs: list[list[tuple[str, str]]] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        graphs.append([("method" if n.op == "call_method" else "function",
                        n.target if n.op == "call_method" else n.target.__name__)
                       for n in gm.graph.nodes if n.op in ("call_function", "call_method")])
        return gm.forward

    lib.manual_seed(0)
    fn = build(lib, backend)
    for args in calls(lib):
        fn(*args)
    return graphs, _counts(lib)


def _stored_callables(lib: Any, backend: Any) -> Callable[..., Any]:
    """A module holding F.silu, a functools.partial of F.gelu and a lambda as attributes."""
    F = lib.nn.functional

    class Stored(lib.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.act = F.silu
            self.g = functools.partial(F.gelu, approximate="tanh")
            self.double = lambda t: t * 2
            self.lin = lib.nn.Linear(4, 4)

        def forward(self, x: Any) -> Any:
            return self.double(self.g(self.act(self.lin(x))))

    return cast(Callable[..., Any], lib.compile(Stored(), backend=backend))


_ALIASES: dict[str, Any] = {}


def _aliased_before_compile(lib: Any, backend: Any) -> Callable[..., Any]:
    """Functions bound to other names (a module global, a default argument) before compile."""
    _ALIASES["relu"] = lib.relu

    def f(x: Any, act: Any = lib.sigmoid) -> Any:
        return _ALIASES["relu"](x) + act(x)

    return cast(Callable[..., Any], lib.compile(f, backend=backend))


def _compiled_method_on_instances(lib: Any, backend: Any) -> Callable[..., Any]:
    """nano-vllm's RMSNorm: @torch.compile on a method, called on nine instances."""
    class RMSNorm(lib.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.weight = lib.nn.Parameter(lib.ones(4))
            self.eps = 1e-6

        @lib.compile(backend=backend)
        def rms_forward(self, x: Any) -> Any:
            x = x.float()
            var = x.pow(2).mean(dim=-1, keepdim=True)
            return x * lib.rsqrt(var + self.eps) * self.weight

    norms = [RMSNorm() for _ in range(9)]
    return lambda x: [n.rms_forward(x) for n in norms]


def _two_instances(lib: Any, backend: Any) -> Callable[..., Any]:
    """torch.compile of two instances of one module class; then an attribute the forward
    reads changes (a recompile), one it does not read changes, a parameter is replaced by one
    alike, and the module goes to eval mode (none of which recompiles)."""
    class Block(lib.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.lin = lib.nn.Linear(4, 4)
            self.scale = 1
            self.steps = 0

        def forward(self, x: Any) -> Any:
            return self.lin(x) * self.scale

    a, b = Block(), Block()
    fa, fb = lib.compile(a, backend=backend), lib.compile(b, backend=backend)

    def run(x: Any) -> Any:
        outs = [fa(x), fb(x)]
        a.scale = 2
        outs.append(fa(x))
        a.steps = 5
        outs.append(fa(x))
        a.lin.weight = lib.nn.Parameter(lib.ones(4, 4))
        outs.append(fa(x))
        a.eval()
        outs.append(fa(x))
        return outs

    return run


REFERENCE_PROGRAMS = [
    ("stored attributes, partial, lambda", _stored_callables),
    ("aliased before compile", _aliased_before_compile),
    ("compiled method on nine instances", _compiled_method_on_instances),
    ("two instances, attribute changes", _two_instances),
]


@pytest.mark.parametrize("build", [b for _, b in REFERENCE_PROGRAMS],
                         ids=[n for n, _ in REFERENCE_PROGRAMS])
def test_graphs_and_recompiles_match_torch(build: Callable[[Any, Any], Callable[..., Any]]
                                           ) -> None:
    """The same graphs (op lists), graphs compiled, frames: the tracer sees ops reached through
    any reference, and guards a module by type, the attributes read and its tensors."""
    def calls(lib: Any) -> list[tuple[Any, ...]]:
        return [(lib.ones(2, 4),), (lib.ones(2, 4),)]

    theirs = _graphs_and_counts(torch, build, calls)
    ours = _graphs_and_counts(ft, build, calls)
    assert ours == theirs, "(graphs as (kind, target) lists, (unique_graphs, total, ok))"


# --- explain and fullgraph ----------------------------------------------------------------------


def _breaks_on_print(x: Any) -> Any:
    y = x.cos() + 1
    print("conformance")
    return y * 2


def _breaks_on_tolist(x: Any) -> Any:
    y = x + 1
    return y * len(y.tolist())


def _no_break(x: Any) -> Any:
    return (x * x).sum()


@pytest.mark.parametrize("fn", [_breaks_on_print, _breaks_on_tolist, _no_break])
def test_explain_counts_match_torch(fn: Callable[[Any], Any]) -> None:
    got = []
    for lib in LIBS:
        e = lib._dynamo.explain(fn)(_data(lib, 3))
        got.append((e.graph_count, e.graph_break_count, len(e.break_reasons)))
    assert got[1] == got[0], "(graph_count, graph_break_count, len(break_reasons))"


@pytest.mark.parametrize("fn", [_breaks_on_print, _breaks_on_tolist])
def test_fullgraph_graph_break_raises_like_torch(fn: Callable[[Any], Any]) -> None:
    errors = []
    for lib in LIBS:
        with pytest.raises(Exception) as info:
            lib.compile(fn, backend="eager", fullgraph=True)(_data(lib, 3))
        errors.append(info.value)
    theirs, ours = errors
    # the same class: torch._dynamo.exc.X is fake_torch._dynamo.exc.X
    assert type(ours).__name__ == type(theirs).__name__
    assert type(ours).__module__.replace("fake_torch", "torch") == type(theirs).__module__
    assert first_line(ours) == first_line(theirs)


# --- recompile limit and reduce-overhead --------------------------------------------------------


def test_recompile_limit_falls_back_to_eager_like_torch() -> None:
    results, counts = [], []
    for lib in LIBS:
        old = lib._dynamo.config.recompile_limit
        lib._dynamo.config.recompile_limit = 2
        try:
            f = lib.compile(lambda x, k: x * k + 1, backend="eager")
            results.append([f(_data(lib, 3), k) for k in range(6)])
            counts.append(_counts(lib))
        finally:
            lib._dynamo.config.recompile_limit = old
    _same_values(results[1], results[0])
    assert counts[1] == counts[0], "(unique_graphs, frames total, frames ok)"


def test_reduce_overhead_on_cpu_tensors_skips_cuda_graphs_like_torch() -> None:
    results, skips = [], []
    for lib in LIBS:
        f = lib.compile(lambda x: (x * 2).sin() + x, mode="reduce-overhead")
        results.append([f(_data(lib, 8)) for _ in range(3)])
        skips.append(lib._dynamo.utils.counters["inductor"]["cudagraph_skips"])
    _same_values(results[1], results[0])
    assert skips[1] == skips[0]
    assert skips[1] > 0  # fake_torch recorded no CUDA graph for cpu tensors


# --- launch-count conformance: programs that mix ops --------------------------------------------

_rng = np.random.default_rng(0)


def _randn(*shape: int) -> np.ndarray:
    return _rng.standard_normal(shape).astype(np.float32)


_ARRAYS = {
    "x": _randn(2, 3, 8), "w": _randn(16, 8), "b": _randn(16), "g": _randn(8) + 1,
    "m": _randn(8, 5), "y": _randn(2, 3, 8), "table": _randn(10, 8),
    "idx": np.array([[1, 2, 9], [0, 0, 3]], dtype=np.int64),
}


def _inputs(lib: Any, device: str | None) -> dict[str, Any]:
    """The same inputs for every program: torch's on cpu, fake_torch's on `device`."""
    if device is None:
        return {k: lib.from_numpy(v.copy()) for k, v in _ARRAYS.items()}
    return {k: lib.tensor(v, device=device) for k, v in _ARRAYS.items()}


def _F(lib: Any) -> Any:
    return lib.nn.functional


LAUNCH_PROGRAMS: list[tuple[str, Callable[[Any, dict[str, Any]], Any]]] = [
    ("pointwise chain", lambda lib, d: ((d["x"] * 2 + 1).relu() - d["y"]).exp()),
    ("linear + silu", lambda lib, d: _F(lib).silu(_F(lib).linear(d["x"], d["w"], d["b"]))),
    ("rms_norm", lambda lib, d: _F(lib).rms_norm(d["x"], (8,), d["g"], eps=1e-6)),
    ("softmax of scaled", lambda lib, d: _F(lib).softmax(d["x"] * 0.5, dim=-1)),
    ("matmul 3-D @ 2-D + add", lambda lib, d: d["x"] @ d["m"] + 1),
    ("cat + index", lambda lib, d: lib.cat([d["x"], d["y"]], dim=1)[:, d["idx"][1]]),
    ("embedding + mul", lambda lib, d: _F(lib).embedding(d["idx"], d["table"]) * d["y"]),
    ("layer_norm + gelu", lambda lib, d: _F(lib).gelu(_F(lib).layer_norm(d["x"], (8,)))),
    ("residual rms block", lambda lib, d: _F(lib).linear(
        _F(lib).rms_norm(d["x"] + d["y"], (8,), d["g"]), d["w"]).sum(-1)),
]


@pytest.mark.parametrize("program", [p for _, p in LAUNCH_PROGRAMS],
                         ids=[n for n, _ in LAUNCH_PROGRAMS])
def test_program_launches_match_torch_op_for_op(
        program: Callable[[Any, dict[str, Any]], Any]) -> None:
    their_inputs = _inputs(torch, None)
    with torch_launches(cuda=True) as expected:
        theirs = program(torch, their_inputs)
    our_inputs = _inputs(ft, "cuda")
    with launches() as ops:
        ours = program(ft, our_inputs)
    diff = "\n".join(difflib.unified_diff(expected, ops, "torch", "fake_torch", lineterm=""))
    assert ops == expected, f"launch lists differ:\n{diff}"
    np.testing.assert_allclose(to_numpy(ours).astype(np.float64),
                               to_numpy(theirs).astype(np.float64), rtol=1e-4, atol=1e-4)
