"""Every op definition's output rule (fake_torch/_meta_registrations.py) against its kernel:
the same sample call (tests/meta_samples.py) run on cpu tensors, and described by the rule from
the same arguments, gives outputs of the same shape, dtype, strides and storage offset, a view
aliasing the same input. The kernel is the oracle; the rule never runs one (nothing launches).
"""

from __future__ import annotations

from typing import Any

import pytest
from meta_samples import NO_SAMPLE, REFUSES, Pool
from test_meta_ops import CASES, _call, _entry, _is_factory, _sample, _tensors, describe

import fake_torch
from fake_torch import _meta_registrations as rules
from fake_torch import _opdef

# ops whose outputs depend on the values, or that return host values: no rule describes them
NEEDS_VALUES = frozenset(name for name, d in CASES
                         if d.kind in (_opdef.HOST, _opdef.DATA_DEPENDENT)) | frozenset(REFUSES)


def _described(out: rules.Output, inputs: list[Any]) -> Any:
    """A rule's output in test_meta_ops.describe's terms: a view of input i aliases every
    input over i's storage (`x.add_(x)` writes both of its arguments)."""
    if isinstance(out, rules.TensorMeta):
        alias: tuple[int, ...] = ()
        if out.alias is not None:
            ptr = inputs[out.alias].untyped_storage().data_ptr()
            alias = tuple(i for i, t in enumerate(inputs)
                          if t.untyped_storage().data_ptr() == ptr)
        return ("tensor", tuple(out.shape), str(out.dtype), tuple(out.stride),
                out.storage_offset, alias)
    if isinstance(out, (tuple, list)):
        return (type(out).__name__, tuple(_described(o, inputs) for o in out))
    return ("value", out)


@pytest.mark.parametrize("name,opdef", CASES, ids=[n for n, _ in CASES])
def test_an_ops_rule_describes_what_its_kernel_returns(name: str, opdef: _opdef.OpDef) -> None:
    if name in NO_SAMPLE:
        pytest.skip(NO_SAMPLE[name])
    if name in NEEDS_VALUES:
        pytest.skip("its output depends on the values: no rule")
    if rules.rule_for(opdef) is None:
        pytest.skip("no output rule yet")
    _, fn = _entry(opdef)
    sample = _sample(name, fn)
    assert sample is not None, f"{name}: no generic call runs it; give it a sample"
    kernel_call = sample(Pool(fake_torch, "cpu"))
    expected = describe(_call(fn, kernel_call, "cpu"), _tensors(kernel_call))
    rule_call = sample(Pool(fake_torch, "cpu"))  # fresh inputs: an in-place kernel ran above
    args, kwargs = rule_call
    if _is_factory(fn, rule_call):  # as _call made it: on the cpu
        kwargs = {**kwargs, "device": "cpu"}
    with fake_torch.LaunchCounter.expect(0):
        got = _described(rules.run_rule(opdef, args, kwargs), _tensors(rule_call))
    assert got == expected


def test_an_op_without_a_rule_refuses_by_name() -> None:
    missing = [d for _, d in CASES if rules.rule_for(d) is None]
    if not missing:
        pytest.skip("every op has a rule")
    with pytest.raises(NotImplementedError, match=rules.qualified_name(missing[0])):
        rules.run_rule(missing[0], (), {})
