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
    """An op of a kind with no kind rule and no rule of its own (made here, not registered):
    run_rule names it; and so does every defined op still without one."""
    made = _opdef.OpDef(name="no_such_op", kind=_opdef.HOST, impl=lambda x: x,
                        namespace="torch", method=False)
    assert rules.rule_for(made) is None
    with pytest.raises(NotImplementedError, match=r"^torch\.no_such_op: fake_torch has no "
                                                  "output rule"):
        rules.run_rule(made, (), {})
    for d in [d for _, d in CASES if rules.rule_for(d) is None][:3]:
        with pytest.raises(NotImplementedError, match=rules.qualified_name(d)):
            rules.run_rule(d, (), {})


# The rules written so far: the counts may only grow (raise them when rules are added)
RULES_AT_LEAST = 262  # op definitions with a rule, their own or their kind's
OWN_RULES_AT_LEAST = 238  # of those, with a rule of their own


def test_the_number_of_ops_with_rules_does_not_fall() -> None:
    defs = _opdef.definitions()
    with_rule = [d for d in defs if rules.rule_for(d) is not None]
    own = [d for d in with_rule if rules.qualified_name(d) in rules.registered_names()]
    assert len(with_rule) >= RULES_AT_LEAST
    assert len(own) >= OWN_RULES_AT_LEAST
    for kind in (_opdef.POINTWISE, _opdef.REDUCTION, _opdef.RANDOM):
        missing = [rules.qualified_name(d) for d in defs
                   if d.kind == kind and rules.rule_for(d) is None]
        assert not missing, f"{kind} ops without an output rule: {missing}"
    for kind in (_opdef.REDUCTION, _opdef.RANDOM):  # no kind rule: each op its own
        assert all(rules.qualified_name(d) in rules.registered_names()
                   for d in defs if d.kind == kind)


# the calls the generic test cannot make on the cpu (NO_SAMPLE, REFUSES): on a cuda tensor
def _cuda_calls() -> list[tuple[str, Any]]:
    def pool() -> Pool:
        return Pool(fake_torch, "cpu")

    return [
        ("Tensor.cuda", lambda: ((pool().At,), {})),
        ("Tensor.cuda", lambda: ((pool().At.cuda(),), {})),  # already there: itself
        ("Tensor.cuda", lambda: ((pool().X4,), {"memory_format": fake_torch.channels_last})),
        ("Tensor.cpu", lambda: ((pool().At.cuda(),), {})),
        ("Tensor.cpu", lambda: ((pool().At,), {})),  # already there: itself
        ("torch._cudnn_init_dropout_state", lambda: ((0.5, True, 7), {"device": "cuda"})),
        ("torch._cudnn_init_dropout_state", lambda: ((0.5, True, 7),
                                                     {"device": "cuda",
                                                      "dtype": fake_torch.uint8})),
    ]


@pytest.mark.parametrize("name,call", _cuda_calls())
def test_a_rule_describes_its_kernel_on_cuda(name: str, call: Any) -> None:
    opdef = dict(CASES)[name]
    _, fn = _entry(opdef)
    kernel_call = call()
    expected = describe(_call(fn, kernel_call, "cuda"), _tensors(kernel_call))
    args, kwargs = call()
    with fake_torch.LaunchCounter.expect(0):
        got = _described(rules.run_rule(opdef, args, kwargs), _tensors((args, kwargs)))
    assert got == expected
