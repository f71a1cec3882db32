"""torch.fx.symbolic_trace against real torch (CPU build), differentially: the same program is
traced by both libraries and the test compares what each shows: the printed graph and generated
code (text torch prints deterministically), the nodes' ops and targets, the errors (class and
message), the traced module's values, and its launches against the eager function's. Known,
listed differences stay out of the programs: F.gelu/F.linear print as torch.nn.functional.*
(torch: torch._C._nn.*), and a Python-level F function shows the arguments the caller gave
(torch's F.relu adds `inplace=False`).

Among them, the torch.compile tutorial's patterns: `if x.sum() < 0:` cannot be traced
(TraceError), traces with `concrete_args` (specialised: the branch is frozen), and a small
module of Linear + relu becomes call_module + call_function nodes.
"""

from __future__ import annotations

import contextlib
import io
import math
import sys
import types
import warnings
from collections import namedtuple
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest
from oracles import assert_same_error, launches, outcome, to_numpy, torch_launches

import fake_torch as ft
from fake_torch import fx

torch = pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")
LIBS = [torch, ft]


def same_error(ours: BaseException | None, theirs: BaseException | None) -> None:
    """Both raised: classes of the same name (torch's own, or fake_torch's of torch's name and
    bases) and the same first message line."""
    assert ours is not None and theirs is not None, f"torch: {theirs!r}, fake_torch: {ours!r}"
    if type(theirs).__module__ == "builtins":
        assert_same_error(ours, theirs)
        return
    assert type(ours).__name__ == type(theirs).__name__
    assert [b.__name__ for b in type(ours).__mro__] == [b.__name__ for b in type(theirs).__mro__]
    assert str(ours).split("\n")[0] == str(theirs).split("\n")[0]


def both(program: Callable[[Any], Any]) -> tuple[Any, Any]:
    """program(torch), program(fake_torch)."""
    return program(torch), program(ft)


def f1(x: Any, y: Any) -> Any:
    """The tutorial's function: data-dependent control flow."""
    if x.sum() < 0:
        return -y
    return y


def linear_relu(lib: Any) -> Any:
    class LinearRelu(lib.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.lin = lib.nn.Linear(4, 3)

        def forward(self, x: Any) -> Any:
            return lib.relu(self.lin(x))

    lib.manual_seed(0)
    return LinearRelu()


def _same_weights(mine: Any, theirs: Any) -> None:
    with ft.no_grad():
        for p, q in zip(mine.parameters(), theirs.parameters(), strict=True):
            p.copy_(ft.from_numpy(to_numpy(q).copy()))


def _inputs(lib: Any, shape: tuple[int, ...] = (2, 4), device: str | None = None) -> Any:
    data = np.linspace(-1.0, 1.0, int(np.prod(shape)), dtype=np.float32).reshape(shape)
    t = lib.from_numpy(data.copy())
    return t.to(device) if device else t


# --- the tutorial's patterns ------------------------------------------------------------------


def test_control_flow_on_a_traced_value_raises_trace_error() -> None:
    theirs, ours = (outcome(lambda lib=lib: lib.fx.symbolic_trace(f1))[1] for lib in LIBS)
    same_error(ours, theirs)
    assert type(ours).__qualname__ == "TraceError" and isinstance(ours, ValueError)
    assert ours.__class__ is fx.proxy.TraceError
    assert str(ours) == "symbolically traced variables cannot be used as inputs to control flow"


def test_concrete_args_specialise_the_branch() -> None:
    def program(lib: Any) -> tuple[str, str, list[bool], list[str]]:
        inp1, inp2 = _inputs(lib) + 2, _inputs(lib) * 3
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            gm = lib.fx.symbolic_trace(f1, concrete_args={"x": inp1})
        same = [bool(lib.allclose(f1(a, inp2), gm(a, inp2))) for a in (inp1, -inp1)]
        return str(gm.graph), gm.code, same, [str(w.message) for w in caught]

    theirs, ours = both(program)
    assert ours == theirs
    assert ours[2] == [True, False]  # traced with x.sum() >= 0: -x takes the frozen branch
    assert ours[3] and ours[3][0].startswith("Was not able to add assertion to guarantee")


def test_a_python_value_in_concrete_args_is_checked_by_an_assert_node() -> None:
    def program(lib: Any) -> tuple[str, str, Any, Any]:
        class Flip(lib.nn.Module):  # type: ignore[misc,name-defined]
            def forward(self, x: Any, flag: bool) -> Any:
                return x if flag else -x

        gm = lib.fx.symbolic_trace(Flip(), concrete_args={"flag": True})
        ok = to_numpy(gm(lib.ones(2), True)).tolist()
        return gm.code, type(gm).__name__, ok, outcome(lambda: gm(lib.ones(2), False))[1]

    theirs, ours = both(program)
    assert ours[:3] == theirs[:3]
    assert_same_error(ours[3], theirs[3])
    assert "torch._assert(eq, 'flag has been specialized to have value True" in ours[0]


def test_linear_relu_module_becomes_call_module_and_call_function() -> None:
    theirs, ours = (lib.fx.symbolic_trace(linear_relu(lib)) for lib in LIBS)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    assert [(n.op, str(n.target)) for n in ours.graph.nodes] == [
        ("placeholder", "x"), ("call_module", "lin"), ("call_function", str(ft.relu)),
        ("output", "output")]
    assert ours.graph.find_nodes(op="call_function")[0].target is ft.relu
    assert type(ours).__name__ == "LinearRelu" and isinstance(ours, fx.GraphModule)
    assert ours.lin is not None and sorted(dict(ours.named_parameters())) == sorted(
        dict(theirs.named_parameters()))


def test_traced_module_values_and_launches_match_eager_and_torch() -> None:
    mod_t = linear_relu(torch)
    mod_f = linear_relu(ft)
    _same_weights(mod_f, mod_t)
    mod_f = mod_f.to("cuda")
    gm_t, gm_f = torch.fx.symbolic_trace(mod_t), ft.fx.symbolic_trace(mod_f)
    x_t, x_f = _inputs(torch), _inputs(ft, device="cuda")
    with torch_launches(cuda=True) as expected:
        out_t = gm_t(x_t)
    with launches() as traced:
        out_f = gm_f(x_f)
    with launches() as eager:
        eager_f = mod_f(x_f)
    assert traced == eager == expected
    np.testing.assert_allclose(to_numpy(out_f), to_numpy(out_t), rtol=1e-6)
    np.testing.assert_array_equal(to_numpy(out_f), to_numpy(eager_f))


# --- what becomes a node ----------------------------------------------------------------------


def ops_program(x: Any, y: Any) -> Any:
    """Operators, Tensor methods, attributes, indexing, unpacking."""
    z = x * 2
    a, b = z.chunk(2, dim=0)
    return (abs(-(1 - z) @ y.T)[0, 1:2, ...], a.view(-1).size(), b.shape[0], z.dtype,
            z[None], z.relu_())


def test_operators_methods_and_attributes_record_torch_nodes() -> None:
    theirs, ours = (lib.fx.symbolic_trace(ops_program) for lib in LIBS)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    out_t = theirs(torch.from_numpy(x.copy()), torch.from_numpy(x.copy()))
    out_f = ours(ft.from_numpy(x.copy()), ft.from_numpy(x.copy()))
    for o, t in zip(out_f, out_t, strict=True):
        if isinstance(t, torch.Tensor):
            np.testing.assert_array_equal(to_numpy(o), to_numpy(t))
        else:
            assert str(o) == str(t)


def test_torch_functions_on_proxies_go_through_torch_function() -> None:
    def program(lib: Any) -> Any:
        def f(x: Any, y: Any) -> Any:
            const = lib.ones(3)  # no proxy argument: runs, and becomes a constant
            return lib.add(const, x, alpha=2) + lib.cat([x, y]).sum() + const.add(y)
        return lib.fx.symbolic_trace(f)

    theirs, ours = both(program)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    assert sorted(dict(ours.named_buffers())) == sorted(dict(theirs.named_buffers())) == [
        "_tensor_constant0"]


def test_parameters_buffers_and_tensor_attributes_become_get_attr() -> None:
    def program(lib: Any) -> Any:
        class Sub(lib.nn.Module):  # type: ignore[misc,name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.w = lib.nn.Parameter(lib.ones(3, 3))
                self.register_buffer("b", lib.zeros(3))
                self.c = lib.full((3,), 2.0)

            def forward(self, x: Any) -> Any:
                return x @ self.w + self.b + self.w.sum() + self.c + self.b

        class Top(lib.nn.Module):  # type: ignore[misc,name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.sub = Sub()
                self.seq = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.ReLU())
                self.ln = lib.nn.LayerNorm(3)

            def forward(self, x: Any, y: Any = None) -> Any:
                return self.ln(self.seq(self.sub(x)))

        gm = lib.fx.symbolic_trace(Top())
        return (str(gm.graph), gm.code, sorted(dict(gm.named_buffers())),
                sorted(dict(gm.named_parameters())), [n for n, _ in gm.named_modules()])

    theirs, ours = both(program)
    assert ours == theirs


def test_param_shapes_constant_reads_parameter_shapes() -> None:
    def program(lib: Any) -> str:
        class P(lib.nn.Module):  # type: ignore[misc,name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.p = lib.nn.Parameter(lib.ones(2))

            def forward(self, x: Any) -> Any:
                return x + self.p + self.p.shape[0]

        return str(lib.fx.Tracer(param_shapes_constant=True).trace(P()))

    theirs, ours = both(program)
    assert ours == theirs


def test_a_tracer_subclass_decides_what_is_a_leaf() -> None:
    def program(lib: Any) -> list[tuple[str, str]]:
        class TraceEverything(lib.fx.Tracer):  # type: ignore[misc,name-defined]
            def is_leaf_module(self, m: Any, module_qualified_name: str) -> bool:
                return False

        graph = TraceEverything().trace(linear_relu(lib))
        return [(n.op, n.name) for n in graph.nodes]

    theirs, ours = both(program)
    assert ours == theirs
    assert ("call_function", "linear") in ours


# --- what a Proxy cannot do -------------------------------------------------------------------


@pytest.mark.parametrize("body", [
    lambda x: len(x),
    lambda x: [v for v in x],
    lambda x: x.sum() > 0 and x,
    lambda x: int(x),
], ids=["len", "iterate", "bool", "int"])
def test_what_a_proxy_cannot_do_raises_as_torch(body: Callable[[Any], Any]) -> None:
    theirs, ours = (outcome(lambda lib=lib: lib.fx.symbolic_trace(body))[1] for lib in LIBS)
    same_error(ours, theirs)
    assert str(ours) == str(theirs)


def test_a_proxy_made_by_hand_appends_to_its_graph() -> None:
    def program(lib: Any) -> str:
        g = lib.fx.Graph()
        p = lib.fx.Proxy(g.placeholder("x"))
        out = lib.relu(p * 2) + p.shape[0]
        g.output(out.node)
        return str(g)

    theirs, ours = both(program)
    assert ours == theirs


# --- wrap, varargs, structured concrete args ---------------------------------------------------


def leaf_fn(x: Any, y: Any) -> Any:
    return x * y + 1


ft.fx.wrap("leaf_fn")
torch.fx.wrap("leaf_fn")  # both libraries patch this module's global while they trace


def wrapped_program(x: Any, y: Any) -> Any:
    return leaf_fn(x, y) + math.sqrt(x.shape[0])


def test_wrapped_and_autowrapped_functions_stay_calls() -> None:
    theirs, ours = (lib.fx.symbolic_trace(wrapped_program) for lib in LIBS)
    assert str(ours.graph) == str(theirs.graph)
    assert ours.code == theirs.code
    name = __name__.replace(".", "_")
    assert ours.code.startswith(f'\ntorch.fx._symbolic_trace.wrap("{name}_leaf_fn")\n'
                                'torch.fx._symbolic_trace.wrap("math_sqrt")\n\ndef forward')
    assert leaf_fn.__module__ == __name__ and not hasattr(leaf_fn, "__wrapped__")  # unpatched
    x = _inputs(ft, (2,))
    np.testing.assert_array_equal(to_numpy(ours(x, x)), to_numpy(wrapped_program(x, x)))


def test_wrap_outside_module_scope_raises() -> None:
    assert_same_error(outcome(lambda: ft.fx.wrap("f"))[1], outcome(lambda: torch.fx.wrap("f"))[1])


def test_varargs_and_keyword_only_parameters_become_placeholders() -> None:
    def program(lib: Any) -> tuple[Any, ...]:
        def f(x: Any, *args: Any, k: int = 3, **kwargs: Any) -> Any:
            return x + args[0] + kwargs["j"] + k

        gm = lib.fx.symbolic_trace(f)  # forward(self, x, k = 3, *args, **kwargs)
        out = gm(lib.ones(1), 2, lib.ones(1), j=lib.ones(1))
        err = outcome(lambda: gm(lib.ones(1), lib.ones(1), k=2))[1]
        return str(gm.graph), gm.code, to_numpy(out).tolist(), type(err), str(err)

    theirs, ours = both(program)
    assert ours == theirs


def test_structured_concrete_args_flatten_through_a_pytree() -> None:
    def program(lib: Any) -> tuple[str, str, Any, Any, Any]:
        def f(x: Any, d: Any) -> Any:
            return x + d["a"] * d["b"], [d["a"]]

        ph = lib.fx.PH
        gm = lib.fx.symbolic_trace(f, concrete_args={"d": {"a": ph, "b": 2}})
        out = gm(lib.ones(2), {"a": lib.ones(2), "b": 2})
        err = outcome(lambda: gm(lib.ones(2), {"a": lib.ones(2), "b": 3}))[1]
        run = lib.fx.Interpreter(gm).run(lib.ones(2), {"a": lib.ones(2), "b": 2})  # same io
        return (str(gm.graph), gm.code, to_numpy(out[0]).tolist(), len(out[1]),
                to_numpy(run[0]).tolist(), err)

    theirs, ours = both(program)
    assert ours[:5] == theirs[:5]
    assert_same_error(ours[5], theirs[5])
    assert "fx_pytree.tree_flatten_spec([x, d], self._in_spec)" in ours[1]


def test_namedtuple_results_are_constructed_by_a_node() -> None:
    Pair = namedtuple("Pair", "a b")

    def f(x: Any) -> Any:
        return Pair(x, x + 1)

    theirs, ours = (lib.fx.symbolic_trace(f) for lib in LIBS)
    assert str(ours.graph) == str(theirs.graph) and ours.code == theirs.code
    out = ours(ft.ones(1))
    assert type(out) is Pair and to_numpy(out.b).tolist() == [2.0]


def test_is_fx_tracing_is_true_only_while_tracing() -> None:
    seen: list[bool] = []

    def f(x: Any) -> Any:
        seen.append(ft.fx._symbolic_trace.is_fx_tracing())
        return x

    ft.fx.symbolic_trace(f)
    assert seen == [True] and not ft.fx._symbolic_trace.is_fx_tracing()


def test_ops_check_for_proxies_only_while_a_trace_runs() -> None:
    from fake_torch import _torch_function

    during: list[bool] = []

    def f(x: Any) -> Any:
        during.append(_torch_function.state.enabled and _torch_function.state.num_tracing == 1)
        return ft.relu(x)

    ft.fx.symbolic_trace(f)
    assert during == [True] and _torch_function.state.num_tracing == 0


def test_module_calls_and_attributes_are_unpatched_after_a_trace() -> None:
    call, getattr_ = ft.nn.Module.__call__, ft.nn.Module.__getattr__
    with contextlib.suppress(fx.proxy.TraceError):
        ft.fx.symbolic_trace(f1)
    assert (ft.nn.Module.__call__, ft.nn.Module.__getattr__) == (call, getattr_)
    assert math.sqrt(4.0) == 2.0 and not hasattr(math.sqrt, "__wrapped__")


# --- print_tabular ----------------------------------------------------------------------------


@contextlib.contextmanager
def fake_tabulate() -> Iterator[list[tuple[list[list[Any]], list[str]]]]:
    """A stand-in `tabulate` package that records what it is asked to print."""
    calls: list[tuple[list[list[Any]], list[str]]] = []
    module = types.ModuleType("tabulate")

    def tabulate(rows: list[list[Any]], headers: list[str]) -> str:
        calls.append((rows, headers))
        return "TABLE"

    module.tabulate = tabulate  # type: ignore[attr-defined]
    saved = sys.modules.get("tabulate")
    sys.modules["tabulate"] = module
    try:
        yield calls
    finally:
        if saved is None:
            del sys.modules["tabulate"]
        else:
            sys.modules["tabulate"] = saved


def test_print_tabular_without_tabulate_says_so_and_raises() -> None:
    if "tabulate" in sys.modules or _importable("tabulate"):
        pytest.skip("tabulate is installed here")
    printed = []
    for lib in LIBS:
        gm = lib.fx.symbolic_trace(linear_relu(lib))
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf), pytest.raises(ModuleNotFoundError):
            gm.graph.print_tabular()
        printed.append(buf.getvalue())
    assert printed[0] == printed[1]
    assert printed[1].startswith("`print_tabular` relies on the library `tabulate`")


def test_print_tabular_prints_torch_rows_with_tabulate() -> None:
    rows = []
    for lib in LIBS:
        gm = lib.fx.symbolic_trace(linear_relu(lib))
        buf = io.StringIO()
        with fake_tabulate() as calls, contextlib.redirect_stdout(buf):
            gm.graph.print_tabular()
        assert buf.getvalue() == "TABLE\n"
        (table, headers), = calls
        rows.append(([[op, name, str(args), str(kwargs)] for op, name, _, args, kwargs in table],
                     headers))
    assert rows[1] == rows[0]


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None


def test_a_graph_module_traces_again_into_the_same_graph() -> None:
    def program(lib: Any) -> tuple[str, str, str]:
        class M(lib.nn.Module):  # type: ignore[misc,name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.lin = lib.nn.Linear(3, 3)
                self.register_buffer("b", lib.ones(3))

            def forward(self, x: Any, y: Any = None) -> Any:
                return lib.relu(self.lin(x)).sum(-1) + self.b.sum() + self.lin.weight.sum()

        def f(x: Any, *args: Any, k: int = 3, **kw: Any) -> Any:
            return x + args[0] + k

        again = lib.fx.symbolic_trace(lib.fx.symbolic_trace(M()))
        return str(again.graph), again.code, lib.fx.symbolic_trace(lib.fx.symbolic_trace(f)).code

    theirs, ours = both(program)
    assert ours == theirs
