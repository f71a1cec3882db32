"""The front's fast paths against the general paths they stand in for.

`x + y`, `x - y`, `x * y` (and torch.add/sub/mul without alpha or out) first try
`_elementwise.plain_binary`; silu and sigmoid into a fresh output run `computes_into` kernels
instead of `map_kernel`. Oracle: the general path (`pointwise` with the op's ufunc; the same
activation through `map_kernel`, which in-place calls still take), bit for bit, with the same
dtype, shape, strides and launches. Real torch's values and texts for these ops are
tests/test_pointwise.py's and tests/test_functional.py's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import NP_DTYPE, launches, same_bits

import fake_torch as ft
from fake_torch._kernels import _elementwise
from fake_torch._kernels.pointwise_math import _sigmoid, _silu
from fake_torch._simulated import _machine

OPS: dict[str, tuple[Callable[[Any, Any], Any], np.ufunc]] = {
    "add": (operator.add, np.add), "sub": (operator.sub, np.subtract),
    "mul": (operator.mul, np.multiply)}
PLAIN = ["uint8", "int8", "int16", "int32", "int64", "float32", "float64"]


def _values(shape: tuple[int, ...], dtype: str, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    if NP_DTYPE[dtype].kind == "f":
        a = rng.standard_normal(shape) * 1e3
        a.flat[:3] = [np.inf, -np.inf, np.nan][: a.size]
        return a.astype(dtype)
    info = np.iinfo(NP_DTYPE[dtype])
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)


def _general(op: str, x: ft.Tensor, y: Any) -> ft.Tensor:
    """The general path: `pointwise` over the op's ufunc, torch's promotion."""
    promo = _elementwise.promote(x, y)
    return _elementwise.pointwise(op, OPS[op][1], [x, y], promo=promo, result=promo)


def _same(ours: ft.Tensor, general: ft.Tensor) -> None:
    assert ours.dtype is general.dtype and ours.device == general.device
    assert ours.stride() == general.stride()
    assert same_bits(ours.numpy(force=True), general.numpy(force=True))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", PLAIN)
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("shape", [(64,), (3, 5), (), (0, 4)])
def test_plain_binary_matches_the_general_path(op: str, dtype: str, device: str,
                                               shape: tuple[int, ...]) -> None:
    x = ft.tensor(_values(shape, dtype, 0), device=device)
    y = ft.tensor(_values(shape, dtype, 1), device=device)
    with launches() as general_names:
        general = _general(op, x, y)
    for call in (lambda: OPS[op][0](x, y), lambda: getattr(ft, op)(x, y),
                 lambda: getattr(x, op)(y)):
        with launches() as names:
            ours = call()
        _same(ours, general)
        assert names == general_names == ([op] if device == "cuda" and 0 not in shape else [])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", list(OPS))
@pytest.mark.parametrize("scalar", [2.5, -1e-3, 1e300, float("nan")])
def test_plain_binary_with_a_float_matches_the_general_path(op: str, dtype: str,
                                                            scalar: float) -> None:
    x = ft.tensor(_values((4, 8), dtype, 0), device="cuda")
    general = _general(op, x, scalar)
    with launches() as names:
        ours = OPS[op][0](x, scalar)
    _same(ours, general)
    assert names == [op]


@pytest.mark.parametrize("case", ["float16", "bool", "broadcast", "transposed", "int scalar",
                                  "alpha"])
def test_what_plain_binary_leaves_to_the_op(case: str) -> None:
    """Cases it refuses (None) go the general way: opmath, bool's refusal, broadcasting, a
    layout to follow, a number to convert as torch does, an alpha."""
    x = ft.tensor(_values((3, 4), "float32", 0))
    y: Any = ft.tensor(_values((3, 4), "float32", 1))
    if case == "float16":
        x, y = x.half(), y.half()
    elif case == "bool":
        x, y = x > 0, y > 0
    elif case == "broadcast":
        y = y[:1]
    elif case == "transposed":
        x, y = x.t(), y.t()
    elif case == "int scalar":
        y = 3
    if case != "alpha":
        assert _elementwise.plain_binary("add", _elementwise.ufunc_kernel_of(np.add, 2), x,
                                         y) is None
        _same(x + y, _general("add", x, y))
    else:  # one fused multiply-add, as torch's kernels compute it
        torch = pytest.importorskip("torch")
        theirs = torch.add(torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy()), alpha=2)
        assert same_bits(ft.add(x, y, alpha=2).numpy(), theirs.numpy())
    if case == "bool":
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool"):
            x - y


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
@pytest.mark.parametrize("name, fn", [("silu", _silu), ("sigmoid", _sigmoid)])
@pytest.mark.parametrize("shape", [(64,), (2, 3), ()])
def test_activation_into_its_output_matches_its_function(name: str, fn: Any, dtype: str,
                                                         device: str,
                                                         shape: tuple[int, ...]) -> None:
    """The kernel writing its steps into the fresh output gives fn's values bit for bit, as
    the in-place call (still `map_kernel`: out is x there) does; one launch each."""
    a = (np.random.default_rng(0).standard_normal(shape) * 50).astype(dtype)
    if a.size:
        a.flat[0] = -1000.0  # exp overflows: quiet, as torch
    x = ft.tensor(a, device=device)
    call = (lambda t, **kw: ft.nn.functional.silu(t, **kw)) if name == "silu" else (
        lambda t, **kw: t.sigmoid_() if kw else t.sigmoid())
    with launches() as names:
        ours = call(x)
    expected = np.asarray(fn(a))
    got = ours.numpy(force=True)
    assert got.dtype == expected.dtype and same_bits(got, expected)
    inplace = x.clone()
    call(inplace, inplace=True)
    assert same_bits(inplace.numpy(force=True), got)
    assert names == ([name] if device == "cuda" else [])


@pytest.mark.parametrize("call", ["add", "mul float", "silu", "sin", "add broadcast"])
def test_a_fast_path_launches_on_its_tensors_device(call: str) -> None:
    """An op on cuda:1 tensors while cuda:0 is current queues on cuda:1's stream (torch's
    DeviceGuard), on the fast paths as on the general one. Big tensors, so the queued kernel
    is still running when the host asks."""
    with _machine.fresh(num_devices=2):
        a = ft.ones(1 << 22, device="cuda:1")
        b = ft.ones(1 << 22, device="cuda:1")
        run = {"add": lambda: a + b, "mul float": lambda: a * 2.0,
               "silu": lambda: ft.nn.functional.silu(a), "sin": lambda: a.sin(),
               "add broadcast": lambda: a + b[:1]}[call]
        ft.cuda.synchronize(0)
        ft.cuda.synchronize(1)
        assert ft.cuda.current_device() == 0
        run()
        assert ft.cuda.current_stream(0).query()  # nothing queued on cuda:0
        assert not ft.cuda.current_stream(1).query()  # the kernel, on cuda:1


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shapes", [((8, 64), (128, 64)), ((1, 3), (5, 3))])
def test_linear_into_its_output_matches_the_general_addmm_kernel(
        dtype: str, shapes: tuple[tuple[int, int], tuple[int, int]]) -> None:
    """F.linear's addmm computes product then bias in its fresh output: bit for bit what the
    general kernel (product and sum in temporaries, then stored) gives; one launch."""
    from fake_torch._kernels.linalg import _addmm_kernel

    (n, k), (m, _) = shapes
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(dtype) for s in ((n, k), (m, k), (m,)))
    tx, tw, tb = (ft.tensor(a, device="cuda") for a in (x, w, b))
    with launches() as names:
        ours = ft.nn.functional.linear(tx, tw, tb)
    general = np.empty((n, m), dtype)
    _addmm_kernel(general, np.broadcast_to(b, (n, m)), x, w.T, beta=1, alpha=1,
                  acc=np.dtype(dtype))
    assert same_bits(ours.numpy(force=True), general)
    assert names == ["addmm"]


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape, dim", [((64,), -1), ((64,), 0), ((3, 5), 1), ((3, 5), 0),
                                        ((), 0), ((0,), 0)])
def test_softmax_bound_kernel_matches_the_kernel_with_params(
        device: str, dtype: str, log: bool, shape: tuple[int, ...], dim: int) -> None:
    """softmax launches a kernel bound once per (axis, acc, log, 1-d) (a 1-d input: scalar
    reductions); the oracle is `_softmax_kernel` called with its params, into the same dtype."""
    from fake_torch._kernels import reduction_scan
    from fake_torch._kernels._reduce_util import acc_np

    values = np.array(_values(shape, "float32", 3) / 100, NP_DTYPE[dtype])
    values[np.isinf(values)] = 7.0  # (inf rows are the general tests'; one nan stays)
    x = ft.tensor(values, device=device)
    fn = ft.log_softmax if log else ft.softmax
    with launches() as names:
        ours = fn(x, dim=dim)
    dt = x.dtype
    expected = np.empty(shape, NP_DTYPE[dtype])
    if expected.size:
        reduction_scan._softmax_kernel(expected, values, axis=dim % max(len(shape), 1)
                                       if shape else None, acc=acc_np(dt), log=log)
    assert ours.dtype is dt and ours.stride() == ft.empty(shape).stride()
    assert same_bits(ours.numpy(force=True), expected)
    op = "_log_softmax" if log else "_softmax"
    assert names == ([op] if device == "cuda" and 0 not in shape else [])
    again = reduction_scan.softmax_kernel_of(dim % max(len(shape), 1) if shape else None,
                                             acc_np(dt), log, len(shape) == 1)
    assert again is reduction_scan.softmax_kernel_of(
        dim % max(len(shape), 1) if shape else None, acc_np(dt), log, len(shape) == 1)


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64"])
def test_mm_bound_kernel_matches_the_kernel_with_params(device: str, dtype: str) -> None:
    """mm launches the product kernel bound once per accumulation dtype; the oracle is
    `_matmul_kernel` called with its `acc` param (bmm's, dot's and mv's launch)."""
    from fake_torch._kernels import linalg
    from fake_torch._kernels._reduce_util import acc_np

    if dtype == "int64":  # (small values: the float ones hold inf and nan, no int64 value)
        rng = np.random.default_rng(4)
        a, b = rng.integers(-50, 50, (8, 5)), rng.integers(-50, 50, (5, 3))
    else:
        a = np.array(_values((8, 5), "float32", 4) / 1e3, NP_DTYPE[dtype])
        b = np.array(_values((5, 3), "float32", 5) / 1e3, NP_DTYPE[dtype])
    x, y = ft.tensor(a, device=device), ft.tensor(b, device=device)
    with launches() as names:
        ours = x @ y
    expected = np.empty((8, 3), NP_DTYPE[dtype])
    linalg._matmul_kernel(expected, a, b, acc=acc_np(x.dtype))
    assert ours.dtype is x.dtype and ours.stride() == (3, 1)
    assert same_bits(ours.numpy(force=True), expected)
    assert names == (["mm"] if device == "cuda" else [])
    assert linalg.matmul_kernel_of(acc_np(x.dtype)) is linalg.matmul_kernel_of(acc_np(x.dtype))


@pytest.mark.parametrize("shape", [(64,), (0, 3)])
def test_eager_cpu_launch_skips_the_door_as_its_general_path_would(
        shape: tuple[int, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    """An eager cpu kernel runs without the door's calls: the same values as through the door
    (a spy door, which the general path takes, hears none of it), an empty output runs no
    kernel; an input check (the sanitizer's) still sees every cpu launch through the door."""
    from fake_torch._kernels import _common
    from fake_torch._simulated import _dispatch

    seen: list[str] = []
    door = _dispatch.launch
    # (nobody checking buffers: an inductor cudagraph tree, once used, checks them for good)
    monkeypatch.setattr(_dispatch, "_input_checks", [])
    monkeypatch.setattr(_dispatch, "launch", lambda op, *args, **kwargs: (
        seen.append(op), door(op, *args, **kwargs))[1])
    x = ft.tensor(np.arange(float(np.prod(shape)), dtype=np.float32).reshape(shape))
    ran: list[int] = []

    def kernel(out: np.ndarray, a: np.ndarray, *, k: float) -> None:
        ran.append(1)
        np.multiply(a, k, out=out)

    out = _common.new_tensor_exact(x._a.shape, x.dtype, x.device)
    _common.launch("mul", kernel, out, (x,), {"k": 2.0})
    assert seen == []
    assert ran == ([1] if out.numel() else [])
    assert np.array_equal(out.numpy(), x.numpy() * 2)
    registration = _dispatch.add_input_check(lambda op, outs, inputs, kind: seen.append(kind))
    try:
        _common.launch("mul", kernel, out, (x,), {"k": 3.0})
    finally:
        registration.remove()
    # (an empty output: the door returns before its checks, as before any launch)
    assert seen == (["mul", "kernel"] if out.numel() else ["mul"])
    assert np.array_equal(out.numpy(), x.numpy() * 3)


_SLICES = [slice(None), slice(2, 10), slice(-5, None), slice(None, -1), slice(1, 100),
           slice(-100, 3), slice(3, 3), slice(4, 5), slice(0, 8, 2), Ellipsis]


@pytest.mark.parametrize("device", ["cpu", "cuda", "meta"])
@pytest.mark.parametrize("seed", range(40))
def test_slices_view_matches_the_slice_by_slice_path(device: str, seed: int) -> None:
    """`x[a:b, ..., c:d]` is one numpy slicing when every slice keeps 2+ elements (else the
    general path): the same shape, strides, storage offset and storage as `_apply_slicing`,
    and no launch; a bad index still raises the general path's error."""
    from fake_torch._kernels import indexing

    rng = np.random.default_rng(seed)
    shape = tuple(int(s) for s in rng.integers(1 if seed % 4 == 0 else 6, 9, rng.integers(0, 4)))
    base = ft.arange(4 * 8 * 8 * 8, device=device).reshape(4, 8, 8, 8)
    x = base[(0,) * (4 - len(shape)) + tuple(slice(0, s) for s in shape)]
    items = tuple(_SLICES[i] for i in rng.integers(0, len(_SLICES), rng.integers(1, 5)))
    try:
        sliced, indices = indexing._apply_slicing(x, items)
    except IndexError as e:
        with pytest.raises(IndexError, match=str(e).split("(")[0]):
            x[items]
        return
    general = indexing._alias(sliced) if sliced is x else sliced
    with launches() as names:
        ours = x[items]
    assert not indices and names == []
    assert ours.shape == general.shape and ours.stride() == general.stride()
    assert ours.storage_offset() == general.storage_offset()
    assert ours.untyped_storage().data_ptr() == x.untyped_storage().data_ptr()
    if device != "meta":
        assert np.array_equal(ours.numpy(force=True), general.numpy(force=True))


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_a_product_of_inf_and_zero_is_nan_without_numpys_warning(device: str,
                                                                  dtype: str) -> None:
    """torch's matmul says nothing where inf * 0 makes a NaN; numpy's warns (its float16 loop,
    and any inf beside a zero): the product kernel runs with numpy's warnings off."""
    import warnings

    a = np.array([[np.inf, 0.0], [0.0, 2.0]], NP_DTYPE[dtype])
    x = ft.tensor(a, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = (x @ x).numpy(force=True)
    with np.errstate(all="ignore"):
        expected = np.matmul(a.astype(np.float32), a.astype(np.float32)).astype(a.dtype)
    assert same_bits(got, expected)


def _softmax_general(log: bool, x: ft.Tensor, dim: int) -> ft.Tensor:
    """softmax's general path (checks, conversion, `softmax_kernel_of`, `launch`)."""
    from fake_torch._kernels import reduction_scan

    if log:
        return reduction_scan._softmax_like("_log_softmax", "log_softmax", x, dim, None)
    return reduction_scan._softmax_like("_softmax", "softmax", x, dim, None)


def _softmax_input(case: str, dtype: str, device: str) -> tuple[ft.Tensor, int]:
    values = _values((6, 10), dtype, 7) / 100
    values[np.isinf(values)] = 7.0
    values[1, :] = -np.inf  # a row of -inf: nan, quietly
    values[2, 3] = np.inf
    base = ft.tensor(values, device=device)
    return {"1-d": (base[3], -1), "1-d dim 0": (base[4], 0), "2-d": (base, 1),
            "2-d dim -2": (base, -2), "transposed": (base.t(), 1), "strided 1-d": (base[0, ::3], 0),
            "3-d": (base.reshape(2, 3, 10), 1), "empty": (base[:0], 1),
            "empty row": (base[:, :0], -1), "one element": (base[0, :1], 0)}[case]


@pytest.mark.parametrize("device", ["cpu", "cuda", "meta"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("case", ["1-d", "1-d dim 0", "2-d", "2-d dim -2", "transposed",
                                  "strided 1-d", "3-d", "empty", "empty row", "one element"])
def test_plain_softmax_matches_the_general_path(device: str, dtype: str, log: bool,
                                                case: str) -> None:
    """softmax/log_softmax of a float32/float64 tensor with an int dim in range (no dtype=)
    take `_plain_softmax`: the general path's bits, dtype, strides, launches and simulated
    time (the host's clock and the device's busy time), by each entry (function, method)."""
    from fake_torch._kernels import reduction_scan

    x, dim = _softmax_input(case, dtype, device)
    timeline = _machine.MACHINE.timeline
    ft.cuda.synchronize()
    host, busy = timeline.host_ns, timeline.busy_ns
    with launches() as general_names:
        general = _softmax_general(log, x, dim)
    general_ns = (timeline.host_ns - host, timeline.busy_ns - busy)
    op = "_log_softmax" if log else "_softmax"
    fn = ft.log_softmax if log else ft.softmax
    for call in (lambda: fn(x, dim), lambda: fn(x, dim=dim),
                 lambda: (x.log_softmax if log else x.softmax)(dim),
                 lambda: (ft.nn.functional.log_softmax if log else
                          ft.nn.functional.softmax)(x, dim)):
        ft.cuda.synchronize()
        host, busy = timeline.host_ns, timeline.busy_ns
        with launches() as names:
            ours = call()
        assert (timeline.host_ns - host, timeline.busy_ns - busy) == general_ns
        assert names == general_names == ([op] if device == "cuda" and x.numel() else [])
        assert ours.dtype is general.dtype and ours.device == general.device
        assert ours.shape == general.shape and ours.stride() == general.stride()
        if device != "meta":
            assert same_bits(ours.numpy(force=True), general.numpy(force=True))
    assert reduction_scan._plain_softmax(op, x, dim) is not None


@pytest.mark.parametrize("case", ["float16", "bfloat16", "int64", "0-d", "dim out of range",
                                  "dim -3", "bool dim", "dtype=", "not a tensor"])
def test_what_plain_softmax_leaves_to_the_op(case: str) -> None:
    """Calls `_plain_softmax` refuses (None) go the general way, with its conversions, its
    errors and their texts (torch's CPU ones, checked here against real torch)."""
    from fake_torch._kernels import reduction_scan

    torch = pytest.importorskip("torch")
    a = (np.random.default_rng(2).standard_normal((3, 4)) * 3).astype(np.float32)
    x: Any = ft.tensor(a)
    theirs: Any = torch.from_numpy(a.copy())
    dim: Any = -1
    kwargs: dict[str, Any] = {}
    if case in ("float16", "bfloat16", "int64"):
        x, theirs = x.to(getattr(ft, case)), theirs.to(getattr(torch, case))
    elif case == "0-d":
        x, theirs, dim = x[0, 0], theirs[0, 0], 0
    elif case == "dim out of range":
        dim = 2
    elif case == "dim -3":
        dim = -3
    elif case == "bool dim":
        dim = True
    elif case == "dtype=":
        kwargs = {"dtype": torch.float64}
    elif case == "not a tensor":
        x, theirs = a.tolist(), a.tolist()
    if case != "dtype=":
        assert reduction_scan._plain_softmax("_softmax", x, dim) is None
    ft_kwargs = {k: getattr(ft, str(v).split(".")[1]) for k, v in kwargs.items()}
    if case == "bool dim":  # (torch refuses a bool dim, fake_torch reads it as 1, as before
        # the fast path: its general path's behaviour is what must not change)
        assert same_bits(ft.softmax(x, dim).numpy(),
                         reduction_scan._softmax_like("_softmax", "softmax", x, 1, None).numpy())
        return
    if case == "not a tensor":  # (torch raises TypeError; fake_torch's general path an
        # AttributeError, as before the fast path, which leaves it alone)
        with pytest.raises(AttributeError, match="'list' object has no attribute '_a'"):
            ft.softmax(x, dim)
        return
    try:
        expected = torch.softmax(theirs, dim, **kwargs)
    except Exception as e:  # (whatever torch raises, we raise alike)
        with pytest.raises(type(e)) as got:
            ft.softmax(x, dim, **ft_kwargs)
        assert str(got.value).split("\n")[0] == str(e).split("\n")[0]
        return
    ours = ft.softmax(x, dim, **ft_kwargs)
    assert str(ours.dtype) == str(expected.dtype)
    np.testing.assert_allclose(np.asarray(ours.numpy(force=True), np.float64),
                               expected.double().numpy(), rtol=2e-3 if "16" in case else 1e-6,
                               atol=1e-3 if "16" in case else 1e-7)
    general = reduction_scan._softmax_like("_softmax", "softmax", x, dim, ft_kwargs.get("dtype"))
    assert same_bits(ours.numpy(), general.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("log", [False, True])
@pytest.mark.parametrize("shape, dim", [((64,), -1), ((1000,), 0), ((5, 64), -1),
                                        ((64, 5), 0)])
def test_plain_softmax_is_close_to_real_torch(dtype: str, log: bool, shape: tuple[int, ...],
                                              dim: int) -> None:
    """The fast path's values against real torch's CPU softmax (its own vectorised exp:
    close, not bit for bit)."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(5).standard_normal(shape) * 10
    theirs, ours = (torch.from_numpy(a).to(getattr(torch, dtype)),
                    ft.tensor(a.astype(dtype), device="cuda"))
    fn = "log_softmax" if log else "softmax"
    tol = 1e-5 if dtype == "float32" else 1e-12
    got = getattr(ft, fn)(ours, dim).numpy(force=True)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_allclose(got, getattr(torch, fn)(theirs, dim).numpy(), rtol=tol,
                               atol=tol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_flat_softmax_kernel_matches_the_kernel_with_params(dtype: str) -> None:
    """The 1-d softmax kernel (reductions into a per-thread 0-dim array) against
    `_softmax_kernel` (keepdims reductions) bit for bit, NaN payloads included, over lengths
    on both sides of numpy's pairwise-sum blocks, rows with nan, +-inf, all -inf, -0.0."""
    from fake_torch._kernels import reduction_scan
    from fake_torch._kernels._reduce_util import acc_np

    acc = acc_np(getattr(ft, dtype))
    kernel = reduction_scan.softmax_kernel_of(0, acc, False, True)
    rng = np.random.default_rng(9)
    for n in (1, 2, 7, 8, 9, 63, 64, 65, 127, 128, 129, 255, 256, 1000, 4097):
        for kind in ("plain", "nan", "inf", "-inf", "all -inf", "-0.0", "huge"):
            a = (rng.standard_normal(n) * (1e4 if kind == "huge" else 3)).astype(dtype)
            if kind in ("nan", "inf", "-inf"):
                a[rng.integers(n)] = {"nan": np.nan, "inf": np.inf, "-inf": -np.inf}[kind]
            elif kind == "all -inf":
                a[:] = -np.inf
            elif kind == "-0.0":
                a[:] = -0.0
            ours, general = np.empty(n, dtype), np.empty(n, dtype)
            kernel(ours, a)
            reduction_scan._softmax_kernel(general, a, axis=0, acc=acc, log=False)
            assert ours.view(np.uint8).tobytes() == general.view(np.uint8).tobytes(), (n, kind)


def test_flat_softmax_kernel_on_threads_at_once() -> None:
    """Each thread reduces into its own 0-dim array: cpu softmaxes on 4 threads at once give
    each its own values, bit for bit those of one thread."""
    import threading

    rows = [np.random.default_rng(i).standard_normal(257).astype(np.float32) * (i + 1)
            for i in range(4)]
    expected = [ft.softmax(ft.tensor(r), 0).numpy() for r in rows]
    failures: list[int] = []
    start = threading.Barrier(4)

    def work(i: int) -> None:
        x = ft.tensor(rows[i])
        start.wait()
        for _ in range(300):
            if not same_bits(ft.softmax(x, 0).numpy(), expected[i]):
                failures.append(i)
                return

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


@pytest.mark.parametrize("log", [False, True])
def test_plain_softmax_in_a_cuda_graph_and_compiled(log: bool) -> None:
    """Captured, the fast path records what the general path records, and its replay
    computes from the input's new values as the general path's replay does; compiled
    (torch.compile), the same values as eager."""
    fn = ft.log_softmax if log else ft.softmax
    a = np.random.default_rng(3).standard_normal((4, 64)).astype(np.float32)
    recorded, replayed = [], []
    for path in (lambda t: fn(t, -1), lambda t: _softmax_general(log, t, -1)):
        x = ft.tensor(a, device="cuda")
        path(x)  # (warm up outside the capture, as torch asks)
        graph = ft.cuda.CUDAGraph()
        with launches() as names:
            with ft.cuda.graph(graph):
                y = path(x)
        recorded.append(names)
        x.copy_(ft.tensor(a[::-1].copy(), device="cuda"))
        with launches() as names:
            graph.replay()
        assert names == ["cudaGraphLaunch"]
        replayed.append(y.numpy(force=True))
        assert same_bits(replayed[-1], fn(x, -1).numpy(force=True))
    assert recorded[0] == recorded[1]
    assert ("_log_softmax" if log else "_softmax") in recorded[0]
    assert same_bits(replayed[0], replayed[1])
    compiled = ft.compile(lambda t: fn(t, -1) * 2)
    assert same_bits(compiled(x).numpy(force=True), (fn(x, -1) * 2).numpy(force=True))


@pytest.mark.parametrize("device", ["cpu", "cuda", "meta"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", ["1-d", "2-d", "0-d", "empty", "transposed", "column",
                                  "row", "strided 1-d"])
def test_plain_silu_matches_the_general_path(device: str, dtype: str, case: str) -> None:
    """F.silu of a float32/float64 tensor into a fresh output (row-major when 2-d or more)
    takes `_plain_silu`: `pointwise`'s bits, dtype, strides, launches and simulated time."""
    from fake_torch._kernels import pointwise_math

    values = _values((6, 10), dtype, 8) / 10
    base = ft.tensor(values, device=device)
    x = {"1-d": base[2], "2-d": base, "0-d": base[1, 1], "empty": base[:0],
         "transposed": base.t(), "column": base[:, 2:3], "row": base[1:2],
         "strided 1-d": base[0, ::3]}[case]
    timeline = _machine.MACHINE.timeline
    ft.cuda.synchronize()
    host, busy = timeline.host_ns, timeline.busy_ns
    with launches() as general_names:
        general = _elementwise.pointwise("silu", _silu, [x], promo=x.dtype, result=x.dtype)
    general_ns = (timeline.host_ns - host, timeline.busy_ns - busy)
    for call in (lambda: ft.nn.functional.silu(x), lambda: ft.nn.SiLU()(x)):
        ft.cuda.synchronize()
        host, busy = timeline.host_ns, timeline.busy_ns
        with launches() as names:
            ours = call()
        assert (timeline.host_ns - host, timeline.busy_ns - busy) == general_ns
        assert names == general_names == (["silu"] if device == "cuda" and x.numel() else [])
        assert ours.dtype is general.dtype and ours.device == general.device
        assert ours.shape == general.shape and ours.stride() == general.stride()
        if device != "meta":
            assert same_bits(ours.numpy(force=True), general.numpy(force=True))
    assert pointwise_math._PLAIN_SILU == {ft.float32, ft.float64}


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_silu_into_its_output_matches_the_expression_at_special_values(dtype: str) -> None:
    """`_silu_into` (adding a 0-dim 1 of the output's dtype) against `_silu`'s expression
    (numpy's Python 1) bit for bit at nan, +-inf, +-0.0, overflow and tiny values."""
    from fake_torch._kernels.pointwise_math import _silu_into

    special = [np.nan, np.inf, -np.inf, 0.0, -0.0, -1000.0, 1000.0, 1e-30, -1e-30, 88.7, -88.8]
    a = np.concatenate([np.array(special), np.random.default_rng(6).standard_normal(50) * 30])
    x = a.astype(dtype)
    if x.dtype.kind == "c":  # (the imaginary parts: the same values, rolled)
        x.imag = np.roll(a, 3)
    out = np.empty_like(x)
    _silu_into(out, x)
    with np.errstate(all="ignore"):
        expected = _silu(x)
    assert out.dtype == expected.dtype
    parts = out.real.dtype  # (complex: its real and imaginary parts, each bit for bit)
    assert same_bits(out.view(parts), expected.view(parts))


@pytest.mark.parametrize("case", ["float16", "int64", "inplace", "not a tensor"])
def test_what_plain_silu_leaves_to_the_op(case: str) -> None:
    """In-place calls, other dtypes and non-tensors go the general way: its texts (against
    real torch's) and its values."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(4).standard_normal((3, 4)).astype(np.float32)
    x: Any = ft.tensor(a)
    theirs: Any = torch.from_numpy(a.copy())
    if case in ("float16", "int64"):
        x, theirs = x.to(getattr(ft, case)), theirs.to(getattr(torch, case))
    elif case == "not a tensor":
        x, theirs = a.tolist(), a.tolist()
    kwargs = {"inplace": True} if case == "inplace" else {}
    try:
        expected = torch.nn.functional.silu(theirs, **kwargs)
    except Exception as e:  # (whatever torch raises, we raise alike)
        with pytest.raises(type(e)) as got:
            ft.nn.functional.silu(x, **kwargs)
        assert str(got.value).split("\n")[0] == str(e).split("\n")[0]
        return
    ours = ft.nn.functional.silu(x, **kwargs)
    assert (ours is x) == (case == "inplace") and str(ours.dtype) == str(expected.dtype)
    np.testing.assert_allclose(np.asarray(ours.numpy(), np.float64), expected.double().numpy(),
                               rtol=2e-3 if case == "float16" else 1e-6, atol=1e-3)
