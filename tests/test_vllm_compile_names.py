"""The compile-time names vLLM's compilation backend reaches once a model is compiled (issue 14,
step 3): cache keys, config modules, the graph pickler's options, view_to_reshape, the modules
torch imports with itself (guard_filter_fn: tests/test_guard_filter.py). Compared with real
torch 2.13 CPU where it runs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from typing import Any

import pytest

import fake_torch as ft
from fake_torch._inductor import codecache
from fake_torch._inductor import config as inductor_config
from fake_torch._inductor.fx_passes.post_grad import view_to_reshape
from fake_torch.fx import _graph_pickler
from fake_torch.fx.experimental import _config as fx_config


def test_the_system_cache_key_is_torchs_shape_over_the_simulated_gpu() -> None:
    system = codecache.CacheBase.get_system()
    assert system["device"] == {"name": ft.cuda.get_device_name()}
    assert system["version"] == {"triton": None, "cuda": ft.version.cuda}
    wanted = {"device": system["device"], "version": system["version"]}
    assert system["hash"] == hashlib.sha256(json.dumps(wanted, sort_keys=True)
                                            .encode()).hexdigest()
    key = codecache.torch_key()
    assert isinstance(key, bytes) and len(key) == 32 and codecache.torch_key() == key


def test_config_modules_hold_torchs_defaults_and_patch_as_torchs() -> None:
    torch = pytest.importorskip("torch")
    import torch._inductor.config as real_inductor
    import torch.fx.experimental._config as real_fx

    assert fx_config.get_config_copy() == real_fx.get_config_copy()
    assert inductor_config._cache_config_ignore_prefix == \
        real_inductor._cache_config_ignore_prefix
    assert inductor_config.assume_32bit_indexing is real_inductor.assume_32bit_indexing
    for mod in (fx_config, real_fx):
        with mod.patch(backed_size_oblivious=True):
            assert mod.backed_size_oblivious is True
        assert mod.backed_size_oblivious is False
    with pytest.raises(AttributeError, match=r"torch\.fx\.experimental\._config\.nope does "
                                             r"not exist"):
        with fx_config.patch(nope=1):
            pass
    assert torch.fx.experimental._config is real_fx and ft.fx.experimental._config is fx_config


def test_graph_pickler_options_are_torchs_and_pickling_is_refused() -> None:
    pytest.importorskip("torch")
    import torch.fx._graph_pickler as real

    def shape(cls: Any) -> list[tuple[str, Any]]:  # (field, default or the default's name)
        return [(f.name, getattr(f.default, "__name__", f.default))
                for f in dataclasses.fields(cls)]

    assert shape(_graph_pickler.Options) == shape(real.Options)
    assert _graph_pickler.Options().ops_filter("torch.ops.aten.add") is \
        real.Options().ops_filter("torch.ops.aten.add") is True
    with pytest.raises(NotImplementedError, match=r"GraphPickler\.dumps"):
        _graph_pickler.GraphPickler.dumps(object())


def _viewing_graph(torch: Any) -> Any:
    graph = torch.fx.Graph()
    x = graph.placeholder("x")
    v = graph.call_function(torch.ops.aten.view.default, (x, [4]))
    graph.output(v)
    return torch.fx.GraphModule(torch.nn.Module(), graph)


def test_view_to_reshape_retargets_views_as_torchs() -> None:
    torch = pytest.importorskip("torch")
    from torch._inductor.fx_passes.post_grad import view_to_reshape as real_pass

    ours, theirs = _viewing_graph(ft), _viewing_graph(torch)
    view_to_reshape(ours)
    real_pass(theirs)
    assert [str(n.target) for n in ours.graph.nodes] == \
        [str(n.target) for n in theirs.graph.nodes]
    assert "aten.reshape.default" in [str(n.target) for n in ours.graph.nodes]


def test_modules_torch_imports_with_itself_are_attributes() -> None:
    for name in ("_guards", "_subclasses", "_logging", "_functorch", "_dynamo", "_inductor"):
        assert getattr(ft, name).__name__ == f"fake_torch.{name}"
