"""torch.UntypedStorage, Tensor.untyped_storage(), Tensor.set_() and
torch._C._construct_storage_from_data_pointer.

Real torch (CPU build) is the oracle for storage addresses, sizes and offsets, for set_'s results
and for its errors. The weak-reference story runs on the simulated GPU: vLLM's weak_ref_tensor
aliases a tensor's memory without keeping its block allocated, so the caching allocator hands the
block to the next allocation, and the alias then reads that tensor's values, as on a GPU.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import assert_same_error, assert_same_tensor, launches, outcome

import fake_torch as ft
from fake_torch._simulated._allocator import DEVICE
from fake_torch.cuda import CUDAGraph

Lib = Any  # fake_torch or torch: the programs below run unchanged on either


@pytest.fixture
def torch() -> Lib:
    return pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")


def weak_ref_tensor(t: ft.Tensor) -> ft.Tensor:
    """vLLM's weak_ref_tensor, as it is written for real torch."""
    s = t.untyped_storage()
    weak = ft._C._construct_storage_from_data_pointer(s.data_ptr(), t.device, s.nbytes())
    return ft.empty(0, dtype=t.dtype, device=t.device).set_(weak, t.storage_offset(), t.size(),
                                                            t.stride())


# --- untyped_storage(): the whole buffer, whatever the view --------------------------------------

VIEWS: dict[str, Callable[[Any], Any]] = {
    "whole": lambda x: x,
    "rows": lambda x: x[1:],
    "block": lambda x: x[1:, 2:],
    "step": lambda x: x[:, ::2],
    "t": lambda x: x.t(),
    "row": lambda x: x[2],
    "column piece": lambda x: x[1:3, 4],
    "view": lambda x: x.view(3, 8)[1:],
    "flat piece": lambda x: x.reshape(24)[5:17],
    "diagonal": lambda x: x[:, 1:].diagonal(),
    "as_strided": lambda x: x.as_strided((2, 2), (1, 3), 5),
    "expand": lambda x: x[3:].expand(5, 6),
    "narrow": lambda x: x.narrow(1, 2, 3),
}


def _storage_facts(lib: Lib, view: Callable[[Any], Any], dev: str) -> tuple[int, ...]:
    x = lib.arange(24.0, device=dev).reshape(4, 6)
    v = view(x)
    s = v.untyped_storage()
    assert s.data_ptr() == x.data_ptr()  # the storage starts where its base tensor does
    assert v.data_ptr() - s.data_ptr() == v.storage_offset() * v.element_size()
    return s.nbytes(), s.size(), len(s), v.storage_offset()


@pytest.mark.parametrize("name", VIEWS)
@pytest.mark.parametrize("dev", ["cpu", "cuda"])
def test_storage_spans_the_base_and_offsets_agree_with_torch(torch: Lib, name: str,
                                                              dev: str) -> None:
    ours = _storage_facts(ft, VIEWS[name], dev)
    assert ours == _storage_facts(torch, VIEWS[name], "cpu")
    assert ours[:3] == (96, 96, 96)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int16", "int64", "bfloat16", "float64"])
def test_storage_size_is_in_bytes(torch: Lib, dtype: str) -> None:
    theirs = torch.zeros(5, dtype=getattr(torch, dtype)).untyped_storage()
    ours = ft.zeros(5, dtype=getattr(ft, dtype)).untyped_storage()
    assert (ours.nbytes(), ours.size(), len(ours)) == (theirs.nbytes(), theirs.size(), len(theirs))


def test_storage_type_device_and_repr(torch: Lib) -> None:
    s = ft.zeros(3, device="cuda").untyped_storage()
    assert isinstance(s, ft.UntypedStorage) and s.device == ft.device("cuda", 0)
    assert repr(s) == "[torch.storage.UntypedStorage(device=cuda:0) of size 12]"
    empty = ft.empty(0, dtype=ft.int8).untyped_storage()
    # a cpu storage prints its bytes, then this line, as torch's does; a cuda one prints the
    # line alone (printing its bytes would be a D2H copy)
    assert repr(empty) == repr(torch.empty(0, dtype=torch.int8).untyped_storage())
    small = ft.tensor([1, 200], dtype=ft.uint8).untyped_storage()
    assert repr(small) == repr(torch.tensor([1, 200], dtype=torch.uint8).untyped_storage())
    assert s.resizable() and ft.zeros(1).untyped_storage().resizable()
    with pytest.raises(NotImplementedError, match=r"torch\.UntypedStorage\(\.\.\.\)"):
        ft.UntypedStorage(8)


def test_a_cuda_storage_keeps_its_block_allocated(fresh_device: object) -> None:
    t = ft.ones(1024, device="cuda")
    s = t.untyped_storage()
    del t
    assert ft.cuda.memory_allocated() == 4096  # the storage holds the block, as torch's does
    del s
    assert ft.cuda.memory_allocated() == 0


# --- set_: results -----------------------------------------------------------------------------

def _x(lib: Lib) -> Any:
    return lib.arange(24.0).reshape(4, 6)


# name -> (dtype of self, the set_ arguments built from the source tensor x)
SET_CASES: dict[str, tuple[str, Callable[[Any], tuple[Any, ...]]]] = {
    "storage": ("float32", lambda x: (x.untyped_storage(),)),
    "storage, contiguous default": ("float32", lambda x: (x.untyped_storage(), 0, (2, 3))),
    "storage, strided": ("float32", lambda x: (x.untyped_storage(), 5, (3, 2), (1, 4))),
    "storage, last element": ("float32", lambda x: (x.untyped_storage(), 23, (1,), (1,))),
    "storage, stride 0": ("float32", lambda x: (x.untyped_storage(), 2, (2, 2), (0, 1))),
    "storage, scalar": ("float32", lambda x: (x.untyped_storage(), 3, ())),
    "storage, empty": ("float32", lambda x: (x.untyped_storage(), 7, (0,), (1,))),
    "storage as float64": ("float64", lambda x: (x.untyped_storage(), 1, (3,))),
    "storage as int16": ("int16", lambda x: (x.untyped_storage(), 0, (2, 4))),
    "storage as bytes": ("uint8", lambda x: (x.untyped_storage(),)),
    "tensor": ("float32", lambda x: (x.t(),)),
    "tensor view": ("float32", lambda x: (x[1:, 2:],)),
    "tensor, offset from its own": ("float32", lambda x: (x[3:], 1, (2,), (1,))),
    "tensor, strided": ("float32", lambda x: (x[1:], 0, (2, 2), (1, 6))),
}


def _set_result(lib: Lib, dtype: str, args: Callable[[Any], tuple[Any, ...]]) -> tuple[Any, ...]:
    x = _x(lib)
    out = lib.empty(0, dtype=getattr(lib, dtype))
    got = out.set_(*args(x))
    assert got is out
    assert out.untyped_storage().data_ptr() == x.data_ptr()  # x's memory, not a copy
    return out, out.stride(), out.storage_offset(), x


@pytest.mark.parametrize("name", SET_CASES)
def test_set_views_the_source_as_torch_does(torch: Lib, name: str) -> None:
    dtype, args = SET_CASES[name]
    ours, theirs = _set_result(ft, dtype, args), _set_result(torch, dtype, args)
    assert_same_tensor(ours[0], theirs[0])
    assert ours[1:3] == theirs[1:3]  # stride, storage_offset
    # writes through the new view land in the source's memory
    _, ours_err = outcome(lambda: ours[0].fill_(1))
    _, theirs_err = outcome(lambda: theirs[0].fill_(1))
    assert_same_error(ours_err, theirs_err)
    assert_same_tensor(ours[3], theirs[3])


def test_set_keywords_and_no_arguments(torch: Lib) -> None:
    for lib in (ft, torch):
        x = lib.arange(6.0)
        out = lib.empty(0).set_(source=x.untyped_storage(), storage_offset=2, size=(2,),
                                stride=(2,))
        assert out.tolist() == [2.0, 4.0] and out.storage_offset() == 2
        fresh = lib.ones(3, dtype=lib.int16).set_()
        assert (fresh.shape, fresh.dtype, fresh.untyped_storage().nbytes()) == ((0,), lib.int16, 0)


def test_set_on_cuda_keeps_requires_grad_and_shares_the_block(fresh_device: object) -> None:
    x = ft.arange(6.0, device="cuda")
    y = ft.empty(0, device="cuda").requires_grad_().set_(x.untyped_storage(), 2, (2, 2))
    assert y.requires_grad and y.tolist() == [[2.0, 3.0], [4.0, 5.0]]
    del x
    assert ft.cuda.memory_allocated() == 512  # y owns the block now: a strong alias
    del y
    assert ft.cuda.memory_allocated() == 0


# --- set_: errors ------------------------------------------------------------------------------

SET_ERRORS: dict[str, Callable[[Any], Any]] = {
    "unequal lengths": lambda lib: lib.empty(0).set_(_x(lib).untyped_storage(), 0, (2, 2), (1,)),
    "negative offset": lambda lib: lib.empty(0).set_(_x(lib).untyped_storage(), -1, (2,), (1,)),
    "negative size": lambda lib: lib.empty(0).set_(_x(lib).untyped_storage(), 0, (-1,), (1,)),
    "negative stride": lambda lib: lib.empty(0).set_(_x(lib).untyped_storage(), 0, (2, 2),
                                                     (1, -1)),
    "dtype": lambda lib: lib.empty(0).set_(lib.arange(3)),
    "dtype, int8 self": lambda lib: lib.empty(0, dtype=lib.int8).set_(lib.ones(2,
                                                                               dtype=lib.half)),
}


@pytest.mark.parametrize("name", SET_ERRORS)
def test_set_errors_are_torchs(torch: Lib, name: str) -> None:
    _, theirs = outcome(lambda: SET_ERRORS[name](torch))
    _, ours = outcome(lambda: SET_ERRORS[name](ft))
    assert theirs is not None
    assert_same_error(ours, theirs)


@pytest.mark.parametrize("args", [lambda x: (5,), lambda x: (x.untyped_storage(), 1),
                                  lambda x: (x, 2), lambda x: (x, 0, None, (1,))],
                         ids=["int source", "offset without size", "tensor, offset without size",
                              "stride without size"])
def test_set_argument_mismatches_are_type_errors(torch: Lib,
                                                 args: Callable[[Any], tuple[Any, ...]]) -> None:
    prefix = "set_() received an invalid combination of arguments - "
    for lib in (torch, ft):
        with pytest.raises(TypeError) as got:
            lib.empty(0).set_(*args(_x(lib)))
        assert str(got.value).startswith(prefix)


def test_set_past_a_non_owning_storage_raises_torchs_error(torch: Lib,
                                                           fresh_device: object) -> None:
    src = torch.arange(4.0)
    weak = torch._C._construct_storage_from_data_pointer(src.data_ptr(), src.device, 16)
    _, theirs = outcome(lambda: torch.empty(0).set_(weak, 0, (5,), (1,)))
    t = ft.arange(4.0, device="cuda")
    w = weak_ref_tensor(t)
    assert not w.untyped_storage().resizable()
    _, ours = outcome(lambda: ft.empty(0, device="cuda").set_(w.untyped_storage(), 0, (5,), (1,)))
    assert_same_error(ours, theirs)
    assert str(ours).startswith("Trying to resize storage that is not resizable\n")


def test_set_past_an_owning_storage_is_not_emulated(torch: Lib) -> None:
    grown = torch.empty(0).set_(torch.arange(4.0).untyped_storage(), 0, (5,), (1,))
    assert grown.untyped_storage().nbytes() == 20  # torch grows (reallocates) the storage
    with pytest.raises(NotImplementedError, match=r"torch\.Tensor\.set_ past the end"):
        ft.empty(0).set_(ft.arange(4.0).untyped_storage(), 0, (5,), (1,))


def test_set_across_devices_raises_torchs_error(torch: Lib) -> None:
    # real torch CPU has no cuda: its meta device stands in, with the device name swapped
    for dev in ("meta", "cpu"):
        other = "cpu" if dev == "meta" else "meta"
        with pytest.raises(RuntimeError) as theirs:
            torch.empty(0, device=dev).set_(torch.empty(2, device=other).untyped_storage(), 0,
                                            (1,))
        fake_dev, fake_other = ("cuda", "cpu") if dev == "meta" else ("cpu", "cuda")
        with pytest.raises(RuntimeError) as ours:
            ft.empty(0, device=fake_dev).set_(ft.empty(2, device=fake_other).untyped_storage(), 0,
                                              (1,))
        assert str(ours.value) == str(theirs.value).replace('"meta"', '"cuda:0"')


# --- the weak reference (vLLM's weak_ref_tensor) on the simulated GPU -----------------------------

on_fresh_device = pytest.mark.usefixtures("fresh_device")


@on_fresh_device
@pytest.mark.parametrize("view", [lambda t: t, lambda t: t.view(32, 32)[3:, 5:].t()])
def test_a_weak_ref_aliases_the_tensor(view: Callable[[ft.Tensor], ft.Tensor]) -> None:
    t = view(ft.arange(1024.0, device="cuda"))
    w = weak_ref_tensor(t)
    assert (w.data_ptr(), w.shape, w.stride(), w.storage_offset()) == (
        t.data_ptr(), t.shape, t.stride(), t.storage_offset())
    np.testing.assert_array_equal(w.numpy(force=True), t.numpy(force=True))
    t.add_(1)
    np.testing.assert_array_equal(w.numpy(force=True), t.numpy(force=True))  # one memory


@on_fresh_device
def test_a_weak_ref_holds_no_block_and_launches_nothing() -> None:
    t = ft.ones(1024, device="cuda")  # 4096 bytes: one block of that size
    with launches() as names:
        w = weak_ref_tensor(t)
    assert names == [] and ft.LaunchCounter.n == 0
    assert ft.cuda.memory_allocated() == 4096
    assert DEVICE.storage_of(w._a) is None  # no Storage found for it through its numpy bases
    del t
    assert ft.cuda.memory_allocated() == 0  # the block is free though w still lives
    strong = ft.ones(1024, device="cuda")
    alias = ft.empty(0, device="cuda").set_(strong)  # a strong alias keeps the block
    del strong
    assert ft.cuda.memory_allocated() == 4096
    del alias
    assert ft.cuda.memory_allocated() == 0
    assert w.shape == (1024,)


@on_fresh_device
def test_the_freed_block_goes_to_the_next_tensor_and_the_weak_ref_sees_it() -> None:
    t = ft.arange(1024.0, device="cuda")
    w = weak_ref_tensor(t)
    address = t.data_ptr()
    del t
    u = ft.full((1024,), 7.0, device="cuda")  # same size: the block t freed
    assert u.data_ptr() == address
    np.testing.assert_array_equal(w.numpy(force=True), np.full(1024, 7.0, np.float32))
    w[0] = -1.0  # and writes through w land in u, as through any dangling pointer on a GPU
    assert u[0].item() == -1.0


@on_fresh_device
def test_a_weak_ref_to_a_graph_output_lets_the_next_capture_reuse_its_block() -> None:
    x = ft.ones(256, device="cuda")
    pool = ft.cuda.graph_pool_handle()
    g1, g2 = CUDAGraph(), CUDAGraph()
    with ft.cuda.graph(g1, pool=pool):
        out1 = x * 2
    w = weak_ref_tensor(out1)  # vLLM keeps only this of the last piecewise graph's output
    address = out1.data_ptr()
    del out1
    with ft.cuda.graph(g2, pool=pool):
        out2 = x + 5
    assert out2.data_ptr() == address  # g2's output lives in g1's output block
    g1.replay()
    assert w[:2].tolist() == [2.0, 2.0]
    g2.replay()
    assert w[:2].tolist() == [6.0, 6.0]  # clobbered by g2, as on a GPU


@on_fresh_device
def test_construct_storage_checks_the_memory_it_is_given() -> None:
    t = ft.ones(1024, device="cuda")
    address = t.data_ptr()
    s = ft._C._construct_storage_from_data_pointer(address + 512, t.device, 1024)
    assert (s.data_ptr(), s.nbytes(), s.device, s.resizable()) == (address + 512, 1024,
                                                                   t.device, False)
    del t
    ft.cuda.empty_cache()  # the segment goes back to the device: nothing left to alias
    with pytest.raises(RuntimeError, match=r"is not memory of the simulated cuda device"):
        ft._C._construct_storage_from_data_pointer(address, ft.device("cuda"), 4096)
    with pytest.raises(NotImplementedError, match=r"_construct_storage_from_data_pointer on cpu"):
        ft._C._construct_storage_from_data_pointer(address, ft.device("cpu"), 4096)


def test_construct_storage_takes_a_device_object(torch: Lib) -> None:
    src = torch.arange(4.0)
    with pytest.raises(TypeError):
        torch._C._construct_storage_from_data_pointer(src.data_ptr(), "cpu", 16)
    with pytest.raises(TypeError, match=r"_construct_storage_from_data_pointer\(\)"):
        ft._C._construct_storage_from_data_pointer(0, "cuda", 16)  # type: ignore[arg-type]


# --- copy.deepcopy: new memory, the same layout, storages shared as in the original -----------

def _deepcopy_story(lib: Lib, device: str) -> dict[str, Any]:
    import copy

    base = lib.arange(12.0, device=device)
    views = (base, base[2:8].view(2, 3).t(), lib.arange(3, device=device))
    a, b, c = copy.deepcopy(views)
    base.fill_(-1.0)  # the copies do not see the originals' memory
    return {"values": [x.cpu().tolist() for x in (a, b, c)],
            "layout": [(tuple(x.shape), x.stride(), x.storage_offset()) for x in (a, b, c)],
            "b_shares_a": b.untyped_storage().data_ptr() == a.untyped_storage().data_ptr(),
            "new_memory": a.data_ptr() != base.data_ptr(),
            "dtypes": [str(x.dtype) for x in (a, b, c)]}


def test_deepcopy_like_torch(torch: Lib) -> None:
    expected = _deepcopy_story(torch, "cpu")
    assert expected["b_shares_a"] and expected["new_memory"]
    assert _deepcopy_story(ft, "cpu") == expected
    assert _deepcopy_story(ft, "cuda") == expected


def test_deepcopy_launches_one_copy_per_storage() -> None:
    import copy

    base = ft.arange(12.0, device="cuda")
    with launches() as names:
        copy.deepcopy((base, base[3:], base.view(3, 4)))
    assert names == ["clone"]


def test_deepcopy_of_a_module_with_buffers() -> None:
    import copy

    module = ft.nn.Linear(3, 2).cuda()
    module.register_buffer("table", ft.arange(4.0, device="cuda"))
    twin = copy.deepcopy(module)
    assert isinstance(twin.weight, ft.nn.Parameter)
    assert twin.table.data_ptr() != module.table.data_ptr()
    module.table.zero_()
    assert twin.table.tolist() == [0.0, 1.0, 2.0, 3.0]
