"""make_fx over the op definitions: for every function of torch and torch.nn.functional that
real torch's make_fx traces on a sample call (tests/meta_samples.py: the op's own sample, else
the first generic call torch accepts), fake_torch's graph has the same aten targets in order.
DIFFERS lists the known differences, each with its reason; each is asserted still to differ,
so a fix shows up here."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from meta_samples import GENERIC, SAMPLES, Pool

import fake_torch as ft
from fake_torch import _opdef

_NAMESPACES = {"torch": "", "torch.nn.functional": "nn.functional", "torch.linalg": "linalg",
               "Tensor": "Tensor"}


def _key(d: _opdef.OpDef) -> str:
    """The op's entry point: its function where it has one, else its Tensor method."""
    return next((k for k in d.entries if not k.startswith("Tensor.")), next(iter(d.entries)))


# not traced here: random ops (their graphs are torch's, their values not comparable) and ops
# that read values on the host or make data-dependent sizes (make_fx refuses them)
_SKIPPED = {_key(d) for d in _opdef.definitions()
            if d.random or d.kind in (_opdef.HOST, _opdef.DATA_DEPENDENT)}
_DEFS = sorted({_key(d) for d in _opdef.definitions()} - _SKIPPED)

_DECOMPOSED = "torch decomposes it (CompositeImplicit) into ops that fake_torch's " \
              "implementation calls without the API door; recorded as one op of its name"
DIFFERS: dict[str, str] = {
    "torch.prelu": "torch views a 1-element weight before _prelu_kernel",
    "torch.nn.functional.prelu": "torch views a 1-element weight before _prelu_kernel",
    "torch.isclose": _DECOMPOSED,
    "torch.quantile": _DECOMPOSED,
    "torch.cosine_similarity": _DECOMPOSED,
    "torch.pairwise_distance": _DECOMPOSED,
    "torch.nn.functional.instance_norm": _DECOMPOSED,
    "torch.nn.functional.adaptive_avg_pool1d": "_adaptive_avg_pool2d runs without the API door",
    "torch.pixel_unshuffle": "torch has a kernel; fake_torch's is views + a copy",
    "torch.where": "where(cond) is nonzero + unbind in torch; a data-dependent op here",
    "torch.einsum": "the sublist form of einsum is not emulated",
    "torch.nn.functional.group_norm": "torch records native_group_norm's 3 items",
    "torch._use_cudnn_rnn_flatten_weight": "a query of no arguments: the sample is refused",
    "torch.selu": "torch: elu with selu's constants (aten.elu's arguments are not F.elu's)",
    "torch.selu_": "torch: elu_ with selu's constants",
    "torch.nn.functional.selu": "torch: elu with selu's constants",
    "torch.nn.functional.rrelu": "torch: empty_like + rrelu_with_noise",
    "torch.nn.functional.scaled_dot_product_attention":
        "a 2-d query takes torch's math path (decomposed), not the flash kernel",
    "torch.nn.functional.interpolate": "torch records upsample_nearest2d",
    "torch.nn.functional.upsample": "torch records upsample_nearest2d",
    "torch.nn.functional.upsample_nearest": "torch records upsample_nearest2d",
    "torch.nn.functional.upsample_bilinear": "torch records upsample_bilinear2d",
    "Tensor.chalf": "complex32 tensors are not emulated (numpy has no complex of halves)",
    "Tensor.to_sparse": "sparse tensors are not emulated",
    "Tensor.is_pinned": "a query answered without the dispatcher (torch records is_pinned)",
    "torch.nn.functional.cross_entropy": "its mean divides by a Python number: div.Scalar in "
                                         "torch's C++, div.Tensor through the door here",
}


def _fn(L: Any, key: str) -> Callable[..., Any] | None:
    space, _, name = key.rpartition(".")
    module = L
    for part in _NAMESPACES[space].split(".") if _NAMESPACES[space] else ():
        module = getattr(module, part)
    fn = getattr(module, name, None)
    if isinstance(fn, property):  # Tensor.T, .mT, .real: read off the tensor
        return fn.fget  # type: ignore[no-any-return]
    return fn


def _trace(make_fx: Any, fn: Callable[..., Any], call: Any, tensor: type) -> list[str]:
    args, kwargs = call
    positions = [i for i, a in enumerate(args) if isinstance(a, tensor)]

    def f(*ts: Any) -> Any:
        full = list(args)
        for i, t in zip(positions, ts, strict=True):
            full[i] = t
        return fn(*full, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        gm = make_fx(f)(*(args[i] for i in positions))
    return [str(n.target) for n in gm.graph.nodes if n.op == "call_function"]


def _runs(fn: Callable[..., Any], call: Any) -> bool:
    """Whether torch runs the call eagerly: a quick test before make_fx's trace, which costs
    ~5 ms to fail (on every sample call and op here, make_fx traced none that eager refused)."""
    args, kwargs = call
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(*args, **kwargs)
    except Exception:
        return False
    return True


@pytest.mark.parametrize("key", _DEFS)
def test_op_targets_match_torch(key: str) -> None:
    torch = pytest.importorskip("torch")
    from torch.fx.experimental.proxy_tensor import make_fx as torch_make_fx

    from fake_torch.fx.experimental.proxy_tensor import make_fx

    theirs_fn, ours_fn = _fn(torch, key), _fn(ft, key)
    if theirs_fn is None or ours_fn is None:
        pytest.skip(f"{key} is not a function of torch")
    name = key.rpartition(".")[2]
    samples = [SAMPLES[name]] if callable(SAMPLES.get(name)) else GENERIC
    for sample in samples:
        if not _runs(theirs_fn, sample(Pool(torch, "cpu"))):
            continue  # (what torch refuses eagerly its make_fx refuses: ~10 times per op)
        try:
            theirs = _trace(torch_make_fx, theirs_fn, sample(Pool(torch, "cpu")), torch.Tensor)
        except Exception:
            continue
        try:
            ours: Any = _trace(make_fx, ours_fn, sample(Pool(ft, "cpu")), ft.Tensor)
        except (NotImplementedError, TypeError) as e:
            ours = f"{type(e).__name__}: {e}"
        if key in DIFFERS:
            assert ours != theirs, f"{key} now matches torch: take it off DIFFERS"
        else:
            assert ours == theirs
        return
    pytest.skip(f"torch's make_fx traces no sample call of {key}")


def test_differs_names_definitions() -> None:
    assert set(DIFFERS) <= set(_DEFS)


def test_every_op_definition_with_an_aten_op_is_traced() -> None:
    """Each op definition that launches an aten op, or has one of its own name, is one of the
    ops traced here (or skipped for the reason _SKIPPED gives)."""
    with_aten = {_key(d) for d in _opdef.definitions()
                 if d.aten or _opdef.aten_callable(d.name) is not None}
    assert with_aten and with_aten <= set(_DEFS) | _SKIPPED
    assert {k.partition(".")[0] for k in _DEFS} >= {"torch", "Tensor"}
