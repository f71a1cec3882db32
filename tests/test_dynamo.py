"""torch._dynamo on fake_torch: tracing, graph breaks, guards, recompiles, explain, backends.

The expected counters, explain fields and texts were measured on real torch 2.13 (CPU build,
backend="eager") with the same programs; where fake_torch differs on purpose the test says so.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fake_torch as torch
import fake_torch._dynamo as dynamo
from fake_torch._compile import compile as torch_compile
from fake_torch._dynamo.exc import BackendCompilerFailed, Unsupported, UserError
from fake_torch._dynamo.utils import counters
from fake_torch._tools._bench_graphs import load_example_llama
from fake_torch.fx import GraphModule
from fake_torch.fx.passes.split_module import split_module
from fake_torch.testing import assert_close


@pytest.fixture(autouse=True)
def fresh_dynamo() -> Iterator[None]:
    dynamo.reset()
    counters.clear()
    yield
    dynamo.reset()
    counters.clear()


def _counts() -> dict[str, Any]:
    """The counters a test compares: frames, stats, resumes, and the first line of each break
    reason (the rest of torch's text is checked elsewhere)."""
    out: dict[str, Any] = {}
    for key, counter in counters.items():
        if key in ("frames", "stats", "resumes"):
            out[key] = dict(counter)
        elif key in ("graph_break", "unimplemented") and counter:
            out[key] = {text.split("\n")[0]: n for text, n in counter.items()}
    return out


# --- the programs torch was measured on ---------------------------------------------------------

def chain(x: torch.Tensor) -> torch.Tensor:
    return ((x + 1) * 2).sin().relu() - 3


def branch(x: torch.Tensor) -> torch.Tensor:
    if x.sum() > 0:
        return x + 1
    return x - 1


def prints(x: torch.Tensor) -> torch.Tensor:
    y = x + 1
    print("hi")
    return y * 2


def item(x: torch.Tensor) -> torch.Tensor:
    y = x.sum()
    v = y.item()
    return x + v


def tolist(x: torch.Tensor) -> torch.Tensor:
    y = x * 2
    values = y.tolist()
    return y + len(values)


def tolist_int(x: torch.Tensor) -> torch.Tensor:
    y = (x * 2).long()
    values = y.tolist()
    return x + len(values)


def int_arg(x: torch.Tensor, n: int) -> torch.Tensor:
    return x * n + 1


def chunk(x: torch.Tensor) -> torch.Tensor:
    a, b = x.chunk(2)
    return a + b


def chunk_first(x: torch.Tensor) -> torch.Tensor:
    return x.chunk(2)[0] + 1


def nonzero(x: torch.Tensor) -> torch.Tensor:
    return torch.nonzero(x) + 1


def bool_index(x: torch.Tensor) -> torch.Tensor:
    return x[x > 0] * 2


def two_prints(x: torch.Tensor) -> torch.Tensor:
    y = x + 1
    print("a")
    y = y * 2
    print("b")
    return y - 1


def user_break(x: torch.Tensor) -> torch.Tensor:
    y = x + 1
    dynamo.graph_break()
    return y * 2


def _resume(fn: Callable[..., Any], offset: int) -> str:
    """torch's resume-function counter key for a break `offset` lines below fn's def."""
    return f"torch_dynamo_resume_in_{fn.__name__}_at_{fn.__code__.co_firstlineno + offset}"


def T(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, device="cuda")


_ONE = {"frames": {"total": 1, "ok": 1}}
COUNTER_CASES: list[tuple[str, Callable[..., Any], Callable[[], list[tuple[Any, ...]]],
                          dict[str, Any], dict[str, Any]]] = [
    ("chain", chain, lambda: [(T(4),), (T(4),)], {},
     {**_ONE, "stats": {"calls_captured": 5, "unique_graphs": 1}}),
    ("branch", branch,
     lambda: [(torch.ones(4, device="cuda"),), (-torch.ones(4, device="cuda"),),
              (torch.ones(4, device="cuda"),)], {},
     {"frames": {"total": 3, "ok": 3}, "stats": {"calls_captured": 4, "unique_graphs": 3},
      "resumes": {_resume(branch, 1): 2}, "unimplemented": {"Data-dependent branching": 1}}),
    ("print", prints, lambda: [(T(4),), (T(4),)], {},
     {"frames": {"total": 2, "ok": 2}, "stats": {"calls_captured": 2, "unique_graphs": 2},
      "resumes": {_resume(prints, 2): 1},
      "graph_break": {"Failed to trace builtin operator": 1}}),
    # torch captures 4 calls here: its graph for a dynamic float input holds one more op
    ("item", item, lambda: [(T(4),), (T(4),)], {},
     {"frames": {"total": 3, "ok": 3}, "stats": {"calls_captured": 3, "unique_graphs": 3},
      "resumes": {_resume(item, 2): 1},
      "graph_break": {"Unsupported Tensor.item() call with capture_scalar_outputs=False": 1}}),
    ("item, sizes 4 8 16", item, lambda: [(T(4),), (T(8),), (T(16),)], {},
     {"frames": {"total": 4, "ok": 4}, "stats": {"calls_captured": 4, "unique_graphs": 4},
      "resumes": {_resume(item, 2): 2},
      "graph_break": {"Unsupported Tensor.item() call with capture_scalar_outputs=False": 2}}),
    ("tolist", tolist, lambda: [(T(4),)], {},
     {"frames": {"total": 2, "ok": 2}, "stats": {"calls_captured": 2, "unique_graphs": 2},
      "resumes": {_resume(tolist, 2): 1},
      "graph_break": {"Tensor.tolist() with non-integer tensor": 1}}),
    ("tolist of ints", tolist_int, lambda: [(T(4),)], {},
     {"frames": {"total": 2, "ok": 2}, "stats": {"calls_captured": 3, "unique_graphs": 2},
      "resumes": {_resume(tolist_int, 2): 1}, "graph_break": {"Data dependent operator": 1}}),
    ("sizes 4 8 16, automatic dynamic", chain, lambda: [(T(4),), (T(8),), (T(16),)], {},
     {"frames": {"total": 2, "ok": 2}, "stats": {"calls_captured": 10, "unique_graphs": 2}}),
    ("sizes 4 8 16, dynamic=False", chain, lambda: [(T(4),), (T(8),), (T(16),)],
     {"dynamic": False},
     {"frames": {"total": 3, "ok": 3}, "stats": {"calls_captured": 15, "unique_graphs": 3}}),
    ("sizes 4 8 16, dynamic=True", chain, lambda: [(T(4),), (T(8),), (T(16),)],
     {"dynamic": True}, {**_ONE, "stats": {"calls_captured": 5, "unique_graphs": 1}}),
    ("sizes 4 8 16 1: size 1 specialises", chain,
     lambda: [(T(4),), (T(8),), (T(16),), (T(1),)], {},
     {"frames": {"total": 3, "ok": 3}, "stats": {"calls_captured": 15, "unique_graphs": 3}}),
    ("int argument 2 3 4 1", int_arg, lambda: [(T(4), 2), (T(4), 3), (T(4), 4), (T(4), 1)], {},
     {"frames": {"total": 2, "ok": 2}, "stats": {"calls_captured": 4, "unique_graphs": 2}}),
    ("chunk, both halves", chunk, lambda: [(T(4),)], {},
     {**_ONE, "stats": {"calls_captured": 4, "unique_graphs": 1}}),
    ("chunk, first half", chunk_first, lambda: [(T(4),)], {},
     {**_ONE, "stats": {"calls_captured": 3, "unique_graphs": 1}}),
    ("nonzero", nonzero, lambda: [(T(4),), (T(4),)], {},
     {"frames": {"total": 2, "ok": 2}, "stats": {"calls_captured": 1, "unique_graphs": 1},
      "resumes": {_resume(nonzero, 1): 1}, "graph_break": {"Dynamic shape operator": 1}}),
    ("boolean mask", bool_index,
     lambda: [(torch.tensor([1.0, -1.0, 2.0, -2.0], device="cuda"),),  # 2 kept, then 3
              (torch.tensor([1.0, 2.0, 3.0, -1.0], device="cuda"),)], {},
     {"frames": {"total": 3, "ok": 3}, "stats": {"calls_captured": 3, "unique_graphs": 3},
      "resumes": {_resume(bool_index, 1): 1}, "graph_break": {"Dynamic shape operator": 1}}),
    ("two prints", two_prints, lambda: [(T(4),), (T(4),)], {},
     {"frames": {"total": 3, "ok": 3}, "stats": {"calls_captured": 3, "unique_graphs": 3},
      "resumes": {_resume(two_prints, 2): 1, _resume(two_prints, 4): 1},
      "graph_break": {"Failed to trace builtin operator": 2}}),
    ("torch._dynamo.graph_break()", user_break, lambda: [(T(4),)], {},
     {"frames": {"total": 2, "ok": 2}, "stats": {"calls_captured": 2, "unique_graphs": 2},
      "resumes": {_resume(user_break, 2): 1},
      "graph_break": {"Call to `torch._dynamo.graph_break()`": 1}}),
    ("transposed input: a stride guard", chain,
     lambda: [(T(4, 3),), (T(3, 4).t(),)], {},
     {"frames": {"total": 2, "ok": 2}, "stats": {"calls_captured": 10, "unique_graphs": 2}}),
]


@pytest.mark.parametrize(("fn", "make_inputs", "kwargs", "expected"),
                         [c[1:] for c in COUNTER_CASES], ids=[c[0] for c in COUNTER_CASES])
def test_counters_match_torch(fn: Callable[..., Any], make_inputs: Callable[[], list[Any]],
                              kwargs: dict[str, Any], expected: dict[str, Any],
                              capsys: pytest.CaptureFixture[str]) -> None:
    compiled = torch_compile(fn, backend="eager", **kwargs)
    for args in make_inputs():
        assert_close(compiled(*args), fn(*args))
    assert _counts() == expected


def test_counters_keys_like_torch() -> None:
    """torch's counters have an (empty) "unimplemented" key after a graph_break, none for
    graph_break after data-dependent branching."""
    torch_compile(prints, backend="eager")(T(4))
    assert set(counters) == {"frames", "stats", "graph_break", "unimplemented", "resumes"}
    assert not counters["unimplemented"]
    counters.clear()
    torch_compile(branch, backend="eager")(T(4))
    assert "graph_break" not in counters


def test_a_module_recompiles_once_for_a_new_batch_size() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 2))
    model = model.cuda()
    compiled = torch_compile(model, backend="eager")
    for batch in (3, 5, 7):
        x = T(batch, 4)
        assert_close(compiled(x), model(x))
    assert _counts() == {"frames": {"total": 2, "ok": 2},
                         "stats": {"calls_captured": 6, "unique_graphs": 2}}


def test_dynamic_true_still_specialises_size_one() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return (x + 1) * 2

    compiled = torch_compile(f, backend="eager", dynamic=True)
    for shape in ((1, 4), (2, 4), (6, 4), (6, 1)):
        compiled(T(*shape))
    assert _counts() == {"frames": {"total": 3, "ok": 3},
                         "stats": {"calls_captured": 6, "unique_graphs": 3}}


def test_global_python_values_stay_static() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return x * GLOBAL_SCALE

    compiled = torch_compile(f, backend="eager")
    results = []
    for v in (2, 3, 4):
        globals()["GLOBAL_SCALE"] = v
        results.append(compiled(torch.ones(2)).tolist())
    assert results == [[2.0, 2.0], [3.0, 3.0], [4.0, 4.0]]
    assert counters["frames"]["total"] == 3  # torch: 3 (a global never becomes dynamic)


GLOBAL_SCALE = 2


def test_sequence_of_shapes_recompile_counts() -> None:
    """4 -> 8 recompiles with dim 0 dynamic; 16, 8, 2 reuse it; 1 specialises; a new rank
    and a new dtype recompile (the double entry keeps dim 0 dynamic); all equal eager."""
    compiled = torch_compile(chain, backend="eager")
    frames = []
    for x in (T(4), T(8), T(16), T(8), T(2), T(1), T(3, 3), T(5).double(), T(7).double()):
        assert_close(compiled(x), chain(x))
        frames.append(counters["frames"]["total"])
    assert frames == [1, 2, 2, 2, 2, 3, 4, 5, 5]  # as torch: dim 0 stays dynamic for doubles


# --- guards -------------------------------------------------------------------------------

def _recompile_reasons(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage().split("\n")[-1].strip() for r in caplog.records
            if r.name == "fake_torch._dynamo.guards"]


@pytest.mark.parametrize(("first", "second", "reason"), [
    (lambda: T(4), lambda: T(4).double(),
     "- 0/0: tensor 'x' dtype mismatch. expected Float, actual Double"),
    (lambda: T(4), lambda: torch.randn(4),
     "- 0/0: tensor 'x' dispatch key set mismatch. expected DispatchKeySet(CUDA, BackendSelect, "
     "ADInplaceOrView, AutogradCUDA), actual DispatchKeySet(CPU, BackendSelect, "
     "ADInplaceOrView, AutogradCPU)"),
    (lambda: T(4, 2), lambda: T(4, 2, 1), "- 0/0: tensor 'x' rank mismatch. expected 2, actual 3"),
    (lambda: T(4, 3), lambda: T(3, 4).t(),
     "- 0/0: tensor 'x' stride mismatch at index 0. expected 3, actual 1"),
    (lambda: T(4), lambda: T(4).requires_grad_(),
     "- 0/0: tensor 'x' requires_grad mismatch. expected requires_grad=0"),
    (lambda: T(4), lambda: T(8),
     "- 0/0: tensor 'x' size mismatch at index 0. expected 4, actual 8"),
])
def test_tensor_guards_recompile_with_torchs_reason(
        first: Callable[[], torch.Tensor], second: Callable[[], torch.Tensor], reason: str,
        caplog: pytest.LogCaptureFixture) -> None:
    compiled = torch_compile(chain, backend="eager")
    caplog.set_level(logging.DEBUG, logger="fake_torch._dynamo.guards")
    compiled(first())
    x = second()
    assert_close(compiled(x), chain(x))
    assert counters["frames"]["total"] == 2
    assert _recompile_reasons(caplog) == [reason]


@pytest.mark.parametrize(("values", "reason", "frames"), [
    ((2, 3, 4), "- 0/0: n == 2", 2),  # ints: dynamic after the first change
    ((2.0, 3.0, 4.0), "- 0/0: n == 2.0", 2),
    ((True, False, True), "- 0/0: n == True", 2),
    (("a", "bb", "ccc"), "- 0/0: n == 'a'", 3),  # strings: always specialised
])
def test_python_value_guards(values: tuple[Any, ...], reason: str, frames: int,
                             caplog: pytest.LogCaptureFixture) -> None:
    def f(x: torch.Tensor, n: Any) -> torch.Tensor:
        return x * (len(n) if isinstance(n, str) else n) + 1

    compiled = torch_compile(f, backend="eager")
    caplog.set_level(logging.DEBUG, logger="fake_torch._dynamo.guards")
    x = T(3)
    for v in values:
        assert_close(compiled(x, v), f(x, v))
    assert counters["frames"]["total"] == frames
    assert _recompile_reasons(caplog)[0] == reason


def test_closure_values_are_guarded() -> None:
    def make(k: int) -> Callable[[torch.Tensor], torch.Tensor]:
        def f(x: torch.Tensor) -> torch.Tensor:
            return x + k
        return f

    f = make(1)
    compiled = torch_compile(f, backend="eager")
    assert compiled(torch.zeros(2)).tolist() == [1.0, 1.0]
    f.__closure__[0].cell_contents = 5  # type: ignore[index]
    assert compiled(torch.zeros(2)).tolist() == [5.0, 5.0]
    assert counters["frames"]["total"] == 2


def test_recompile_limit_warns_with_torchs_wording_and_runs_eagerly(
        caplog: pytest.LogCaptureFixture) -> None:
    compiled = torch_compile(chain, backend="eager")
    with dynamo.config.patch(recompile_limit=2):
        for shape in ((4,), (4, 2), (4, 2, 3), (4, 2, 3, 5)):
            x = T(*shape)
            assert_close(compiled(x), chain(x))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    code = chain.__code__
    assert warnings == [
        "torch._dynamo hit config.recompile_limit (2)\n"
        f"   function: 'chain' ({code.co_filename}:{code.co_firstlineno})\n"
        "   last reason: 0/1: tensor 'x' rank mismatch. expected 2, actual 3\n"
        "To log all recompilation reasons, use TORCH_LOGS=\"recompiles\".\n"
        "To diagnose recompilation issues, see https://docs.pytorch.org/docs/main/user_guide/"
        "torch_compiler/compile/programming_model.recompilation.html"]
    assert _counts() == {"frames": {"total": 3, "ok": 2},
                         "stats": {"calls_captured": 10, "unique_graphs": 2},
                         "unimplemented": {"Dynamo recompile limit exceeded": 1}}
    assert dynamo.config.cache_size_limit == dynamo.config.recompile_limit == 8


def test_fullgraph_recompile_limit_is_a_hard_failure() -> None:
    compiled = torch_compile(chain, backend="eager", fullgraph=True, recompile_limit=1)
    compiled(T(4))
    with pytest.raises(dynamo.exc.FailOnRecompileLimitHit, match="Hard failure due to fullgraph"):
        compiled(T(3, 3))


# --- graph breaks -----------------------------------------------------------------------------

def print_tensor(x: torch.Tensor) -> torch.Tensor:
    y = x + 1
    print(y)
    return y


def repr_break(x: torch.Tensor) -> torch.Tensor:
    y = x + 1
    text = repr(y)
    return y * len(text)


FULLGRAPH_CASES = [
    (branch, "Data-dependent branching\n  Explanation: Detected data-dependent branching "
             "(e.g. `if my_tensor.sum() > 0:`)", "if x.sum() > 0:\n       ^^^^^^^^^^^\n"),
    (prints, "Failed to trace builtin operator\n  Explanation: Dynamo does not know how to "
             "trace builtin operator `print` with argument types ['str'] (has_kwargs False)",
     'print("hi")\n\n'),
    (print_tensor, "Failed to trace builtin operator\n  Explanation: Dynamo does not know how "
                   "to trace builtin operator `print` with argument types ['Tensor']",
     "print(y)\n\n"),
    (tolist, "Tensor.tolist() with non-integer tensor\n  Explanation: Dynamo currently does "
             "not support tracing `tolist()` on non-integer tensors.",
     "values = y.tolist()\n             ^^^^^^^^^^\n"),
    (repr_break, "repr() on tensor\n  Explanation: Tensor repr requires actual runtime values",
     "text = repr(y)\n           ^^^^^^^\n"),
    (user_break, "Call to `torch._dynamo.graph_break()`",
     "dynamo.graph_break()\n\n"),
    # torch captures these with unbacked sizes under fullgraph=True; fake_torch cannot
    (nonzero, "Dynamic shape operator\n  Explanation: Operator `aten.nonzero.default`'s output "
              "shape depends on input Tensor data.", "return torch.nonzero(x) + 1\n"),
]


@pytest.mark.parametrize(("fn", "leading", "code"), FULLGRAPH_CASES,
                         ids=[c[0].__name__ for c in FULLGRAPH_CASES])
def test_fullgraph_raises_unsupported_with_torchs_text(fn: Callable[..., Any], leading: str,
                                                       code: str) -> None:
    x = T(4)
    before = x.clone()
    with pytest.raises(Unsupported) as info:
        torch_compile(fn, backend="eager", fullgraph=True)(x)
    message = str(info.value)
    assert message.startswith(leading)
    assert isinstance(info.value, RuntimeError)
    assert "\n\nfrom user code:\n   File \"" + __file__ in message
    assert code in message
    assert message.endswith("Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do "
                            "this especially if you're reporting a bug to PyTorch). For even "
                            "more developer context, set TORCH_LOGS=\"+dynamo\"\n")
    assert torch.equal(x, before)
    assert counters["stats"]["unique_graphs"] == 0


def test_fullgraph_captures_item_as_a_scalar_output() -> None:
    """As in torch 2.13, fullgraph=True captures .item() (one graph, no break)."""
    def f(x: torch.Tensor) -> torch.Tensor:
        v = x.sum().item()
        return x * (v * 2 + 1)

    compiled = torch_compile(f, backend="eager", fullgraph=True)
    for x in (T(4), T(4) * 3):
        assert_close(compiled(x), f(x))
    assert _counts() == {**_ONE, "stats": {"calls_captured": 5, "unique_graphs": 1}}


def test_a_captured_scalar_in_python_control_flow() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        v = x.sum().item()
        if v > 0:
            return x + 1
        return x - 1

    with pytest.raises(UserError, match=r"Could not guard on data-dependent expression zuf0 > 0"):
        torch_compile(f, backend="eager", fullgraph=True)(T(4))
    with dynamo.config.patch(capture_scalar_outputs=True):
        compiled = torch_compile(f, backend="eager")
        for x in (torch.ones(4), -torch.ones(4)):
            assert_close(compiled(x), f(x))
    assert counters["frames"]["total"] == 3


def test_graph_breaks_run_everything_exactly_once() -> None:
    """In-place updates on both sides of a break are applied once per call, as eagerly."""
    def f(x: torch.Tensor, buf: torch.Tensor) -> torch.Tensor:
        buf.add_(1)
        y = buf * 2
        print("between graphs")
        buf.mul_(3)
        return y + x

    eager_buf, compiled_buf = torch.zeros(3, device="cuda"), torch.zeros(3, device="cuda")
    compiled = torch_compile(f, backend="eager")
    x = T(3)
    for _ in range(3):
        assert_close(compiled(x, compiled_buf), f(x, eager_buf))
        assert torch.equal(compiled_buf, eager_buf)
    assert counters["stats"]["unique_graphs"] == 2


def test_random_ops_draw_what_eager_draws() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        y = x + torch.randn(x.shape, device=x.device)
        print("between graphs")
        return y * torch.rand(x.shape, device=x.device)

    compiled = torch_compile(f, backend="eager")
    for _ in range(2):
        torch.manual_seed(7)
        expected = f(torch.zeros(5, device="cuda"))
        torch.manual_seed(7)
        assert torch.equal(compiled(torch.zeros(5, device="cuda")), expected)


def test_python_side_effects_keep_running() -> None:
    """A forward that sets module attributes (or a function that writes a global) runs its
    Python on every call, as torch replays such side effects."""
    class Counting(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(3, 3)
            self.steps = 0

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            self.steps += 1
            return self.lin(x)

    model = Counting()
    compiled = torch_compile(model, backend="eager")
    for _ in range(3):
        compiled(torch.ones(2, 3))
    assert model.steps == 3
    assert counters["stats"]["unique_graphs"] == 1


# --- explain ----------------------------------------------------------------------------------

def _ops(e: Any) -> list[list[str]]:
    return [[getattr(op, "__name__", op) for op in ops] for ops in e.ops_per_graph]


@pytest.mark.parametrize(("fn", "graphs", "ops", "reason"), [
    (chain, 1, [["add", "mul", "sub"]], None),  # sin/relu are methods: not call_function ops
    (prints, 2, [["add"], ["mul"]], "Failed to trace builtin operator"),
    (item, 2, [[], ["add"]], "Unsupported Tensor.item() call with capture_scalar_outputs=False"),
    (tolist, 2, [["mul"], ["add"]], "Tensor.tolist() with non-integer tensor"),
    (nonzero, 1, [["add"]], None),  # the graph before nonzero is empty: not compiled
    (bool_index, 2, [["gt"], ["mul"]], "Dynamic shape operator"),
    (repr_break, 2, [["add"], ["mul"]], "repr() on tensor"),
])
def test_explain_matches_torch(fn: Callable[..., Any], graphs: int, ops: list[list[str]],
                               reason: str | None) -> None:
    e = dynamo.explain(fn)(torch.randn(4, 4))
    assert (e.graph_count, e.graph_break_count, e.op_count) == (graphs, graphs - 1,
                                                                sum(map(len, ops)))
    assert _ops(e) == ops
    assert [r.reason.split("\n")[0] for r in e.break_reasons] == ([reason] if reason else [])
    assert all(isinstance(g, GraphModule) for g in e.graphs)
    if reason:
        frame = e.break_reasons[0].user_stack[-1]
        assert (frame.filename, frame.name) == (__file__, fn.__name__)


def test_explain_branching_and_printout() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        if x.sum() > 0:
            return y + 1
        return y - 1

    e = dynamo.explain(f)(torch.ones(4))
    assert _ops(e) == [["mul", "gt"], ["add"]]
    assert [r.reason for r in e.break_reasons] == ["generic_jump TensorVariable()"]
    line = f.__code__.co_firstlineno + 2
    text = str(e)
    assert text.startswith(
        "Graph Count: 2\nGraph Break Count: 1\nOp Count: 3\nBreak Reasons:\n"
        "  Break Reason 1:\n    Reason: generic_jump TensorVariable()\n    User Stack:\n"
        f"      <FrameSummary file {__file__}, line {line} in f>\n"
        "Ops per Graph:\n  Ops 1:\n    <built-in function mul>\n    <built-in function gt>\n"
        "  Ops 2:\n    <built-in function add>\nOut Guards:\n")
    assert counters["stats"]["unique_graphs"] == 2  # explain runs compiled, then resets caches


# --- graphs, modules, backends ------------------------------------------------------------------

class KVCache(torch.nn.Module):
    """A projection whose result is stored at a slot of a cache buffer (vLLM's
    reshape_and_cache), then the cache is reduced."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(4, 4)
        self.register_buffer("cache", torch.zeros(8, 4))

    def forward(self, x: torch.Tensor, slot: torch.Tensor) -> torch.Tensor:
        y = self.proj(x)
        self.cache.index_copy_(0, slot, y)
        return self.cache.sum(0)


def test_module_tensors_are_graph_inputs_and_buffer_updates_run_once() -> None:
    """As in torch 2.13 (inline_inbuilt_nn_modules): a compiled module's parameters and
    buffers are placeholders named by their path (L_self_modules_proj_parameters_weight_),
    read from the module at every call; an in-place write to a buffer runs in the graph."""
    graphs: list[GraphModule] = []

    def backend(gm: GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
        graphs.append(gm)
        return gm.forward

    eager, compiled_model = KVCache().cuda(), KVCache().cuda()
    compiled_model.load_state_dict(eager.state_dict())
    compiled = torch_compile(compiled_model, backend=backend)
    for step in range(3):
        x, slot = T(1, 4), torch.tensor([step], device="cuda")
        torch.LaunchCounter.reset()
        out = compiled(x, slot)
        assert torch.LaunchCounter.by_op["index_copy_"] == 1  # the trace call too
        assert_close(out, eager(x, slot))
        assert torch.equal(compiled_model.cache, eager.cache)
    (gm,) = graphs
    assert sorted(n.target for n in gm.graph.nodes if n.op in ("placeholder", "get_attr")) == [
        "L_self_buffers_cache_", "L_self_modules_proj_parameters_bias_",
        "L_self_modules_proj_parameters_weight_", "L_slot_", "L_x_"]
    assert "index_copy_ = l_self_buffers_cache_.index_copy_(0, l_slot_, linear)" in gm.code


def test_custom_backend_splits_the_graph_and_its_callable_runs_later_calls() -> None:
    """vLLM's pattern: split at the attention-like op, wrap each piece; the backend is called
    once per graph, and what it returned runs every later call, at every size."""
    backend_calls: list[GraphModule] = []
    piece_calls: list[str] = []

    def backend(gm: GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
        backend_calls.append(gm)
        part = [0]

        def split_at_softmax(node: Any) -> int:
            if node.op == "call_method" and node.target == "softmax":
                part[0] += 1
                return 2 * part[0] - 1
            return 2 * part[0]

        split = split_module(gm, None, split_at_softmax)
        for name, piece in split.named_children():
            def wrapped(*args: Any, _run: Any = piece.forward, _name: str = name) -> Any:
                piece_calls.append(_name)
                return _run(*args)
            piece.forward = wrapped
        return split.forward

    def f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        b = x.shape[0]
        h = (x @ w).view(b, 2, -1).softmax(dim=-1)
        return h.reshape(b, -1) * 2 + torch.arange(b, device=x.device)[:, None]

    compiled = torch_compile(f, backend=backend)
    w = T(6, 8)
    for b in (4, 8, 16, 8, 32, 4):
        x = T(b, 6)
        assert_close(compiled(x, w), f(x, w))
    assert len(backend_calls) == 2  # 4, then 8 with dim 0 dynamic; the rest re-specialise
    assert piece_calls == ["submod_0", "submod_1", "submod_2"] * 6
    assert counters["frames"]["total"] == 2


def test_backend_sees_real_example_inputs_once_per_graph() -> None:
    seen: list[list[tuple[int, ...]]] = []

    def backend(gm: GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
        seen.append([tuple(t.shape) for t in example_inputs])
        return gm.forward

    compiled = torch_compile(prints, backend=backend)
    compiled(T(3))
    compiled(T(3))
    assert seen == [[(3,)], [(3,)]]


def test_backend_errors() -> None:
    with pytest.raises(BackendCompilerFailed, match="backend='<lambda>' raised:\n"
                                                    "AssertionError: compiler_fn did not return "
                                                    "callable"):
        torch_compile(chain, backend=lambda gm, ex: 3)(T(2))

    def boom(gm: GraphModule, example_inputs: list[torch.Tensor]) -> Callable[..., Any]:
        raise ValueError("boom")

    x = T(2)
    with pytest.raises(BackendCompilerFailed, match="backend='boom' raised:\nValueError: boom"):
        torch_compile(chain, backend=boom)(x)


def test_the_default_backend_fuses_and_equals_eager() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return (x * 2 + 1).relu().sum(dim=-1)

    compiled = torch_compile(f)
    x = T(4, 8)
    expected = f(x)
    compiled(x)
    torch.LaunchCounter.reset()
    out = compiled(x)
    assert torch.LaunchCounter.n == 1  # mul, add, relu and the sum: one fused kernel
    assert_close(out, expected)


def test_example_llama_compiled_gives_eagers_logits() -> None:
    llama = load_example_llama()
    cfg = llama.LlamaConfig()

    def build() -> Any:
        torch.manual_seed(0)
        model = llama.Llama(cfg).to("cuda").eval()
        model.allocate_kv_cache(2)
        return model

    eager, model = build(), build()
    prompt = torch.randint(0, cfg.vocab_size, (2, 5), device="cuda")
    with torch.inference_mode():
        logits, tokens, positions = llama.prefill(eager, prompt)
        c_logits, c_tokens, c_positions = llama.prefill(torch_compile(model, backend="eager"),
                                                        prompt)
        assert torch.equal(c_logits, logits)
        step = torch_compile(llama.decode_step, backend="eager")
        for _ in range(3):
            logits, tokens, positions = llama.decode_step(eager, tokens, positions)
            c_logits, c_tokens, c_positions = step(model, c_tokens, c_positions)
            assert torch.equal(c_logits, logits)
            assert torch.equal(c_tokens, tokens)
            assert torch.equal(model.kv_cache, eager.kv_cache)
    assert counters["stats"]["unique_graphs"] == 2  # prefill's forward, one decode step


# --- compiled == eager on random programs -------------------------------------------------------

UNARY: list[Callable[[torch.Tensor], torch.Tensor]] = [
    lambda t: t + 1.5, lambda t: t * t, lambda t: t.sin(), lambda t: torch.relu(t),
    lambda t: t.tanh(), lambda t: -t, lambda t: t.abs().sqrt(), lambda t: t.sigmoid(),
    lambda t: t - t.mean(dim=-1, keepdim=True), lambda t: t.softmax(dim=-1),
    lambda t: t.transpose(0, 1).contiguous().transpose(0, 1), lambda t: t.reshape(-1).view(t.shape),
    lambda t: torch.where(t > 0, t, t * 0.1), lambda t: t @ t.transpose(0, 1) @ t / 8,
    lambda t: t.clone().mul_(2), lambda t: t.flip(-1), lambda t: t[:, :1] * t,
]


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(st.integers(0, len(UNARY) - 1), min_size=1, max_size=6),
       rows=st.integers(1, 5), cols=st.integers(1, 6), breaks=st.booleans(),
       device=st.sampled_from(["cuda", "cpu"]), backend=st.sampled_from(["eager", "inductor"]))
def test_compiled_chains_equal_eager(ops: list[int], rows: int, cols: int, breaks: bool,
                                     device: str, backend: str) -> None:
    def program(x: torch.Tensor) -> torch.Tensor:
        for i, op in enumerate(ops):
            x = UNARY[op](x)
            if breaks and i == len(ops) // 2:
                dynamo.graph_break()
        return x

    compiled = torch_compile(program, backend=backend)
    for n, scale in ((rows, 1.0), (rows, -2.0), (rows + 2, 1.0), (rows + 3, 0.5)):
        x = torch.randn(n, cols, device=device) * scale  # new sizes: dynamic re-specialised
        assert_close(compiled(x), program(x), rtol=1e-5, atol=1e-5)


def test_a_failing_trace_leaves_nothing_hooked() -> None:
    import builtins

    from fake_torch._simulated import _dispatch

    def f(x: torch.Tensor) -> torch.Tensor:
        if (x + 1).dim() == 1:  # a recorded op, then the error
            raise ValueError("user error while tracing")
        return x

    add, print_ = torch.Tensor.__add__, builtins.print
    with pytest.raises(ValueError, match="user error while tracing"):
        torch_compile(f, backend="eager")(T(2))
    assert torch.Tensor.__add__ is add and builtins.print is print_
    assert _dispatch.current_mode().name == "eager"
    assert not dynamo.is_compiling()


def test_compiled_functions_called_from_compiled_code_are_inlined() -> None:
    inner = torch_compile(lambda x: x.sin() * 2, backend="eager")

    def outer(x: torch.Tensor) -> torch.Tensor:
        return inner(x + 1) - 1

    x = T(3)
    assert_close(torch_compile(outer, backend="eager")(x), outer(x))
    assert counters["stats"]["unique_graphs"] == 2  # outer's one graph, then inner on its own
