"""The torch names vLLM imports from utils/autograd/func/cuda/xpu/nn.attention, against real
torch (CPU build): signatures, values, warnings and errors."""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np
import pytest
from oracles import launches

import fake_torch as ft
import fake_torch._tools._api
from fake_torch._tools import _api
from fake_torch.utils import _pytree, checkpoint, cpp_extension


def _torch() -> Any:
    return pytest.importorskip("torch")


def test_checkpoint_is_the_call_with_torchs_warnings() -> None:
    torch = _torch()
    import torch.utils.checkpoint as tc

    ours, theirs = _api.signature_of(checkpoint.checkpoint), _api.signature_of(tc.checkpoint)
    assert ours is not None and theirs is not None
    assert [p for p in ours if p[0] != "context_fn"] == [p for p in theirs
                                                         if p[0] != "context_fn"]
    for lib, mod in ((ft, checkpoint), (torch, tc)):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            out = mod.checkpoint(lambda x, y: x * y, lib.ones(2), lib.full((2,), 3.0))
            assert out.tolist() == [3.0, 3.0]
        texts = [str(w.message)[:60] for w in seen]
        assert texts[0].startswith("torch.utils.checkpoint: the use_reentrant parameter")
        assert any(t.startswith("None of the inputs have requires_grad=True") for t in texts)
        assert mod.checkpoint(lambda x: x + 1, lib.ones(1), use_reentrant=False).tolist() == [2.0]
        with pytest.raises(ValueError, match=r"^Unexpected keyword arguments: k$"):
            mod.checkpoint(lambda x, k: x, lib.ones(1), use_reentrant=True, k=1)


def test_load_inline_and_pluggable_allocator_raise_naming_the_api() -> None:
    with pytest.raises(NotImplementedError, match=r"torch.utils.cpp_extension.load_inline"):
        cpp_extension.load_inline("ext", "int f() { return 1; }")
    with pytest.raises(NotImplementedError, match=r"torch.cuda.memory.CUDAPluggableAllocator"):
        ft.cuda.memory.CUDAPluggableAllocator("/x.so", "my_malloc", "my_free")
    torch = _torch()
    assert _api.signature_of(ft.cuda.memory.CUDAPluggableAllocator) == \
        _api.signature_of(torch.cuda.memory.CUDAPluggableAllocator)


def test_dict_flatten_with_keys_matches_torch() -> None:
    _torch()
    from torch.utils import _pytree as tp

    d = {"b": 1, "a": [2, 3]}
    ours, theirs = _pytree._dict_flatten_with_keys(d), tp._dict_flatten_with_keys(d)
    assert [(k.key, v) for k, v in ours[0]] == [(k.key, v) for k, v in theirs[0]]
    assert ours[1] == theirs[1] == ["b", "a"]
    assert str(ours[0][0][0]) == str(theirs[0][0][0]) == "['b']"


def _module(lib: Any) -> Any:
    m = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU(), lib.nn.Linear(2, 1))
    m.register_buffer("scale", lib.ones(1))
    with lib.no_grad():  # the same weights in both libraries (their RNGs differ)
        for i, p in enumerate(m.parameters()):
            p.copy_(lib.arange(p.numel(), dtype=lib.float32).reshape(p.shape) * 0.1 - i * 0.2)
    return m


def test_functional_call_substitutes_for_one_call() -> None:
    torch = _torch()
    results = []
    for lib in (ft, torch):
        m = _module(lib)
        x = lib.ones(4, 3)
        w0 = lib.full((2, 3), 0.5)
        before = m(x).tolist()
        with lib.no_grad():
            swapped = lib.func.functional_call(m, {"0.weight": w0, "scale": lib.zeros(1)},
                                               (x,)).tolist()
            both = lib.func.functional_call(m, ({"0.weight": w0}, {"2.bias": lib.ones(1)}),
                                            x).tolist()
        after = m(x).tolist()
        assert before == after and m[0].weight is not w0  # put back
        with pytest.raises(ValueError, match="appeared in multiple dictionaries"):
            lib.func.functional_call(m, ({"0.weight": w0}, {"0.weight": w0}), (x,))
        with pytest.raises(RuntimeError, match="Error\\(s\\) in reparametrizing"):
            lib.func.functional_call(m, {"nope": w0}, (x,), strict=True)
        results.append((swapped, both))
    np.testing.assert_allclose(np.array(results[0][0]), np.array(results[1][0]), rtol=1e-6)
    np.testing.assert_allclose(np.array(results[0][1]), np.array(results[1][1]), rtol=1e-6)


def test_autograd_names() -> None:
    torch = _torch()
    assert ft.autograd.profiler.record_function is ft.profiler.record_function
    assert torch.autograd.profiler.record_function is torch.profiler.record_function
    assert _api.signature_of(ft.autograd.graph.save_on_cpu) == \
        _api.signature_of(torch.autograd.graph.save_on_cpu)
    for lib in (ft, torch):
        with lib.autograd.graph.save_on_cpu(pin_memory=True):
            assert (lib.ones(2) * 2).tolist() == [2.0, 2.0]
        assert lib.autograd.no_grad is lib.no_grad


def test_nvtx_ranges_nest_and_return_depths() -> None:
    torch = _torch()
    assert torch.cuda.nvtx.__all__ == ["range_push", "range_pop", "range_start", "range_end",
                                       "mark", "range"]
    for name in torch.cuda.nvtx.__all__:
        assert inspect.signature(getattr(ft.cuda.nvtx, name)).parameters.keys() == \
            inspect.signature(getattr(torch.cuda.nvtx, name)).parameters.keys()
    nvtx = ft.cuda.nvtx
    assert (nvtx.range_push("a"), nvtx.range_push("b"), nvtx.range_pop(), nvtx.range_pop(),
            nvtx.range_pop()) == (0, 1, 1, 0, -1)
    with nvtx.range("step {}", 3):
        assert nvtx.range_push("inner") == 1
        nvtx.range_pop()
    assert nvtx.mark("m") is None and nvtx.range_end(nvtx.range_start("r")) is None


def test_xpu_is_absent_as_on_torchs_cpu_build() -> None:
    torch = _torch()
    for lib in (ft, torch):
        assert (lib.xpu.is_available(), lib.xpu.device_count(), lib.xpu.is_initialized(),
                lib.xpu._is_compiled()) == (False, 0, False, False)


def test_flex_attention_names_exist_and_raise_when_called() -> None:
    _torch()
    from torch.nn.attention import flex_attention as tf

    from fake_torch.nn.attention import flex_attention as ff

    assert ff._DEFAULT_SPARSE_BLOCK_SIZE == tf._DEFAULT_SPARSE_BLOCK_SIZE == 128
    assert ff.AuxRequest(lse=True) == ff.AuxRequest(True, False)
    assert repr(tf.AuxRequest(lse=True)).replace("torch.nn.attention.flex_attention.", "") == \
        repr(ff.AuxRequest(lse=True))
    for name in ("create_block_mask", "flex_attention"):
        assert inspect.signature(getattr(ff, name)).parameters.keys() == \
            inspect.signature(getattr(tf, name)).parameters.keys()
    assert inspect.signature(ff.BlockMask.from_kv_blocks).parameters.keys() == \
        inspect.signature(tf.BlockMask.from_kv_blocks).parameters.keys()
    q = ft.ones(1, 1, 4, 8)
    with pytest.raises(NotImplementedError, match=r"flex_attention.flex_attention is not"):
        ff.flex_attention(q, q, q)
    with pytest.raises(NotImplementedError, match=r"flex_attention.create_block_mask"):
        ff.create_block_mask(lambda b, h, qi, ki: qi >= ki, None, None, 4, 4)
    with pytest.raises(NotImplementedError, match=r"BlockMask.from_kv_blocks"):
        ff.BlockMask.from_kv_blocks(q, q)


def test_c_nn_is_probed_with_getattr() -> None:
    assert getattr(ft._C._nn, "_parse_to", None) is None


# --- torch.backends.cuda's SDPA switches (vLLM's platform turns cuDNN attention off) -----------

SDP = ("flash", "mem_efficient", "math", "cudnn")


def test_sdp_switches_exist_with_torchs_signatures_and_defaults() -> None:
    torch = pytest.importorskip("torch")
    for name in SDP:
        for fn in (f"enable_{name}_sdp", f"{name}_sdp_enabled"):
            assert ft._tools._api.signature_of(getattr(ft.backends.cuda, fn)) == \
                ft._tools._api.signature_of(getattr(torch.backends.cuda, fn))
        assert getattr(ft.backends.cuda, f"{name}_sdp_enabled")() is \
            getattr(torch.backends.cuda, f"{name}_sdp_enabled")() is True


def test_switching_a_backend_off_moves_sdpa_to_the_next() -> None:
    q = ft.randn(1, 2, 4, 8, device="cuda", dtype=ft.float16)
    sdpa = ft.nn.functional.scaled_dot_product_attention
    seen = []
    try:
        for name in ("flash", "mem_efficient"):
            ft.backends.cuda.__dict__[f"enable_{name}_sdp"](False)
            with launches() as ops:
                sdpa(q, q, q)
            seen.append([op for op in ops if "attention" in op or op == "bmm"])
        ft.backends.cuda.enable_math_sdp(False)
        with pytest.raises(RuntimeError, match=r"^No available kernel\. Aborting execution\.$"):
            sdpa(q, q, q)
    finally:
        for name in SDP:
            ft.backends.cuda.__dict__[f"enable_{name}_sdp"](True)
    assert seen == [["_scaled_dot_product_efficient_attention"], ["bmm", "bmm"]]
