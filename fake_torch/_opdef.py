"""One definition per op: its names, its kind, its implementation; everything else derives.

    @op(POINTWISE, method=True, aliases=("subtract",))
    def sub(input: Tensor | Number, other: Tensor | Number, *, alpha: Number = 1,
            out: Tensor | None = None) -> Tensor:
        ...  # checks, an output buffer, one launch named "sub" through the door

is `torch.sub` and `torch.subtract`, `Tensor.sub` and `Tensor.subtract`, `torch.ops.aten.sub`
(each a public ENTRY, fake_torch._torch_function, that goes through `__torch_function__`);
its launches,
named "sub", are pointwise to the inductor scheduler. From the same definitions come the
Tensor methods' types (`_tensor_base.pyi`) and torch's namespace in `stubs/`, the graph breaks
tracing makes (`graph_break=`), and `python -m fake_torch api`.

Forms:
  @op(kind, ...)       a function of `namespace` ("torch", "torch.nn.functional",
                       "torch.linalg"); method=True adds the Tensor method of the same name,
                       its first parameter becoming `self`
  @method(kind, ...)   a Tensor method only (`add_`, `view`, `to`, `__add__`), or the method
                       form of an op whose method signature differs from its function's
                       (`Tensor.reshape(*shape)` beside `torch.reshape(input, shape)`)
  @tensor_property(kind, name)   a Tensor property that is an op (`T`, `mT`)
  aten_op(name, kind)  a launch name no public op is named after (`_softmax`, `_to_copy`)

Kinds (what the scheduler and CUDA graphs make of the launches):
  pointwise, reduction  inductor fuses them (reductions with the pointwise work around them)
  extern                a library kernel of its own: GEMMs, attention, sorts, scans, scatters
  random                draws from a generator: its own launch (multinomial, randperm, the
                        in-place fills); the draws inductor generates inside its kernels
                        (rand, randn, randint, normal, bernoulli) are pointwise with
                        random=True. Either way never dead code
  data_dependent        output shape or values the host must read (nonzero): a graph break
                        when traced, no CUDA graph around it
  host                  copies to the host and waits (`item`, `tolist`): a graph break
  view                  new strides over the same storage: no launch
  composite             runs other ops, whose launches are theirs (F.linear, einsum)
Every name the door is asked to launch must be defined: `aten_kind` raises for one that is not,
so an op missing here cannot silently fuse as pointwise.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fake_torch import _torch_function
from fake_torch._tensor_base import TensorBase

Function = Callable[..., Any]
F = TypeVar("F", bound=Callable[..., Any])
# why tracing breaks the graph at a call: ("dynamic_shape" | "data_dependent", the aten
# overload it names, "aten.nonzero.default"); the tracer words it as torch does
Break = tuple[str, str]
Rule = Callable[[tuple[Any, ...], dict[str, Any]], "Break | None"]

POINTWISE = "pointwise"
REDUCTION = "reduction"
EXTERN = "extern"
RANDOM = "random"
DATA_DEPENDENT = "data_dependent"
HOST = "host"
VIEW = "view"
COMPOSITE = "composite"
KINDS = (POINTWISE, REDUCTION, EXTERN, RANDOM, DATA_DEPENDENT, HOST, VIEW, COMPOSITE)
_LAUNCHING = (POINTWISE, REDUCTION, EXTERN, RANDOM, DATA_DEPENDENT, HOST)

# what the inductor scheduler does with a launch of each kind
SCHEDULER_CLASS = {POINTWISE: "pointwise", REDUCTION: "reduction", EXTERN: "extern",
                   RANDOM: "extern", DATA_DEPENDENT: "extern", HOST: "extern"}


@dataclass(eq=False)
class OpDef:
    """One op: where it appears, what its launches are, how tracing treats it."""

    name: str  # its torch name: "add", "__add__", "T"
    kind: str
    impl: Function  # the implementation: (input, ...) for functions and methods alike
    namespace: str | None  # "torch", "torch.nn.functional", "torch.linalg"; None: Tensor only
    method: bool  # a Tensor method (or property) too
    aliases: tuple[str, ...] = ()
    aten: tuple[str, ...] = ()  # the aten ops its launches are named
    graph_break: Break | Rule | None = None  # when traced: a graph break, and why
    torch_function: str | None = None  # the Tensor method modes are shown instead (`__add__`)
    fx_target: Any = None  # what Dynamo records for it, when not the op (`operator.add`)
    reflected: bool = False  # `2 + x`: recorded as operator.add(2, x)
    is_property: bool = False
    random: bool = False  # draws from a generator: never dead code
    entries: dict[str, Function] = field(default_factory=dict)  # "torch.add" -> its entry

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def mutates(self) -> bool:
        """Writes its first argument (`add_`, `__iadd__`, `__setitem__`): never dead code."""
        n = self.name
        return (n.endswith("_") and not n.endswith("__")) or n in _INPLACE_DUNDERS

    def graph_break_for(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Break | None:
        """The graph break tracing this call makes, or None to record it as a node."""
        rule = self.graph_break
        if rule is None or isinstance(rule, tuple):
            return rule
        return rule(args, kwargs)


_INPLACE_DUNDERS = frozenset({"__setitem__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
                              "__ifloordiv__", "__imod__", "__ipow__", "__iand__", "__ior__",
                              "__ixor__", "__ilshift__", "__irshift__", "__imatmul__"})


# --- the registries -------------------------------------------------------------------------------

_defs: list[OpDef] = []
_namespaces: dict[str, dict[str, Function]] = {}  # "torch" -> {"add": entry, ...}
_methods: dict[str, tuple[OpDef, bool]] = {}  # Tensor method -> (def, first param renamed)
_aten: dict[str, tuple[str, OpDef | None]] = {}  # aten name -> (kind, def of that name)
_properties: dict[int, OpDef] = {}  # id(property object) -> def


def _register_aten(name: str, kind: str, opdef: OpDef | None) -> None:
    known = _aten.get(name)
    if known is not None and known[0] != kind:
        raise ValueError(f"aten op {name!r} is defined as {known[0]} and as {kind}")
    if known is None or (known[1] is None and opdef is not None and opdef.name == name):
        _aten[name] = (kind, opdef if opdef is not None and opdef.name == name else None)


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown op kind {kind!r}: expected one of {', '.join(KINDS)}")


def _add(opdef: OpDef, aten: tuple[str, ...] | None) -> None:
    _check_kind(opdef.kind)
    opdef.random = opdef.random or opdef.kind == RANDOM
    if aten is None:
        aten = (opdef.name,) if opdef.kind in _LAUNCHING else ()
    opdef.aten = aten
    for name in aten:
        _register_aten(name, opdef.kind, opdef)
    if opdef.kind == VIEW and not opdef.name.startswith("__"):  # aten.view, aten.t, ...
        _register_aten(opdef.name, VIEW, opdef)
    _defs.append(opdef)


def _install_method(opdef: OpDef, name: str, renamed: bool,
                    setter: Callable[[Any, Any], None] | None = None) -> Function:
    func = None
    if opdef.torch_function is not None:
        func = getattr(TensorBase, opdef.torch_function, None)
        if func is None:
            raise ValueError(f"Tensor.{name}: modes are to be shown Tensor."
                             f"{opdef.torch_function}, which is not defined yet")
    entry = _torch_function.make_entry(opdef.impl, name=_identifier(name),
                                       qualname=f"TensorBase.{name}", module="torch",
                                       func=func, first="self" if renamed else None,
                                       cpp_name=f"torch.Tensor.{opdef.torch_function or name}",
                                       operator=name in _BINARY_OPERATORS)
    entry._opdef = opdef  # type: ignore[attr-defined]
    opdef.entries[f"Tensor.{name}"] = entry
    _methods[name] = (opdef, renamed)
    if opdef.is_property:
        prop = property(entry, setter, doc=opdef.impl.__doc__)
        _torch_function.show_as(entry, prop.__get__)  # torch shows `Tensor.T.__get__`
        _properties[id(prop)] = opdef
        setattr(TensorBase, name, prop)
    else:
        setattr(TensorBase, name, entry)
    return entry


_MODULES = {"torch": "fake_torch", "torch.nn.functional": "fake_torch.nn.functional",
            "torch.linalg": "fake_torch.linalg"}


def _publish(namespace: str, name: str, entry: Function | None) -> None:
    """An op defined once its namespace module exists (its import puts every entry it has
    in place at its end): into the module, and its `__all__`, at once."""
    module = sys.modules.get(_MODULES.get(namespace, ""))
    exported = getattr(module, "__all__", None)
    if module is None or exported is None:
        return
    if entry is None:
        if getattr(module, name, None) is not None:
            delattr(module, name)
        if name in exported:
            exported.remove(name)
        return
    setattr(module, name, entry)
    if name not in exported:
        exported.append(name)


_BINARY_OPERATORS = frozenset(
    f"__{r}{op}__" for op in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                              "and", "or", "xor", "lshift", "rshift") for r in ("", "r", "i")
) | {"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"}


def _identifier(name: str) -> str:
    return name if name.isidentifier() else "_entry"


# --- the decorators -------------------------------------------------------------------------------

def op(kind: str, *, name: str | None = None, namespace: str = "torch", method: bool = False,
       aliases: tuple[str, ...] = (), method_aliases: tuple[str, ...] = (),
       aten: tuple[str, ...] | None = None, graph_break: Break | Rule | None = None,
       random: bool = False) -> Callable[[F], F]:
    """Define a function op of `namespace` (and with method=True its Tensor method). Returns
    the implementation itself, for other ops to call (as torch's kernels call each other,
    without dispatching again); the namespace module puts the entries in its namespace with
    `globals().update(exports(namespace))`. `aliases` name both forms, `method_aliases` the
    method only; `aten`: the launch names (default: the op's own name when it launches)."""

    def define(impl: F) -> F:
        opdef = OpDef(name or impl.__name__, kind, impl, namespace, method, aliases,
                      graph_break=graph_break, random=random)
        _add(opdef, aten)
        space = _namespaces.setdefault(namespace, {})
        for n in opdef.names:
            made = _torch_function.make_entry(
                impl, name=n, qualname=n, module=namespace,
                cpp_name=f"torch.{n}" if namespace == "torch" else None)
            made._opdef = opdef  # type: ignore[attr-defined]
            opdef.entries[f"{namespace}.{n}"] = made
            space[n] = made
            _publish(namespace, n, made)
        if method:
            for n in (*opdef.names, *method_aliases):
                _install_method(opdef, n, renamed=True)
        return impl

    return define


def method(kind: str, *, name: str | None = None, aliases: tuple[str, ...] = (),
           aten: tuple[str, ...] | None = None, graph_break: Break | Rule | None = None,
           torch_function: str | None = None, fx_target: Any = None,
           reflected: bool = False) -> Callable[[F], F]:
    """Define a Tensor method (first parameter `self`). `torch_function`: the method whose
    entry modes are shown instead (`__add__` shows `add`, as torch); `fx_target`: what
    tracing records instead of `call_method` (`operator.add`). Returns the implementation;
    decorators stack, each defining one more method over it (`__add__`, `__radd__`)."""

    def define(impl: F) -> F:
        opdef = OpDef(name or impl.__name__, kind, impl, None, True, aliases,
                      graph_break=graph_break, torch_function=torch_function,
                      fx_target=fx_target, reflected=reflected)
        _add(opdef, aten)
        for n in opdef.names:
            _install_method(opdef, n, renamed=False)
        return impl

    return define


def tensor_property(kind: str, name: str,
                    setter: Callable[[Any, Any], None] | None = None) -> Callable[[F], F]:
    """Define a Tensor property that is an op (`x.T`): modes are shown its getter, as torch
    shows `Tensor.T.__get__`; tracing records `getattr(x, "T")`. `setter`: what
    `x.name = value` does (`x.real = y` copies into the view)."""

    def define(impl: F) -> F:
        opdef = OpDef(name, kind, impl, None, True, fx_target=getattr, is_property=True)
        _add(opdef, ())
        _install_method(opdef, name, renamed=False, setter=setter)
        return impl

    return define


def dynamic_shape(overload: str) -> Break:
    """A graph break: the op's output shape depends on its input's values (nonzero)."""
    return ("dynamic_shape", overload)


def data_dependent(overload: str) -> Break:
    """A graph break: the host reads a value the op computes (equal, allclose)."""
    return ("data_dependent", overload)


def aten_op(name: str, kind: str) -> None:
    """Declare a launch name that no public op is named after (`_softmax`, `_to_copy`)."""
    _check_kind(kind)
    _register_aten(name, kind, None)


# --- queries --------------------------------------------------------------------------------------

def property_setter(name: str) -> Function | None:
    """What `x.name = value` runs, for a Tensor property op that has a setter (`real`)."""
    prop = getattr(TensorBase, name, None)
    return prop.fset if isinstance(prop, property) else None


def def_of(func: Any) -> OpDef | None:
    """The definition behind a public entry (or a property's `__get__`), else None."""
    found = getattr(func, "_opdef", None)
    if found is not None:
        return found  # type: ignore[no-any-return]
    owner = getattr(func, "__self__", None)
    if isinstance(owner, property):
        return _properties.get(id(owner))
    return None


def exports(namespace: str) -> dict[str, Function]:
    """The entries of one namespace, by torch name."""
    return dict(_namespaces.get(namespace, {}))


def tensor_methods() -> dict[str, tuple[OpDef, bool]]:
    """Tensor method name -> (its def, whether its impl's first parameter is renamed self)."""
    return dict(_methods)


def definitions() -> list[OpDef]:
    return list(_defs)


def aten_names() -> dict[str, str]:
    """Every aten op name -> its kind."""
    return {name: kind for name, (kind, _) in _aten.items()}


def aten_kind(name: str) -> str:
    """The kind of the aten op a launch is named after; KeyError for an undefined one."""
    known = _aten.get(name)
    if known is None:
        raise KeyError(f"aten op {name!r} has no definition: define the op that launches it "
                       "with fake_torch._opdef.op/method(kind, aten=...) or declare the launch "
                       "name with aten_op(name, kind), so the scheduler knows how to treat it")
    return known[0]


def aten_callable(name: str) -> Function | None:
    """What `torch.ops.aten.<name>(...)` runs: the op of that name (its torch function, else
    its Tensor method), or None when only the launch name is defined."""
    known = _aten.get(name)
    if known is None or known[1] is None:
        return None
    entries = known[1].entries
    return next((e for k, e in entries.items() if not k.startswith("Tensor.")), None) or \
        next(iter(entries.values()), None)


def forget(opdef: OpDef) -> None:
    """Remove a definition and its entries (tests that define an op put things back)."""
    _defs.remove(opdef)
    for key in opdef.entries:
        space, _, n = key.rpartition(".")
        if space == "Tensor":
            _methods.pop(n, None)
            if n in vars(TensorBase):
                delattr(TensorBase, n)
        else:
            _namespaces.get(space, {}).pop(n, None)
            _publish(space, n, None)
    for name in (*opdef.aten, opdef.name):
        known = _aten.get(name)
        if known is not None and (known[1] is opdef or not any(
                name in d.aten or d.name == name for d in _defs)):
            del _aten[name]

