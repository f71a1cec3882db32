"""Every op definition on the meta device: the same call on cpu tensors and on meta tensors of
the same shapes, dtypes and strides gives outputs of the same shape, dtype, strides and storage
offset, aliasing the same input for a view; on meta nothing launches and every output is a meta
tensor. What needs the values refuses (tests/meta_samples.py says which, and why). A subset is
held to real torch's own meta tensors too.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from meta_samples import GENERIC, NO_SAMPLE, REFUSES, SAMPLES, Pool, Sample

import fake_torch
from fake_torch import _opdef

Desc = tuple[Any, ...]


def _entry(opdef: _opdef.OpDef) -> tuple[str, Callable[..., Any]]:
    """The op's name and entry: its torch function where it has one, else its method."""
    for key, entry in opdef.entries.items():
        if not key.startswith("Tensor."):
            return key, entry
    key = next(iter(opdef.entries))
    return key, opdef.entries[key]


def _call(fn: Callable[..., Any], call: Any, dev: str) -> Any:
    args, kwargs = call
    if _is_factory(fn, call):
        kwargs = {**kwargs, "device": dev}  # made on the device under test
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def _is_factory(fn: Callable[..., Any], call: Any) -> bool:
    """A call with no tensor of a function that takes a device."""
    return not _tensors(call) and "device" in inspect.signature(fn).parameters


def _sample(name: str, fn: Callable[..., Any]) -> Sample | None:
    """The op's sample call: its own, else the first generic call that runs on the cpu."""
    if name in SAMPLES:
        return SAMPLES[name]
    for sample in GENERIC:
        try:
            _call(fn, sample(Pool(fake_torch, "cpu")), "cpu")
        except Exception:
            continue
        return sample
    return None


def _tensors(call: Any) -> list[Any]:
    args, kwargs = call
    found = []
    for a in [*args, *kwargs.values()]:
        items = a if isinstance(a, (list, tuple)) else (a,)
        found += [x for x in items if isinstance(x, fake_torch.Tensor)]
    return found


def describe(out: Any, inputs: list[Any], L: Any = fake_torch) -> Desc:
    """What the meta device must reproduce of an output: per tensor its shape, dtype, strides,
    storage offset, device type and the input it aliases (by storage), else the value."""
    if isinstance(out, L.Tensor):
        ptr = out.untyped_storage().data_ptr()
        aliased = [i for i, t in enumerate(inputs) if t.untyped_storage().data_ptr() == ptr
                   and t.device.type != "meta"]
        if out.device.type == "meta":  # no addresses: numpy's view of the same mapping
            aliased = [i for i, t in enumerate(inputs) if _same_storage(out, t)]
        return ("tensor", tuple(out.shape), str(out.dtype), tuple(out.stride()),
                out.storage_offset(), tuple(aliased))
    if isinstance(out, (tuple, list)):
        return (type(out).__name__, tuple(describe(o, inputs, L) for o in out))
    return ("value", out)


def _same_storage(a: Any, b: Any) -> bool:
    from fake_torch._tensor import base_array

    return base_array(a._a) is base_array(b._a)


def _on(desc: Desc) -> Iterator[Desc]:
    if desc[0] == "tensor":
        yield desc
    elif desc[0] != "value":
        for d in desc[1]:
            yield from _on(d)


# host reads that print a meta tensor's description instead of refusing (as torch's do)
_PRINTS = frozenset({"Tensor.__repr__", "Tensor.__format__"})


def _cases() -> list[tuple[str, _opdef.OpDef]]:
    return [(_entry(d)[0], d) for d in _opdef.definitions()]


CASES = _cases()


@pytest.mark.parametrize("name,opdef", CASES, ids=[n for n, _ in CASES])
def test_an_op_on_meta_lays_out_its_outputs_as_on_the_cpu(name: str,
                                                           opdef: _opdef.OpDef) -> None:
    _, fn = _entry(opdef)
    if name in NO_SAMPLE:
        pytest.skip(NO_SAMPLE[name])
    sample = _sample(name, fn)
    assert sample is not None, f"{name}: no generic call runs it; give it a sample"
    cpu_call = sample(Pool(fake_torch, "cpu"))
    expected = describe(_call(fn, cpu_call, "cpu"), _tensors(cpu_call))
    meta_call = sample(Pool(fake_torch, "meta"))
    assert _tensors(meta_call) or _is_factory(fn, meta_call), f"{name}: its sample has no tensor"
    if name in REFUSES:
        with pytest.raises(REFUSES[name][0]), fake_torch.LaunchCounter.expect(0):
            _call(fn, meta_call, "meta")
        return
    with fake_torch.LaunchCounter.expect(0):
        out = _call(fn, meta_call, "meta")
    if name in _PRINTS:  # prints no data
        assert out == "tensor(..., device='meta', size=(2, 3))"
        return
    got = describe(out, _tensors(meta_call))
    assert got == expected
    assert all(isinstance(t, fake_torch.Tensor) and t.is_meta
               for t in _flat_tensors(out)), "every output is a meta tensor"


def _flat_tensors(out: Any) -> list[Any]:
    if isinstance(out, fake_torch.Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat_tensors(o)]
    return []


def test_every_op_that_reads_values_on_the_host_refuses_on_meta() -> None:
    """The kinds say it: a host op or a data-dependent one has no meta rule."""
    reading = {name for name, d in CASES if d.kind in (_opdef.HOST, _opdef.DATA_DEPENDENT)}
    assert reading - _PRINTS <= set(REFUSES)


@pytest.mark.parametrize("name,opdef", CASES, ids=[n for n, _ in CASES])
def test_an_op_on_meta_lays_out_its_outputs_as_torchs_meta_does(name: str,
                                                                 opdef: _opdef.OpDef) -> None:
    """The same call in real torch, on its meta tensors: the same shapes, dtypes, strides and
    offsets (where torch has the op under that name with that signature)."""
    torch = pytest.importorskip("torch")
    if name in NO_SAMPLE or name in REFUSES or name in _PRINTS:
        pytest.skip("no meta output to compare")
    space, _, attr = name.rpartition(".")
    owner = {"torch": torch, "Tensor": torch.Tensor, "torch.nn.functional": torch.nn.functional,
             "torch.linalg": torch.linalg}[space]
    theirs_fn = getattr(owner, attr, None)
    if theirs_fn is None:
        pytest.skip(f"torch has no {name}")
    sample = _sample(name, _entry(opdef)[1])
    assert sample is not None
    call = sample(Pool(torch, "meta"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            args, kwargs = call
            if name in _FACTORIES:
                kwargs = {**kwargs, "device": "meta"}
            theirs = theirs_fn(*args, **kwargs)
    except Exception as e:  # torch's meta refuses it, or takes other arguments
        pytest.skip(f"torch's meta: {type(e).__name__}")
    ours = _call(_entry(opdef)[1], sample(Pool(fake_torch, "meta")), "meta")
    mine = [d[:5] for d in _on(describe(ours, []))]
    torchs = [d[:5] for d in _on(_torch_describe(theirs, torch))]
    if name in DIFFERS_FROM_TORCH:
        assert mine != torchs, f"{name} now lays out as torch: drop its DIFFERS_FROM_TORCH entry"
    else:
        assert mine == torchs


# where fake_torch's layout differs from torch's on every device (the cpu too): not the meta
# device's doing, so the cpu-vs-meta test passes; each entry must still differ
DIFFERS_FROM_TORCH: dict[str, str] = {}

_FACTORIES = {"torch.empty", "torch.zeros", "torch.ones", "torch.full", "torch.arange",
              "torch.rand", "torch.randn", "torch.eye", "torch.linspace", "torch.tensor",
              "torch.randint", "torch.randperm", "torch.scalar_tensor", "torch.empty_strided",
              "torch.logspace", "torch.tril_indices", "torch.triu_indices",
              "torch.hann_window", "torch.hamming_window", "torch.blackman_window",
              "torch.bartlett_window", "torch.kaiser_window", "torch.range",
              "torch._cudnn_init_dropout_state"}


def _torch_describe(out: Any, torch: Any) -> Desc:
    if isinstance(out, torch.Tensor):
        assert out.device.type == "meta"
        return ("tensor", tuple(out.shape), str(out.dtype), tuple(out.stride()),
                out.storage_offset(), ())
    if isinstance(out, (tuple, list)):
        return (type(out).__name__, tuple(_torch_describe(o, torch) for o in out))
    return ("value", out)
