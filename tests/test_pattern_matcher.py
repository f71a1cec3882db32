"""torch._inductor.pattern_matcher against real torch 2.13: each scenario builds the same fx
graph and the same patterns in one library (`lib` is torch or fake_torch) and reports what the
matcher did: the match count, the handler's arguments, the rewritten graph's targets in order,
pattern text. A test asserts that both libraries report the same, and what they report."""

from __future__ import annotations

import importlib
import operator
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

import fake_torch
from fake_torch._subclasses.fake_tensor import FakeTensorMode

torch = pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")


def _pm(lib: ModuleType) -> Any:
    return importlib.import_module(f"{lib.__name__}._inductor.pattern_matcher")


def _name(target: Any) -> str:
    """A node target, comparable across the libraries."""
    if isinstance(target, str):
        return target
    if isinstance(target, type):
        return f"module:{target.__name__}"
    if type(target).__name__ == "OpOverload":
        return str(target)
    return str(getattr(target, "__name__", target))


def _targets(graph: Any) -> list[str]:
    return [f"{n.op}:{_name(n.target)}" for n in graph.nodes]


def _both(scenario: Callable[[ModuleType], Any]) -> Any:
    """The scenario's report in fake_torch, after asserting torch reports the same."""
    expected, got = scenario(torch), scenario(fake_torch)
    assert got == expected
    return got


def _with_vals(lib: ModuleType, gm: Any, *shapes: tuple[int, ...]) -> Any:
    """Give each placeholder a fake example value (meta["val"]) of the given shape, as a
    compiler's graph has them (register_replacement's check reads them)."""
    mode = importlib.import_module(f"{lib.__name__}._subclasses.fake_tensor").FakeTensorMode()
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for node, shape in zip(placeholders, shapes, strict=True):
        node.meta["val"] = mode.from_tensor(lib.randn(*shape))
    return gm


# --- register_graph_pattern ---------------------------------------------------------------------


def _add_to_sub(lib: ModuleType) -> dict[str, Any]:
    pm = _pm(lib)

    def f(x: Any, y: Any) -> Any:
        a = lib.add(x, y)
        return lib.relu(lib.add(a, y))

    gm = lib.fx.symbolic_trace(f)
    pass_ = pm.PatternMatcherPass(pass_name="add_to_sub")
    seen: list[tuple[Any, ...]] = []

    def handler(match: Any, x: Any, y: Any) -> None:
        seen.append((str(x), str(y), [str(n) for n in match.nodes], str(match.output_node())))
        sub = match.graph.call_function(lib.sub, (x, y))
        match.output_node().replace_all_uses_with(sub)
        match.erase_nodes()

    pm.register_graph_pattern(pm.CallFunction(lib.add, pm.KeywordArg("x"), pm.KeywordArg("y")),
                              pass_dict=pass_)(handler)
    count = pass_.apply(gm.graph)
    gm.recompile()
    out = gm(lib.ones(2), lib.full((2,), 3.0)).tolist()
    return {"count": count, "seen": seen, "targets": _targets(gm.graph), "out": out,
            "keys": [(op, _name(t)) for op, t in pass_.patterns]}


def test_graph_pattern_handler_gets_match_and_kwargs_last_node_first() -> None:
    got = _both(_add_to_sub)
    assert got["count"] == 2
    # the candidates are visited last to first: the outer add, then the one feeding it
    assert got["seen"] == [("add", "y", ["add_1"], "add_1"), ("x", "y", ["add"], "add")]
    assert got["out"] == [0.0, 0.0]  # relu((1 - 3) - 3)
    assert got["keys"] == [("call_function", "add")]


def _users_and_multiple(lib: ModuleType) -> list[int]:
    pm = _pm(lib)

    def f(x: Any, y: Any) -> Any:
        a = lib.add(x, y)
        return lib.relu(a) * a

    counts = []
    for users in (1, pm.MULTIPLE, 2):
        gm = lib.fx.symbolic_trace(f)
        pass_ = pm.PatternMatcherPass()
        inner = pm.CallFunction(lib.add, pm.Arg(), pm.Arg(), _users=users)
        pm.register_graph_pattern(pm.CallFunction(lib.relu, inner), pass_dict=pass_)(
            lambda match, *args: None)
        counts.append(pass_.apply(gm))
    return counts


def test_users_count_must_match_unless_multiple() -> None:
    # the add has two users: a one-user pattern misses it, MULTIPLE and _users=2 match it
    assert _both(_users_and_multiple) == [0, 1, 1]


def _extra_check_prepend_and_exclusive(lib: ModuleType) -> dict[str, Any]:
    pm = _pm(lib)

    def f(x: Any, y: Any) -> Any:
        return lib.add(lib.add(x, x), y)

    gm = lib.fx.symbolic_trace(f)
    pass_ = pm.PatternMatcherPass()
    calls: list[str] = []
    exclusive = pm.CallFunction(lib.add, pm.ExclusiveKeywordArg("a"), pm.ExclusiveKeywordArg("b"))
    pm.register_graph_pattern(exclusive, pass_dict=pass_)(
        lambda match, a, b: calls.append(f"exclusive:{a},{b}"))
    pm.register_graph_pattern(pm.CallFunction(lib.add, pm.Arg(), pm.Arg()),
                              extra_check=lambda m: False, pass_dict=pass_, prepend=True)(
        lambda match, *args: calls.append("never"))
    count = pass_.apply(gm)
    return {"count": count, "calls": calls,
            "order": [e.handler.__name__ for e in pass_[("call_function", lib.add)]]}


def test_extra_check_prepend_and_exclusive_args() -> None:
    got = _both(_extra_check_prepend_and_exclusive)
    # add(x, x) takes the same node twice: exclusive args refuse it; the prepended entry
    # runs first each time but its extra_check refuses, so it is not counted
    assert got["count"] == 1 and got["calls"] == ["exclusive:add,y"]
    assert got["order"] == ["<lambda>", "<lambda>"]


def _mutation_barrier(lib: ModuleType) -> list[int]:
    pm = _pm(lib)

    def spans(x: Any, y: Any) -> Any:
        a = lib.add(x, y)
        y.add_(1)  # an in-place op between the add and the relu
        return lib.relu(a)

    def inside(x: Any, y: Any) -> Any:
        y.add_(1)
        return lib.relu(lib.add(x, y))

    counts = []
    for f in (spans, inside):
        gm = lib.fx.symbolic_trace(f)
        pass_ = pm.PatternMatcherPass()
        pm.register_graph_pattern(
            pm.CallFunction(lib.relu, pm.CallFunction(lib.add, pm.Arg(), pm.Arg())),
            pass_dict=pass_)(lambda match, *args: None)
        counts.append(pass_.apply(gm))
    return counts


def test_a_match_across_a_mutation_is_discarded() -> None:
    assert _both(_mutation_barrier) == [0, 1]


def _list_of_and_methods(lib: ModuleType) -> dict[str, Any]:
    pm = _pm(lib)

    def f(x: Any, y: Any) -> Any:
        return lib.cat([lib.relu(x), lib.relu(y)]).view(-1, 2).sum()

    gm = lib.fx.symbolic_trace(f)
    pass_ = pm.PatternMatcherPass()
    got: dict[str, Any] = {}
    listed = pm.CallFunction(lib.cat, pm.ListOf(pm.CallFunction(lib.relu, pm.Arg())))
    pm.register_graph_pattern(listed, pass_dict=pass_)(
        lambda match, *args: got.setdefault("cat", (repr(args), len(match.nodes))))
    pm.register_graph_pattern(pm.CallMethodVarArgs("view"), pass_dict=pass_)(
        lambda match, *args, **kwargs: got.setdefault("view", repr(args)))
    pm.register_graph_pattern(pm.CallMethod("sum", pm.KeywordArg("t")), pass_dict=pass_)(
        lambda match, t: got.setdefault("sum", str(t)))
    got["count"] = pass_.apply(gm)
    got["partial"] = repr(pm.CallFunction(lib.cat, pm.ListOf(pm.Arg(), partial=True)))
    return got


def test_list_of_and_method_patterns() -> None:
    got = _both(_list_of_and_methods)
    assert got["count"] == 3
    assert got["cat"] == ("(((x,), (y,)),)", 3)  # one bundled tuple per list element
    assert got["view"] == "(cat, -1, 2)" and got["sum"] == "view"


def _call_module(lib: ModuleType) -> dict[str, Any]:
    pm = _pm(lib)

    class M(lib.nn.Module):  # type: ignore[name-defined, misc]
        def __init__(self) -> None:
            super().__init__()
            self.act = lib.nn.ReLU()
            self.lin = lib.nn.Linear(2, 2)

        def forward(self, x: Any) -> Any:
            return self.act(self.lin(x))

    gm = lib.fx.symbolic_trace(M())
    pass_ = pm.PatternMatcherPass()
    seen = []
    pm.register_graph_pattern(pm.CallModule(lib.nn.ReLU, pm.CallModuleVarArgs(lib.nn.Linear)),
                              pass_dict=pass_)(
        lambda match, *args: seen.append([str(n) for n in match.nodes]))
    return {"count": pass_.apply(gm), "seen": seen,
            "keys": [(op, _name(t)) for op, t in pass_.patterns]}


def test_call_module_patterns_key_by_module_class() -> None:
    got = _both(_call_module)
    assert got == {"count": 1, "seen": [["lin", "act"]],
                   "keys": [("call_module", "module:ReLU")]}


def scaled(x: Any, scale: float = 2.0) -> Any:
    return x * scale


def _kwarg_defaults(lib: ModuleType) -> list[int]:
    pm = _pm(lib)
    counts = []
    for scale in (2.0, 3.0):
        graph = lib.fx.Graph()
        x = graph.placeholder("x")
        graph.output(graph.call_function(scaled, (x,)))
        pass_ = pm.PatternMatcherPass()
        pm.register_graph_pattern(pm.CallFunction(scaled, pm.KeywordArg("x"), scale=scale),
                                  pass_dict=pass_)(lambda match, x: None)
        counts.append(pass_.apply(lib.fx.GraphModule({}, graph)))
    return counts


def test_a_pattern_kwarg_left_to_its_default_matches_the_default() -> None:
    assert _both(_kwarg_defaults) == [1, 0]


def _failed_match(lib: ModuleType) -> list[Any]:
    pm = _pm(lib)
    gm = lib.fx.symbolic_trace(lambda x: lib.relu(lib.add(x, 1)))
    relu = next(n for n in gm.graph.nodes if n.op == "call_function" and n.target is lib.relu)
    hit = pm.CallFunction(lib.relu, pm.CallFunction(lib.add, pm.KeywordArg("x"), 1)).match(relu)
    miss = pm.CallFunction(lib.relu, pm.CallFunction(lib.add, pm.Arg(), 2)).match(relu)
    wrong = pm.CallFunction(lib.sigmoid, pm.Arg()).match(relu)
    return [bool(hit), repr(hit), [str(n) for n in hit.nodes], bool(miss), str(miss),
            bool(wrong), type(wrong).__name__]


def test_match_and_failed_match() -> None:
    got = _both(_failed_match)
    assert got[:4] == [True, "Match(..., [], {'x': x})", ["add", "relu"], False]
    assert got[4] == "constant_args: add 1!=2" and got[5:] == [False, "FailedMatch"]


# --- the vLLM IR lowering pass's way: CallFunctionVarArgs over ops, replace_with_graph -------


def _lowering_pass(lib: ModuleType) -> dict[str, Any]:
    pm = _pm(lib)

    def f(x: Any, y: Any) -> Any:
        return lib.sigmoid(lib.relu(x) + lib.relu(y))

    gm = lib.fx.symbolic_trace(f)
    ops = [lib.relu, lib.sigmoid]
    pass_ = pm.PatternMatcherPass("lowering")
    impls = {lib.relu: lambda t: lib.clamp(t, min=0.0),
             lib.sigmoid: lambda t: lib.reciprocal(lib.exp(lib.neg(t)) + 1)}
    lowered: list[str] = []

    def lower_matched_op(match: Any, *args: Any, **kwargs: Any) -> None:
        assert len(match.nodes) == 1
        node = match.nodes[0]
        lowered.append(node.name)
        replacement = lib.fx.symbolic_trace(impls[node.target])
        match.replace_with_graph(replacement, list(node.args))

    pm.register_graph_pattern(pm.CallFunctionVarArgs(ops), pass_dict=pass_)(lower_matched_op)
    count = pass_.apply(gm.graph)
    gm.graph.lint()
    gm.recompile()
    x, y = lib.tensor([-1.0, 2.0]), lib.tensor([3.0, -4.0])
    return {"count": count, "lowered": lowered, "targets": _targets(gm.graph),
            "out": [round(v, 6) for v in gm(x, y).tolist()]}


def test_vllm_style_lowering_of_every_op_in_a_list() -> None:
    got = _both(_lowering_pass)
    assert got["count"] == 3 and got["lowered"] == ["sigmoid", "relu_1", "relu"]
    assert got["targets"] == [
        "placeholder:x", "placeholder:y", "call_function:clamp", "call_function:clamp",
        "call_function:add", "call_function:neg", "call_function:exp", "call_function:add",
        "call_function:reciprocal", "output:output"]
    # sigmoid(relu(-1) + relu(3)), sigmoid(relu(2) + relu(-4))
    assert got["out"] == [round(1 / (1 + 2.718281828459045 ** -k), 6) for k in (3, 2)]


# --- fx_to_pattern, PatternPrettyPrinter ---------------------------------------------------------


def _printed(lib: ModuleType) -> dict[str, str]:
    pm = _pm(lib)

    def f(x: Any, w: Any, b: Any) -> Any:
        h = lib.mm(x, w)
        return lib.relu(h + b) * h.view(-1, 4).sum(1, keepdim=True)

    gm = lib.fx.symbolic_trace(f)
    methods_out = {}
    for ignore in ((), (int,)):
        try:
            pattern = pm.fx_to_pattern(gm, ignore_types=ignore, argnames=["x", "w", "b"])
            methods_out[str(ignore)] = pm.PatternPrettyPrinter.run(pattern)
        except NotImplementedError:
            methods_out[str(ignore)] = "NotImplementedError"
    graph = lib.fx.Graph()
    x, w = graph.placeholder("x_1"), graph.placeholder("w")
    mm = graph.call_function(lib.mm, (x, w))
    neg = graph.call_function(operator.neg, (mm,))
    graph.output((graph.call_function(lib.relu, (mm,)), neg))
    pattern = pm.fx_to_pattern(lib.fx.GraphModule({}, graph),
                               scalar_workaround={"eps": 1e-6}, exclusive_arg_names=["w"])
    methods_out["multi"] = pm.PatternPrettyPrinter.run(pattern, output_name="p")
    methods_out["repr"] = repr(pattern)
    return methods_out


def test_fx_to_pattern_and_its_printed_text() -> None:
    got = _both(_printed)
    assert got["()"] == "NotImplementedError"  # call_method nodes (view, sum) are refused
    assert got["multi"] == (
        "mm = CallFunction(torch.mm, KeywordArg('x'), ExclusiveKeywordArg('w'), _users=2)\n"
        "relu = CallFunction(torch.relu, mm)\n"
        "operator_neg = CallFunction(operator.neg, mm)\n"
        "p = MultiOutputPattern([relu,\n  operator_neg\n])")
    assert got["repr"].startswith("MultiOutputPattern([CallFunction(torch.relu, ")


# --- stable_topological_sort ---------------------------------------------------------------------


def _sorted_order(lib: ModuleType) -> list[str]:
    pm = _pm(lib)
    graph = lib.fx.Graph()
    x = graph.placeholder("x")
    a = graph.call_function(lib.relu, (x,))
    b = graph.call_function(lib.neg, (a,))
    c = graph.call_function(lib.exp, (x,))
    d = graph.call_function(lib.add, (b, c))
    graph.output(d)
    x.append(d)  # out of order: x, add, neg, relu, exp
    d.append(b)
    pm.stable_topological_sort(graph)
    graph.lint()
    return [n.name for n in graph.nodes]


def test_stable_topological_sort() -> None:
    # each node waits for its last unready input; the rest keep their relative order
    assert _both(_sorted_order) == ["x", "relu", "neg", "exp", "add", "output"]


# --- register_replacement -----------------------------------------------------------------------


def _replacement(lib: ModuleType, *, exact_rows: int | None = None,
                 use_search_pattern: bool = False) -> dict[str, Any]:
    """relu(mm(a, b)) -> sigmoid(mm(a, b)) + 0 in a model that has it twice at two shapes; the
    trace function is symbolic_trace (torch's own fwd_only would give aten graphs)."""
    pm = _pm(lib)
    traced: list[str] = []

    def trace_fn(fn: Any, args: Any, **kwargs: Any) -> Any:
        traced.append(fn.__name__)
        return lib.fx.symbolic_trace(fn)

    def search(a: Any, b: Any) -> Any:
        return lib.relu(lib.mm(a, b))

    def replace(a: Any, b: Any) -> Any:
        return lib.sigmoid(lib.mm(a, b)) + 0

    def extra_check(match: Any) -> bool:
        return exact_rows is None or match.kwargs["a"].meta["val"].shape[0] == exact_rows

    def model(x: Any, w: Any, y: Any) -> Any:
        return lib.relu(lib.mm(x, w)) + lib.relu(lib.mm(y, w)).sum()

    gm = _with_vals(lib, lib.fx.symbolic_trace(model), (2, 3), (3, 4), (5, 3))
    pass_ = pm.PatternMatcherPass()
    example = [lib.empty(2, 3), lib.empty(3, 4)]
    kwargs: dict[str, Any] = {}
    if use_search_pattern:
        kwargs["search_fn_pattern"] = pm.fx_to_pattern(trace_fn(search, example),
                                                       argnames=["a", "b"])
    registered = pm.register_replacement(search, replace, example, trace_fn, pass_,
                                         extra_check=extra_check, **kwargs)
    count = pass_.apply(gm)
    gm.graph.lint()
    gm.recompile()
    x, w, y = lib.ones(2, 3), lib.ones(3, 4), lib.ones(5, 3)
    return {"registered": pm.PatternPrettyPrinter.run(registered), "count": count,
            "traced": traced, "targets": _targets(gm.graph),
            "out": [round(v, 4) for v in gm(x, w, y).flatten().tolist()][:3]}


def test_register_replacement_replaces_every_match() -> None:
    got = _both(_replacement)
    # the output pattern counts the output node's users (0): it matches as the match's output
    assert got["registered"] == ("mm = CallFunction(torch.mm, KeywordArg('a'), KeywordArg('b'))"
                                 "\noutput = CallFunction(torch.relu, mm, _users=0)")
    assert got["count"] == 2
    # one trace to build the pattern; per match, the exact search pattern and the replacement
    assert got["traced"] == ["search", "search", "replace", "search", "replace"]
    assert got["targets"] == [
        "placeholder:x", "placeholder:w", "placeholder:y", "call_function:mm",
        "call_function:sigmoid", "call_function:add", "call_function:mm",
        "call_function:sigmoid", "call_function:add", "call_method:sum", "call_function:add",
        "output:output"]


def test_register_replacement_extra_check_sees_the_matched_shapes() -> None:
    got = _both(lambda lib: _replacement(lib, exact_rows=5))
    assert got["count"] == 1  # only the (5, 3) @ (3, 4) product
    assert got["targets"][3:6] == ["call_function:mm", "call_function:relu",
                                   "call_function:mm"]


def test_register_replacement_with_a_given_search_pattern() -> None:
    got = _both(lambda lib: _replacement(lib, use_search_pattern=True))
    assert got["count"] == 2
    # the given pattern is used as is: no search trace at registration nor per match
    assert got["traced"] == ["search", "replace", "replace"]


def _duplicate(lib: ModuleType) -> str:
    pm = _pm(lib)

    def trace_fn(fn: Any, args: Any, **kwargs: Any) -> Any:
        return lib.fx.symbolic_trace(fn)

    def search(a: Any) -> Any:
        return lib.relu(a)

    pass_ = pm.PatternMatcherPass()
    example = [lib.empty(2)]
    pm.register_replacement(search, search, example, trace_fn, pass_)
    skipped = pm.register_replacement(search, search, example, trace_fn, pass_,
                                      skip_duplicates=True)
    try:
        pm.register_replacement(search, search, example, trace_fn, pass_)
    except RuntimeError as e:
        return f"{skipped}|{str(e).splitlines()[0]}"
    return "no error"


def test_a_duplicate_replacement_is_refused_or_skipped() -> None:
    assert _both(_duplicate) == ("False|Duplicate pattern: output = CallFunction(torch.relu, "
                                 "KeywordArg('a'), _users=0) with duplicated match graph "
                                 "graph():")


def _fwd_only_replacement(lib: ModuleType) -> tuple[str, int, list[str]]:
    """register_replacement with the real fwd_only (make_fx plus inductor's decompositions):
    the pattern it registers, the matches in a make_fx graph, the rewritten targets."""
    pm = _pm(lib)
    relu: Any = lib.relu

    def search(x: Any) -> Any:
        return relu(x) * 2

    def replace(x: Any) -> Any:
        return relu(x) + relu(x)

    p = pm.PatternMatcherPass()
    pm.register_replacement(search, replace, [lib.empty(3)], pm.fwd_only, p)
    pattern = repr(next(iter(p.patterns.values()))[0].pattern)
    make_fx = importlib.import_module(lib.__name__ + ".fx.experimental.proxy_tensor").make_fx
    gm = make_fx(lambda x: relu(x) * 2 + 1)(lib.randn(3))
    count = p.apply(gm.graph)
    return pattern, count, [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def test_register_replacement_with_fwd_only_rewrites_a_make_fx_graph_as_torch() -> None:
    torch = pytest.importorskip("torch")
    assert _fwd_only_replacement(fake_torch) == _fwd_only_replacement(torch)


def _replace_by_example(lib: ModuleType) -> dict[str, Any]:
    """vLLM's IR lowering: each matched op node is replaced by tracing its implementation on
    the node's example values (trace_fn given: torch's default is fwd_only)."""
    pm = _pm(lib)
    traced: list[list[tuple[int, ...]]] = []

    def trace_fn(fn: Any, args: Any, **kwargs: Any) -> Any:
        traced.append([tuple(a.shape) for a in args])
        return lib.fx.symbolic_trace(fn)

    def impl(t: Any, s: Any) -> Any:
        return lib.sub(t, s) * 2

    def f(x: Any, y: Any) -> Any:
        return lib.add(lib.mul(x, y), y)

    gm = _with_vals(lib, lib.fx.symbolic_trace(f), (2, 3), (2, 3))
    for node in gm.graph.nodes:  # the mul's value too: the add reads it
        if node.target is lib.mul:
            node.meta["val"] = node.args[0].meta["val"]
    pass_ = pm.PatternMatcherPass()
    added: list[list[str]] = []

    def lower(match: Any, *args: Any, **kwargs: Any) -> None:
        nodes = match.replace_by_example(impl, list(match.nodes[0].args), trace_fn=trace_fn,
                                         run_functional_passes=False)
        added.append([str(n.target.__name__) for n in nodes])

    pm.register_graph_pattern(pm.CallFunctionVarArgs([lib.add, lib.mul]), pass_dict=pass_)(lower)
    count = pass_.apply(gm)
    gm.recompile()
    out = gm(lib.ones(2, 3), lib.full((2, 3), 3.0))
    return {"count": count, "traced": traced, "added": added, "targets": _targets(gm.graph),
            "out": out[0].tolist()}


def test_replace_by_example_with_a_trace_fn() -> None:
    got = _both(_replace_by_example)
    assert got["count"] == 2 and got["traced"] == [[(2, 3), (2, 3)]] * 2
    assert got["added"] == [["sub", "mul"]] * 2
    assert got["out"] == [-14.0] * 3  # ((1 - 3) * 2 - 3) * 2


def _lowering_and_multi_output(lib: ModuleType) -> dict[str, Any]:
    pm = _pm(lib)

    def f(x: Any, y: Any) -> Any:
        s = lib.add(x, y)
        return lib.relu(s), lib.neg(s)

    gm = lib.fx.symbolic_trace(f)
    pass_ = pm.PatternMatcherPass()
    shared = pm.CallFunction(lib.add, pm.KeywordArg("x"), pm.KeywordArg("y"), _users=2)
    both = pm.MultiOutputPattern([pm.CallFunction(lib.relu, shared),
                                  pm.CallFunction(lib.neg, shared)])
    seen: list[Any] = []

    def fused(match: Any, x: Any, y: Any) -> None:
        seen.append(([str(n) for n in match.nodes], [str(n) for n in match.output_nodes()]))

    pm.register_graph_pattern(both, pass_dict=pass_)(fused)
    multi_count = pass_.apply(gm)

    lowering = pm.PatternMatcherPass()

    def add_relu(match: Any, x: Any, y: Any) -> Any:
        return lib.relu(x + y)

    pm.register_lowering_pattern(pm.CallFunction(lib.relu, shared), pass_dict=lowering)(add_relu)
    low_count = lowering.apply(gm)
    gm.recompile()
    return {"multi": multi_count, "seen": seen, "low": low_count,
            "targets": _targets(gm.graph),
            "out": [t.tolist() for t in gm(lib.tensor([1.0]), lib.tensor([-3.0]))],
            "flag": getattr(add_relu, "_inductor_lowering_function", None)}


def test_multi_output_and_lowering_patterns() -> None:
    got = _both(_lowering_and_multi_output)
    assert got["multi"] == 1
    assert got["seen"] == [(["add", "relu", "neg"], ["relu", "neg"])]
    # the lowering pattern's add has two users; its relu becomes one node calling the handler
    assert got["low"] == 1 and got["flag"] is True
    assert got["targets"] == ["placeholder:x", "placeholder:y", "call_function:add",
                              "call_function:add_relu", "call_function:neg", "output:output"]
    assert got["out"] == [[0.0], [2.0]]


def _generated(lib: ModuleType) -> dict[str, Any]:
    """fake_torch's gen_register_replacement generates the pattern torch would have loaded from
    its serialized files (made by gen_pattern): the same as registering gen_pattern's result."""
    pm = _pm(lib)

    def trace_fn(fn: Any, args: Any, **kwargs: Any) -> Any:
        return lib.fx.symbolic_trace(fn)

    def search(a: Any) -> Any:
        return lib.relu(lib.neg(a))

    def replace(a: Any) -> Any:
        return lib.clamp(lib.neg(a), min=0.0)

    gm = _with_vals(lib, lib.fx.symbolic_trace(lambda x: search(x) + 1), (3,))
    pass_ = pm.PatternMatcherPass()
    example = [lib.empty(3)]
    if lib is fake_torch:
        pm.gen_register_replacement("relu_neg", search, replace, example, trace_fn, pass_)
    else:  # torch has no serialized file for our function: register what it would hold
        pm.register_replacement(search, replace, example, trace_fn, pass_,
                                search_fn_pattern=pm.gen_pattern(search, example, trace_fn),
                                pattern_name="relu_neg")
    entry = pass_[("call_function", lib.relu)][0]
    return {"name": entry.pattern_name, "pattern": pm.PatternPrettyPrinter.run(entry.pattern),
            "count": pass_.apply(gm), "targets": _targets(gm.graph)}


def test_gen_register_replacement_registers_the_generated_pattern() -> None:
    got = _both(_generated)
    assert got["name"] == "relu_neg" and got["count"] == 1
    assert got["targets"][1:4] == ["call_function:neg", "call_function:clamp",
                                   "call_function:add"]


def _init_once(lib: ModuleType) -> list[Any]:
    pm = _pm(lib)
    fake = importlib.import_module(f"{lib.__name__}._subclasses.fake_tensor").FakeTensor
    calls: list[bool] = []

    def init() -> str:
        calls.append(isinstance(lib.empty(2), fake))  # patterns are traced on fake tensors
        return "done"

    lazy_init = pm.init_once_fakemode(init)

    return [lazy_init(), lazy_init(), calls, isinstance(lib.empty(2), fake)]


def test_init_once_fakemode_runs_once_under_a_fake_mode() -> None:
    assert _both(_init_once) == ["done", "done", [True], False]


def _reprs_and_errors(lib: ModuleType) -> list[Any]:
    pm = _pm(lib)
    inner = pm.CallFunction(lib.add, pm.KeywordArg("x"), pm.Ignored(), _users=2)
    outer = pm.CallFunction([lib.relu, lib.sigmoid], inner, alpha=1.5)
    same = pm.CallFunction([lib.relu, lib.sigmoid],
                           pm.CallFunction(lib.add, pm.KeywordArg("x"), pm.Ignored(), _users=2),
                           alpha=1.5)
    graph = lib.fx.Graph()
    x = graph.placeholder("x")
    graph.output(graph.call_function(operator.mul, (x, 0.5)))
    scalar = pm.fx_to_pattern(lib.fx.GraphModule({}, graph), scalar_workaround={"scale": 0.5})
    got: list[Any] = [repr(outer), repr(pm.CallMethodVarArgs("view", pm.MULTIPLE)),
                      outer.pattern_eq(same), outer.pattern_eq(inner), repr(scalar)]
    pass_ = pm.PatternMatcherPass()
    pm.register_graph_pattern(inner, pass_dict=pass_)(lambda match, x: None)
    bad: Callable[[], Any]
    for bad in (lambda: pass_.apply("graph"),
                lambda: pm.register_replacement(scaled, scaled, 1, lambda f, a: None, pass_)):
        try:
            bad()
        except (RuntimeError, TypeError) as e:
            got.append(f"{type(e).__name__}: {e}")
    return got


def test_pattern_reprs_and_bad_input() -> None:
    got = _both(_reprs_and_errors)
    assert got[:2] == ["CallFunction([relu, ...], CallFunction(torch.add, KeywordArg('x'), *, "
                       "_users=2), alpha=1.5)", "CallMethodVarArgs(view, MULTIPLE)"]
    assert got[2:5] == [True, False,
                        "CallFunction(operator.mul, KeywordArg('x'), KeywordArg('scale'), "
                        "_users=0)"]
    assert got[5:] == [
        "RuntimeError: The input to PatternMatcherPass must be a GraphModule or a Graph, but "
        "got <class 'str'>",
        "TypeError: example_inputs must be a list or tuple, got <class 'int'>"]


def _aten_graph(lib: ModuleType) -> list[Any]:
    """A graph of aten OpOverloads (what fwd_only makes); a packet in a pattern stands for
    each of its overloads."""
    pm = _pm(lib)
    aten = lib.ops.aten
    graph = lib.fx.Graph()
    x, w = graph.placeholder("x"), graph.placeholder("w")
    relu = graph.call_function(aten.relu.default, (graph.call_function(aten.mm.default, (x, w)),))
    graph.output(graph.call_function(aten.view.default, (relu, [-1, 4])))
    gm = lib.fx.GraphModule({}, graph)
    pattern = pm.fx_to_pattern(gm, ignore_types=(int, list))
    pass_ = pm.PatternMatcherPass()
    packets = pm.CallFunction(aten.relu, pm.CallFunction(aten.mm, pm.Arg(), pm.Arg()))
    pm.register_graph_pattern(packets, pass_dict=pass_)(lambda match, a, b: None)
    keys = {str(target) for _, target in pass_.patterns}
    return [pm.PatternPrettyPrinter.run(pattern), repr(packets), pass_.apply(gm),
            {"aten.relu", "aten.relu.default"} <= keys]


def test_aten_overload_graphs_and_packet_patterns() -> None:
    got = _both(_aten_graph)
    assert got == [
        "mm_default = CallFunction(aten.mm.default, KeywordArg('x'), KeywordArg('w'))\n"
        "relu_default = CallFunction(aten.relu.default, mm_default)\n"
        "output = CallFunction(aten.view.default, relu_default, Ignored(), _users=0)",
        "CallFunction([relu, ...], CallFunction([mm, ...], Arg(), Arg()))", 1, True]


def _fake_aten_trace(fn: Any, args: Any, **kwargs: Any) -> Any:
    """A stand-in for fwd_only in fake_torch (which has none yet): symbolic_trace, each torch
    call retargeted to its aten overload, every node's meta["val"] from running the graph on
    fake copies of `args`."""
    aten = fake_torch.ops.aten
    gm = fake_torch.fx.symbolic_trace(fn)
    for node in gm.graph.nodes:
        if node.op == "call_function":
            node.target = getattr(aten, getattr(node.target, "__name__", "")).default
    gm.recompile()
    mode = FakeTensorMode()

    class Prop(fake_torch.fx.Interpreter):
        def run_node(self, n: Any) -> Any:
            n.meta["val"] = value = super().run_node(n)
            return value

    with mode:
        Prop(gm).run(*[mode.from_tensor(a) for a in args])
    return gm


def _aten_replacement(lib: ModuleType) -> dict[str, Any]:
    """register_replacement over aten graphs: torch traces with its own fwd_only and make_fx,
    fake_torch with the stand-in above; the matches, checks and rewritten graphs agree."""
    pm = _pm(lib)

    def search(a: Any, b: Any) -> Any:
        return lib.relu(lib.mm(a, b))

    def replace(a: Any, b: Any) -> Any:
        return lib.sigmoid(lib.mm(a, b))

    def model(x: Any, w: Any, v: Any) -> Any:
        return lib.relu(lib.mm(lib.relu(lib.mm(x, w)), v))

    checked: list[list[tuple[int, ...]]] = []

    def extra_check(match: Any) -> bool:
        checked.append([tuple(match.kwargs[k].meta["val"].shape) for k in ("a", "b")])
        return True

    inputs = [lib.randn(2, 3), lib.randn(3, 4), lib.randn(4, 5)]
    if lib is fake_torch:
        trace_fn, gm = _fake_aten_trace, _fake_aten_trace(model, inputs)
    else:
        make_fx = importlib.import_module("torch.fx.experimental.proxy_tensor").make_fx
        trace_fn, gm = pm.fwd_only, make_fx(model, tracing_mode="fake")(*inputs)
    pass_ = pm.PatternMatcherPass()
    pm.register_replacement(search, replace, [lib.empty(2, 3), lib.empty(3, 4)], trace_fn,
                            pass_, extra_check=extra_check)
    count = pass_.apply(gm)
    gm.graph.lint()
    return {"count": count, "checked": checked,
            "nodes": [(n.name, _name(n.target)) for n in gm.graph.nodes
                      if n.op == "call_function"]}


def test_register_replacement_on_aten_graphs() -> None:
    got = _both(_aten_replacement)
    assert got["count"] == 2 and got["checked"] == [[(2, 4), (4, 5)], [(2, 3), (3, 4)]]
    assert got["nodes"] == [("mm_default_1", "aten.mm.default"),
                            ("sigmoid_default_1", "aten.sigmoid.default"),
                            ("mm_default", "aten.mm.default"),
                            ("sigmoid_default", "aten.sigmoid.default")]


def _symbolic_replacement(lib: ModuleType) -> dict[str, Any]:
    """register_replacement on the graph torch.compile(dynamic=True) hands a backend: the
    matched inputs' example values have symbolic sizes; the check re-traces the search function
    with the first new size symbol as an extra leading input, as torch does."""
    pm = _pm(lib)
    fake = importlib.import_module(f"{lib.__name__}._subclasses.fake_tensor").FakeTensor
    graphs: list[Any] = []

    def backend(gm: Any, example_inputs: Any) -> Any:
        graphs.append(gm)
        return gm.forward

    def model(x: Any, w: Any) -> Any:
        return lib.relu(lib.mm(x, w)) * 2

    lib.compile(model, backend=backend, dynamic=True)(lib.randn(6, 3), lib.randn(3, 4))
    gm = graphs[0]
    traced: list[tuple[str, list[str]]] = []

    def kind(a: Any) -> str:
        return "sym" if isinstance(a, lib.SymInt) else "fake" if isinstance(a, fake) else "real"

    def trace_fn(fn: Any, args: Any, **kwargs: Any) -> Any:
        """By hand: relu (sigmoid for the replacement) of mm of the last two inputs."""
        traced.append((fn.__name__, [kind(a) for a in args]))
        graph = lib.fx.Graph()
        inputs = [graph.placeholder(f"p{i}") for i in range(len(args))]
        op = lib.sigmoid if fn.__name__ == "replace" else lib.relu
        graph.output(graph.call_function(op, (graph.call_function(lib.mm, tuple(inputs[-2:])),)))
        return lib.fx.GraphModule({}, graph)

    def search(a: Any, b: Any) -> Any:
        return lib.relu(lib.mm(a, b))

    def replace(a: Any, b: Any) -> Any:
        return lib.sigmoid(lib.mm(a, b))

    pass_ = pm.PatternMatcherPass()
    pm.register_replacement(search, replace, [lib.empty(2, 3), lib.empty(3, 4)], trace_fn, pass_)
    return {"count": pass_.apply(gm), "traced": traced, "targets": _targets(gm.graph)}


def test_register_replacement_on_a_symbolic_dynamo_graph() -> None:
    got = _both(_symbolic_replacement)
    assert got["count"] == 1
    # s27 and s21 are not statically known to differ from s77: only s77 comes in as an input
    assert got["traced"] == [("search", ["real", "real"]),
                             ("search_fn_new", ["sym", "fake", "fake"]),
                             ("replace", ["fake", "fake"])]
    assert got["targets"][5:8] == ["call_function:mm", "call_function:sigmoid",
                                   "call_function:mul"]


def _repeated(lib: ModuleType) -> list[Any]:
    pm = _pm(lib)

    def f(x: Any) -> Any:
        parts = lib.split(x, 2)
        return lib.relu(parts[0]) + lib.relu(parts[1]) * parts[2]

    gm = lib.fx.symbolic_trace(f)
    split = pm.CallFunction(lib.split, pm.KeywordArg("x"), pm.Ignored(), _users=pm.MULTIPLE)
    getitem = pm.CallFunction(operator.getitem, split, pm.Ignored())
    pass_ = pm.PatternMatcherPass()
    seen: list[list[str]] = []
    pm.register_graph_pattern(pm.RepeatedExpr(getitem), pass_dict=pass_)(
        lambda match, x: seen.append([str(n) for n in match.nodes]))
    return [pass_.apply(gm), seen]


def test_repeated_expr_matches_every_sibling() -> None:
    count, seen = _both(_repeated)
    assert count == 3 and len(seen) == 3
    assert seen[0] == ["split", "getitem_2", "split", "getitem", "split", "getitem_1"]


def _aten_mutation_barrier(lib: ModuleType) -> list[int]:
    """An aten in-place op between the nodes of a match (torch reads its schema; fake_torch's
    schemaless aten ops by aten's naming) makes the match cross a mutation."""
    pm = _pm(lib)
    aten = lib.ops.aten

    def overload(packet: Any) -> Any:
        return getattr(packet, "Tensor", None) or packet.default

    counts = []
    for mutate in (True, False):
        graph = lib.fx.Graph()
        x, y = graph.placeholder("x"), graph.placeholder("y")
        a = graph.call_function(overload(aten.add), (x, y))
        if mutate:
            graph.call_function(overload(aten.add_), (y, x))
        graph.output(graph.call_function(aten.relu.default, (a,)))
        pass_ = pm.PatternMatcherPass()
        pm.register_graph_pattern(
            pm.CallFunction(aten.relu, pm.CallFunction(aten.add, pm.Arg(), pm.Arg())),
            pass_dict=pass_)(lambda match, *args: None)
        counts.append(pass_.apply(lib.fx.GraphModule({}, graph)))
    return counts


def test_an_aten_in_place_op_is_a_mutation_barrier() -> None:
    assert _both(_aten_mutation_barrier) == [0, 1]
