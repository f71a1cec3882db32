"""Functionalization for make_fx (`make_fx(torch.func.functionalize(f))`), as torch's
FunctionalTensorWrapper does it: the graph has no in-place op; each mutation is its functional
op, written back through the views it was made through (`slice_scatter`, `select_scatter`,
the inverse view), and each mutated input gets one `copy_` from its final value at the end.

The state, per traced tensor (torch's wrapper): the storage it views (its base's current value
node, the generation of that value) and the view ops from the base to it. The rules torch
follows, in its order:
  - a view op runs on the tensor's current (possibly stale) value and inherits its storage,
    view chain and generation: it does not sync;
  - any other op first syncs its tensor arguments: a tensor whose generation is behind its
    storage's is regenerated from the base by replaying its view chain (one node per view);
  - an in-place op `foo_` (or an `out=` op) records `foo`, makes that value the tensor's,
    commits it to the storage (the base rebuilt through the inverse of each view: all views
    but the last replayed on the base, then the reverse ops innermost first) and syncs the
    tensor again (its view chain replayed on the new base);
  - the function's outputs are synced, then each input whose storage was written is synced
    and copied back (`copy_(input, value)`), in argument order.
Here the eager run (real or fake) still mutates its tensors; only what is recorded changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fake_torch._tensor import Tensor
from fake_torch.fx import Node
from fake_torch.fx.experimental import _aten_overloads

if TYPE_CHECKING:
    from fake_torch.fx.experimental.proxy_tensor import _Tracer

# aten view ops: (packet name) -> how a write into the view goes back into its base
_VIEWS = frozenset({"view", "slice", "select", "unsqueeze", "squeeze", "transpose", "t",
                    "permute", "expand", "alias", "split", "split_with_sizes", "unbind",
                    "view_as_real", "view_as_complex", "diagonal", "as_strided", "unfold",
                    "detach", "narrow", "_reshape_alias", "chunk"})

# in-place view ops (they change a tensor's sizes, not its values)
_INPLACE_VIEWS = frozenset({"squeeze_", "unsqueeze_", "transpose_", "t_", "as_strided_",
                            "swapdims_", "swapaxes_"})


@dataclass
class _Storage:
    base: Node  # the node holding the base's current value
    generation: int = 0
    written: bool = False


@dataclass
class _ViewStep:
    target: Any  # the aten OpOverload
    args: tuple[Any, ...]  # its arguments after the tensor
    kwargs: dict[str, Any]
    index: int | None  # the item of a multi-output view (split, unbind)


@dataclass
class _State:
    storage: _Storage
    views: list[_ViewStep] = field(default_factory=list)
    generation: int = 0


class Functionalizer:
    """The functional state of one make_fx trace (see the module docstring)."""

    def __init__(self, tracer: _Tracer) -> None:
        self.tr = tracer
        self._states: dict[int, _State] = {}
        self.inputs: list[tuple[Node, Tensor]] = []

    # --- state ----------------------------------------------------------------------------------

    def add_input(self, placeholder: Node, t: Tensor) -> None:
        self._states[id(t)] = _State(_Storage(placeholder))
        self.inputs.append((placeholder, t))

    def _state(self, t: Tensor) -> _State:
        state = self._states.get(id(t))
        if state is None:  # a tensor made outside the trace (a constant): its own storage
            state = self._states[id(t)] = _State(_Storage(self.tr.arg(t)))
        return state

    # --- recording --------------------------------------------------------------------------------

    def record(self, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any,
               opdef: Any) -> Any:
        name = _packet_name(target)
        if name in _VIEWS:
            return self._view(target, args, kwargs, result, opdef)
        if name in _INPLACE_VIEWS:  # a metadata mutation: recorded as it is (torch keeps it)
            self.tr.record_node(target, args, kwargs, result, opdef)
            return result
        out = kwargs.get("out")
        inplace = (name.endswith("_") and not name.startswith("__")) or \
            (name.startswith("__i") and name.endswith("__"))
        for t in tensors_in((args, {k: v for k, v in kwargs.items() if k != "out"})):
            self.sync(t)
        if isinstance(out, Tensor):  # out=: the functional op, its value then out's
            kwargs = {k: v for k, v in kwargs.items() if k != "out"}
            self._commit(out, self.tr.record_node(target, args, kwargs, result, opdef,
                                                  bind=False))
            return result
        if not inplace:
            self.tr.record_node(target, args, kwargs, result, opdef)
            given = {id(t) for t in tensors_in((args, kwargs))}
            for t in tensors_in(result):
                if id(t) not in given:
                    self._states[id(t)] = _State(_Storage(self.tr.node_of(t)))
            return result
        functional = _aten_overloads.overload(_functional_name(name), target._overloadname)
        mutated: Tensor = args[0]
        self._commit(mutated, self.tr.record_node(functional, args, kwargs, mutated, opdef,
                                                  bind=False))
        return result

    def _view(self, target: Any, args: tuple[Any, ...], kwargs: dict[str, Any], result: Any,
              opdef: Any) -> Any:
        source: Tensor = args[0]
        state = self._state(source)
        self.tr.record_node(target, args, kwargs, result, opdef)
        items = result if isinstance(result, (tuple, list)) else [result]
        for i, item in enumerate(items):
            if isinstance(item, Tensor):
                step = _ViewStep(target, tuple(args[1:]), dict(kwargs),
                                 i if isinstance(result, (tuple, list)) else None)
                self._states[id(item)] = _State(state.storage, [*state.views, step],
                                                state.generation)
        return result

    def _commit(self, t: Tensor, value: Node) -> Any:
        """`value` is t's new value: written into its storage's base, t synced to it."""
        state = self._state(t)
        storage = state.storage
        if not state.views:
            storage.base = value
        else:  # all views but the last replayed on the base; then the reverses, innermost first
            levels = [storage.base]
            for step in state.views[:-1]:
                levels.append(self._replay(step, levels[-1]))
            for step, below in zip(reversed(state.views), reversed(levels), strict=True):
                value = self._reverse(step, below, value)
            storage.base = value
        storage.generation += 1
        storage.written = True
        self.sync(t, force=True)
        return t

    def sync(self, t: Tensor, force: bool = False) -> None:
        """t regenerated from its storage's base when it is behind (its view chain replayed)."""
        state = self._states.get(id(t))
        if state is None or (state.generation == state.storage.generation and not force):
            return
        value = state.storage.base
        for step in state.views:
            value = self._replay(step, value)
        self.tr.rebind(t, value)
        state.generation = state.storage.generation

    def finish(self, outputs: list[Tensor]) -> None:
        """Outputs synced; each written input synced and copied back, in argument order."""
        for t in outputs:
            self.sync(t)
        for placeholder, t in self.inputs:
            self.sync(t)
            if self._states[id(t)].storage.written:
                target = _aten_overloads.overload("copy_", "default")
                value = self.tr.node_of(t)
                self.tr.emit(target, (placeholder, value), placeholder.meta["val"])

    # --- view replay and reversal ----------------------------------------------------------------

    def _replay(self, step: _ViewStep, value: Node) -> Node:
        node = self.tr.emit_view(step.target, value, step.args, step.kwargs)
        if step.index is not None:  # a multi-output view: a getitem per item, as traced
            items = [self.tr.emit_getitem(node, i) for i in range(len(node.meta["val"]))]
            return items[step.index]
        return node

    def _reverse(self, step: _ViewStep, base: Node, value: Node) -> Node:
        """The base with `value` written where the view `step` looks (torch's inverses)."""
        name, args = _packet_name(step.target), step.args
        val = base.meta["val"]
        over = _aten_overloads.overload
        if name == "slice":
            return self.tr.emit(over("slice_scatter", "default"), (base, value, *args), val)
        if name == "select":
            return self.tr.emit(over("select_scatter", "default"), (base, value, *args), val)
        if name == "unbind":
            dim = args[0] if args else 0
            return self.tr.emit(over("select_scatter", "default"),
                                (base, value, dim, step.index), val)
        if name in ("split", "split_with_sizes") and step.index is not None:
            dim = args[1] if len(args) > 1 else 0
            sizes = [item.shape[dim] for item in _split_items(val, name, args)]
            start = sum(sizes[:step.index])
            return self.tr.emit(over("slice_scatter", "default"),
                                (base, value, dim, start, start + sizes[step.index]), val)
        if name == "view":
            return self.tr.emit_view(over("view", "default"), value, (list(val.shape),), {})
        if name in ("transpose", "t", "alias"):
            return self.tr.emit_view(step.target, value, args, step.kwargs)
        if name == "unsqueeze":
            return self.tr.emit_view(over("squeeze", "dim"), value, args, {})
        if name == "squeeze" and args:
            return self.tr.emit_view(over("unsqueeze", "default"), value, args, {})
        if name == "permute":
            order = [d % len(args[0]) for d in args[0]]
            inverse = [order.index(i) for i in range(len(order))]
            return self.tr.emit_view(step.target, value, (inverse,), {})
        if name in ("view_as_real", "view_as_complex"):
            other = "view_as_complex" if name == "view_as_real" else "view_as_real"
            return self.tr.emit_view(over(other, "default"), value, (), {})
        raise NotImplementedError(f"functionalize: a write through aten.{name} (a view) is not "
                                  "emulated by fake_torch")


def _split_items(val: Any, name: str, args: tuple[Any, ...]) -> list[Any]:
    dim = args[1] if len(args) > 1 else 0
    if name == "split":
        return list(val.split(args[0], dim))
    return list(val.split(list(args[0]), dim))


def _packet_name(target: Any) -> str:
    return str(getattr(getattr(target, "overloadpacket", None), "__name__", ""))


def _functional_name(name: str) -> str:
    """add_ -> add, copy_ -> copy, __ilshift__ -> __lshift__."""
    if name.startswith("__i") and name.endswith("__"):
        return f"__{name[3:]}"
    return name[:-1]


def tensors_in(value: Any) -> list[Tensor]:
    """The tensors in `value`, nested in tuples, lists and dicts, in order."""
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [t for v in value for t in tensors_in(v)]
    if isinstance(value, dict):
        return [t for v in value.values() for t in tensors_in(v)]
    return []
