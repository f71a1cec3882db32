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

# a rule runs its kernel's argument checks, warnings included, and the samples call deprecated
# forms on purpose (softmax without dim, dropout2d of a 2-D input, a loss over broadcast sizes)
pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

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


# calls the samples miss, each a branch of a rule: dtype promotion (int -> float, complex ->
# real, bool results), layouts (a permuted 4-d input, an expanded one, broadcasting), `out=`,
# in place, keepdim and dtype arguments, the modes of pad, aliasing (`to` of nothing new)
def _more(p: Pool) -> dict[str, Any]:
    L = p.L
    return {"B4": p.X4.permute(0, 2, 3, 1), "H": p.A.half(), "E": p.V.reshape(3, 1).expand(3, 4),
            "Ib": L.tensor([1, 2, 3]), "P": p.P, "M3": L.tensor([True, False, True])}


_EXTRA: list[tuple[str, Any]] = [
    ("torch.exp", lambda p, m: ((p.I,), {})),
    ("torch.sqrt", lambda p, m: ((m["B4"],), {})),
    ("torch.abs", lambda p, m: ((p.Z,), {})),
    ("torch.angle", lambda p, m: ((p.I,), {})),
    ("torch.add", lambda p, m: ((p.I, 2.5), {})),
    ("torch.add", lambda p, m: ((m["H"], p.s0), {})),
    ("torch.add", lambda p, m: ((p.A, p.B), {"out": p.L.empty(2, 3)})),
    ("torch.mul", lambda p, m: ((p.At, m["Ib"]), {})),
    ("torch.div", lambda p, m: ((p.I, 2), {})),
    ("torch.div", lambda p, m: ((p.I, 2), {"rounding_mode": "floor"})),
    ("torch.eq", lambda p, m: ((p.At, p.V), {})),
    ("torch.lt", lambda p, m: ((p.I, 2.5), {})),
    ("torch.clamp", lambda p, m: ((p.I,), {"min": 0.5})),
    ("torch.where", lambda p, m: ((m["M3"], p.At, 0.0), {})),
    ("torch.where", lambda p, m: ((m["M3"], p.I, 1.5), {})),
    ("torch.square", lambda p, m: ((p.M,), {})),
    ("torch.pow", lambda p, m: ((2, p.A), {})),
    ("Tensor.add_", lambda p, m: ((p.At, p.V), {})),
    ("Tensor.to", lambda p, m: ((m["B4"], p.L.float16), {})),
    ("Tensor.to", lambda p, m: ((m["B4"],), {"memory_format": p.L.contiguous_format})),
    ("Tensor.to", lambda p, m: ((m["E"], p.L.float64), {})),
    ("Tensor.float", lambda p, m: ((p.A,), {})),
    ("Tensor.type", lambda p, m: ((p.A, "torch.LongTensor"), {})),
    ("torch.clone", lambda p, m: ((m["E"],), {})),
    ("Tensor.contiguous", lambda p, m: ((p.X4,), {"memory_format": p.L.channels_last})),
    ("torch.sum", lambda p, m: ((p.I,), {"dim": 1, "keepdim": True})),
    ("torch.mean", lambda p, m: ((m["B4"], (1, 2)), {})),
    ("torch.max", lambda p, m: ((p.A, 1), {})),
    ("torch.max", lambda p, m: ((p.A, p.B), {})),
    ("torch.argmax", lambda p, m: ((p.A,), {"keepdim": True})),
    ("torch.aminmax", lambda p, m: ((p.A,), {"dim": 0, "keepdim": True})),
    ("torch.var", lambda p, m: ((p.Z, 1), {})),
    ("torch.norm", lambda p, m: ((p.Z,), {})),
    ("torch.linalg.vector_norm", lambda p, m: ((p.A, 1, (0,)), {"dtype": p.L.float64})),
    ("torch.softmax", lambda p, m: ((m["H"], 0), {"dtype": p.L.float32})),
    ("torch.cat", lambda p, m: (((p.A, p.I), 0), {})),
    ("torch.stack", lambda p, m: (((p.A, p.At), 2), {})),
    ("torch.zeros_like", lambda p, m: ((m["B4"],), {"dtype": p.L.int32})),
    ("torch.full", lambda p, m: (((2,), True), {})),
    ("torch.arange", lambda p, m: ((0, 5, 0.5), {})),
    ("torch.as_tensor", lambda p, m: ((p.A,), {"dtype": p.L.float64})),
    ("torch.as_tensor", lambda p, m: ((p.A,), {})),
    ("torch.randn_like", lambda p, m: ((m["B4"],), {})),
    ("torch.normal", lambda p, m: ((p.A, m["P"]), {})),
    ("torch.randint", lambda p, m: ((3, 10, (2, 2)), {})),
    ("torch.nn.functional.pad", lambda p, m: ((p.A, (1, 2), "reflect"), {})),
    ("torch.nn.functional.pad", lambda p, m: ((p.X3, (1, 1), "circular"), {})),
    ("torch.nn.functional.pad", lambda p, m: ((p.A, (-1, 2)), {})),
    ("torch.nn.functional.leaky_relu", lambda p, m: ((p.At, 0.1, True), {})),
    ("torch.nn.functional.glu", lambda p, m: ((m["B4"], 1), {})),
    ("torch.nn.functional.rms_norm", lambda p, m: ((m["B4"], (2,)), {})),
    ("torch.nn.functional.rms_norm", lambda p, m: ((m["H"], (3,), p.V), {})),
    ("torch.nn.functional.dropout", lambda p, m: ((p.A,), {"training": False})),
    ("torch.prelu", lambda p, m: ((m["B4"], p.V.new_ones(4)), {})),
    ("torch.nn.functional.adaptive_avg_pool2d", lambda p, m: ((m["B4"], 1), {})),
    ("torch.index_put", lambda p, m: ((p.At, (p.idx,), p.s0), {})),
    ("torch.flip", lambda p, m: ((m["B4"], (0,)), {})),
    ("torch.conj_physical", lambda p, m: ((p.Z,), {})),
    ("torch.complex", lambda p, m: ((p.A, p.B), {})),
    ("torch.threshold", lambda p, m: ((p.I, 2, 0), {})),
    ("torch.rrelu", lambda p, m: ((p.At,), {"training": True})),
]


@pytest.mark.parametrize("name,call", _EXTRA, ids=[n for n, _ in _EXTRA])
def test_a_rule_describes_its_kernel_on_more_calls(name: str, call: Any) -> None:
    opdef = dict(CASES)[name]
    _, fn = _entry(opdef)

    def make() -> Any:
        p = Pool(fake_torch, "cpu")
        return call(p, _more(p))

    kernel_call = make()
    expected = describe(_call(fn, kernel_call, "cpu"), _tensors(kernel_call))
    args, kwargs = make()
    with fake_torch.LaunchCounter.expect(0):
        got = _described(rules.run_rule(opdef, args, kwargs), _tensors((args, kwargs)))
    assert got == expected


# calls the kernels refuse: the rule refuses them alike (the same exception and text), since
# it asks the same questions of the metadata
_REFUSED: list[tuple[str, Any]] = [
    ("Tensor.add_", lambda p: ((p.I, 1.5), {})),  # a float result into an int64 self
    ("torch.add", lambda p: ((p.A, p.B), {"out": p.L.empty(3)})),  # out of the wrong shape
    ("torch.mul", lambda p: ((p.A, p.S), {})),  # shapes that do not broadcast
    ("torch.cat", lambda p: (((p.A, p.s0),), {})),  # a 0-dim part
    ("torch.stack", lambda p: (((p.A, p.S),), {})),  # parts of two shapes
    ("torch.mean", lambda p: ((p.I,), {})),  # no floating dtype to average in
    ("torch.amax", lambda p: ((p.A.new_zeros(0, 3), 0), {})),  # an empty reduced dim
    ("torch.softmax", lambda p: ((p.I, 0), {})),  # an integral output dtype
    ("torch.nn.functional.max_pool2d", lambda p: ((p.X4, 5), {})),  # a window past the input
    ("torch.nn.functional.pad", lambda p: ((p.A, (1,)), {})),  # an odd pad length
    ("torch.nn.functional.layer_norm", lambda p: ((p.A, (2,)), {})),  # not the trailing shape
    ("torch.multinomial", lambda p: ((p.P, 5), {})),  # more samples than categories
    ("Tensor.repeat", lambda p: ((p.A, 2), {})),  # fewer repeats than dims
]


@pytest.mark.parametrize("name,call", _REFUSED, ids=[n for n, _ in _REFUSED])
def test_a_rule_refuses_what_its_kernel_refuses(name: str, call: Any) -> None:
    opdef = dict(CASES)[name]
    _, fn = _entry(opdef)
    with pytest.raises(Exception) as kernel_error:
        _call(fn, call(Pool(fake_torch, "cpu")), "cpu")
    args, kwargs = call(Pool(fake_torch, "cpu"))
    with pytest.raises(type(kernel_error.value)) as rule_error, \
            fake_torch.LaunchCounter.expect(0):
        rules.run_rule(opdef, args, kwargs)
    assert str(rule_error.value) == str(kernel_error.value)
