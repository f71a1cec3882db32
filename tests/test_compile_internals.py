"""torch.compile internals that libraries import (vLLM's compilation path), against real torch."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

import fake_torch as ft
import fake_torch._functorch.config as ft_functorch_config
import fake_torch._tools._api
from fake_torch._dynamo.utils import dynamo_timed, lazy_format_graph_code
from fake_torch._guards import TracingContext, detect_fake_mode, tracing
from fake_torch._inductor.pattern_matcher import (
    PatternMatcherPass,
)
from fake_torch._subclasses.fake_tensor import (
    DataDependentOutputException,
    FakeTensor,
    FakeTensorMode,
    unset_fake_temporarily,
)


def _fake_program(torch: Any, fake_tensor: Any) -> tuple[Any, ...]:
    """The same small program in both libraries: metadata of fake results, the exception."""
    mode = fake_tensor.FakeTensorMode()
    with mode:
        x = torch.empty(4, 3)
        y = (x * 2).sum(0)
        z = x.t().contiguous()
        with unset_fake_temporarily_of(fake_tensor) as prior:
            real = torch.ones(2)
        assert prior is mode
    real_fake = mode.from_tensor(torch.ones(2, 5))
    return (tuple(y.shape), tuple(z.stride()), str(y.dtype).split(".")[-1],
            isinstance(y, fake_tensor.FakeTensor), isinstance(real, fake_tensor.FakeTensor),
            tuple(real_fake.shape), isinstance(real_fake, fake_tensor.FakeTensor))


def unset_fake_temporarily_of(fake_tensor: Any) -> Any:
    return fake_tensor.unset_fake_temporarily()


def test_fake_tensor_mode_matches_torch() -> None:
    import fake_torch._subclasses.fake_tensor as ours

    with ft.LaunchCounter.expect(0):
        got = _fake_program(ft, ours)
    torch = pytest.importorskip("torch")
    import torch._subclasses.fake_tensor as theirs

    assert got == _fake_program(torch, theirs)


def test_detect_fake_mode_and_tracing_context() -> None:
    assert detect_fake_mode([ft.ones(1)]) is None and TracingContext.try_get() is None
    mode = FakeTensorMode()
    fake = mode.from_tensor(ft.ones(3))
    assert isinstance(fake, FakeTensor) and detect_fake_mode([1, fake]) is mode
    with tracing(TracingContext(mode)):
        assert TracingContext.get().fake_mode is mode and detect_fake_mode() is mode
    with unset_fake_temporarily() as prior:
        assert prior is None
    with pytest.raises(DataDependentOutputException, match="_local_scalar_dense"):
        with mode:  # a value read on the simulated cuda device (cpu reads are not seen)
            (ft.ones(1, device="cuda") + 1).item()


def _stance_program(torch: Any) -> list[str]:
    seen: list[str] = []
    f = torch.compile(lambda x: x + 1, backend="eager")
    f(torch.ones(2))
    with torch.compiler.set_stance("fail_on_recompile"):
        f(torch.ones(2))  # cached: runs
        with pytest.raises(RuntimeError, match=r"Detected recompile when torch\.compile stance"):
            f(torch.ones(2, 2, dtype=torch.int64))
        seen.append("failed")
    with torch.compiler.set_stance("eager_on_recompile"):
        seen.append(str(f(torch.ones(3, dtype=torch.float64)).tolist()))
    with torch.compiler.set_stance("force_eager"):
        seen.append(str(f(torch.ones(1)).tolist()))

    @torch.compiler.set_stance("force_eager")
    def decorated() -> Any:
        return f(torch.zeros(1)).tolist()

    seen.append(str(decorated()))
    with pytest.raises(RuntimeError, match="non-default stance cannot have force_backend"):
        torch.compiler.set_stance("force_eager", force_backend="eager")
    return seen


def test_set_stance_matches_torch() -> None:
    got = _stance_program(ft)
    torch = pytest.importorskip("torch")
    torch._dynamo.reset()
    assert got == _stance_program(torch)
    assert ft._tools._api.signature_of(ft.compiler.set_stance) == ft._tools._api.signature_of(
        torch.compiler.set_stance)


def test_remove_from_cache_recompiles() -> None:
    ft._dynamo.reset()

    def g(x: Any) -> Any:
        return x * 3

    f = ft.compile(g, backend="eager")
    f(ft.ones(2))
    with ft.compiler.set_stance("fail_on_recompile"):
        f(ft.ones(2))
        ft._dynamo.eval_frame.remove_from_cache(g)
        with pytest.raises(RuntimeError, match="Detected recompile"):
            f(ft.ones(2))


def test_config_patch_and_defaults_match_torch() -> None:
    with ft_functorch_config.patch(bundled_autograd_cache=True):
        assert ft_functorch_config.bundled_autograd_cache is True

    @ft_functorch_config.patch("enable_autograd_cache", False)
    def read() -> bool:
        return ft_functorch_config.enable_autograd_cache

    assert read() is False and ft_functorch_config.enable_autograd_cache is True
    with pytest.raises(AttributeError, match=r"torch\._functorch\.config\.nope does not exist"):
        with ft_functorch_config.patch(nope=1):
            pass
    pytest.importorskip("torch")
    import torch._functorch.config as theirs
    import torch._inductor.config as their_inductor

    import fake_torch._inductor.config as our_inductor
    for key in ("autograd_cache_normalize_inputs", "bundled_autograd_cache",
                "enable_autograd_cache", "enable_remote_autograd_cache", "donated_buffer"):
        assert getattr(ft_functorch_config, key) == getattr(theirs, key), key
    for key in ("force_disable_caches", "fx_graph_remote_cache", "freezing", "size_asserts",
                "custom_should_partition_ops", "post_grad_custom_post_pass",
                "enable_auto_functionalized_v2"):
        assert getattr(our_inductor, key) == getattr(their_inductor, key), key


def test_utils_and_marks() -> None:
    with dynamo_timed("my_phase"):
        pass
    assert "my_phase" in ft._dynamo.utils.compile_times()
    gm = ft.fx.symbolic_trace(ft.nn.ReLU())
    assert "TRACED GRAPH" in str(lazy_format_graph_code("relu", gm))

    def h() -> int:
        return 1

    assert ft._dynamo.assume_constant_result(h) is h and ft.compiler.allow_in_graph(h) is h
    t = ft.ones(4, 2)
    ft._dynamo.decorators.mark_unbacked(t, 0)
    assert t._dynamo_dynamic_indices == {0}  # type: ignore[attr-defined]
    assert PatternMatcherPass(pass_name="p").apply(ft.fx.Graph()) == 0
    handle = ft._dynamo.convert_frame.register_bytecode_hook(lambda a, b: None)
    handle.remove()  # tests/test_bytecode_hook.py: the hook's contract


def test_signatures_match_torch() -> None:
    torch = pytest.importorskip("torch")
    import torch._dynamo.utils as their_utils
    import torch._logging._internal as their_log

    import fake_torch._logging._internal as our_log
    pairs = [(dynamo_timed, their_utils.dynamo_timed),
             (ft._dynamo.decorators.mark_unbacked, torch._dynamo.decorators.mark_unbacked),
             (FakeTensorMode.__init__, torch._subclasses.fake_tensor.FakeTensorMode.__init__),
             (our_log.trace_structured, their_log.trace_structured)]
    for ours, theirs in pairs:
        names = [(p.name, p.kind) for p in inspect.signature(ours).parameters.values()]
        assert names == [(p.name, p.kind) for p in
                         inspect.signature(theirs).parameters.values()], ours


def test_a_post_grad_custom_pass_runs_on_the_aten_graph() -> None:
    """torch.compile's default backend (inductor) runs the pass once per graph, on the aten
    graph (tests/test_inductor_graph_passes.py compares what it sees with real torch)."""
    from fake_torch._inductor import config as inductor_config
    from fake_torch._inductor.custom_graph_pass import CustomGraphPass

    seen: list[list[str]] = []

    class Record(CustomGraphPass):
        def __call__(self, graph: ft.fx.Graph) -> None:
            seen.append([str(n.target) for n in graph.nodes if n.op == "call_function"])

        def uuid(self) -> None:
            return None

    f = ft.compile(lambda x: x.relu() + 1)
    with inductor_config.patch(post_grad_custom_post_pass=Record()):
        out = f(ft.ones(3, device="cuda"))
    assert out.tolist() == [2.0, 2.0, 2.0]
    assert seen == [["aten.relu.default", "aten.add.Tensor"]]
