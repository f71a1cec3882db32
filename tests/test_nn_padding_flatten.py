"""The padding modules (ConstantPad/ZeroPad/ReflectionPad/ReplicationPad/CircularPad 1-3d),
F.pad(mode='circular'), Flatten and Unflatten against real torch (CPU build): repr, values,
launches (torch_launches(cuda=True): the same ops on both builds here) and errors."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

_rng = np.random.default_rng(5)


def check(build: Callable[[Any], Any], shape: tuple[int, ...], strided: bool = False) -> None:
    """Same repr, values and launches for build(lib)(x) on an (optionally strided) input."""
    theirs, ours = build(torch), build(ft)
    assert repr(ours) == repr(theirs)
    stored = (*shape[:-2], shape[-1], shape[-2]) if strided else shape
    a = _rng.standard_normal(stored).astype(np.float32)
    tx, fx = torch.from_numpy(a), ft.tensor(a, device="cuda")
    if strided:  # `shape`, with the last two dims' strides swapped
        tx, fx = tx.transpose(-1, -2), fx.transpose(-1, -2)
    with torch_launches(cuda=True) as want_ops:
        want = theirs(tx)
    with launches() as ops:
        got = ours(fx)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(got.numpy(force=True), want.numpy())
    assert ops == want_ops


PADS: list[tuple[Callable[[Any], Any], tuple[int, ...]]] = [
    (lambda t: t.nn.ZeroPad1d(2), (2, 3, 5)),
    (lambda t: t.nn.ZeroPad2d((1, 0, 2, -1)), (2, 3, 4, 5)),
    (lambda t: t.nn.ZeroPad3d(1), (2, 3, 4, 5)),
    (lambda t: t.nn.ConstantPad1d((3, 1), 2.5), (3, 5)),
    (lambda t: t.nn.ConstantPad2d(1, -1.0), (2, 3, 4, 5)),
    (lambda t: t.nn.ConstantPad3d((1, 0, 0, 2, 1, 1), 7.0), (2, 3, 4, 5, 2)),
    (lambda t: t.nn.ReflectionPad1d((2, 1)), (2, 3, 5)),
    (lambda t: t.nn.ReflectionPad2d(2), (3, 4, 5)),
    (lambda t: t.nn.ReflectionPad3d((1, 1, 0, 2, 1, 0)), (2, 3, 4, 5, 3)),
    (lambda t: t.nn.ReplicationPad1d(3), (2, 3, 5)),
    (lambda t: t.nn.ReplicationPad2d((0, 1, 2, 3)), (2, 3, 4, 5)),
    (lambda t: t.nn.ReplicationPad3d(1), (3, 4, 5, 2)),
    (lambda t: t.nn.CircularPad1d((2, 1)), (2, 3, 5)),
    (lambda t: t.nn.CircularPad2d((1, 2, 2, 1)), (2, 3, 4, 5)),
    (lambda t: t.nn.CircularPad2d((-2, 1, 0, 4)), (3, 4, 5)),
    (lambda t: t.nn.CircularPad3d(1), (2, 3, 4, 5, 3)),
]


@pytest.mark.parametrize(("build", "shape"), PADS)
@pytest.mark.parametrize("strided", [False, True])
def test_padding_modules_match_torch(build: Callable[[Any], Any], shape: tuple[int, ...],
                                     strided: bool) -> None:
    check(build, shape, strided)


def test_circular_pad_launches_a_copy_per_region() -> None:
    x = ft.randn(2, 3, 4, 5, device="cuda")
    with launches() as ops:
        ft.nn.functional.pad(x, (1, 2, 2, 0), mode="circular")
    assert ops == ["copy_"] * 4  # the middle, then W's left and right, then H's top


PAD_ERRORS: list[Callable[[Any], Any]] = [
    lambda t: t.nn.functional.pad(t.ones(2, 3, 4, 5), (1, 6, 0, 0), mode="circular"),
    lambda t: t.nn.functional.pad(t.ones(2, 3, 4, 5), (-3, -3, 0, 0), mode="circular"),
    lambda t: t.nn.functional.pad(t.ones(2, 3, 4, 5), (1, 1), mode="circular"),
    lambda t: t.nn.functional.pad(t.ones(2, 3, 4, 5), (1, 1, 1, 1), mode="circular", value=1),
    lambda t: t.nn.CircularPad2d(1)(t.ones(2, 3)),
    lambda t: t.nn.CircularPad1d(1)(t.ones(2, 3, 4, 5)),
    lambda t: t.nn.ReflectionPad1d(5)(t.ones(2, 3, 4)),
]


@pytest.mark.parametrize("program", PAD_ERRORS)
def test_padding_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


FLATTENS: list[tuple[Callable[[Any], Any], tuple[int, ...]]] = [
    (lambda t: t.nn.Flatten(), (2, 3, 4, 5)),
    (lambda t: t.nn.Flatten(0, 2), (2, 3, 4, 5)),
    (lambda t: t.nn.Flatten(-2), (2, 3, 4)),
    (lambda t: t.nn.Unflatten(1, (3, 4)), (2, 12, 5)),
    (lambda t: t.nn.Unflatten(-1, [2, -1]), (2, 3, 6)),
    (lambda t: t.nn.Unflatten(0, t.Size([1, 2])), (2, 5)),
]


@pytest.mark.parametrize(("build", "shape"), FLATTENS)
@pytest.mark.parametrize("strided", [False, True])
def test_flatten_modules_match_torch(build: Callable[[Any], Any], shape: tuple[int, ...],
                                     strided: bool) -> None:
    check(build, shape, strided)


@pytest.mark.parametrize("program", [
    lambda t: t.nn.Unflatten(1, 6),
    lambda t: t.nn.Unflatten(1, (2, 3.0)),
    lambda t: t.nn.Unflatten(1, (2, 4))(t.ones(2, 6)),
    lambda t: t.nn.Flatten(2, 1)(t.ones(2, 3, 4)),
])
def test_flatten_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


# --- pixel shuffle ------------------------------------------------------------------------------

SHUFFLES: list[tuple[Callable[[Any], Any], tuple[int, ...]]] = [
    (lambda t: t.nn.PixelShuffle(2), (2, 8, 3, 4)),
    (lambda t: t.nn.PixelShuffle(3), (9, 2, 2)),  # unbatched
    (lambda t: t.nn.PixelShuffle(1), (2, 3, 4, 5)),
    (lambda t: t.nn.PixelShuffle(2), (2, 3, 4, 4, 5)),  # two batch dims
    (lambda t: t.nn.PixelUnshuffle(2), (2, 3, 4, 6)),
    (lambda t: t.nn.PixelUnshuffle(3), (2, 6, 3)),
]


@pytest.mark.parametrize(("build", "shape"), SHUFFLES)
@pytest.mark.parametrize("strided", [False, True])
def test_pixel_shuffle_modules_match_torch(build: Callable[[Any], Any], shape: tuple[int, ...],
                                           strided: bool) -> None:
    check(build, shape, strided)


def test_pixel_shuffle_is_one_clone_on_cuda_and_the_same_function_as_torch_s() -> None:
    assert ft.nn.functional.pixel_shuffle is ft.pixel_shuffle
    x = ft.randn(1, 8, 2, 2, device="cuda")
    with launches() as ops:
        y = ft.pixel_shuffle(x, 2)
    assert ops == ["clone"] and tuple(y.shape) == (1, 2, 4, 4)


@pytest.mark.parametrize("program", [
    lambda t: t.pixel_shuffle(t.ones(8, 4), 2),
    lambda t: t.pixel_shuffle(t.ones(1, 8, 4, 4), 0),
    lambda t: t.pixel_shuffle(t.ones(1, 6, 4, 4), 2),
    lambda t: t.pixel_unshuffle(t.ones(1, 3, 5, 4), 2),
    lambda t: t.pixel_unshuffle(t.ones(1, 3, 4, 5), 2),
    lambda t: t.pixel_unshuffle(t.ones(1, 3, 4, 4), -1),
])
def test_pixel_shuffle_errors_match_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)
