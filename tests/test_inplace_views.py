"""The in-place view ops (unsqueeze_, squeeze_, transpose_, t_, swapdims_, swapaxes_,
as_strided_) against real torch: the tensor itself takes the new sizes, strides and offset,
its storage and other views stay as they were, nothing launches, errors match torch's."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_raises_like_torch, launches, torch_launches

import fake_torch as ft

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

# (name, program on a (2, 3) arange of the library `T`): each returns the tensor it changed
PROGRAMS: dict[str, Callable[[Any, Any], Any]] = {
    "unsqueeze_0": lambda T, x: x.unsqueeze_(0),
    "unsqueeze_-1": lambda T, x: x.unsqueeze_(-1),
    "squeeze_all": lambda T, x: x.unsqueeze_(0).unsqueeze_(2).squeeze_(),
    "squeeze_dim": lambda T, x: x.unsqueeze_(1).squeeze_(1),
    "squeeze_dims": lambda T, x: x.unsqueeze_(0).unsqueeze_(-1).squeeze_((0, 3)),
    "squeeze_not_one": lambda T, x: x.squeeze_(0),
    "transpose_": lambda T, x: x.transpose_(0, 1),
    "transpose_neg": lambda T, x: x.transpose_(-1, -2),
    "t_": lambda T, x: x.t_(),
    "t_1d": lambda T, x: x.view(6).t_(),
    "swapdims_": lambda T, x: x.swapdims_(1, 0),
    "swapaxes_": lambda T, x: x.swapaxes_(0, 1),
    "as_strided_": lambda T, x: x.as_strided_((3, 2), (1, 3)),
    "as_strided_offset": lambda T, x: x.as_strided_((2, 2), (3, 1), 1),
    "chain_on_view": lambda T, x: x[:, 1:].t_().unsqueeze_(0),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_inplace_views_match_torch(name: str) -> None:
    program = PROGRAMS[name]
    theirs = torch.arange(6.0).reshape(2, 3)
    ours = ft.arange(6.0, device="cuda").reshape(2, 3)
    with torch_launches(cuda=True) as expected:
        t_out = program(torch, theirs)
    with launches() as got:
        f_out = program(ft, ours)
    assert got == expected == []  # metadata only: no launch, in either library
    assert tuple(f_out.shape) == tuple(t_out.shape)
    assert f_out.stride() == t_out.stride()
    assert f_out.storage_offset() == t_out.storage_offset()
    np.testing.assert_array_equal(f_out.numpy(force=True), t_out.numpy())


def test_the_tensor_itself_changes_and_other_views_do_not() -> None:
    x = ft.arange(6.0, device="cuda").reshape(2, 3)
    flat = x.view(6)
    ptr = x.data_ptr()
    assert x.unsqueeze_(0) is x
    assert x.shape == (1, 2, 3) and x.stride() == (6, 3, 1)
    assert flat.shape == (6,) and x.data_ptr() == ptr  # the same storage, another geometry
    x.squeeze_(0).t_()
    assert x.shape == (3, 2) and x.stride() == (1, 3)
    x[0, 1] = 10.0  # writes land in the shared storage
    assert flat[3].item() == 10.0


def test_inplace_views_keep_requires_grad_and_subclass() -> None:
    p = ft.nn.Parameter(ft.zeros(2, 3))
    assert p.unsqueeze_(0) is p
    assert isinstance(p, ft.nn.Parameter) and p.requires_grad and p.shape == (1, 2, 3)


ERRORS: dict[str, Callable[[Any], Any]] = {
    "unsqueeze_range": lambda T: T.zeros(2, 3).unsqueeze_(5),
    "squeeze_range": lambda T: T.zeros(2, 3).squeeze_(3),
    "squeeze_repeated": lambda T: T.zeros(1, 3).squeeze_((0, 0)),
    "transpose_range": lambda T: T.zeros(2, 3).transpose_(0, 5),
    "t_3d": lambda T: T.zeros(2, 3, 4).t_(),
    "as_strided_out_of_bounds": lambda T: T.zeros(2, 3).as_strided_((3, 3), (1, 3)),
    "as_strided_offset_out": lambda T: T.zeros(2, 3).as_strided_((3, 2), (1, 3), 1),
    "as_strided_negative": lambda T: T.zeros(2, 3).as_strided_((2,), (-1,)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_torch(name: str) -> None:
    assert_raises_like_torch(ERRORS[name])


def test_a_failed_inplace_view_leaves_the_tensor_as_it_was() -> None:
    x = ft.zeros(2, 3)
    with pytest.raises(RuntimeError):
        x.t_().unsqueeze_(0).t_()
    assert x.shape == (1, 3, 2)  # the first two changed it; the third refused
