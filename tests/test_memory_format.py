"""torch.memory_format objects and the layouts they ask for, against real torch CPU: the four
formats, channels_last (NCHW sizes over NHWC memory) and channels_last_3d strides from every op
that takes `memory_format=`, preserve_format keeping an input's layout, is_contiguous per
format, `to(memory_format=)` aliasing as ATen's _to_will_alias decides, torch's errors for a
wrong rank or a wrong type, and the launches each call makes."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import (
    assert_raises_like_torch,
    assert_same_error,
    launches,
    outcome,
    pair,
    torch_launches,
)

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

FORMATS = ["contiguous_format", "preserve_format", "channels_last", "channels_last_3d"]

# inputs of several layouts: (name, make(lib) -> tensor); the values are an arange
LAYOUTS: list[tuple[str, Callable[[Any], Any]]] = [
    ("nchw", lambda lib: _base(lib, (2, 3, 4, 5))),
    ("nhwc", lambda lib: _base(lib, (2, 4, 5, 3)).permute(0, 3, 1, 2)),
    ("nhwc sliced", lambda lib: _base(lib, (2, 4, 5, 3)).permute(0, 3, 1, 2)[:, :, ::2]),
    ("nchw sliced C", lambda lib: _base(lib, (2, 3, 4, 5))[:, :2]),
    ("transposed", lambda lib: _base(lib, (2, 3, 4, 5)).transpose(1, 3)),
    ("N111", lambda lib: _base(lib, (4, 1, 1, 1))),
    ("1C1W transposed", lambda lib: _base(lib, (1, 5, 1, 3)).transpose(1, 3)),
    ("expanded C", lambda lib: _base(lib, (2, 1, 4, 5)).expand(2, 3, 4, 5)),
    ("empty batch", lambda lib: _base(lib, (0, 3, 4, 5))),
    ("ndhwc", lambda lib: _base(lib, (2, 3, 4, 5, 2)).permute(0, 4, 1, 2, 3)),
    ("ncdhw", lambda lib: _base(lib, (2, 2, 3, 4, 5))),
    ("3-D", lambda lib: _base(lib, (3, 4, 5))),
    ("3-D transposed", lambda lib: _base(lib, (3, 4, 5)).transpose(0, 2)),
]


def _base(lib: Any, shape: tuple[int, ...]) -> Any:
    return lib.arange(int(np.prod(shape)), dtype=lib.float32).reshape(shape)


def _fmt(lib: Any, name: str) -> Any:
    return getattr(lib, name)


# ops taking a memory format: (name, op(lib, x, fmt)) -> a tensor
OPS: list[tuple[str, Callable[[Any, Any, Any], Any]]] = [
    ("contiguous", lambda lib, x, f: x.contiguous(memory_format=f)),
    ("clone", lambda lib, x, f: x.clone(memory_format=f)),
    ("torch.clone", lambda lib, x, f: lib.clone(x, memory_format=f)),
    ("to", lambda lib, x, f: x.to(memory_format=f)),
    ("to dtype", lambda lib, x, f: x.to(lib.float64, memory_format=f)),
    ("half", lambda lib, x, f: x.half(memory_format=f)),
    ("cpu", lambda lib, x, f: x.cpu(memory_format=f)),
    ("empty_like", lambda lib, x, f: lib.empty_like(x, memory_format=f)),
    ("zeros_like", lambda lib, x, f: lib.zeros_like(x, memory_format=f)),
    ("ones_like", lambda lib, x, f: lib.ones_like(x, dtype=lib.int32, memory_format=f)),
    ("full_like", lambda lib, x, f: lib.full_like(x, 7, memory_format=f)),
    ("rand_like", lambda lib, x, f: lib.rand_like(x, memory_format=f)),
    ("randn_like", lambda lib, x, f: lib.randn_like(x, memory_format=f)),
    ("randint_like", lambda lib, x, f: lib.randint_like(x, 5, memory_format=f)),
    ("empty", lambda lib, x, f: lib.empty(*x.shape, memory_format=f)),
]
RANDOM = ("empty_like", "rand_like", "randn_like", "randint_like", "empty")


def _result(name: str, lib: Any, x: Any, out: Any) -> Any:
    """What is compared: the layout (and the values where they are determined)."""
    values = None if name in RANDOM else np.asarray(out.to(lib.float64).tolist())
    return (tuple(out.shape), out.stride(), str(out.dtype), out is x,
            None if values is None else values.tolist())


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("layout", [m for _, m in LAYOUTS], ids=[n for n, _ in LAYOUTS])
@pytest.mark.parametrize("op", [o for _, o in OPS], ids=[n for n, _ in OPS])
def test_each_op_lays_out_each_input_as_torch(op: Callable[..., Any],
                                             layout: Callable[[Any], Any], fmt: str) -> None:
    name = next(n for n, o in OPS if o is op)
    results = []
    for lib in (torch, ft):
        x = layout(lib)
        results.append(outcome(lambda lib=lib, x=x: _result(name, lib, x,
                                                            op(lib, x, _fmt(lib, fmt)))))
    (theirs, their_error), (ours, our_error) = results
    assert_same_error(our_error, their_error)
    assert ours == theirs


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("layout", [m for _, m in LAYOUTS], ids=[n for n, _ in LAYOUTS])
def test_is_contiguous_per_format_as_torch(layout: Callable[[Any], Any], fmt: str) -> None:
    assert (layout(ft).is_contiguous(memory_format=_fmt(ft, fmt))
            == layout(torch).is_contiguous(memory_format=_fmt(torch, fmt)))


def test_the_objects_are_torchs() -> None:
    for name in FORMATS:
        ours, theirs = _fmt(ft, name), _fmt(torch, name)
        assert repr(ours) == repr(theirs) == str(ours) == f"torch.{name}"
        assert isinstance(ours, ft.memory_format) and type(ours).__name__ == "memory_format"
        assert pickle.loads(pickle.dumps(ours)) is ours and copy.deepcopy(ours) is ours
        assert ours == ours and hash(ours) == hash(_fmt(ft, name)) and ours != repr(ours)
    assert ft.channels_last != ft.contiguous_format
    _, ours_e = outcome(lambda: ft.memory_format())
    _, theirs_e = outcome(lambda: torch.memory_format())
    assert_same_error(ours_e, theirs_e)


REFUSED: list[tuple[str, Callable[[Any], Any]]] = [
    ("contiguous(None)", lambda lib: _base(lib, (2, 3)).contiguous(memory_format=None)),
    ("contiguous(3)", lambda lib: _base(lib, (2, 3)).contiguous(memory_format=3)),
    ("contiguous(str)", lambda lib: _base(lib, (2, 3)).contiguous(memory_format="a")),
    ("contiguous preserve, strided",
     lambda lib: _base(lib, (2, 3)).t().contiguous(memory_format=lib.preserve_format)),
    ("is_contiguous(3)", lambda lib: _base(lib, (2, 3)).is_contiguous(memory_format=3)),
    ("is_contiguous(None)", lambda lib: _base(lib, (2, 3)).is_contiguous(memory_format=None)),
    ("clone(str)", lambda lib: _base(lib, (2, 3)).clone(memory_format="torch.channels_last")),
    ("empty_like(int)", lambda lib: lib.empty_like(_base(lib, (2,)), memory_format=3)),
    ("empty(str)", lambda lib: lib.empty(2, memory_format="a")),
    ("empty preserve", lambda lib: lib.empty(2, 3, 4, 5, memory_format=lib.preserve_format)),
    ("to(str)", lambda lib: _base(lib, (2, 3)).to(memory_format="x")),
    ("Module.to(str)", lambda lib: lib.nn.Linear(2, 2).to(memory_format="x")),
    ("Module.to channels_last of a 5-D weight",
     lambda lib: _with_weight(lib, (2, 2, 1, 1, 1)).to(memory_format=lib.channels_last)),
]


def _with_weight(lib: Any, shape: tuple[int, ...]) -> Any:
    module = lib.nn.Module()
    module.weight = lib.nn.Parameter(lib.ones(shape))
    return module


@pytest.mark.parametrize("program", [p for _, p in REFUSED], ids=[n for n, _ in REFUSED])
def test_refused_as_torch_refuses(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


def test_to_aliases_when_the_strides_suggest_that_format() -> None:
    """ATen's _to_will_alias asks suggest_memory_format, not is_contiguous: a transposed
    matrix `.to(memory_format=torch.contiguous_format)` is the matrix itself."""
    cases: list[Callable[[Any], Any]] = [
        lambda lib: _base(lib, (3, 4)).t(),
        lambda lib: _base(lib, (3, 4))[:, ::2],
        lambda lib: _base(lib, (2, 3, 4, 5)).contiguous(memory_format=lib.channels_last),
        lambda lib: _base(lib, (2, 3, 4, 5)).contiguous(
            memory_format=lib.channels_last)[..., ::2],
        lambda lib: _base(lib, (2, 3, 4, 5))[:, :, ::2],
    ]
    for make in cases:
        for name in FORMATS[:3]:
            got = []
            for lib in (torch, ft):
                x, fmt = make(lib), _fmt(lib, name)
                got.append(outcome(lambda x=x, fmt=fmt: x.to(memory_format=fmt) is x))
            assert got[0][0] == got[1][0]
            assert_same_error(got[1][1], got[0][1])


def test_module_to_channels_last_converts_its_4d_tensors_only() -> None:
    for args in ((), (torch.float64,)):
        torch.manual_seed(0)
        theirs = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 2), torch.nn.Linear(3, 3))
        ours = ft.nn.Sequential(ft.nn.Conv2d(3, 4, 2), ft.nn.Linear(3, 3))
        ours_args = tuple(getattr(ft, str(a).split(".")[1]) for a in args)
        theirs.to(*args, memory_format=torch.channels_last)
        ours.to(*ours_args, memory_format=ft.channels_last)
        for (n, t), (m, o) in zip(theirs.named_parameters(), ours.named_parameters(),
                                  strict=True):
            assert n == m and o.stride() == t.stride() and str(o.dtype) == str(t.dtype)
            assert type(o) is ft.nn.Parameter


def test_channels_last_values_follow_the_layout() -> None:
    """An NHWC copy holds the same logical values; its memory is NHWC order."""
    ours, theirs = pair((2, 3, 4, 5))
    o = ours.contiguous(memory_format=ft.channels_last)
    t = theirs.contiguous(memory_format=torch.channels_last)
    np.testing.assert_array_equal(o.numpy(), t.numpy())
    np.testing.assert_array_equal(ft.empty(0).new_tensor(0).numpy(), 0)
    flat = np.frombuffer(o._a.base if o._a.base is not None else o._a, dtype=np.float32)
    np.testing.assert_array_equal(flat[:o.numel()], t.permute(0, 2, 3, 1).reshape(-1).numpy())
    # pointwise ops keep the layout, as TensorIterator does
    for fn in (lambda x: x + 1, lambda x: x * x, lambda x: x.exp()):
        assert fn(o).stride() == fn(t).stride()


LAUNCHING: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("contiguous channels_last", lambda lib, x: x.contiguous(memory_format=lib.channels_last)),
    ("contiguous already", lambda lib, x: x.contiguous(memory_format=lib.channels_last)
     .contiguous(memory_format=lib.channels_last)),
    ("clone channels_last", lambda lib, x: x.clone(memory_format=lib.channels_last)),
    ("to channels_last", lambda lib, x: x.to(memory_format=lib.channels_last)),
    ("to dtype channels_last", lambda lib, x: x.to(lib.float16, memory_format=lib.channels_last)),
    ("zeros_like channels_last", lambda lib, x: lib.zeros_like(x, memory_format=lib.channels_last)),
    ("empty_like channels_last", lambda lib, x: lib.empty_like(x, memory_format=lib.channels_last)),
    ("empty channels_last", lambda lib, x: lib.empty(2, 3, 4, 5, device=x.device,
                                                     memory_format=lib.channels_last)),
    ("to contiguous of transposed", lambda lib, x: x.transpose(1, 2)
     .to(memory_format=lib.contiguous_format)),
]


@pytest.mark.parametrize("program", [p for _, p in LAUNCHING], ids=[n for n, _ in LAUNCHING])
def test_launches_as_torch(program: Callable[[Any, Any], Any]) -> None:
    x = ft.arange(120, dtype=ft.float32, device="cuda").reshape(2, 3, 4, 5)
    tx = torch.arange(120, dtype=torch.float32).reshape(2, 3, 4, 5)
    with torch_launches(cuda=True) as theirs:
        program(torch, tx)
    with launches() as ours:
        program(ft, x)
    assert ours == theirs


def test_modes_see_the_memory_format() -> None:
    seen: list[Any] = []

    class Record(ft.overrides.TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            seen.append((getattr(func, "__name__", func), dict(kwargs or {})))
            return func(*args, **(kwargs or {}))

    x = _base(ft, (2, 3, 4, 5))
    with Record():
        assert not x.is_contiguous(memory_format=ft.channels_last)
        assert x.is_contiguous()
    assert seen == [("is_contiguous", {"memory_format": ft.channels_last}),
                    ("is_contiguous", {})]
