"""fake_torch.fx against torch.fx: graphs built by hand with the same calls get the same node
names, the same `str(graph)`, the same generated code and the same readable listing (the texts
below were printed by real torch 2.13, CPU build; the one deliberate difference: F.linear prints
as `torch.nn.functional.linear`, where torch shows its C builtin `torch._C._nn.linear`).
A GraphModule computes what running its calls eagerly computes, with the same launches.
"""

from __future__ import annotations

import copy
import operator
from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import fx, nn
from fake_torch._simulated._dispatch import record_ops
from fake_torch.fx import Graph, GraphModule, Interpreter, Node
from fake_torch.nn import functional as F


class Root(nn.Module):
    def __init__(self, lib: Any = torch) -> None:
        super().__init__()
        self.lin = lib.nn.Linear(4, 4)
        self.register_buffer("b", lib.ones(4))


def build_graph(lib: Any, fx_mod: Any) -> tuple[Any, dict[str, Any]]:
    """The reference graph, built with `lib` (fake_torch or torch) and its fx module."""
    functional = lib.nn.functional
    g = fx_mod.Graph()
    x = g.placeholder("x")
    w = g.get_attr("lin.weight")
    bias = g.get_attr("lin.bias")
    b = g.get_attr("b")
    a = g.call_function(lib.add, (x, x))
    a2 = g.call_function(lib.add, (a, 1.0), {"alpha": 2})
    lin = g.call_function(functional.linear, (a2, w, bias))
    r = g.call_function(lib.relu, (lin,))
    r2 = g.call_function(functional.relu, (r,), {"inplace": False})
    gi = g.call_function(operator.getitem, (r2, 0))
    mul = g.call_function(operator.mul, (r2, b))
    s = g.call_method("sum", (r2,), {"dim": -1})
    cm = g.call_module("lin", (r2,))
    g.output((r2, s, [gi], {"k": cm}, mul))
    return g, {"x": x, "a": a, "r2": r2, "cm": cm}


GRAPH_TEXT = """\
graph():
    %x : [num_users=1] = placeholder[target=x]
    %lin_weight : [num_users=1] = get_attr[target=lin.weight]
    %lin_bias : [num_users=1] = get_attr[target=lin.bias]
    %b : [num_users=1] = get_attr[target=b]
    %add : [num_users=1] = call_function[target=torch.add](args = (%x, %x), kwargs = {})
    %add_1 : [num_users=1] = call_function[target=torch.add](args = (%add, 1.0), kwargs = {alpha: 2})
    %linear : [num_users=1] = call_function[target=torch.nn.functional.linear](args = (%add_1, %lin_weight, %lin_bias), kwargs = {})
    %relu : [num_users=1] = call_function[target=torch.relu](args = (%linear,), kwargs = {})
    %relu_1 : [num_users=5] = call_function[target=torch.nn.functional.relu](args = (%relu,), kwargs = {inplace: False})
    %getitem : [num_users=1] = call_function[target=operator.getitem](args = (%relu_1, 0), kwargs = {})
    %mul : [num_users=1] = call_function[target=operator.mul](args = (%relu_1, %b), kwargs = {})
    %sum_1 : [num_users=1] = call_method[target=sum](args = (%relu_1,), kwargs = {dim: -1})
    %lin : [num_users=1] = call_module[target=lin](args = (%relu_1,), kwargs = {})
    return (relu_1, sum_1, [getitem], {'k': lin}, mul)"""  # noqa: E501

CODE_BODY = """\
def forward(self, x):
    lin_weight = self.lin.weight
    lin_bias = self.lin.bias
    b = self.b
    add = torch.add(x, x);  x = None
    add_1 = torch.add(add, 1.0, alpha = 2);  add = None
    linear = torch.nn.functional.linear(add_1, lin_weight, lin_bias);  add_1 = lin_weight = lin_bias = None
    relu = torch.relu(linear);  linear = None
    relu_1 = torch.nn.functional.relu(relu, inplace = False);  relu = None
    getitem = relu_1[0]
    mul = relu_1 * b;  b = None
    sum_1 = relu_1.sum(dim = -1)
    lin = self.lin(relu_1)
    return (relu_1, sum_1, [getitem], {'k': lin}, mul)
    """  # noqa: E501


# --- names and text ---------------------------------------------------------------------------


def test_node_names_are_torch_names() -> None:
    g, _ = build_graph(torch, fx)
    assert [n.name for n in g.nodes] == [
        "x", "lin_weight", "lin_bias", "b", "add", "add_1", "linear", "relu", "relu_1",
        "getitem", "mul", "sum_1", "lin", "output"]  # 'sum' would shadow a builtin: sum_1
    assert [n.op for n in g.nodes][:5] == ["placeholder", "get_attr", "get_attr", "get_attr",
                                           "call_function"]


def test_names_avoid_builtins_keywords_and_repeats() -> None:
    g = Graph()
    p = g.placeholder("input")  # builtin name: the node is input_1, the argument stays input
    q = g.placeholder("x_1")
    names = [g.call_function(torch.sum, (p,)).name, g.call_function(torch.sum, (p,)).name,
             g.call_function(torch.max, (p,)).name, g.call_method("view", (p, -1)).name,
             g.call_method("__add__", (p, 1)).name, g.call_function(operator.add, (p, q)).name,
             g.call_function(torch.add, (p, q), name="x").name,
             g.get_attr("layers.0.weight").name, g.call_function(operator.add, (p, q)).name]
    assert (p.name, p.target, q.name) == ("input_1", "input", "x_1")
    assert names == ["sum_1", "sum_2", "max_1", "view", "add", "add_1", "x",
                     "layers_0_weight", "add_2"]


def test_str_graph_is_torch_text() -> None:
    g, _ = build_graph(torch, fx)
    assert str(g) == GRAPH_TEXT


def test_users_args_and_input_nodes() -> None:
    g, n = build_graph(torch, fx)
    assert n["x"].users == {n["a"]: None}
    assert n["a"].all_input_nodes == [n["x"]]  # x read twice, listed once
    assert [u.name for u in n["r2"].users] == ["getitem", "mul", "sum_1", "lin", "output"]
    out = list(g.nodes)[-1]
    assert out.op == "output" and out.args[0][3] == {"k": n["cm"]}
    n["a"].args = (n["x"], 3.0)
    assert n["a"].args == (n["x"], 3.0) and n["x"].users == {n["a"]: None}
    n["a"].update_kwarg("alpha", 2)
    assert n["a"].kwargs == {"alpha": 2}


def test_code_is_torch_code() -> None:
    g, _ = build_graph(torch, fx)
    gm = GraphModule(Root(), g)
    assert gm.code == "\n\n\n" + CODE_BODY
    assert gm.graph.python_code("self").src == gm.code


def test_str_graph_module_is_repr_code_and_reminder() -> None:
    g, _ = build_graph(torch, fx)
    gm = GraphModule(Root(), g)
    assert str(gm) == ("GraphModule(\n  (lin): Linear(in_features=4, out_features=4, bias=True)"
                       "\n)\n\n\n\n" + CODE_BODY + "\n# To see more debug info, please use "
                       "`graph_module.print_readable()`")


def test_print_readable_annotates_shapes_and_stack_traces(
        capsys: pytest.CaptureFixture[str]) -> None:
    g = Graph()
    w = g.placeholder("L_w_", type_expr=nn.Parameter)
    x = g.placeholder("L_x_", type_expr=torch.Tensor)
    n = g.placeholder("n", type_expr=int)
    x.meta["example_value"] = torch.ones(2, 4)
    a = g.call_function(torch.mul, (x, w))
    a.meta["example_value"] = torch.ones(2, 4)
    a.meta["stack_trace"] = '  File "/a/b.py", line 12, in forward\n    y = x * w\n'
    b = g.call_function(torch.sum, (a,), {"dim": -1, "keepdim": True})
    b.meta["example_value"] = torch.ones(2, 1, dtype=torch.float16)
    b.meta["stack_trace"] = a.meta["stack_trace"]
    c = g.call_function(operator.add, (b, n))
    g.output((c,))
    gm = GraphModule({}, g)
    text = gm.print_readable()
    assert capsys.readouterr().out == text + "\n"
    assert text == """\
class GraphModule(torch.nn.Module):
    def forward(self, L_w_ : torch.nn.parameter.Parameter, L_x_: "f32[2, 4]", n : int):
        l_w_ = L_w_
        l_x_ = L_x_

        # File: /a/b.py:12 in forward, code: y = x * w
        mul: "f32[2, 4]" = torch.mul(l_x_, l_w_);  l_x_ = l_w_ = None
        sum_1: "f16[2, 1]" = torch.sum(mul, dim = -1, keepdim = True);  mul = None

        # No stacktrace found for following nodes
        add = sum_1 + n;  sum_1 = n = None
        return (add,)
"""
    assert "def forward(self, L_w_ : torch.nn.parameter.Parameter, L_x_ : torch.Tensor, " \
           "n : int):" in gm.code


def test_print_readable_nests_child_graph_modules() -> None:
    inner = Graph()
    inner.output(inner.call_function(torch.neg, (inner.placeholder("y"),)))
    outer = Graph()
    outer.output(outer.call_module("sub", (outer.placeholder("x"),)))
    gm = GraphModule({"sub": GraphModule({}, inner)}, outer, class_name="Outer")
    assert gm.print_readable(print_output=False) == """\
class Outer(torch.nn.Module):
    def forward(self, x):
        # No stacktrace found for following nodes
        sub = self.sub(x);  x = None
        return sub

    class sub(torch.nn.Module):
        def forward(self, y):
            # No stacktrace found for following nodes
            neg = torch.neg(y);  y = None
            return neg
"""


# --- GraphModule: attributes -------------------------------------------------------------------


def test_graph_module_copies_what_the_graph_reads() -> None:
    root = Root()
    root.extra = nn.Linear(2, 2)  # not read by the graph: not copied
    g, _ = build_graph(torch, fx)
    gm = GraphModule(root, g)
    assert type(gm).__name__ == "GraphModule" and isinstance(gm, GraphModule)
    assert sorted(dict(gm.named_parameters())) == ["lin.bias", "lin.weight"]
    assert sorted(dict(gm.named_buffers())) == ["b"]
    assert gm.lin is root.lin  # call_module copies the submodule itself
    assert gm.b is root.b and not hasattr(gm, "extra")
    assert gm.graph is g and g.owning_module is gm


def test_graph_module_get_attr_only_builds_empty_parents() -> None:
    g = Graph()
    w = g.get_attr("lin.weight")
    g.output(g.call_function(torch.neg, (w,)))
    root = Root()
    gm = GraphModule(root, g)
    assert type(gm.lin) is nn.Module and gm.lin.weight is root.lin.weight
    assert isinstance(gm.lin.weight, nn.Parameter)


def test_graph_module_from_dict_and_class_name() -> None:
    g = Graph()
    x = g.placeholder("x")
    g.output(g.call_function(torch.mul, (x, g.get_attr("scale.t"))))
    t = torch.full((3,), 2.0)
    gm = GraphModule({"scale.t": t}, g, class_name="Scaler")
    other = GraphModule({"scale.t": t}, g)
    assert type(gm).__name__ == "Scaler" and type(other).__name__ == "GraphModule"
    assert dict(gm.named_buffers()) == {"scale.t": t}  # a plain tensor becomes a buffer
    np.testing.assert_array_equal(gm(torch.ones(3)).numpy(), [2.0, 2.0, 2.0])
    with pytest.raises(RuntimeError, match=r"^Node scale_t referenced target scale.t but that "
                       r"target was not provided in ``root``!$"):
        GraphModule({}, g)


def test_copy_and_deepcopy() -> None:
    g, _ = build_graph(torch, fx)
    gm = GraphModule(Root(), g, class_name="Foo")
    gm.meta["a"] = 1
    deep = copy.deepcopy(gm)
    assert type(deep).__name__ == "GraphModule"  # as torch: the copy drops class_name
    assert deep.graph is not gm.graph and deep.lin is not gm.lin and deep.meta == {"a": 1}
    assert [n.name for n in deep.graph.nodes] == [n.name for n in gm.graph.nodes]
    assert deep.code == gm.code
    shallow = copy.copy(gm)
    assert shallow.graph is gm.graph and shallow.lin is gm.lin
    x = torch.randn(4)
    for a, b in zip(deep(x)[:2], gm(x)[:2], strict=True):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


# --- running: values and launches equal eager ---------------------------------------------------


def run_eagerly(root: Root, x: torch.Tensor) -> tuple[Any, ...]:
    """The reference graph's calls, written out as plain code."""
    r2 = F.relu(torch.relu(F.linear(torch.add(torch.add(x, x), 1.0, alpha=2), root.lin.weight,
                                    root.lin.bias)), inplace=False)
    first, mul, s = r2[0], r2 * root.b, r2.sum(dim=-1)
    return (r2, s, [first], {"k": root.lin(r2)}, mul)


def flat(out: Any) -> list[np.ndarray]:
    r2, s, (gi,), d, mul = out
    return [t.cpu().numpy() for t in (r2, s, gi, d["k"], mul)]


def test_values_and_launches_equal_eager() -> None:
    root = Root().cuda()
    gm = GraphModule(root, build_graph(torch, fx)[0])
    for _ in range(3):  # fresh random inputs each time
        x = torch.randn(4, device="cuda")
        with record_ops() as eager_ops:
            eager = run_eagerly(root, x)
        with record_ops() as graph_ops:
            compiled = gm(x)
        for a, b in zip(flat(eager), flat(compiled), strict=True):
            np.testing.assert_array_equal(a, b)
        assert graph_ops == eager_ops  # the graph adds no launch and drops none
        assert eager_ops == ["add", "add", "addmm", "relu", "relu", "mul", "sum", "addmm"]


def test_generated_code_runs_and_matches_the_interpreter() -> None:
    root = Root()
    gm = GraphModule(root, build_graph(torch, fx)[0])
    code = gm.graph.python_code("self")
    namespace = dict(code.globals)
    exec(compile(code.src, "<fx>", "exec"), namespace)
    x = torch.randn(4)
    for a, b in zip(flat(namespace["forward"](gm, x)), flat(gm(x)), strict=True):
        np.testing.assert_array_equal(a, b)


def test_forward_takes_keywords_and_defaults() -> None:
    g = Graph()
    x = g.placeholder("x")
    y = g.placeholder("y", default_value=2.0)
    g.output(g.call_function(torch.mul, (x, y)))
    gm = GraphModule({}, g)
    assert "def forward(self, x, y = 2.0):" in gm.code
    np.testing.assert_array_equal(gm(torch.ones(2)).numpy(), [2.0, 2.0])
    np.testing.assert_array_equal(gm(x=torch.ones(2), y=3.0).numpy(), [3.0, 3.0])
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        gm(torch.ones(2), z=1)
    g2 = Graph()
    g2.output(g2.placeholder("x"))
    with pytest.raises(TypeError, match=r"^forward\(\) missing 1 required positional "
                       r"argument: 'x'$"):  # torch's generated forward's own error
        GraphModule({}, g2)()


def test_interpreter_runs_node_by_node_and_frees_values() -> None:
    g, _ = build_graph(torch, fx)
    gm = GraphModule(Root(), g)
    seen: list[tuple[str, int]] = []

    class Spy(Interpreter):
        def run_node(self, n: Node) -> Any:
            seen.append((n.name, len(self.env)))
            return super().run_node(n)

    x = torch.randn(4)
    for a, b in zip(flat(Spy(gm).run(x)), flat(gm(x)), strict=True):
        np.testing.assert_array_equal(a, b)
    env_sizes = dict(seen)
    assert [name for name, _ in seen] == [n.name for n in g.nodes]
    # each value leaves the env after its last use: x after add, add after add_1, the weights
    # after linear; before relu only b (read later by mul) and linear remain
    assert env_sizes["add_1"] == 4 and env_sizes["linear"] == 4 and env_sizes["relu"] == 2


def test_interpreter_overrides_one_op_kind() -> None:
    g, _ = build_graph(torch, fx)
    gm = GraphModule(Root(), g)
    calls: list[str] = []

    class Count(Interpreter):
        def call_function(self, target: Any, args: tuple[Any, ...],
                          kwargs: dict[str, Any]) -> Any:
            calls.append(getattr(target, "__name__", ""))
            return super().call_function(target, args, kwargs)

    Count(gm).run(torch.randn(4))
    assert calls == ["add", "add", "linear", "relu", "relu", "getitem", "mul"]


def test_interpreter_error_names_the_node() -> None:
    g = Graph()
    g.output(g.call_function(torch.matmul, (g.placeholder("a"), g.placeholder("b"))))
    gm = GraphModule({}, g)
    a, b = torch.ones(2, 3), torch.ones(2, 3)
    with pytest.raises(RuntimeError) as plain:
        gm(a, b)  # forward reads like the generated code: no extra text
    assert "While executing" not in str(plain.value)
    with pytest.raises(RuntimeError, match=r"While executing %matmul : \[num_users=1\] = "
                       r"call_function\[target=torch.matmul\]"):
        Interpreter(gm).run(a, b)


# --- editing ------------------------------------------------------------------------------------


def test_insert_replace_erase_and_dead_code() -> None:
    g = Graph()
    p = g.placeholder("x")
    s = g.call_function(torch.sum, (p,))
    g.call_function(torch.max, (p,))
    g.output(s)
    with g.inserting_before(s):
        z = g.call_function(torch.neg, (p,))
    with g.inserting_after(s):
        z2 = g.call_function(torch.neg, (z,))
    assert [n.name for n in g.nodes] == ["x", "neg", "sum_1", "neg_1", "max_1", "output"]
    assert s.replace_all_uses_with(z2) == [list(g.nodes)[-1]]
    g.erase_node(s)
    with pytest.raises(RuntimeError, match=r"^Tried to erase Node x but it still had 2 users "
                       r"in the graph: \{max_1: None, neg: None\}!$"):
        g.erase_node(p)
    assert g.eliminate_dead_code()
    assert [n.name for n in g.nodes] == ["x", "neg", "neg_1", "output"]
    assert len(g.nodes) == 4 and next(iter(reversed(g.nodes))).name == "output"
    g.lint()
    gm = GraphModule({}, g)
    np.testing.assert_array_equal(gm(torch.ones(2)).numpy(), [1.0, 1.0])


def test_erasing_while_walking() -> None:
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.neg, (x,))
    g.call_function(torch.exp, (x,))
    g.output(a)
    walked = []
    for n in g.nodes:
        walked.append(n.name)
        if n.op == "call_function" and not n.users:
            g.erase_node(n)
    assert walked == ["x", "neg", "exp", "output"]
    assert [n.name for n in g.nodes] == ["x", "neg", "output"]


def test_node_copy_and_graph_copy_keep_names_and_meta() -> None:
    g, _ = build_graph(torch, fx)
    for n in g.nodes:
        n.meta["tag"] = n.name
    g2 = Graph()
    env: dict[Node, Node] = {}
    out = g2.graph_copy(g, env)
    g2.output(out)
    assert [n.name for n in g2.nodes] == [n.name for n in g.nodes]
    assert all(env[n].meta == n.meta and env[n].meta is not n.meta for n in env)
    assert str(g2) == GRAPH_TEXT
    x2 = g2.node_copy(next(iter(g.nodes)))
    assert x2.name == "x_1"  # the name is taken: a fresh one


def test_lint_finds_foreign_and_unordered_nodes() -> None:
    g = Graph()
    x = g.placeholder("x")
    a = g.call_function(torch.neg, (x,))
    g.output(a)
    with g.inserting_before(a):
        b = g.call_function(torch.exp, (a,))
    with pytest.raises(RuntimeError, match="Argument 'neg' of Node 'exp' was used before it "
                       "has been defined!"):
        g.lint()
    g.erase_node(b)
    other = Graph()
    other.call_function(torch.neg, (x,))
    with pytest.raises(RuntimeError, match="does not belong to this Graph, but was used"):
        other.lint()
    gm = GraphModule({}, g)
    gm.graph.get_attr("missing.w")
    with pytest.raises(RuntimeError, match=r"^Node missing_w target missing\.w references "
                       r"nonexistent attribute missing of $"):
        gm.graph.lint()


def test_targets_print_by_torch_path() -> None:
    def local_fn(t: torch.Tensor) -> torch.Tensor:
        return t

    g = Graph()
    x = g.placeholder("x")
    for fn in (torch.add, F.softmax, torch.linalg.vector_norm, getattr, operator.neg, local_fn):
        g.call_function(fn, (x,))
    lines = str(g).splitlines()[2:]
    targets = [ln.split("target=")[1].split("]")[0] for ln in lines]
    assert targets == ["torch.add", "torch.nn.functional.softmax", "torch.linalg.vector_norm",
                       "builtins.getattr", "operator.neg",
                       f"{__name__}.test_targets_print_by_torch_path.<locals>.local_fn"]


# --- against real torch (skipped where it is not installed) -------------------------------------


def real_torch() -> tuple[ModuleType, ModuleType]:
    real = pytest.importorskip("torch", reason="real torch (CPU build) not installed")
    if real is torch:
        pytest.skip("`torch` is fake_torch here (installed)")
    import torch.fx as real_fx
    return real, real_fx


def as_torch_prints(text: str) -> str:
    """Our text with torch's spelling of its C builtins."""
    return text.replace("torch.nn.functional.linear", "torch._C._nn.linear")


@pytest.mark.parametrize("show", [str, lambda gm: gm.code,
                                  lambda gm: gm.print_readable(print_output=False), repr])
def test_same_text_as_real_torch(show: Callable[[Any], str]) -> None:
    real, real_fx = real_torch()

    def render(lib: Any, fx_mod: Any) -> str:
        g, _ = build_graph(lib, fx_mod)
        gm = fx_mod.GraphModule(Root(lib) if lib is torch else _real_root(lib), g)
        return show(gm) + "\n" + str(g)

    assert as_torch_prints(render(torch, fx)) == render(real, real_fx)


def _real_root(real: Any) -> Any:
    class RealRoot(real.nn.Module):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.lin = real.nn.Linear(4, 4)
            self.register_buffer("b", real.ones(4))
    return RealRoot()


def test_dtype_abbrs_match_torch() -> None:
    """torch.fx.graph.dtype_abbrs (vLLM's quantization keys print dtypes with it): every
    dtype fake_torch defines has torch's short name."""
    torch = pytest.importorskip("torch")
    import fake_torch.fx.graph as graph

    want = {str(d): a for d, a in torch.fx.graph.dtype_abbrs.items()}
    got = {str(d): a for d, a in graph.dtype_abbrs.items()}
    assert got == {name: want[name] for name in got}
    # all but torch's bits* dtypes, which fake_torch does not define
    assert sorted(set(want) - set(got)) == ["torch.bits16", "torch.bits1x8", "torch.bits2x4",
                                            "torch.bits4x2", "torch.bits8"]


def test_graph_output_node_matches_torch() -> None:
    """Graph.output_node(): the output node; a graph not ending in one is refused as torch
    refuses it."""
    torch = pytest.importorskip("torch")

    def program(L: Any) -> list[Any]:
        g = L.fx.Graph()
        x = g.placeholder("x")
        y = g.call_function(operator.add, (x, 1))
        try:
            g.output_node()
            refused = ""
        except AssertionError as e:
            refused = str(e)
        out = g.output(y)
        return [refused, g.output_node() is out, g.output_node().args[0] is y]

    import fake_torch

    assert program(fake_torch) == program(torch)
