"""torch._inductor.fx_passes.post_grad: the passes inductor runs on the aten graph before lowering
it, in torch 2.13's order (`post_grad_passes`), and `view_to_reshape`, which compile_fx runs just
before them (other compilers call it on their own graphs too).

Of torch's post-grad passes these are run: dead-code elimination (config.dce, off by default),
`reorder_for_locality` (config.reorder_for_locality, on inference graphs), the custom pre pass
(config.post_grad_custom_pre_pass), `remove_noop_ops` (with config.pattern_matcher), the custom
post pass (config.post_grad_custom_post_pass) and the stable topological sort. torch's own
pattern passes are not: among them the one that makes `mm` + a bias `add` one `addmm` (on a
GPU only where a user of the sum is no pointwise op), so there fake_torch's scheduler launches
the mm and a pointwise kernel where torch launches one addmm.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from typing import Any

from fake_torch._dtype import bool_
from fake_torch._inductor import config
from fake_torch._inductor._pattern_pass import get_mutation_region_id, stable_topological_sort
from fake_torch._inductor.custom_graph_pass import (
    CustomInferenceAwareGraphPass,
    get_custom_graph_passes,
)
from fake_torch._ops import OpOverload, ops
from fake_torch._tensor import Tensor
from fake_torch.fx import Graph, GraphModule, Node
from fake_torch.fx.experimental.symbolic_shapes import statically_known_true, sym_eq
from fake_torch.fx.node import map_arg

_INT64_MAX = 2 ** 63 - 1


def view_to_reshape(gm: GraphModule) -> None:
    """Retarget every aten.view.default call in `gm`'s graph to aten.reshape.default, in
    place (reshape copies where a view cannot: later passes may reorder what made the view
    legal). fake_torch graphs hold no subgraphs to recurse into."""
    view, reshape = ops.aten.view.default, ops.aten.reshape.default
    for node in gm.graph.find_nodes(op="call_function", target=view):
        node.target = reshape


# --- no-op removal --------------------------------------------------------------------------
# aten op (packet name, or "name.overload") -> (when the call is a no-op, given its arguments'
# example values; which argument it passes through: an index, or a function of the args)

NoopRule = tuple[Callable[..., bool], "int | Callable[[tuple[Any, ...]], Any]"]


def _slice_noop(x: Tensor, dim: int = 0, start: Any = None, end: Any = None,
                step: Any = 1) -> bool:
    if start is None or end is None:
        return False
    return (statically_known_true(sym_eq(start, 0))
            and (statically_known_true(end >= _INT64_MAX)
                 or statically_known_true(end >= x.shape[dim]))
            and statically_known_true(sym_eq(step, 1)))


def _slice_scatter_noop(x: Tensor, src: Tensor, dim: int = 0, start: Any = None,
                        end: Any = None, step: Any = 1) -> bool:
    start = 0 if start is None else start
    end = _INT64_MAX if end is None else end
    return (statically_known_true(sym_eq(tuple(x.shape), tuple(src.shape)))
            and statically_known_true(sym_eq(start, 0))
            and (statically_known_true(end >= _INT64_MAX)
                 or statically_known_true(end >= x.shape[dim]))
            and statically_known_true(sym_eq(step, 1)))


def is_integer_dtype(dtype: Any) -> bool:
    """An integer dtype (torch._prims_common's sense: bool is not one)."""
    return not (dtype.is_floating_point or dtype.is_complex or dtype is bool_)


def _always(*args: Any, **kwargs: Any) -> bool:
    return True


NOOP_RULES: dict[str, NoopRule] = {
    "slice": (_slice_noop, 0),
    "slice_scatter": (_slice_scatter_noop, 1),
    "repeat": (lambda x, repeats: all(r == 1 for r in repeats), 0),
    "constant_pad_nd": (lambda x, pad, value=0: all(p == 0 for p in pad), 0),
    "convert_element_type": (lambda x, dtype: x.dtype == dtype, 0),
    "ceil": (lambda x: is_integer_dtype(x.dtype), 0),
    "floor": (lambda x: is_integer_dtype(x.dtype), 0),
    "round": (lambda x: is_integer_dtype(x.dtype), 0),
    "trunc": (lambda x: is_integer_dtype(x.dtype), 0),
    "pow": (lambda a, b: isinstance(b, int) and not isinstance(b, bool) and b == 1, 0),
    "cat": (lambda inputs, dim=0: len(inputs) == 1, lambda args: args[0][0]),
    "view.default": (lambda x, size: statically_known_true(sym_eq(tuple(x.shape),
                                                                  tuple(size))), 0),
    "view.dtype": (lambda x, dtype: x.dtype == dtype, 0),
    "copy": (_always, 1),
    "alias": (_always, 0),
    "clone": (_always, 0),
}
_VIEWS = frozenset({"slice", "view", "alias", "select", "permute", "expand", "unsqueeze",
                    "squeeze", "as_strided", "_unsafe_view", "reshape", "t", "transpose"})


def _noop_rule(target: Any) -> NoopRule | None:
    if not isinstance(target, OpOverload) or target.namespace not in ("aten", "prims"):
        return None
    name = target._opname
    return NOOP_RULES.get(f"{name}.{target._overloadname}") or (
        None if name == "view" else NOOP_RULES.get(name))


def _in_place(target: Any) -> bool:
    """An aten op that writes its first argument and returns it (`add_`, `copy_`)."""
    return (isinstance(target, OpOverload) and target.namespace == "aten"
            and target._opname.endswith("_") and not target._opname.endswith("__"))


def _storage(node: Node) -> Node | None:
    """The node whose memory `node`'s value is (a view's base, an in-place op's target,
    followed back), or None for a value that is no tensor."""
    if not isinstance(node.meta.get("val"), Tensor):
        return None
    while (node.op == "call_function" and isinstance(node.target, OpOverload)
           and ((node.target._opname in _VIEWS and node.target._overloadname != "dtype")
                or _in_place(node.target))
           and node.args and isinstance(node.args[0], Node)):
        node = node.args[0]
    return node


def _written(node: Node) -> list[Node]:
    """The argument nodes a call writes: an in-place aten op's first, a custom op's declared
    mutated arguments (every tensor argument where they cannot be told apart)."""
    if node.op != "call_function":
        return []
    if _in_place(node.target):
        return [node.args[0]] if node.args and isinstance(node.args[0], Node) else []
    from fake_torch import library

    custom = library.custom_op_def(node.target)
    if custom is None or not custom._mutated_args:
        return []
    try:
        bound = inspect.signature(custom._init_fn).bind(*node.args, **node.kwargs).arguments
        values: list[Any] = [bound.get(name) for name in custom._mutated_args]
    except (AttributeError, TypeError, ValueError):
        values = [*node.args, *node.kwargs.values()]
    found: list[Node] = []
    map_arg(values, found.append)
    return found


def is_impure(node: Node) -> bool:
    """A call dead-code elimination keeps though nothing reads it: it writes memory (in place,
    or a custom op's declared writes) or draws from a generator."""
    return bool(_written(node)) or _consumes_rng_state(node)


def _mutated_storages(graph: Graph) -> set[Node | None]:
    """The storages some call in `graph` writes in place (fake_torch's aten graph keeps its
    in-place ops: it is not functionalized)."""
    return {_storage(n) for node in graph.nodes for n in _written(node)}


def same_meta(a: Node, b: Node) -> bool:
    """True if two nodes' values have the same size, dtype, device and strides (fake_torch's
    tensors are all strided: no layout to compare)."""
    x, y = a.meta.get("val"), b.meta.get("val")
    return (isinstance(x, Tensor) and isinstance(y, Tensor)
            and statically_known_true(sym_eq(tuple(x.size()), tuple(y.size())))
            and x.dtype == y.dtype and x.device == y.device
            and statically_known_true(sym_eq(tuple(x.stride()), tuple(y.stride())))
            and x.is_conj() == y.is_conj() and x.is_neg() == y.is_neg())


def _fake_args(node: Node) -> tuple[bool, tuple[Any, ...], dict[str, Any]]:
    """The node's arguments with each node replaced by its example value; False when one
    has none."""
    missing = False

    def value(n: Node) -> Any:
        nonlocal missing
        if "val" not in n.meta:
            missing = True
        return n.meta.get("val")

    args = map_arg(node.args, value)
    kwargs = map_arg(node.kwargs, value)
    return not missing, tuple(args), dict(kwargs)


def remove_noop_ops(graph: Graph) -> None:
    """Remove the calls that change nothing (a full slice, a one-input cat, a same-dtype
    conversion, a clone, ...): their users read the argument they pass through. Never where
    that would make an output alias an input, or another output, that it did not before, nor
    a copy whose memory, or its source's, is written in place later (torch's graph here is
    functional; fake_torch's keeps its in-place ops)."""
    inputs = [n for n in graph.nodes if n.op == "placeholder"]
    input_storages = {_storage(n) for n in inputs}
    output = next(iter(reversed(graph.nodes)))
    assert output.op == "output"
    outputs = output.args[0] if isinstance(output.args[0], (list, tuple)) else (output.args[0],)
    output_storages = {_storage(n) for n in outputs if isinstance(n, Node)}
    mutated = _mutated_storages(graph)
    for node in list(graph.nodes):
        rule = _noop_rule(node.target) if node.op == "call_function" else None
        if rule is None:
            continue
        cond, src_index = rule
        src = node.args[src_index] if isinstance(src_index, int) else src_index(node.args)
        if not isinstance(src, Node):
            continue
        node_storage, src_storage = _storage(node), _storage(src)
        is_view = node_storage is src_storage
        if not is_view and (node_storage in mutated or src_storage in mutated):
            continue  # a copy that keeps a write apart from the memory it was copied from
        if not is_view and node_storage in output_storages and (
                src_storage in input_storages or src_storage in output_storages):
            continue
        if is_view and node in outputs and (src in inputs or src in outputs):
            continue
        ok, args, kwargs = _fake_args(node)
        if ok and same_meta(node, src) and cond(*args, **kwargs):
            node.replace_all_uses_with(src)
            graph.erase_node(node)


def _consumes_rng_state(node: Node) -> bool:
    """A draw from a generator (torch's nondeterministic_seeded tag): its order matters."""
    if node.op != "call_function" or not isinstance(node.target, OpOverload):
        return False
    from fake_torch import _opdef

    opdef = _opdef.def_of(_opdef.aten_callable(node.target._opname))
    return opdef is not None and (opdef.random or opdef.kind == _opdef.RANDOM)


def reorder_for_locality(graph: Graph) -> None:
    """Move each call's producers right before it (walking the graph from its end), when the
    call is their last reader, in the same mutation region, and no draw from a generator moves;
    nothing from the first `aten.copy_` (a functional graph's write-back epilogue) on."""
    seen: set[Node] = set()
    first_copy = next(iter(graph.find_nodes(op="call_function", target=ops.aten.copy_.default)),
                      None)
    past_epilogue = first_copy is None
    for node in reversed(list(graph.nodes)):
        seen.add(node)
        if not past_epilogue:
            past_epilogue = node is first_copy
            continue

        def visit(other: Node, node: Node = node) -> Node:
            if (other.op == "call_function" and other.target is not operator.getitem
                    and all(user in seen for user in other.users)
                    and get_mutation_region_id(graph, node)
                    == get_mutation_region_id(graph, other)
                    and not _consumes_rng_state(other)):
                node.prepend(other)
            return other

        map_arg((node.args, node.kwargs), visit)


def _run_custom(custom: Callable[..., Any], gm: GraphModule, is_inference: bool) -> None:
    if isinstance(custom, CustomInferenceAwareGraphPass):
        custom(gm.graph, is_inference=is_inference)
    else:
        custom(gm.graph)


def post_grad_passes(gm: GraphModule, is_inference: bool) -> None:
    """The post-grad passes, in torch's order, on `gm`'s (functional, aten) graph."""
    if config.dce:
        gm.graph.eliminate_dead_code(is_impure_node=is_impure)
    if is_inference and config.reorder_for_locality:
        reorder_for_locality(gm.graph)
    for custom in get_custom_graph_passes(config.post_grad_custom_pre_pass):
        _run_custom(custom, gm, is_inference)
    if config.pattern_matcher:
        remove_noop_ops(gm.graph)
    for custom in get_custom_graph_passes(config.post_grad_custom_post_pass):
        _run_custom(custom, gm, is_inference)
    stable_topological_sort(gm.graph)
    gm.recompile()


__all__ = ["post_grad_passes", "remove_noop_ops", "same_meta", "view_to_reshape"]
