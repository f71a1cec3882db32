"""torch._dynamo.export against real torch (CPU build), differentially: the same function is
exported by both libraries and the test compares the exported GraphModule's signature code and
graph (where both trace the same nodes), the attributes it reads, its values and its launches,
and the errors: a graph break is torch's Unsupported with torch's text, as in the torch.compile
tutorial's `bar`. Known differences stay out of the compared text: Dynamo names a node after the
variable it is stored in (`x = a / ...`: torch's node `x`, ours `truediv`), F.linear prints as
torch.nn.functional.linear, and the guards are fake_torch's own (a list of TensorGuards).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from oracles import launches, outcome, to_numpy, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")
LIBS = [torch, ft]


@pytest.fixture(autouse=True)
def fresh_dynamo() -> Iterator[None]:
    for lib in LIBS:
        lib._dynamo.reset()
    yield
    for lib in LIBS:
        lib._dynamo.reset()


def bar(a: Any, b: Any) -> Any:
    """The tutorial's: a data-dependent branch."""
    x = a / (abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def bar_fixed(a: Any, b: Any) -> Any:
    y = a / (abs(a) + 1)
    return y * b, a.sum() + 1


def _data(lib: Any, n: int = 10) -> tuple[Any, Any]:
    a = np.linspace(-2.0, 2.0, n, dtype=np.float32)
    return lib.from_numpy(a.copy()), lib.from_numpy((a[::-1] * 0.5).copy())


def _same_first_line(ours: BaseException | None, theirs: BaseException | None) -> None:
    assert ours is not None and theirs is not None
    assert type(ours).__name__ == type(theirs).__name__
    assert [c.__name__ for c in type(ours).__mro__] == [c.__name__ for c in type(theirs).__mro__]
    assert str(ours).split("\n")[0] == str(theirs).split("\n")[0]


def test_a_graph_break_fails_the_export_as_torch() -> None:
    theirs, ours = (outcome(lambda lib=lib: lib._dynamo.export(bar)(*_data(lib)))[1]
                    for lib in LIBS)
    _same_first_line(ours, theirs)
    assert str(ours).split("\n")[0] == "Data-dependent branching"
    assert "if b.sum() < 0:" in str(ours)


def test_print_is_a_graph_break_too() -> None:
    def shout(x: Any) -> Any:
        print("hi")
        return x + 1

    theirs, ours = (outcome(lambda lib=lib: lib._dynamo.export(shout)(lib.ones(2)))[1]
                    for lib in LIBS)
    _same_first_line(ours, theirs)


def test_export_keeps_the_signature_and_computes_the_same() -> None:
    results = [lib._dynamo.export(bar_fixed)(*_data(lib)) for lib in LIBS]
    (gm_t, _), (gm_f, guards) = results
    assert type(gm_f).__name__ == "GraphModule" and isinstance(gm_f, ft.fx.GraphModule)
    code_t, code_f = gm_t.code.split("\n"), gm_f.code.split("\n")
    assert code_f[:6] == code_t[:6]  # def forward(self, a, b), the flattening, l_a_ = arg0
    assert code_f[-3:] == code_t[-3:]  # return pytree.tree_unflatten([mul, add_1], ...)
    assert [(n.op, n.name, str(n.target)) for n in gm_f.graph.find_nodes(op="placeholder")] == \
        [(n.op, n.name, str(n.target)) for n in gm_t.graph.find_nodes(op="placeholder")]
    assert [type(g).__name__ for g in guards] == ["TensorGuard", "TensorGuard"]
    new_t, new_f = _data(torch, 10), _data(ft, 10)
    for o, t in zip(gm_f(*new_f), gm_t(*new_t), strict=True):
        np.testing.assert_allclose(to_numpy(o), to_numpy(t), rtol=1e-6)


def test_exported_graph_launches_what_eager_launches() -> None:
    gm_t = torch._dynamo.export(bar_fixed)(*_data(torch)).graph_module
    a, b = (t.to("cuda") for t in _data(ft))
    gm_f = ft._dynamo.export(bar_fixed)(a, b).graph_module
    with torch_launches(cuda=True) as expected:
        gm_t(*_data(torch))
    with launches() as exported:
        gm_f(a, b)
    with launches() as eager:
        bar_fixed(a, b)
    assert exported == eager == expected


def test_a_module_exports_its_tensors_as_attributes() -> None:
    def program(lib: Any) -> tuple[str, str, list[str], list[str], tuple[int, ...]]:
        class Block(lib.nn.Module):  # type: ignore[misc,name-defined]
            def __init__(self) -> None:
                super().__init__()
                self.sub = lib.nn.Linear(2, 2)
                self.register_buffer("b", lib.ones(2))
                self.t = lib.full((2,), 3.0)

            def forward(self, x: Any) -> Any:
                return lib.relu(self.sub(x)) * self.b + self.t

        gm = lib._dynamo.export(Block())(lib.ones(3, 2)).graph_module
        return ([f"{n.op} {n.name} {n.target}" for n in gm.graph.nodes
                 if n.op in ("placeholder", "get_attr", "output")],
                gm.code.split("\n")[3:6], sorted(dict(gm.named_parameters())),
                sorted(dict(gm.named_buffers())), tuple(gm(lib.ones(5, 2)).shape))

    theirs, ours = (program(lib) for lib in LIBS)
    assert ours == theirs


def test_globals_and_closures_become_attributes_as_torch_names_them() -> None:
    source = ("def make(lib):\n"
              "    scale = lib.full((3,), 2.0)\n"
              "    def f(x):\n"
              "        return x + G + scale + G\n"
              "    return f\n")

    def program(lib: Any) -> str:
        space = {"G": lib.ones(3)}
        exec(compile(source, "<exported>", "exec"), space)
        return str(lib._dynamo.export(space["make"](lib))(lib.ones(3)).graph_module.code)

    theirs, ours = (program(lib) for lib in LIBS)
    assert ours == theirs
    assert "g_0 = self.G_0" in ours and "scale = self.scale" in ours


def test_nested_inputs_keywords_and_mixed_outputs() -> None:
    def g(x: Any, ys: Any, *, k: int = 2) -> Any:
        return {"a": x + ys[0], "b": [ys[1], x]}, k

    def program(lib: Any) -> tuple[Any, ...]:
        args = (lib.ones(2), [lib.ones(2), lib.zeros(2)])
        gm = lib._dynamo.export(g)(*args, k=3).graph_module
        out = gm(lib.ones(2) * 5, [lib.ones(2), lib.zeros(2) + 7], k=3)
        return (gm.code.split("\n")[3:5], gm.code.split("\n")[-3],
                to_numpy(out[0]["a"]).tolist(), to_numpy(out[0]["b"][0]).tolist(), out[1],
                [n.op for n in gm.graph.nodes])

    theirs, ours = (program(lib) for lib in LIBS)
    # torch names list items' placeholders l_ys_0_; fake_torch's compile tracer l_ys_0__
    assert ours[0][0] == theirs[0][0]
    assert ours[2:] == theirs[2:]


def test_a_function_without_ops_exports_its_inputs() -> None:
    def const(x: Any) -> Any:
        return 3

    theirs, ours = (lib._dynamo.export(const)(lib.ones(2)).graph_module.code for lib in LIBS)
    assert ours == theirs


def test_export_result_is_a_named_pair() -> None:
    result = ft._dynamo.export(bar_fixed)(*_data(ft))
    gm, guards = result
    assert result.graph_module is gm and result.guards is guards
    assert type(result).__name__ == "ExportResult" and result._fields == ("graph_module",
                                                                           "guards")


def test_the_options_torch_checks_first_fail_as_torch() -> None:
    for kwargs in ({"decomposition_table": {}}, {"pre_dispatch": True}):
        theirs, ours = (outcome(lambda lib=lib, kw=kwargs: lib._dynamo.export(bar_fixed, **kw)(
            *_data(lib)))[1] for lib in LIBS)
        assert type(ours) is type(theirs) is AssertionError and str(ours) == str(theirs)


@pytest.mark.parametrize("kwargs", [{"aten_graph": True}, {"dynamic_shapes": {"a": None}}])
def test_what_is_not_emulated_says_so(kwargs: dict[str, Any]) -> None:
    with pytest.raises(NotImplementedError, match=f"torch._dynamo.export\\({next(iter(kwargs))}"):
        ft._dynamo.export(bar_fixed, **kwargs)(*_data(ft))


def test_sizes_read_while_tracing_pin_the_export_to_them() -> None:
    def flat(x: Any) -> Any:
        return x.view(x.shape[0], -1) * 2

    gm = ft._dynamo.export(flat)(ft.ones(2, 3)).graph_module
    assert tuple(gm(ft.ones(2, 3)).shape) == (2, 3)
    with pytest.raises(NotImplementedError, match="static shapes: input 0 has shape"):
        gm(ft.ones(4, 3))
    free = ft._dynamo.export(bar_fixed)(*_data(ft)).graph_module
    assert tuple(free(*_data(ft, 6))[0].shape) == (6,)  # no size read: any size runs
