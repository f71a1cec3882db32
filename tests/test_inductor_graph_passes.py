"""Inductor's custom graph passes, against real torch 2.13 (CPU): what compile_fx hands
config.pre_grad_custom_pass (Dynamo's graph), post_grad_custom_pre_pass and
post_grad_custom_post_pass (the aten graph after the joint-graph passes, view_to_reshape and,
for the post pass, remove_noop_ops), and that the rewritten graph is what runs.

Real torch is stopped by an exception from its post pass once the graph is recorded (its CPU
codegen would take seconds per graph); fake_torch runs the compiled graph, checked against
eager. The differences, documented: torch's inductor decompositions turn ones, zeros and the
*_like fills into `aten.full.default` (fake_torch's table has no such entry: full's
`layout=torch.strided` argument is not emulated), fake_torch keeps the op; torch computes a size
expression (`arg0_1 // 64`) at the top of the graph, fake_torch where it is first used; and
fake_torch's aten graph is not functionalized (in-place ops stay; torch's are functional).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches, to_numpy

import fake_torch as ft
from fake_torch._inductor import config as ft_config
from fake_torch._inductor.compile_fx import compile_fx as ft_compile_fx
from fake_torch._inductor.custom_graph_pass import CustomGraphPass

torch = pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")

_UNIFORM = {"aten.ones.default", "aten.ones_like.default", "aten.zeros.default",
            "aten.zeros_like.default", "aten.full_like.default"}


class _Recorded(Exception):
    """Raised by the post pass in real torch once the graph is recorded."""


def _targets(graph: Any) -> list[str]:
    return [str(n.target) for n in graph.nodes if n.op == "call_function"]


def _passes_see(lib: ModuleType, fn: Callable[..., Any], args: list[Any],
                dynamic_dim: int | None = None) -> dict[str, Any]:
    """What each custom pass sees when `lib` compiles `fn` with inductor's compile_fx."""
    seen: dict[str, Any] = {}

    def pre_grad(graph: Any) -> None:
        seen["pre_grad"] = [(n.op, getattr(n.target, "__name__", str(n.target)))
                            for n in graph.nodes if n.op != "placeholder"]

    def post_grad_pre(graph: Any) -> None:
        seen["post_grad_pre"] = _targets(graph)

    def post_grad_post(graph: Any) -> None:
        seen["post_grad_post"] = _targets(graph)
        if lib is torch:
            raise _Recorded

    if lib is torch:
        from torch._inductor.compile_fx import compile_fx
    else:
        compile_fx = ft_compile_fx
    patches = {"pre_grad_custom_pass": pre_grad, "post_grad_custom_pre_pass": post_grad_pre,
               "post_grad_custom_post_pass": post_grad_post}

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        return compile_fx(gm, example_inputs, config_patches=patches)

    lib._dynamo.reset()
    if dynamic_dim is not None:
        lib._dynamo.mark_dynamic(args[0], dynamic_dim)
    compiled = lib.compile(fn, backend=backend)
    if lib is torch:
        with pytest.raises(Exception) as stopped:
            compiled(*args)
        assert isinstance(stopped.value.__cause__, _Recorded) or \
            "_Recorded" in repr(stopped.value), stopped.value
    else:  # the rewritten graph runs: its outputs are eager's
        got, want = compiled(*args), fn(*args)
        got = got if isinstance(got, tuple) else (got,)
        want = want if isinstance(want, tuple) else (want,)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(to_numpy(g), to_numpy(w), rtol=1e-6)
    return seen


# each case: (a program over the library, its argument shapes, the dim marked dynamic)
def _noop_views(lib: ModuleType) -> Callable[..., Any]:
    def f(x: Any, y: Any) -> Any:
        a = x.reshape(-1, 4).reshape(8, 4)  # both views to x's own size
        b = a[0:8]  # a full slice (aten.alias)
        c = lib.cat([b]) * y.clone()  # a one-input cat, a clone
        return c + c
    return f


def _clone_output(lib: ModuleType) -> Callable[..., Any]:
    return lambda x: x.clone()  # a clone of an input returned: kept (no new aliasing)


def _noop_pointwise(lib: ModuleType) -> Callable[..., Any]:
    return lambda x, y: (x.view(2, 16).view(8, 4) + y).pow(1).repeat(1, 1)


def _zero_pad(lib: ModuleType) -> Callable[..., Any]:
    return lambda x: lib.nn.functional.pad(x, (0, 0)) * 2


def _symbolic_full_slice(lib: ModuleType) -> Callable[..., Any]:
    def f(x: Any) -> Any:
        n = x.shape[0]
        return (x[:n] + 1).reshape(n, 4)
    return f


def _same_dtype(lib: ModuleType) -> Callable[..., Any]:
    return lambda x: x.to(lib.float32) + x.float()


def _permutes(lib: ModuleType) -> Callable[..., Any]:
    return lambda x: lib.relu(x.t().contiguous()).transpose(0, 1)


def _mlp(lib: ModuleType) -> Callable[..., Any]:
    return lambda x, y: lib.relu(x.reshape(-1, 4) @ y.t()).sum(-1)


CASES = {
    "noop_views": (_noop_views, [(8, 4), (8, 4)], None),
    "clone_output": (_clone_output, [(8, 4)], None),
    "noop_pointwise": (_noop_pointwise, [(8, 4), (8, 4)], None),
    "zero_pad": (_zero_pad, [(8, 4)], None),
    "symbolic_full_slice": (_symbolic_full_slice, [(8, 4)], 0),
    "same_dtype": (_same_dtype, [(8, 4)], None),
    "permutes": (_permutes, [(8, 4)], None),
    "mlp": (_mlp, [(8, 4), (3, 4)], None),
}


def _args(lib: ModuleType, shapes: Sequence[tuple[int, ...]]) -> list[Any]:
    rng = np.random.default_rng(0)
    return [lib.from_numpy(rng.standard_normal(s).astype(np.float32)) for s in shapes]


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_custom_pass_sees_torchs_graph(name: str) -> None:
    program, shapes, dynamic_dim = CASES[name]
    theirs = _passes_see(torch, program(torch), _args(torch, shapes), dynamic_dim)
    ours = _passes_see(ft, program(ft), _args(ft, shapes), dynamic_dim)
    assert ours == theirs


def test_vllm_noop_elimination_model_reaches_the_post_pass_as_in_torch() -> None:
    """vLLM's test_noop_elimination model, first dim dynamic: the full slice, the no-op view
    and the full slice_scatter are gone before the post pass (torch's remove_noop_ops and
    pointless-view pattern); the reshape chain and the embedding's slice are left to it."""
    def model(lib: ModuleType) -> Callable[..., Any]:
        pos = lib.from_numpy(np.ones((256, 64), np.float32))

        def f(x: Any) -> Any:
            x = x + pos[: x.shape[0]]
            y = x.reshape(-1, 128, 32)
            z = y.reshape(-1, 4096)
            a = z.reshape(-1, 4096)
            b = a.reshape(-1, 128, 32)
            c = b[0:b.shape[0]]
            return lib.slice_scatter(lib.ones_like(c), c, 0, 0, c.shape[0])
        return f

    theirs = _passes_see(torch, model(torch), _args(torch, [(256, 64)]), 0)
    ours = _passes_see(ft, model(ft), _args(ft, [(256, 64)]), 0)
    assert ours["pre_grad"] == theirs["pre_grad"]

    def normalized(targets: list[str]) -> list[str]:  # the fills as torch decomposes them
        return ["aten.full.default" if t in _UNIFORM else t for t in targets
                if t != "aten.sym_size.int"]  # (the size full is given: ones_like has none)

    for key in ("post_grad_pre", "post_grad_post"):
        assert normalized(ours[key]) == normalized(theirs[key]), key
    # the size expression first (reorder_for_locality moved it), the dead fill kept (no dce)
    assert normalized(theirs["post_grad_post"]) == [
        "<built-in function floordiv>", "aten.slice.Tensor", "aten.add.Tensor",
        "aten.reshape.default", "aten.reshape.default", "aten.reshape.default",
        "aten.full.default"]


def test_a_slice_scatter_that_is_no_noop_is_kept() -> None:
    """vLLM's test_non_noop_slice_preserved: end=-1 drops a row, so neither op is removed."""
    def program(lib: ModuleType) -> Callable[..., Any]:
        def f(x: Any) -> Any:
            src = lib.ones(7, 4)
            return x[0:-1, :], lib.slice_scatter(x.clone(), src, dim=0, start=0, end=-1)
        return f

    theirs = _passes_see(torch, program(torch), _args(torch, [(8, 4)]))
    ours = _passes_see(ft, program(ft), _args(ft, [(8, 4)]))
    for seen in (theirs, ours):
        post = seen["post_grad_post"]
        assert post.count("aten.slice.Tensor") == 1 and \
            post.count("aten.slice_scatter.default") == 1
        assert "aten.clone.default" not in post  # the clone feeding slice_scatter: a no-op
    assert ours["pre_grad"] == theirs["pre_grad"]


def test_the_rewritten_graph_is_what_runs() -> None:
    """A post pass that turns mul into add: the compiled function adds (one fused kernel)."""
    def mul_to_add(graph: Any) -> None:
        for node in graph.find_nodes(op="call_function", target=ft.ops.aten.mul.Tensor):
            node.target = ft.ops.aten.add.Tensor

    class MulToAdd(CustomGraphPass):
        def __call__(self, graph: Any) -> None:
            mul_to_add(graph)

        def uuid(self) -> Any:
            return "mul_to_add"

    x = ft.arange(6.0, device="cuda").reshape(2, 3)
    y = ft.full((2, 3), 10.0, device="cuda")
    for custom in (mul_to_add, MulToAdd(), [MulToAdd()]):
        def backend(gm: Any, example_inputs: list[Any], custom: Any = custom) -> Any:
            return ft_compile_fx(gm, example_inputs,
                                 config_patches={"post_grad_custom_post_pass": custom})

        ft._dynamo.reset()
        compiled = ft.compile(lambda a, b: (a * b).relu(), backend=backend)
        compiled(x, y)
        with launches() as names:
            out = compiled(x, y)
        assert out.tolist() == (x + y).tolist()
        assert len(names) == 1  # add and relu: one fused kernel


def test_combo_kernels_only_with_its_benchmark() -> None:
    def backend(patches: dict[str, Any]) -> Callable[..., Any]:
        return lambda gm, ex: ft_compile_fx(gm, ex, config_patches=patches)

    x = ft.ones(4, device="cuda")
    ft._dynamo.reset()
    with pytest.raises(ft._dynamo.exc.BackendCompilerFailed,
                       match="combo_kernels=True \\(without benchmark_combo_kernel\\) is not "
                             "emulated"):
        ft.compile(lambda a: a + 1, backend=backend({"combo_kernels": True}))(x)
    ft._dynamo.reset()  # vLLM's setting: torch benchmarks; the separate kernels are kept
    out = ft.compile(lambda a: a + 1, backend=backend(
        {"combo_kernels": True, "benchmark_combo_kernel": True}))(x)
    assert out.tolist() == [2.0] * 4
    assert not ft_config.combo_kernels  # the patch was undone


# --- torch.slice_scatter ------------------------------------------------------------------------

@pytest.mark.parametrize("dim,start,end,step", [
    (0, None, None, 1), (0, 1, 3, 1), (1, 2, None, 1), (0, 0, None, 2), (-1, -3, -1, 1),
    (1, 0, 100, 2), (0, -100, 2, 1)])
def test_slice_scatter_values_and_layout(dim: int, start: int | None, end: int | None,
                                         step: int) -> None:
    rng = np.random.default_rng(1)
    base = rng.standard_normal((4, 5)).astype(np.float32)
    want_slice = torch.from_numpy(base)[(slice(None),) * (dim % 2) + (slice(start, end, step),)]
    src = rng.standard_normal(tuple(want_slice.shape)).astype(np.float32)
    theirs = torch.slice_scatter(torch.from_numpy(base), torch.from_numpy(src), dim, start,
                                 end, step)
    ours = ft.slice_scatter(ft.from_numpy(base), ft.from_numpy(src), dim, start, end, step)
    np.testing.assert_array_equal(to_numpy(ours), to_numpy(theirs))
    # a transposed input: the copy keeps its layout (clone's preserve_format)
    t_in, f_in = torch.from_numpy(base.T.copy()).t(), ft.from_numpy(base.T.copy()).t()
    theirs = t_in.slice_scatter(torch.from_numpy(src), dim=dim, start=start, end=end, step=step)
    ours = f_in.slice_scatter(ft.from_numpy(src), dim=dim, start=start, end=end, step=step)
    assert ours.stride() == theirs.stride()
    np.testing.assert_array_equal(to_numpy(ours), to_numpy(theirs))


def test_slice_scatter_errors_as_torch() -> None:
    assert_raises_like_torch(lambda lib: lib.slice_scatter(lib.zeros(4, 4), lib.ones(3, 4), 0,
                                                           0, 2))
    assert_raises_like_torch(lambda lib: lib.slice_scatter(lib.zeros(4, 4), lib.ones(4, 4), 2))


def test_slice_scatter_launches_a_clone_and_a_copy() -> None:
    """ATen's slice_scatter (torch.profiler on the CPU build: aten::clone, then aten::copy_
    into aten::slice of the copy): two kernels on cuda; src's dtype cast by the copy."""
    x = ft.zeros(4, 4, device="cuda")
    src = ft.ones(2, 4, dtype=ft.float64, device="cuda")
    with launches() as names:
        out = ft.slice_scatter(x, src, 0, 1, 3)
    assert names == ["clone", "copy_"]
    assert out.dtype == ft.float32
    assert out.sum().item() == 8.0


# --- what fake_torch's graph keeps that torch's functional graph does not -----------------------

def test_a_clone_written_in_place_is_kept() -> None:
    """fake_torch's aten graph keeps in-place ops (torch's is functionalized: `add.Tensor`), so
    remove_noop_ops keeps a clone whose copy is written later: the input stays unchanged."""
    seen: list[list[str]] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        return ft_compile_fx(gm, example_inputs, config_patches={
            "post_grad_custom_post_pass": lambda graph: seen.append(_targets(graph))})

    def f(x: Any) -> Any:
        y = x.clone()
        y.add_(1)
        return y

    ft._dynamo.reset()
    x = ft.zeros(3, device="cuda")
    out = ft.compile(f, backend=backend)(x)
    assert out.tolist() == [1.0] * 3 and x.tolist() == [0.0] * 3
    assert seen == [["aten.clone.default", "aten.add_.Tensor"]]


def test_a_dynamic_graph_with_a_post_pass_runs_at_other_sizes() -> None:
    calls: list[int] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        return ft_compile_fx(gm, example_inputs, config_patches={
            "post_grad_custom_post_pass": lambda graph: calls.append(1)})

    pos = ft.from_numpy(np.arange(1024 * 64, dtype=np.float32).reshape(1024, 64))

    def f(x: Any) -> Any:
        x = x + pos[: x.shape[0]]
        return x.reshape(-1, 128, 32).reshape(-1, 4096) * 2

    ft._dynamo.reset()
    compiled = ft.compile(f, backend=backend)
    for n in (256, 512, 128):
        x = ft.from_numpy(np.ones((n, 64), np.float32))
        if n == 256:
            ft._dynamo.mark_dynamic(x, 0)
        assert compiled(x).tolist() == f(x).tolist(), n
    assert calls == [1]  # one graph for every size (the first dim dynamic)


def test_an_inference_aware_pass_is_told_the_graph_is_for_inference() -> None:
    def told(lib: ModuleType, compile_fx: Callable[..., Any]) -> list[bool]:
        from importlib import import_module

        base = import_module(f"{lib.__name__}._inductor.custom_graph_pass")
        got: list[bool] = []

        class Aware(base.CustomInferenceAwareGraphPass):  # type: ignore[name-defined,misc]
            def __call__(self, graph: Any, is_inference: bool) -> None:
                got.append(is_inference)
                if lib is torch:
                    raise _Recorded

            def uuid(self) -> Any:
                return "aware"

        def backend(gm: Any, example_inputs: list[Any]) -> Any:
            return compile_fx(gm, example_inputs,
                              config_patches={"post_grad_custom_post_pass": Aware()})

        lib._dynamo.reset()
        try:
            lib.compile(lambda x: x * 2, backend=backend)(lib.ones(3))
        except Exception as e:  # real torch stopped by the pass
            assert lib is torch and ("_Recorded" in repr(e) or isinstance(e.__cause__,
                                                                          _Recorded))
        assert base.get_custom_graph_passes(None) == ()
        return got

    from torch._inductor.compile_fx import compile_fx

    assert told(ft, ft_compile_fx) == told(torch, compile_fx) == [True]


# --- register_replacement as a post-grad pass: the toy model of issue 26 ------------------------

def _exp_ratio_to_exp_diff(lib: ModuleType) -> dict[str, Any]:
    """`x.exp() / y.exp()` rewritten to `(x - y).exp()` by a register_replacement pattern
    (traced with fwd_only) run as the post-grad custom pass of a model holding two such ratios
    and one exp quotient that is not one (its divisor is no exp). Real torch stops after the
    pass (no codegen); fake_torch runs the rewritten graph, once more counting its launches."""
    from importlib import import_module

    pm = import_module(f"{lib.__name__}._inductor.pattern_matcher")
    if lib is torch:
        from torch._inductor.compile_fx import compile_fx
    else:
        compile_fx = ft_compile_fx

    def search(x: Any, y: Any) -> Any:
        return x.exp() / y.exp()

    def replace(x: Any, y: Any) -> Any:
        return (x - y).exp()

    pass_ = pm.PatternMatcherPass()
    pm.register_replacement(search, replace, [lib.empty(4, 5), lib.empty(4, 5)], pm.fwd_only,
                            pass_)
    got: dict[str, Any] = {}

    def post(graph: Any) -> None:
        got["count"] = pass_.apply(graph)
        got["targets"] = _targets(graph)
        if lib is torch:
            raise _Recorded

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        return compile_fx(gm, example_inputs, config_patches={"post_grad_custom_post_pass": post})

    def model(a: Any, b: Any, c: Any) -> Any:
        h = a.exp() / b.exp()
        k = (h @ c.t()).exp() / (c @ c.t()).exp()  # (4, 4)
        return k.sum(-1) + (a.exp() / b).sum(-1)

    rng = np.random.default_rng(2)
    args = [lib.from_numpy(rng.standard_normal((4, 5)).astype(np.float32) / 4)
            for _ in range(3)]
    if lib is ft:
        args = [a.cuda() for a in args]
    lib._dynamo.reset()
    compiled = lib.compile(model, backend=backend)
    if lib is torch:
        with pytest.raises(Exception, match="_Recorded"):
            compiled(*args)
        return got
    out = compiled(*args)
    np.testing.assert_allclose(to_numpy(out), to_numpy(model(*args)), rtol=1e-5, atol=1e-5)
    with launches() as names:
        compiled(*args)
    got["launches"] = names
    return got


def test_register_replacement_in_a_post_grad_pass_rewrites_as_torch() -> None:
    theirs, ours = _exp_ratio_to_exp_diff(torch), _exp_ratio_to_exp_diff(ft)
    assert ours["count"] == theirs["count"] == 2
    assert ours["targets"] == theirs["targets"]
    assert theirs["targets"].count("aten.sub.Tensor") == 2
    # a step launches the rewritten graph's kernels: the first ratio, now `exp(a - b)`, one
    # kernel; the two mm; the second ratio's sub and exp with its row sums (4 wide); the other
    # quotient with its row sums (5 wide) and the final add
    assert ours["launches"] == ["triton_poi_fused_exp_sub_0", "mm", "mm",
                                "triton_per_fused_exp_sub_sum_1",
                                "triton_per_fused_add_div_exp_sum_2"]


def test_a_pass_option_holding_a_pass_can_be_patched_as_in_torch() -> None:
    import torch._inductor.config as theirs

    for config in (theirs, ft_config):
        def first(graph: Any) -> None:
            pass

        config.post_grad_custom_post_pass = first
        try:
            with config.patch(post_grad_custom_post_pass=None):
                assert config.post_grad_custom_post_pass is None
            assert config.post_grad_custom_post_pass is first
            assert config.get_config_copy()["post_grad_custom_post_pass"] is first
        finally:
            config.post_grad_custom_post_pass = None


# --- a custom op that writes its arguments: auto_functionalized, then in place again ---------

def _scale_op(lib: ModuleType, name: str) -> Any:
    @lib.library.custom_op(f"passes_test::{name}", mutates_args=("out",),
                           schema="(Tensor(a!) out, Tensor x, float s) -> ()")
    def scale_(out: Any, x: Any, s: float) -> None:
        out.copy_(x * s)

    @scale_.register_fake
    def _(out: Any, x: Any, s: float) -> None:
        return None

    return getattr(lib.ops.passes_test, name)


def _written_by_custom_op(lib: ModuleType, name: str, program: str) -> dict[str, Any]:
    op = _scale_op(lib, name)
    programs = {
        "into_a_new_tensor": lambda x, buf: op(lib.empty_like(x), x, 2.0),
        "into_an_input": lambda x, buf: (op(buf, x, 3.0), buf * 2)[1],
    }
    seen: dict[str, Any] = {}

    def post(graph: Any) -> None:
        seen["post"] = [t for t in _targets(graph)]
        if lib is torch:
            raise _Recorded

    if lib is torch:
        from torch._inductor.compile_fx import compile_fx
    else:
        compile_fx = ft_compile_fx

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        return compile_fx(gm, example_inputs, config_patches={
            "post_grad_custom_post_pass": post, "enable_auto_functionalized_v2": False})

    def f(x: Any, buf: Any) -> Any:
        out = programs[program](x, buf)
        return buf + 1 if out is None else out

    lib._dynamo.reset()
    compiled = lib.compile(f, backend=backend)
    device = {"device": "cuda"} if lib is ft else {}
    x, buf = lib.ones(3, **device), lib.zeros(3, **device)
    if lib is torch:
        with pytest.raises(Exception, match="_Recorded"):
            compiled(x, buf)
        return seen
    seen["out"] = compiled(x, buf).tolist()
    seen["buf"] = buf.tolist()
    return seen


@pytest.mark.parametrize("program", ["into_a_new_tensor", "into_an_input"])
def test_a_custom_op_writing_a_tensor_is_auto_functionalized_as_in_torch(program: str) -> None:
    name = f"scale_{program}"
    theirs = _written_by_custom_op(torch, name, program)
    ours = _written_by_custom_op(ft, name, program)
    fills = {"aten.empty.memory_format", "aten.empty_like.default"}  # torch decomposes it
    assert [t for t in ours["post"] if t not in fills] == \
        [t for t in theirs["post"] if t not in fills]
    if program == "into_an_input":
        assert theirs["post"][0] == "auto_functionalized"
    if program == "into_an_input":  # written back into the input, as eager writes it
        assert theirs["post"][-1] == "aten.copy_.default"
        assert ours["out"] == [6.0] * 3 and ours["buf"] == [3.0] * 3


def test_an_auto_functionalized_op_runs_in_place_launching_what_eager_launches() -> None:
    """Before the graph runs, the auto_functionalized node is the op again, in place (nothing
    reads the input's old value): no clone is launched, the input holds the op's result."""
    op = _scale_op(ft, "scale_in_place")
    ran: list[list[str]] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        compiled = ft_compile_fx(gm, example_inputs, config_patches={
            "post_grad_custom_post_pass": lambda graph: None,
            "enable_auto_functionalized_v2": False})
        ran.append(_targets(compiled.gm.graph))
        return compiled

    def f(x: Any, buf: Any) -> Any:
        op(buf, x, 3.0)
        return buf * 2

    x, buf = ft.ones(3, device="cuda"), ft.zeros(3, device="cuda")
    ft._dynamo.reset()
    compiled = ft.compile(f, backend=backend)
    compiled(x, buf)
    assert ran == [["passes_test.scale_in_place.default", "aten.mul.Tensor"]]
    buf.zero_()
    with launches() as names:
        out = compiled(x, buf)
    assert out.tolist() == [6.0] * 3 and buf.tolist() == [3.0] * 3
    fresh = ft.zeros(3, device="cuda")
    with launches() as eager:
        f(x, fresh)
    assert names[:-1] == eager[:-1] and len(names) == len(eager)  # the op's own launches
    assert "clone" not in names


def test_a_write_into_a_view_stays_the_op_itself() -> None:
    op = _scale_op(ft, "scale_view")
    seen: list[list[str]] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        return ft_compile_fx(gm, example_inputs, config_patches={
            "post_grad_custom_post_pass": lambda graph: seen.append(_targets(graph)),
            "enable_auto_functionalized_v2": False})

    def f(x: Any, buf: Any) -> Any:
        op(buf[:2], x[:2], 3.0)
        return buf * 2

    ft._dynamo.reset()
    buf = ft.zeros(3, device="cuda")
    out = ft.compile(f, backend=backend)(ft.ones(3, device="cuda"), buf)
    assert out.tolist() == [6.0, 6.0, 0.0] and buf.tolist() == [3.0, 3.0, 0.0]
    assert "passes_test.scale_view.default" in seen[0]
    assert not any("auto_functionalized" in t for t in seen[0])


def test_a_reinplaced_op_still_gives_its_own_output() -> None:
    """The post pass sees torch's graph (real torch 2.13, the same op: auto_functionalized, a
    getitem for its sum and one for out's new value, add, copy_ back into buf); what runs is
    the op in place, its sum read from the call."""
    @ft.library.custom_op("passes_test::scaled_sum", mutates_args=("out",),
                          schema="(Tensor(a!) out, Tensor x) -> Tensor")
    def scaled_sum(out: Any, x: Any) -> Any:
        out.copy_(x * 2)
        return x.sum()

    @scaled_sum.register_fake
    def _(out: Any, x: Any) -> Any:
        return x.sum()

    graphs: list[list[str]] = []

    def backend(gm: Any, example_inputs: list[Any]) -> Any:
        compiled = ft_compile_fx(gm, example_inputs, config_patches={
            "post_grad_custom_post_pass": lambda graph: graphs.append(_targets(graph)),
            "enable_auto_functionalized_v2": False})
        graphs.append(_targets(compiled.gm.graph))
        return compiled

    def f(x: Any, buf: Any) -> Any:
        total = ft.ops.passes_test.scaled_sum(buf, x)
        return buf + total

    ft._dynamo.reset()
    x, buf = ft.arange(3.0, device="cuda"), ft.zeros(3, device="cuda")
    out = ft.compile(f, backend=backend)(x, buf)
    assert buf.tolist() == [0.0, 2.0, 4.0] and out.tolist() == [3.0, 5.0, 7.0]
    assert graphs == [
        ["auto_functionalized", "<built-in function getitem>", "<built-in function getitem>",
         "aten.add.Tensor", "aten.copy_.default"],
        ["passes_test.scaled_sum.default", "aten.add.Tensor"]]


def test_an_aten_op_called_on_a_dynamic_input_keeps_it_dynamic() -> None:
    """vLLM's SliceCoalescingModel calls torch.ops.aten.slice.Tensor itself on a tensor whose
    first dim is marked dynamic: torch compiles it without specialising that dim."""
    def compiled_sum(lib: ModuleType) -> list[float]:
        def f(qkv: Any) -> Any:
            return lib.ops.aten.slice.Tensor(qkv, -1, 0, 4) + 1

        lib._dynamo.reset()
        x = lib.from_numpy(np.arange(40, dtype=np.float32).reshape(5, 8))
        lib._dynamo.mark_dynamic(x, 0)
        out: list[float] = lib.compile(f, backend="eager", fullgraph=True)(x).sum(-1).tolist()
        return out

    assert compiled_sum(ft) == compiled_sum(torch)
