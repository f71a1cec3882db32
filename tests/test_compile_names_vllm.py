"""Names vLLM's compile path reaches (issue 25), each against real torch 2.13 CPU:
OpOverloadPacket._qualified_op_name, torch._inductor.compile_fx.graph_returns_tuple,
torch._functorch._aot_autograd.autograd_cache.AOTAutogradCache, mark_unbacked's keyword
arguments (kept on the tensor under torch's attribute names), torch.compiler's guard
filters."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import fake_torch as ft


def test_qualified_op_name_is_torchs() -> None:
    torch = pytest.importorskip("torch")
    for name in ("add", "mm", "topk"):
        assert getattr(ft.ops.aten, name)._qualified_op_name == \
            getattr(torch.ops.aten, name)._qualified_op_name == f"aten::{name}"
    lib = ft.library.Library("fakecn", "FRAGMENT")
    lib.define("twice(Tensor x) -> Tensor")
    assert ft.ops.fakecn.twice._qualified_op_name == "fakecn::twice"


def _graphs(lib: Any) -> list[Any]:
    """Graphs returning: a tuple, a list, one node, one node of a two-tensor operator."""
    out = []
    for kind in ("tuple", "list", "node", "multi"):
        graph = lib.fx.Graph()
        x = graph.placeholder("x")
        if kind == "multi":
            node = graph.call_function(lib.ops.aten.topk.default, (x, 2))
        else:
            node = graph.call_function(lib.ops.aten.relu.default, (x,))
        graph.output((node,) if kind == "tuple" else [node] if kind == "list" else node)
        out.append(lib.fx.GraphModule(lib.nn.Module(), graph))
    return out


def test_graph_returns_tuple_is_torchs() -> None:
    pytest.importorskip("torch")
    import torch
    from torch._inductor.compile_fx import graph_returns_tuple as theirs

    from fake_torch._inductor.compile_fx import graph_returns_tuple as ours

    their_answers = [theirs(gm) for gm in _graphs(torch)]
    assert their_answers == [True, True, False, True]
    # fake_torch's aten overloads carry no return schema: a two-tensor aten op is unknown
    assert [ours(gm) for gm in _graphs(ft)] == [True, True, False, False]
    assert ours(object()) is theirs(object()) is True  # type: ignore[arg-type]
    lib = ft.library.Library("fakecn2", "FRAGMENT")
    lib.define("pair(Tensor x) -> (Tensor a, Tensor b)")
    graph = ft.fx.Graph()
    node = graph.call_function(ft.ops.fakecn2.pair.default, (graph.placeholder("x"),))
    graph.output(node)
    assert ours(ft.fx.GraphModule(ft.nn.Module(), graph)) is True


def test_autograd_cache_module_has_what_vllm_reads() -> None:
    pytest.importorskip("torch")
    from torch._functorch._aot_autograd import autograd_cache as theirs

    from fake_torch._functorch._aot_autograd import autograd_cache as ours

    # vLLM patches _get_shape_env where it exists; outside a compile it finds none
    assert ours.AOTAutogradCache._get_shape_env() is theirs.AOTAutogradCache._get_shape_env() \
        is None
    ours.AOTAutogradCache.clear()
    for name in ("clear", "try_load", "save", "_get_shape_env"):
        assert [p.name for p in inspect.signature(getattr(ours.AOTAutogradCache, name))
                .parameters.values()] == \
            [p.name for p in inspect.signature(getattr(theirs.AOTAutogradCache, name))
             .parameters.values()], name
    with pytest.raises(NotImplementedError, match=r"AOTAutogradCache\.try_load"):
        ours.AOTAutogradCache.try_load(None, [], None, None, True, False)


_MARKS = ("_dynamo_unbacked_indices", "_dynamo_hint_overrides", "_dynamo_shape_ids",
          "_dynamo_unbacked_bounds", "_dynamo_strict_unbacked_indices", "_specialize_on")


def _marks(t: Any) -> dict[str, Any]:
    return {k: getattr(t, k) for k in _MARKS if hasattr(t, k)}


@pytest.mark.parametrize("kwargs", [
    {"index": 0},
    {"index": 0, "hint_override": 64, "shape_id": "tokens"},
    {"index": [0, 1], "hint_override": 64, "shape_id": "s", "min": 2, "max": 9},
    {"index": 1, "strict": True},
    {"index": 0, "min": 1, "specialize_on": []},
])
def test_mark_unbacked_keeps_torchs_marks(kwargs: dict[str, Any]) -> None:
    torch = pytest.importorskip("torch")
    ours, theirs = ft.ones(3, 4), torch.ones(3, 4)
    index = kwargs.pop("index")
    ft._dynamo.decorators.mark_unbacked(ours, index, **kwargs)
    torch._dynamo.decorators.mark_unbacked(theirs, index, **kwargs)
    assert _marks(ours) == _marks(theirs)
    marked = {index} if isinstance(index, int) else set(index)
    assert ours._dynamo_dynamic_indices == marked


def test_guard_filters_are_in_torch_compiler() -> None:
    torch = pytest.importorskip("torch")
    for name in ("skip_all_guards_unsafe", "keep_tensor_guards_unsafe",
                 "skip_guard_on_globals_unsafe", "keep_portable_guards_unsafe",
                 "skip_guard_on_all_nn_modules_unsafe",
                 "skip_guard_on_inbuilt_nn_modules_unsafe"):
        ours, theirs = getattr(ft.compiler, name), getattr(torch.compiler, name)
        assert list(inspect.signature(ours).parameters) == \
            list(inspect.signature(theirs).parameters), name
