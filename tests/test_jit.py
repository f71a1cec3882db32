"""torch.jit.trace against real torch (CPU build), differentially: the same function is traced by
both libraries, and the test compares what the trace computes on the traced inputs and on new
ones (a Python branch on a tensor is frozen to the branch taken: the torch.compile tutorial's
point about `f1`), the TracerWarnings (text and the user's line), the errors, and the replay's
launches against eager's. fake_torch bakes sizes a trace's Python read (torch records them):
such a trace refuses other sizes. torch.jit.script is not emulated.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import launches, outcome, to_numpy, torch_launches

import fake_torch as ft
import fake_torch.jit  # torch.jit (fake_torch/__init__ may not import it yet)

torch = pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")
LIBS = [torch, ft]


def f1(x: Any, y: Any) -> Any:
    """The tutorial's function: data-dependent control flow."""
    if x.sum() < 0:
        return -y
    return y


def _inputs(lib: Any, shape: tuple[int, ...] = (5, 5)) -> tuple[Any, Any]:
    a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) / 10 + 0.1
    return lib.from_numpy(a.copy()), lib.from_numpy((a * -2).copy())


def trace(lib: Any, fn: Any, inputs: Any, **kwargs: Any) -> tuple[Any, list[tuple[str, int]]]:
    """lib.jit.trace(fn, inputs), and the TracerWarnings it gave as (text, line)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        traced = lib.jit.trace(fn, inputs, **kwargs)
    return traced, [(str(w.message), w.lineno) for w in caught
                    if w.category.__name__ == "TracerWarning"]


def test_a_branch_on_a_tensor_is_frozen_to_the_traced_branch() -> None:
    def program(lib: Any) -> tuple[Any, ...]:
        inp1, inp2 = _inputs(lib)
        traced, warned = trace(lib, f1, (inp1, inp2))
        same = [bool(lib.allclose(f1(a, inp2), traced(a, inp2))) for a in (inp1, -inp1)]
        return same, warned

    theirs, ours = (program(lib) for lib in LIBS)
    assert ours == theirs
    assert ours[0] == [True, False]  # traced with x.sum() > 0: -x still returns y
    (text, line), again = ours[1]  # check_trace traces a second time, and warns again
    assert again == (text, line)
    assert text.startswith("Converting a tensor to a Python boolean might cause the trace")
    assert line == f1.__code__.co_firstlineno + 2  # the `if`


def test_compile_takes_both_branches_where_the_trace_froze_one() -> None:
    def program(lib: Any) -> list[bool]:
        lib._dynamo.reset()
        inp1, inp2 = _inputs(lib)
        compiled = lib.compile(f1)
        return [bool(lib.allclose(f1(a, inp2), compiled(a, inp2))) for a in (inp1, -inp1)]

    assert program(ft) == program(torch) == [True, True]


def test_the_frozen_branch_launches_nothing_and_returns_the_input() -> None:
    inp1, inp2 = (t.to("cuda") for t in _inputs(ft))
    traced, _ = trace(ft, f1, (inp1, inp2))
    traced_t, _ = trace(torch, f1, _inputs(torch))
    x_t, y_t = _inputs(torch)
    neg_inp1, neg_x_t = -inp1, -x_t
    with torch_launches(cuda=True) as expected:
        traced_t(neg_x_t, y_t)
    with launches() as replay:
        out = traced(neg_inp1, inp2)
    assert replay == expected == []  # sum and lt are dead: TorchScript drops them too
    assert out is inp2


def linear_relu(lib: Any) -> Any:
    class LinearRelu(lib.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.lin = lib.nn.Linear(5, 3)

        def forward(self, x: Any) -> Any:
            return lib.relu(self.lin(x)) * 2

    lib.manual_seed(0)
    return LinearRelu()


def test_a_traced_module_replays_with_its_parameters() -> None:
    mod_t, mod_f = linear_relu(torch), linear_relu(ft)
    with ft.no_grad():
        for p, q in zip(mod_f.parameters(), mod_t.parameters(), strict=True):
            p.copy_(ft.from_numpy(to_numpy(q).copy()))
    traced_t, _ = trace(torch, mod_t, _inputs(torch)[0])
    traced_f, _ = trace(ft, mod_f, _inputs(ft)[0])
    assert type(traced_f).__name__ == type(traced_t).__name__ == "TopLevelTracedModule"
    assert isinstance(traced_f, ft.jit.ScriptModule) and isinstance(traced_f, ft.nn.Module)
    assert sorted(dict(traced_f.named_parameters())) == sorted(dict(traced_t.named_parameters()))
    assert repr(traced_f).split("\n")[:2] == repr(traced_t).split("\n")[:2]
    x_t, x_f = _inputs(torch, (7, 5))[0], _inputs(ft, (7, 5))[0]
    np.testing.assert_allclose(to_numpy(traced_f(x_f)), to_numpy(traced_t(x_t)), rtol=1e-6)
    with ft.no_grad():
        mod_f.lin.bias.add_(1.0)  # the trace reads the module's own parameters
    np.testing.assert_allclose(to_numpy(traced_f(x_f)), to_numpy(mod_f(x_f)))


def test_replay_launches_what_eager_launches() -> None:
    mod = linear_relu(ft).to("cuda")
    x = _inputs(ft, (4, 5))[0].to("cuda")
    traced, _ = trace(ft, mod, x)
    with launches() as eager:
        mod(x)
    with launches() as replay:
        traced(x)
    mod_t, x_t = linear_relu(torch), _inputs(torch, (4, 5))[0]
    with torch_launches(cuda=True) as expected:
        mod_t(x_t)
    assert replay == eager == expected


def host_reads(x: Any) -> Any:
    bool(x[0] > 0)
    float(x[0])
    int(x[0])
    x[0].item()
    x.tolist()
    return x + 1


def test_host_reads_warn_as_torch_at_the_users_line() -> None:
    theirs, ours = (trace(lib, host_reads, (lib.ones(2),))[1] for lib in LIBS)
    assert ours == theirs
    assert [w[0].split(" might")[0] for w in ours] == 2 * [
        "Converting a tensor to a Python boolean", "Converting a tensor to a Python float",
        "Converting a tensor to a Python integer", "Converting a tensor to a Python number",
        "Converting a tensor to a Python list"]  # the trace, and check_trace's second one


@pytest.mark.parametrize("fn", [
    lambda x: (x, 3),
    lambda x: None,
    lambda x: x.numpy(),
    lambda x: {"a": x},
], ids=["int output", "no output", "ndarray output", "dict output"])
def test_outputs_torch_refuses_are_refused(fn: Callable[[Any], Any]) -> None:
    theirs, ours = (outcome(lambda lib=lib: trace(lib, fn, lib.ones(2)))[1] for lib in LIBS)
    assert type(ours) is type(theirs) is RuntimeError
    assert str(ours).split("\n")[0] == str(theirs).split("\n")[0]


def test_a_list_output_warns_and_dict_outputs_pass_unless_strict() -> None:
    theirs, ours = (trace(lib, lambda x: [x, x + 1], lib.ones(2))[1] for lib in LIBS)
    assert [w[0] for w in ours] == [w[0] for w in theirs]
    assert ours[0][0].startswith("Encountering a list at the output of the tracer")
    traced, _ = trace(ft, lambda x: {"a": x * 2}, ft.ones(2), strict=False)
    assert to_numpy(traced(ft.ones(1))["a"]).tolist() == [2.0]


def test_inputs_and_calls_torch_refuses_are_refused() -> None:
    def program(lib: Any) -> list[BaseException | None]:
        two = trace(lib, lambda x, y: x * y, (lib.ones(2), lib.ones(2)))[0]
        return [outcome(lambda: trace(lib, lambda x, n: x * n, (lib.ones(2), 3)))[1],
                outcome(lambda: two(lib.ones(2)))[1],
                outcome(lambda: two(lib.ones(2), lib.ones(2), lib.ones(2)))[1],
                outcome(lambda: two(lib.ones(2), 3))[1]]

    for ours, theirs in zip(program(ft), program(torch), strict=True):
        assert type(ours) is type(theirs) is RuntimeError
        assert str(ours).split("\n")[0] == str(theirs).split("\n")[0]


def test_nested_inputs_and_keywords_replay() -> None:
    def f(x: Any, ys: Any) -> Any:
        return x + ys[0], ys[1]

    def program(lib: Any) -> list[list[float]]:
        traced = trace(lib, f, (lib.ones(1), [lib.ones(1), lib.zeros(1)]))[0]
        out = traced(lib.ones(1), ys=[lib.ones(1) * 3, lib.ones(1)])
        return [to_numpy(o).tolist() for o in out]

    assert program(ft) == program(torch)


def test_check_trace_warns_when_the_replay_disagrees() -> None:
    def noisy(x: Any) -> Any:
        return x + ft.rand(2) if isinstance(x, ft.Tensor) else x + torch.rand(2)

    theirs, ours = (trace(lib, noisy, lib.ones(2))[1] for lib in LIBS)
    mismatch = [w[0].split("\n")[0] for w in ours]
    assert mismatch == ["Output nr 1. of the traced function does not match the corresponding "
                        "output of the Python function. Detailed error:"]
    assert mismatch[0] in [w[0].split("\n")[0] for w in theirs]
    assert trace(ft, noisy, ft.ones(2), check_trace=False)[1] == []


def test_a_trace_that_read_sizes_replays_only_at_those_sizes() -> None:
    def flat(x: Any) -> Any:
        return x.view(x.shape[0], -1) * 2

    traced, _ = trace(ft, flat, ft.ones(2, 3))
    assert tuple(traced(ft.ones(2, 3)).shape) == (2, 3)
    with pytest.raises(NotImplementedError, match=r"torch\.jit\.trace: flat read tensor sizes"):
        traced(ft.ones(4, 3))  # torch records x.shape[0]: it would give (4, 3)
    scaled, _ = trace(ft, lambda x: x * 2, ft.ones(2))
    assert tuple(scaled(ft.ones(5)).shape) == (5,)  # no size read: any size replays


def test_is_tracing_is_true_only_while_recording() -> None:
    seen: list[bool] = []

    def f(x: Any) -> Any:
        seen.append(ft.jit.is_tracing())
        return x * 1

    trace(ft, f, ft.ones(1), check_trace=False)
    assert seen == [True] and not ft.jit.is_tracing()


def test_script_is_not_emulated() -> None:
    with pytest.raises(NotImplementedError, match=r"^torch\.jit\.script is not emulated"):
        ft.jit.script(f1)
    traced, _ = trace(ft, f1, _inputs(ft))
    with pytest.raises(NotImplementedError, match=r"torch\.jit\.ScriptFunction\.graph"):
        traced.graph  # noqa: B018


def test_check_inputs_taking_another_branch_fail_the_check() -> None:
    def program(lib: Any) -> BaseException | None:
        a = lib.ones(2)
        return outcome(lambda: trace(lib, f1, (a, a), check_inputs=[(-a, a)]))[1]

    theirs, ours = program(torch), program(ft)
    assert type(ours).__name__ == type(theirs).__name__ == "TracingCheckError"
    assert str(ours).split("\n")[:2] == str(theirs).split("\n")[:2]
