"""torch.nn modules: bookkeeping, state_dict, moves, hooks, reprs, and each layer's numbers and
launches, against real torch (CPU build) and the launch counts of torch's CUDA eager path.

Oracles: real torch for values (the same weights loaded into both through numpy), reprs and
error texts; for launches, the non-view aten ops torch dispatches for the same module call
(checked by hand with a TorchDispatchMode and written down here; test_functional.py compares
the functional calls live).
"""

from __future__ import annotations

import copy
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import ml_dtypes
import numpy as np
import pytest
from oracles import assert_raises_same, launches

import fake_torch as ft
from fake_torch import nn

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

_rng = np.random.default_rng(0)


# --- helpers ----------------------------------------------------------------------------------


def ft_tensor(a: np.ndarray, device: str = "cpu", dtype: str | None = None) -> ft.Tensor:
    """A fake_torch tensor holding `a` (cast to `dtype`: 'float16', 'bfloat16', ...)."""
    if dtype == "bfloat16":
        a = a.astype(ml_dtypes.bfloat16)
    elif dtype is not None:
        a = a.astype(dtype)
    return ft.tensor(a, device=device)


def host(t: ft.Tensor) -> np.ndarray:
    """float64 numpy copy of a fake_torch tensor (on any device)."""
    return np.asarray(t.numpy(force=True), dtype=np.float64)


def torch_np(t: Any) -> np.ndarray:
    return t.detach().double().numpy()


def load_from_torch(ft_module: nn.Module, torch_module: Any) -> None:
    """Copy torch's weights into the fake_torch module, through numpy."""
    state = {k: ft.tensor(v.detach().numpy()) for k, v in torch_module.state_dict().items()}
    ft_module.load_state_dict(state)


# --- Parameter and Buffer ---------------------------------------------------------------------


def test_parameter_shares_storage_requires_grad_and_prints_like_torch() -> None:
    data = ft.ones(2)
    p = nn.Parameter(data)
    assert isinstance(p, ft.Tensor) and isinstance(p, nn.Parameter)
    assert p.requires_grad and p.data_ptr() == data.data_ptr()
    assert not nn.Parameter(data, requires_grad=False).requires_grad
    assert repr(p) == repr(torch.nn.Parameter(torch.ones(2)))
    assert repr(nn.Parameter(data, requires_grad=False)) == repr(
        torch.nn.Parameter(torch.ones(2), requires_grad=False))
    assert nn.Parameter().shape == (0,)
    assert type(p * 2) is ft.Tensor  # ops on a Parameter give plain tensors, as in torch


def test_buffer_marker_sets_persistence() -> None:
    m = nn.Module()
    m.kept = nn.Buffer(ft.zeros(1))
    m.scratch = nn.Buffer(ft.zeros(1), persistent=False)
    assert type(m.kept) is ft.Tensor and isinstance(m.kept, nn.Buffer)
    assert [n for n, _ in m.named_buffers()] == ["kept", "scratch"]
    assert list(m.state_dict()) == ["kept"]


# --- Module bookkeeping -----------------------------------------------------------------------


def make_net(lib: Any) -> Any:
    """The same small network on fake_torch or torch: a shared child (b is a), a persistent
    and a non-persistent buffer, a None parameter. Both classes are named Net."""

    class Net(lib.nn.Module):  # type: ignore[name-defined, misc]
        def __init__(self) -> None:
            super().__init__()
            self.a = lib.nn.Linear(2, 3)
            self.register_buffer("buf", lib.zeros(2))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)
            self.b = self.a
            self.seq = lib.nn.Sequential(lib.nn.Linear(3, 3), lib.nn.ReLU())
            self.register_parameter("unused", None)

    return Net()


def _names(pairs: Iterator[tuple[str, Any]]) -> list[str]:
    return [name for name, _ in pairs]


def test_named_members_match_torch() -> None:
    ours, theirs = make_net(ft), make_net(torch)
    for call in (
        lambda m: m.named_parameters(),
        lambda m: m.named_parameters(remove_duplicate=False),
        lambda m: m.named_parameters(prefix="model", recurse=False),
        lambda m: m.named_buffers(),
        lambda m: m.named_buffers(prefix="x"),
        lambda m: m.named_children(),
        lambda m: m.named_modules(),
        lambda m: m.named_modules(remove_duplicate=False),
        lambda m: m.named_modules(prefix="root"),
    ):
        assert _names(call(ours)) == _names(call(theirs))
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert len(list(ours.parameters())) == 4 and len(list(ours.children())) == 2
    assert len(list(ours.modules())) == 5


def test_setattr_moves_names_between_kinds() -> None:
    m = nn.Module()
    m.x = nn.Linear(1, 1)
    m.x = nn.Parameter(ft.zeros(1))  # a parameter replaces the module of the same name
    assert "x" in m._parameters and "x" not in m._modules
    m.x = None  # a parameter name keeps its slot
    assert m._parameters == {"x": None}
    m.register_buffer("y", ft.zeros(1))
    m.y = ft.ones(1)  # assigning a tensor to a buffer name updates the buffer
    assert host(m._buffers["y"]).tolist() == [1.0]
    m.plain = 3
    assert m.plain == 3 and "plain" in m.__dict__
    del m.x, m.y
    assert not m._modules and not m._buffers
    assert "plain" in dir(m)


@pytest.mark.parametrize("misuse", [
    lambda lib, m: setattr(m, "a", lib.ones(2)),
    lambda lib, m: m.register_buffer("a", lib.ones(2)),
    lambda lib, m: m.register_buffer("x.y", lib.ones(2)),
    lambda lib, m: m.register_buffer("", lib.ones(2)),
    lambda lib, m: m.register_buffer("z", 3),
    lambda lib, m: m.register_parameter("z", lib.ones(2)),
    lambda lib, m: m.register_parameter("a.b", None),
    lambda lib, m: m.add_module("a.b", lib.nn.ReLU()),
    lambda lib, m: m.add_module("z", 3),
    lambda lib, m: setattr(m.a, "weight", lib.ones(2)),
    lambda lib, m: m.nope,
    lambda lib, m: m.get_submodule("a.nope"),
    lambda lib, m: m.get_submodule("a.weight"),
    lambda lib, m: m.get_parameter("seq.0.nope"),
    lambda lib, m: m.get_parameter("buf"),
    lambda lib, m: m.get_buffer("a.weight"),
    lambda lib, m: m.train("yes"),
    lambda lib, m: m.to(lib.int64),
    lambda lib, m: lib.nn.Module()(1),
    lambda lib, m: lib.nn.Dropout(1.5),
    lambda lib, m: lib.nn.Embedding(4, 3, padding_idx=4),
    lambda lib, m: lib.nn.Sequential()[0],
    lambda lib, m: lib.nn.ModuleList()[0],
    lambda lib, m: lib.nn.ModuleDict()["x"],
    lambda lib, m: lib.nn.ModuleList([1]),
    lambda lib, m: lib.nn.Sequential() + lib.nn.ModuleList(),
])
def test_misuse_raises_torchs_error(misuse: Callable[[Any, Any], Any]) -> None:
    assert_raises_same(lambda: misuse(torch, make_net(torch)), lambda: misuse(ft, make_net(ft)))


def test_register_before_init_raises() -> None:
    class Early(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(ft.zeros(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__"):
        Early()


def test_get_submodule_parameter_buffer() -> None:
    m = make_net(ft)
    assert m.get_submodule("") is m and m.get_submodule("seq.0") is m.seq[0]
    assert m.get_parameter("seq.0.bias") is m.seq[0].bias
    assert m.get_buffer("buf") is m.buf


def test_train_eval_apply_requires_grad_zero_grad() -> None:
    m = make_net(ft)
    assert m.eval() is m and not any(x.training for x in m.modules())
    m.train()
    assert all(x.training for x in m.modules())
    seen: list[str] = []
    m.apply(lambda x: seen.append(type(x).__name__))
    assert seen == ["Linear", "Linear", "ReLU", "Sequential", "Net"]  # children first
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.a.weight.grad = ft.ones(3, 2)
    m.zero_grad(set_to_none=False)
    assert host(m.a.weight.grad).sum() == 0
    m.zero_grad()
    assert m.a.weight.grad is None


# --- hooks ------------------------------------------------------------------------------------


def test_forward_hooks_run_in_order_and_can_rewrite() -> None:
    m = nn.Identity()
    calls: list[str] = []

    def pre(mod: nn.Module, args: tuple[Any, ...]) -> Any:
        calls.append("pre")
        return args[0] + 1

    def pre_kw(mod: nn.Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        calls.append("pre_kw")
        return args, kwargs

    def post(mod: nn.Module, args: tuple[Any, ...], out: Any) -> Any:
        calls.append("post")
        return out * 10

    h1 = m.register_forward_pre_hook(pre)
    m.register_forward_pre_hook(pre_kw, with_kwargs=True, prepend=True)
    h3 = m.register_forward_hook(post)
    assert host(m(ft.zeros(1))).tolist() == [10.0]
    assert calls == ["pre_kw", "pre", "post"]
    h1.remove()
    h3.remove()
    assert host(m(ft.zeros(1))).tolist() == [0.0]


def test_always_call_hook_runs_when_forward_raises() -> None:
    m = nn.Linear(2, 2)
    seen: list[Any] = []
    m.register_forward_hook(lambda mod, args, out: seen.append(out), always_call=True)
    with pytest.raises(RuntimeError):
        m(ft.zeros(3))
    assert seen == [None]


# --- reprs ------------------------------------------------------------------------------------


@pytest.mark.parametrize("build", [
    lambda nn_: nn_.Linear(3, 4),
    lambda nn_: nn_.Linear(3, 4, bias=False),
    lambda nn_: nn_.Embedding(10, 3),
    lambda nn_: nn_.Embedding(10, 3, padding_idx=-1, max_norm=1.0, norm_type=1.0,
                              scale_grad_by_freq=True, sparse=True),
    lambda nn_: nn_.LayerNorm(4),
    lambda nn_: nn_.LayerNorm([3, 4], eps=1e-6, bias=False),
    lambda nn_: nn_.LayerNorm(4, elementwise_affine=False),
    lambda nn_: nn_.RMSNorm(8),
    lambda nn_: nn_.RMSNorm([3, 8], eps=1e-6, elementwise_affine=False),
    lambda nn_: nn_.Sequential(nn_.Linear(2, 3), nn_.ReLU(inplace=True),
                               nn_.Sequential(nn_.LayerNorm(3), nn_.Dropout(0.1))),
    lambda nn_: nn_.ModuleList([nn_.Linear(2, 2), nn_.Linear(2, 2), nn_.SiLU(), nn_.SiLU(),
                                nn_.Linear(2, 2)]),
    lambda nn_: nn_.ModuleList(),
    lambda nn_: nn_.ModuleDict({"a": nn_.GELU(approximate="tanh"), "b": nn_.Softmax(dim=-1),
                                "c": nn_.LogSoftmax(1), "d": nn_.Tanh(), "e": nn_.Sigmoid(),
                                "f": nn_.Identity(), "g": nn_.GELU(), "h": nn_.Softmax()}),
    lambda nn_: nn_.Module(),
])
def test_repr_matches_torch(build: Callable[[Any], Any]) -> None:
    assert repr(build(nn)) == repr(build(torch.nn))


# --- state_dict -------------------------------------------------------------------------------


def test_state_dict_views_metadata_and_round_trip() -> None:
    theirs = make_net(torch)
    ours = make_net(ft)
    load_from_torch(ours, theirs)
    sd = ours.state_dict()
    assert isinstance(sd, OrderedDict) and list(sd) == list(theirs.state_dict())
    assert sd._metadata == theirs.state_dict()._metadata  # type: ignore[attr-defined]
    assert sd["a.weight"].data_ptr() == ours.a.weight.data_ptr()  # detached view, no copy
    assert type(sd["a.weight"]) is ft.Tensor
    assert type(ours.state_dict(keep_vars=True)["a.weight"]) is nn.Parameter
    for key, value in theirs.state_dict().items():
        np.testing.assert_array_equal(host(sd[key]), torch_np(value))
    # and back into a fresh torch module
    fresh = make_net(torch)
    fresh.load_state_dict({k: torch.from_numpy(v.numpy()) for k, v in sd.items()})
    for key, value in fresh.state_dict().items():
        np.testing.assert_array_equal(torch_np(value), host(sd[key]))


def test_load_state_dict_copies_into_the_same_parameters() -> None:
    m = nn.Linear(3, 2)
    weight, ptr = m.weight, m.weight.data_ptr()
    result = m.load_state_dict({"weight": ft.ones(2, 3), "bias": ft.zeros(2)})
    assert repr(result) == "<All keys matched successfully>"
    assert m.weight is weight and m.weight.data_ptr() == ptr
    assert host(m.weight).tolist() == [[1.0] * 3] * 2


def test_load_state_dict_assign_takes_the_given_tensors() -> None:
    m = nn.Linear(3, 2)
    w = ft.ones(2, 3)
    m.load_state_dict({"weight": w, "bias": ft.zeros(2)}, assign=True)
    assert isinstance(m.weight, nn.Parameter) and m.weight.data_ptr() == w.data_ptr()


def _bad_dicts(lib: Any) -> list[dict[str, Any]]:
    return [
        {"weight": lib.ones(4, 2), "bias2": lib.ones(4)},
        {"weight": 3, "bias": lib.ones(4)},
        {"weight": lib.ones(4, 3), "bias": lib.ones(4), "extra.x": lib.ones(1)},
        {},
    ]


@pytest.mark.parametrize("index", range(4))
def test_load_state_dict_errors_match_torch(index: int) -> None:
    assert_raises_same(lambda: torch.nn.Linear(3, 4).load_state_dict(_bad_dicts(torch)[index]),
                       lambda: nn.Linear(3, 4).load_state_dict(_bad_dicts(ft)[index]))
    assert_raises_same(lambda: torch.nn.Sequential(torch.nn.Linear(3, 4)).load_state_dict({}),
                       lambda: nn.Sequential(nn.Linear(3, 4)).load_state_dict({}))


def test_load_state_dict_non_strict_returns_incompatible_keys() -> None:
    theirs = torch.nn.Linear(3, 4).load_state_dict(
        {"weight": torch.ones(4, 3), "bias2": torch.ones(4)}, strict=False)
    ours = nn.Linear(3, 4).load_state_dict({"weight": ft.ones(4, 3), "bias2": ft.ones(4)},
                                           strict=False)
    assert repr(ours) == repr(theirs) and ours == tuple(theirs)
    assert type(ours).__name__ == "_IncompatibleKeys"
    assert ours.missing_keys == ["bias"] and ours.unexpected_keys == ["bias2"]


def test_load_state_dict_to_cuda_module_is_one_copy_per_tensor() -> None:
    m = nn.Linear(3, 2, device="cuda")
    state = {"weight": ft.ones(2, 3), "bias": ft.zeros(2)}  # cpu checkpoint
    with launches() as ops:
        m.load_state_dict(state)
    assert len(ops) == 2
    assert host(m.weight).tolist() == [[1.0] * 3] * 2 and m.weight.is_cuda


# --- moving and casting -----------------------------------------------------------------------


def test_to_keeps_parameter_objects_and_casts_floats_only() -> None:
    m = make_net(ft)
    m.register_buffer("steps", ft.zeros(1, dtype=ft.int64))
    weight = m.a.weight
    assert m.to(ft.float16) is m
    assert m.a.weight is weight and weight.dtype is ft.float16 and weight.requires_grad
    assert m.buf.dtype is ft.float16 and m.steps.dtype is ft.int64
    m.double()
    assert weight.dtype is ft.float64
    m.bfloat16().float()
    assert weight.dtype is ft.float32


def test_cuda_moves_each_tensor_with_one_copy() -> None:
    m = nn.Linear(8, 16)
    with launches() as ops:
        m.cuda()
    assert len(ops) == 2 and m.weight.is_cuda and m.bias is not None and m.bias.is_cuda
    with launches() as ops:
        m.to("cuda")  # already there: nothing moves
        m.to(ft.float32)  # already that dtype: nothing casts
    assert ops == []
    m.cpu()
    assert not m.weight.is_cuda
    with launches() as ops:
        m.to(device="cuda", dtype=ft.float16)
    assert len(ops) == 2 and m.weight.dtype is ft.float16 and m.weight.is_cuda


def test_deepcopy_gives_independent_parameters() -> None:
    m = nn.Linear(2, 2)
    twin = copy.deepcopy(m)
    assert twin.weight is not m.weight and isinstance(twin.weight, nn.Parameter)
    assert twin.weight.data_ptr() != m.weight.data_ptr()
    np.testing.assert_array_equal(host(twin.weight), host(m.weight))


# --- containers -------------------------------------------------------------------------------


def test_sequential_list_api() -> None:
    a, b, c = nn.ReLU(), nn.Tanh(), nn.Sigmoid()
    s = nn.Sequential(a, b)
    assert len(s) == 2 and s[0] is a and s[-1] is b and list(s) == [a, b]
    assert isinstance(s[0:1], nn.Sequential) and list(s[0:1]) == [a]
    s.append(c)
    s.insert(0, nn.Identity())
    assert [type(x).__name__ for x in s] == ["Identity", "ReLU", "Tanh", "Sigmoid"]
    del s[0]
    assert list(s._modules) == ["0", "1", "2"] and s.pop(0) is a
    s[0] = a
    assert list(s) == [a, c]
    assert len(s + nn.Sequential(b)) == 3 and len(s * 2) == 4
    named = nn.Sequential(OrderedDict([("first", a), ("second", b)]))
    assert named.first is a and list(named._modules) == ["first", "second"]


def test_module_list_and_dict_api() -> None:
    a, b = nn.ReLU(), nn.Tanh()
    ml = nn.ModuleList([a])
    ml.append(b).extend([a])
    ml += [b]
    assert len(ml) == 4 and ml[-1] is b and isinstance(ml[1:], nn.ModuleList)
    ml.insert(1, nn.Identity())
    del ml[0]
    assert type(ml[0]).__name__ == "Identity" and list(ml._modules) == ["0", "1", "2", "3"]
    with pytest.raises(NotImplementedError, match=r'\[ModuleList\] is missing the required'):
        ml(ft.zeros(1))
    md = nn.ModuleDict({"a": a})
    md["b"] = b
    md.update([("c", nn.Identity())])
    assert list(md) == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert list(md.keys()) == ["a", "b", "c"] and md.pop("a") is a and next(iter(md.values())) is b
    md.clear()
    assert len(md) == 0


def test_sequential_forward_launches_each_layer() -> None:
    net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4)).cuda()
    x = ft_tensor(_rng.standard_normal((3, 8), dtype=np.float32), "cuda")
    with launches() as ops:
        net(x)
    assert ops == ["addmm", "relu", "addmm"]


# --- layers: numbers and launches against real torch ------------------------------------------


def test_linear_init_matches_torchs_bounds_and_launches() -> None:
    with launches() as ops:
        m = nn.Linear(64, 32, device="cuda")
    assert ops == ["uniform_", "uniform_"]  # kaiming_uniform_ on weight, uniform_ on bias
    bound = 1 / np.sqrt(64)
    w, b = host(m.weight), host(m.bias)  # type: ignore[arg-type]
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    assert w.std() > bound / 2.5  # spread over the whole interval, not a constant


@pytest.mark.parametrize("shape", [(5,), (4, 5), (2, 3, 5), (2, 2, 3, 5)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_matches_torch(shape: tuple[int, ...], bias: bool) -> None:
    theirs = torch.nn.Linear(5, 7, bias=bias)
    ours = nn.Linear(5, 7, bias=bias)
    load_from_torch(ours, theirs)
    x = _rng.standard_normal(shape, dtype=np.float32)
    expected = torch_np(theirs(torch.from_numpy(x)))
    ours.cuda()
    xc = ft_tensor(x, "cuda")
    with launches() as ops:
        y = ours(xc)
    np.testing.assert_allclose(host(y), expected, rtol=1e-5, atol=1e-5)
    assert len(ops) == 1 and ops[0] in ("addmm", "mm")
    assert y.shape == tuple(expected.shape) and y.device == ft.device("cuda", 0)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_linear_half_precision_matches_torch(dtype: str) -> None:
    theirs = torch.nn.Linear(16, 8)
    ours = nn.Linear(16, 8)
    load_from_torch(ours, theirs)
    x = _rng.standard_normal((4, 16), dtype=np.float32)
    expected = torch_np(theirs.to(getattr(torch, dtype))(torch.from_numpy(x).to(
        getattr(torch, dtype))))
    got = ours.to(getattr(ft, dtype))(ft_tensor(x, dtype=dtype))
    assert got.dtype is getattr(ft, dtype)
    np.testing.assert_allclose(host(got), expected, rtol=2e-2, atol=2e-2)


@pytest.mark.parametrize("shape", [(2, 5), (2, 2, 5), (5,)])
@pytest.mark.parametrize("bias", [True, False])
def test_linear_shape_mismatch_raises_torchs_error(shape: tuple[int, ...], bias: bool) -> None:
    assert_raises_same(lambda: torch.nn.Linear(3, 4, bias=bias)(torch.ones(shape)),
                       lambda: nn.Linear(3, 4, bias=bias)(ft.ones(shape)))


def test_embedding_matches_torch_and_launches_once() -> None:
    theirs = torch.nn.Embedding(10, 4, padding_idx=2)
    ours = nn.Embedding(10, 4, padding_idx=2)
    assert host(ours.weight)[2].tolist() == [0.0] * 4  # the padding row starts at zero
    load_from_torch(ours, theirs)
    idx = np.array([[1, 2, 9], [0, 0, 3]])
    expected = torch_np(theirs(torch.from_numpy(idx)))
    ours.cuda()
    ids = ft_tensor(idx, "cuda")
    with launches() as ops:
        out = ours(ids)
    assert ops == ["embedding"]
    np.testing.assert_array_equal(host(out), expected)
    assert_raises_same(lambda: theirs(torch.tensor([10])),
                       lambda: ours(ft.tensor([10], device="cuda")))
    assert_raises_same(lambda: theirs(torch.tensor([1.0])), lambda: ours.cpu()(ft.tensor([1.0])))


def test_embedding_init_and_from_pretrained() -> None:
    with launches() as ops:
        nn.Embedding(8, 4, padding_idx=1, device="cuda")
    assert ops == ["normal_", "fill_"]
    table = ft.ones(3, 2)
    e = nn.Embedding.from_pretrained(table)
    assert e.weight.data_ptr() == table.data_ptr() and not e.weight.requires_grad
    assert repr(e) == "Embedding(3, 2)"


def _norm_launches_in(dtype: str, ours: nn.Module, theirs: Any, x: np.ndarray) -> list[str]:
    """Run torch's norm layer and ours (holding its weights, on cuda) in `dtype` on `x`: the
    same numbers, in `dtype`. Returns our launches."""
    load_from_torch(ours, theirs)
    tdt = getattr(torch, dtype)
    expected = torch_np(theirs.to(tdt)(torch.from_numpy(x).to(tdt)))
    ours.to(getattr(ft, dtype)).cuda()
    xc = ft_tensor(x, "cuda", dtype)
    with launches() as ops:
        y = ours(xc)
    assert y.dtype is getattr(ft, dtype)
    tol = 1e-5 if dtype == "float32" else 2e-2
    np.testing.assert_allclose(host(y), expected, rtol=tol, atol=tol)
    return ops


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
def test_layer_norm_module_matches_torch(dtype: str) -> None:
    theirs = torch.nn.LayerNorm(6)
    with torch.no_grad():
        theirs.weight.normal_()
        theirs.bias.normal_()
    x = _rng.standard_normal((2, 3, 6), dtype=np.float32) * 3 + 1
    assert _norm_launches_in(dtype, nn.LayerNorm(6), theirs, x) == ["native_layer_norm"]


def test_layer_norm_init_launches() -> None:
    with launches() as ops:
        nn.LayerNorm(8, device="cuda")
    assert ops == ["fill_", "zero_"]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("eps", [None, 1e-6])
def test_rms_norm_module_matches_torch(dtype: str, eps: float | None) -> None:
    """Weight and input of one dtype: torch's CUDA build launches one fused kernel (the CPU
    build runs its composite; see oracles.py)."""
    theirs = torch.nn.RMSNorm(8, eps=eps)
    with torch.no_grad():
        theirs.weight.normal_()
    x = _rng.standard_normal((2, 3, 8), dtype=np.float32)
    assert _norm_launches_in(dtype, nn.RMSNorm(8, eps=eps), theirs, x) == ["_fused_rms_norm"]


def test_rms_norm_init_and_errors() -> None:
    with launches() as ops:
        nn.RMSNorm(8, device="cuda")
    assert ops == ["fill_"]
    assert_raises_same(lambda: torch.nn.RMSNorm(4)(torch.ones(2, 5)),
                       lambda: nn.RMSNorm(4)(ft.ones(2, 5)))
    assert_raises_same(lambda: torch.nn.LayerNorm(4)(torch.ones(2, 5)),
                       lambda: nn.LayerNorm(4)(ft.ones(2, 5)))


@pytest.mark.parametrize("name, args, op", [
    ("ReLU", (), "relu"), ("ReLU", (True,), "relu_"), ("SiLU", (), "silu"),
    ("SiLU", (True,), "silu_"), ("GELU", (), "gelu"), ("GELU", ("tanh",), "gelu"),
    ("Tanh", (), "tanh"), ("Sigmoid", (), "sigmoid"), ("Softmax", (-1,), "_softmax"),
    ("Softmax", (1,), "_softmax"), ("LogSoftmax", (-1,), "_log_softmax"),
])
def test_activation_modules_match_torch(name: str, args: tuple[Any, ...], op: str) -> None:
    x = _rng.standard_normal((2, 3, 4), dtype=np.float32)
    expected = torch_np(getattr(torch.nn, name)(*args)(torch.from_numpy(x.copy())))
    xc = ft_tensor(x, "cuda")
    with launches() as ops:
        y = getattr(nn, name)(*args)(xc)
    assert ops == [op]
    np.testing.assert_allclose(host(y), expected, rtol=1e-5, atol=1e-6)


def test_identity_returns_its_input() -> None:
    x = ft.zeros(2, device="cuda")
    with launches() as ops:
        assert nn.Identity(3, key=4)(x) is x
    assert ops == []


def test_dropout_module_eval_is_identity_and_training_is_one_fused_launch() -> None:
    drop = nn.Dropout(0.25)
    x = ft.ones(200, 50, device="cuda")
    with launches() as ops:
        y = drop(x)
    assert ops == ["native_dropout"]
    values = host(y)
    kept = values != 0
    assert np.allclose(values[kept], 1 / 0.75)
    assert 0.2 < 1 - kept.mean() < 0.3
    drop.eval()
    with launches() as ops:
        assert drop(x) is x
    assert ops == []
