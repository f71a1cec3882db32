"""torch.compile's API on fake_torch: signature and defaults, the ways to call it, nn.Module
compile (OptimizedModule, module.compile()), argument errors with torch 2.13's texts, the backend
registry, config, reset and torch.compiler."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import fake_torch as torch
import fake_torch._compile
import fake_torch._dynamo as dynamo
import fake_torch.compiler as compiler
from fake_torch._compile import compile as torch_compile
from fake_torch._dynamo.backends.registry import _COMPILER_FNS, _TAGS
from fake_torch._dynamo.exc import InvalidBackend
from fake_torch._dynamo.utils import counters
from fake_torch.fx import GraphModule
from fake_torch.testing import assert_close


@pytest.fixture(autouse=True)
def fresh_dynamo() -> Iterator[None]:
    dynamo.reset()
    counters.clear()
    yield
    dynamo.reset()
    counters.clear()


def f(x: torch.Tensor) -> torch.Tensor:
    return (x + 1).relu() * 2


def test_torch_compile_is_this_function() -> None:
    assert getattr(torch, "compile", torch_compile) is fake_torch._compile.compile


def test_signature_and_defaults_are_torchs() -> None:
    """inspect.signature(torch.compile) of torch 2.13: names, kinds and defaults."""
    params = inspect.signature(torch_compile).parameters.values()
    assert [(p.name, p.kind.name, p.default) for p in params] == [
        ("model", "POSITIONAL_OR_KEYWORD", None), ("fullgraph", "KEYWORD_ONLY", False),
        ("dynamic", "KEYWORD_ONLY", None), ("backend", "KEYWORD_ONLY", None),
        ("mode", "KEYWORD_ONLY", None), ("options", "KEYWORD_ONLY", None),
        ("name", "KEYWORD_ONLY", None), ("disable", "KEYWORD_ONLY", False),
        ("recompile_limit", "KEYWORD_ONLY", None), ("isolate_recompiles", "KEYWORD_ONLY", False),
        ("shapes_spec", "KEYWORD_ONLY", None)]


def test_the_ways_to_call_it() -> None:
    x = torch.randn(4, device="cuda")
    plain = torch_compile(f)

    @torch_compile
    def decorated(x: torch.Tensor) -> torch.Tensor:
        return f(x)

    @torch_compile(backend="eager", mode="reduce-overhead")
    def with_args(x: torch.Tensor) -> torch.Tensor:
        return f(x)

    for compiled in (plain, decorated, with_args):
        assert_close(compiled(x), f(x))
    assert plain.__name__ == "f" and plain.__wrapped__ is f
    assert counters["stats"]["unique_graphs"] == 3
    with pytest.raises(RuntimeError, match=r"^Model can't be None$"):
        torch_compile(backend="eager")(None)


def test_the_default_backend_is_inductor() -> None:
    """One fused kernel instead of three launches."""
    compiled = torch_compile(f)
    x = torch.randn(8, device="cuda")
    compiled(x)
    torch.LaunchCounter.reset()
    compiled(x)
    assert torch.LaunchCounter.n == 1


def test_optimized_module_wraps_the_module() -> None:
    model = torch.nn.Linear(3, 2)
    opt = torch_compile(model, backend="eager")
    assert type(opt).__name__ == "OptimizedModule" and isinstance(opt, dynamo.OptimizedModule)
    assert isinstance(opt, torch.nn.Module)
    assert opt._orig_mod is model
    assert list(opt.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
    assert opt.weight is model.weight and opt.in_features == 3
    assert repr(opt) == ("OptimizedModule(\n  (_orig_mod): Linear(in_features=3, out_features=2, "
                         "bias=True)\n)")
    opt.eval()
    assert not model.training
    opt.scale = 5
    assert model.scale == 5  # type: ignore[comparison-overlap]
    x = torch.ones(2, 3)
    assert_close(opt(x), model(x))
    assert counters["frames"]["total"] == 1


def test_module_compile_compiles_in_place() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
    reference = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU())
    reference.load_state_dict(model.state_dict())
    assert model.compile(backend="eager") is None
    assert type(model) is torch.nn.Sequential
    assert model._compiled_call_impl is not None
    for _ in range(2):
        x = torch.randn(2, 3)
        assert_close(model(x), reference(x))
    assert counters["stats"] == {"unique_graphs": 1, "calls_captured": 2}
    assert list(model.state_dict()) == list(reference.state_dict())


def test_mode_and_options_together() -> None:
    message = ("^Either mode or options can be specified, but both can't be specified at the "
               "same time.$")
    with pytest.raises(RuntimeError, match=message):
        torch_compile(f, mode="reduce-overhead", options={"max_autotune": True})
    decorator = torch_compile(mode="reduce-overhead", options={"max_autotune": True})
    with pytest.raises(RuntimeError, match=message):  # as in torch: when it is applied
        decorator(f)


def test_compiling_a_non_callable() -> None:
    with pytest.raises(AssertionError,
                       match=r"^A callable function is expected, but <class 'int'> is provided.$"):
        torch_compile(3)  # type: ignore[arg-type]


def test_unknown_mode_and_backend() -> None:
    with pytest.raises(RuntimeError, match=r"^Unrecognized mode=fast, should be one of: default, "):
        torch_compile(f, mode="fast")
    with pytest.raises(InvalidBackend, match=r"^Invalid backend: 'nope', see "
                                             r"`torch._dynamo.list_backends\(\)` for available "
                                             r"backends.$"):
        torch_compile(f, backend="nope")
    assert issubclass(InvalidBackend, dynamo.exc.TorchDynamoException)
    assert issubclass(InvalidBackend, RuntimeError)


def test_disable_returns_the_model() -> None:
    assert torch_compile(f, disable=True) is f
    model = torch.nn.Linear(2, 2)
    assert torch_compile(model, disable=True) is model


def test_shapes_spec_is_not_emulated() -> None:
    with pytest.raises(NotImplementedError, match="shapes_spec"):
        torch_compile(f, shapes_spec=object())


def test_recompile_limit_per_call_and_isolated_caches() -> None:
    compiled = torch_compile(f, backend="eager", recompile_limit=1)
    compiled(torch.randn(2))
    compiled(torch.randn(2, 2))  # over the limit: eager, and counted as torch counts it
    assert counters["frames"] == {"total": 2, "ok": 1}
    counters.clear()
    again = torch_compile(f, backend="eager")  # shares the cache with an identical compile
    again(torch.randn(3))
    again2 = torch_compile(f, backend="eager")
    again2(torch.randn(3))
    assert counters["frames"]["total"] == 1
    isolated = torch_compile(f, backend="eager", isolate_recompiles=True)
    isolated(torch.randn(3))
    assert counters["frames"]["total"] == 2


# --- backends -----------------------------------------------------------------------------

def test_list_backends() -> None:
    assert dynamo.list_backends() == ["cudagraphs", "inductor"]
    assert {"eager", "aot_eager", "cudagraphs", "inductor"} <= set(dynamo.list_backends(None))
    assert compiler.list_backends() == dynamo.list_backends()
    assert dynamo.lookup_backend("eager") is _COMPILER_FNS["eager"]
    assert dynamo.lookup_backend(f) is f


def test_register_a_backend_by_name() -> None:
    seen: list[dict[str, Any]] = []

    @dynamo.register_backend
    def my_backend(gm: GraphModule, example_inputs: list[torch.Tensor],
                   **kwargs: Any) -> Callable[..., Any]:
        seen.append(kwargs)
        return gm.forward

    try:
        with pytest.raises(AssertionError, match=r"^duplicate name: my_backend$"):
            dynamo.register_backend(my_backend)
        x = torch.randn(3)
        assert_close(torch_compile(f, backend="my_backend")(x), f(x))
        torch_compile(f, backend="my_backend", mode="max-autotune")(x * 2)
        torch_compile(f, backend="my_backend", options={"a": 1})(x * 3)
        assert seen == [{}, {"mode": "max-autotune"}, {"options": {"a": 1}}]
        assert "my_backend" in dynamo.list_backends()
    finally:
        del _COMPILER_FNS["my_backend"], _TAGS["my_backend"]


# --- config, reset, torch.compiler --------------------------------------------------------------

def test_config() -> None:
    config = dynamo.config
    assert (config.recompile_limit, config.cache_size_limit) == (8, 8)
    assert config.capture_scalar_outputs is False and config.automatic_dynamic_shapes is True
    with config.patch(cache_size_limit=3):
        assert config.recompile_limit == 3
    with config.patch("recompile_limit", 4):
        assert config.cache_size_limit == 4
    assert config.recompile_limit == 8
    with pytest.raises(AttributeError, match=r"torch\._dynamo\.config\.nope does not exist"):
        config.nope = 1


def test_reset_clears_caches_not_counters() -> None:
    compiled = torch_compile(f, backend="eager")
    compiled(torch.randn(3))
    compiled(torch.randn(3))
    assert counters["frames"]["total"] == 1
    compiler.reset()
    compiled(torch.randn(3))
    assert counters["frames"]["total"] == 2
    counters.clear()
    assert not counters


def test_is_compiling() -> None:
    def g(x: torch.Tensor) -> torch.Tensor:
        return x + (1 if compiler.is_compiling() else 100)

    assert torch_compile(g, backend="eager")(torch.zeros(1)).tolist() == [1.0]
    assert g(torch.zeros(1)).tolist() == [100.0]
    assert not compiler.is_compiling() and not dynamo.is_compiling()


def test_compiler_disable_is_a_graph_break() -> None:
    @compiler.disable
    def helper(x: torch.Tensor) -> torch.Tensor:
        return x * 3

    def g(x: torch.Tensor) -> torch.Tensor:
        return helper(x + 1) - 1

    x = torch.randn(3)
    assert_close(torch_compile(g, backend="eager")(x), g(x))
    (text,) = counters["graph_break"]
    assert text.startswith("Skip calling `torch.compiler.disable()`d function\n  Explanation: "
                           f"Skip calling function `{helper.__wrapped__}` since it was wrapped "
                           "with `torch.compiler.disable` (reason: None)")
    assert counters["stats"]["unique_graphs"] == 2


def test_mark_dynamic_starts_dynamic() -> None:
    compiled = torch_compile(f, backend="eager")
    x = torch.randn(4)
    dynamo.mark_dynamic(x, 0)
    compiled(x)
    for n in (5, 9):
        y = torch.randn(n)
        assert_close(compiled(y), f(y))
    assert counters["frames"]["total"] == 1
