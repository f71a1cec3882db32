"""A custom op that writes its arguments, in the aten graph inductor's passes see: one
`auto_functionalized(op, **kwargs)` node, as aot_autograd's functionalization records it (with
config.enable_auto_functionalized_v2=False, vLLM's setting), and back to the op itself, in
place, before the graph runs, as inductor's reinplacing does.

Tracing (`FunctionalCustomOps`, make_fx's recorder with one more rule): the call is recorded
as `auto_functionalized` with every argument by name, a `getitem` per item; each written
tensor is from then on the item holding its new value, and a written graph input gets a
`copy_(input, new value)` before the output, as torch's functionalization ends a graph. Left
as the op itself (as before): a write into a view of another tensor (only a whole tensor is
functionalized here), a tensor a view was taken of before the call, and every call while
config.enable_auto_functionalized_v2 is True (torch's default, whose node,
auto_functionalized_v2, is not emulated).

Reinplacing (`reinplace`): an `auto_functionalized` node whose written arguments are read by no
later node (a graph input's write-back `copy_` aside, which goes) becomes the op's call on
those arguments, in place: the items of the written arguments read the arguments again, those
of the op's own outputs read the call. Otherwise the node stays: it runs the op on clones, as
torch's inductor does then.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from typing import Any

from fake_torch import _ops, library
from fake_torch._higher_order_ops.auto_functionalize import (
    auto_functionalized,
    can_auto_functionalize,
    mutable_arg_names,
)
from fake_torch._inductor import config
from fake_torch._ops import ops
from fake_torch._tensor import Tensor
from fake_torch.fx import Graph, Node
from fake_torch.fx.experimental.proxy_tensor import _AtenMode, _Tracer

# aten ops whose result shares its input's memory (a later write through the input shows)
_VIEWS = frozenset({"view", "slice", "select", "unsqueeze", "squeeze", "transpose", "t",
                    "permute", "expand", "alias", "as_strided", "split", "unbind", "narrow",
                    "reshape", "_unsafe_view", "diagonal", "unfold", "chunk", "detach"})


def _is_view_node(node: Node) -> bool:
    return (node.op == "call_function" and isinstance(node.target, _ops.OpOverload)
            and node.target.namespace == "aten" and node.target._opname in _VIEWS)


def _whole(t: Tensor) -> bool:
    """`t` spans its whole storage, contiguously (not a view of part of another tensor)."""
    return t.is_contiguous() and t.storage_offset() == 0 and \
        t.untyped_storage().nbytes() == t.numel() * t.element_size()


class FunctionalCustomOps(_AtenMode):
    """make_fx's recorder; a custom op that writes whole tensors is recorded functionally."""

    def __init__(self, tracer: _Tracer) -> None:
        super().__init__(tracer)
        self.written_inputs: dict[Node, Node] = {}  # placeholder -> its final value's node

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        op = func._first() if isinstance(func, _ops.OpOverloadPacket) else func
        if not config.enable_auto_functionalized_v2 and can_auto_functionalize(op):
            assert isinstance(op, _ops.OpOverload)
            bound = self._bound(op, args, kwargs)
            if bound is not None:
                return self._functional(types, op, bound)
        return super().__torch_function__(func, types, args, kwargs)

    def _bound(self, op: _ops.OpOverload, args: Any, kwargs: Any) -> dict[str, Any] | None:
        """The call's arguments by name, when every tensor it writes can be functionalized."""
        custom = library.custom_op_def(op)
        init = getattr(custom, "_init_fn", None)
        if init is None:
            return None
        try:
            call = inspect.signature(init).bind(*args, **kwargs)
        except TypeError:
            return None
        call.apply_defaults()
        nodes = self.tracer._nodes
        for name in mutable_arg_names(op):
            t = call.arguments.get(name)
            if not isinstance(t, Tensor):
                return None
            node = nodes.get(id(t))
            if node is None or not _whole(t) or any(_is_view_node(u) for u in node.users):
                return None
        return dict(call.arguments)

    def _functional(self, types: Any, op: _ops.OpOverload, kwargs: dict[str, Any]) -> Any:
        tr = self.tracer
        written = [kwargs[name] for name in mutable_arg_names(op)]
        before = [tr._nodes[id(t)] for t in written]
        items = super().__torch_function__(auto_functionalized, types, (op,), kwargs)
        news = items[len(items) - len(written):]
        node = tr._nodes[id(news[0])].args[0]
        for item in list(node.users):  # torch records no item for a None output
            if "val" not in item.meta and not item.users:
                tr.graph.erase_node(item)
        for t, old, new in zip(written, before, news, strict=True):
            node = tr._nodes[id(new)]
            tr.bind(t, node)  # the tensor's value from here on
            if old.op == "placeholder":
                self.written_inputs[old] = node
            elif old in self.written_inputs.values():
                placeholder = next(p for p, n in self.written_inputs.items() if n is old)
                self.written_inputs[placeholder] = node
        outs = items[:len(items) - len(written)]
        return outs[0] if len(outs) == 1 else (tuple(outs) if outs else None)

    def write_back(self, graph: Graph) -> None:
        """`copy_(input, final value)` for each written graph input, before the output."""
        output = next(n for n in reversed(graph.nodes) if n.op == "output")
        with graph.inserting_before(output):
            for placeholder, node in self.written_inputs.items():
                copy = graph.create_node("call_function", ops.aten.copy_.default,
                                         (placeholder, node), name="copy_")
                copy.meta["val"] = placeholder.meta.get("val")


def reinplace(graph: Graph) -> None:
    """Each `auto_functionalized` node whose written arguments nothing reads later: the op's
    own call on them, in place (see the module docstring)."""
    order = {n: i for i, n in enumerate(graph.nodes)}
    for node in list(graph.find_nodes(op="call_function", target=auto_functionalized)):
        op = node.args[0]
        written = [node.kwargs[name] for name in mutable_arg_names(op)]
        values = node.meta.get("val")
        if not all(isinstance(w, Node) for w in written) or not isinstance(values, tuple):
            continue
        n_outs = len(values) - len(written)  # the op's own outputs come first
        items = {u.args[1]: u for u in node.users if u.target is operator.getitem}
        if len(items) != len(node.users):
            continue
        write_backs: list[Node] = []
        later_reads = False
        for w in written:
            for user in w.users:
                if user is node or order[user] < order[node]:
                    continue
                if user.target is ops.aten.copy_.default and user.args[0] is w \
                        and user.args[1] in items.values():
                    write_backs.append(user)
                else:
                    later_reads = True
        if later_reads:
            continue
        with graph.inserting_before(node):
            call = graph.call_function(op, (), dict(node.kwargs))
        call.meta["val"] = values[0] if n_outs == 1 else values[:n_outs]
        for copy in write_backs:
            graph.erase_node(copy)
        for index, item in items.items():
            if index >= n_outs:  # a written argument's new value: the argument itself
                item.replace_all_uses_with(written[index - n_outs])
                graph.erase_node(item)
            elif n_outs == 1:  # the op's one output
                item.replace_all_uses_with(call)
                graph.erase_node(item)
            else:  # an item of the op's outputs
                item.args = (call, index)
        graph.erase_node(node)


__all__ = ["FunctionalCustomOps", "reinplace"]
