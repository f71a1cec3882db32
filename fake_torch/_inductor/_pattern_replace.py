"""Putting a replacement graph where a pattern matched (torch's
ReplacementPatternEntry.replace_with_graph and Match.replace_by_example).

The replacement GraphModule is interpreted with the match's input nodes as its inputs: each
call_function node becomes a new node in the matched graph, inserted before the first output
node of the match; the match's outputs are rewired to the replacement's outputs, the matched
nodes left unused are erased, and so are added nodes nothing ends up using.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from fake_torch._ops import HigherOrderOperator, OpOverload
from fake_torch._subclasses.fake_tensor import mode_of
from fake_torch._tensor import Tensor
from fake_torch.fx import Graph, GraphModule, Interpreter, Node, map_arg
from fake_torch.fx._symbolic_trace import _assert
from fake_torch.fx.node import map_aggregate
from fake_torch.utils import _pytree as pytree

if TYPE_CHECKING:
    from fake_torch._inductor._pattern_match import Match

# node meta a replacement inherits from the node it replaces (torch.fx.proxy._COPY_META_FIELDS)
_COPY_META_FIELDS = ("nn_module_stack", "torch_fn", "source_fn_stack", "original_aten",
                     "recompute", "ac_graph_id", "has_backward_hook", "from_node",
                     "quantization_tag", "_numeric_debug_handle", "custom", "partitioner_tag")

# what Match.replace_by_example traces with when given no trace_fn: pattern_matcher registers
# its fwd_only here (a hook, so this lower module does not import the public one)
_default_trace_fn: list[Callable[..., GraphModule]] = []


def set_default_trace_fn(fn: Callable[..., GraphModule]) -> None:
    _default_trace_fn[:] = [fn]


def transfer_meta(new_meta: dict[str, Any], old_node: Node) -> None:
    """Copy the carried-over fields (and val/tensor_meta where missing) from the old node."""
    new_meta.update((k, v) for k, v in old_node.meta.items() if k in _COPY_META_FIELDS)
    if "stack_trace" in old_node.meta:
        new_meta["stack_trace"] = old_node.meta["stack_trace"]
    for key in ("val", "tensor_meta"):
        if key not in new_meta and key in old_node.meta:
            new_meta[key] = old_node.meta[key]


def schema_is_mutable(target: object) -> bool:
    """An OpOverload whose schema writes an argument (`Tensor(a!)`). fake_torch's aten
    operators carry no argument schema ("(...) -> ..."): for them, aten's naming says it (an
    in-place `name_`, an `out` overload)."""
    schema = getattr(target, "_schema", None)
    if isinstance(schema, str):
        if "(...)" in schema:
            return str(getattr(target, "_opname", "")).endswith("_") or \
                getattr(target, "_overloadname", "") == "out"
        return "!" in schema
    return bool(getattr(schema, "is_mutable", False))


def is_impure(node: Node) -> bool:
    """torch.fx.Node.is_impure for the nodes a replacement adds."""
    if node.op in ("placeholder", "output"):
        return True
    if node.op == "call_function":
        return node.target in (operator.setitem, _assert) or \
            (isinstance(node.target, OpOverload) and schema_is_mutable(node.target))
    return False


def _unique_attr_name(root: Any, base: str) -> str:
    name, i = base, 0
    while hasattr(root, name):
        name, i = f"{base}_{i}", i + 1
    return name


class _Replacer(Interpreter):
    """Copies the replacement graph's calls into `graph` (inputs: the match's nodes)."""

    def __init__(self, module: GraphModule, graph: Graph, added: list[Node]) -> None:
        super().__init__(module)
        self.target_graph = graph
        self.added = added

    def run_node(self, node: Node) -> Any:
        if node.op in ("placeholder", "output"):
            return super().run_node(node)
        args, kwargs = self.fetch_args_kwargs_from_env(node)
        if node.op == "call_function":
            assert callable(node.target)
            result = self.target_graph.call_function(node.target, args, kwargs)
            self.added.append(result)
            transfer_meta(result.meta, node)
            if "eager_input_vals" in node.meta:
                result.meta["eager_input_vals"] = node.meta["eager_input_vals"]
            return result
        if node.op == "get_attr":  # a higher-order op's subgraph
            assert isinstance(node.target, str)
            sub_gm = self.fetch_attr(node.target)
            if not isinstance(sub_gm, GraphModule):
                raise NotImplementedError(
                    f"NYI: replacement_graph.{node.target} is not a graph module. Got {sub_gm}.")
            root = self.target_graph.owning_module
            assert root is not None
            name = next((n for n, mod in root.named_modules() if mod is sub_gm), None)
            if name is None:
                name = _unique_attr_name(root, node.target)
                root.register_module(name, sub_gm)
            getattr_node = self.target_graph.get_attr(name)
            self.added.append(getattr_node)
            return getattr_node
        raise NotImplementedError(f"unhandled {node}")


def _percolate_tag(node: Node, tag_name: str, tag_value: Any, stops: set[Any]) -> None:
    queue, visited = [node], set()
    while queue:
        arg = queue.pop()
        if arg not in visited and arg not in stops:
            visited.add(arg)
            arg.meta[tag_name] = tag_value
            queue.extend(arg.all_input_nodes)


def replace_with_graph(match: Match, graph: Graph, replacement_graph: GraphModule | Graph,
                       args: Sequence[Any], pass_name: str | None = None) -> list[Node]:
    """Insert `replacement_graph` run on `args` in place of `match`; the nodes added."""
    del pass_name  # torch records it in provenance metadata, which fake_torch does not keep
    added: list[Node] = []
    if isinstance(replacement_graph, Graph):
        replacement_graph = GraphModule({}, replacement_graph)
    output_nodes = match.output_nodes()
    if len(output_nodes) == 1:
        last_node = output_nodes[0]
    else:
        assert output_nodes[0] is not None
        order = {n: i for i, n in enumerate(output_nodes[0].graph.nodes)}
        last_node = min((n for n in output_nodes if isinstance(n, Node)), key=order.__getitem__)
    assert last_node is not None

    def replace(old: Node | None, new: Any) -> None:
        def not_added(user: Node) -> bool:  # the replacement's own uses stay as they are
            return user not in added

        if old is None:
            assert new is None
            return
        if new is None:
            for user in [u for u in old.users if not_added(u)]:
                user._update_args_kwargs(map_arg(user.args, lambda n: None if n is old else n),
                                         map_arg(user.kwargs,
                                                 lambda n: None if n is old else n))
            if not old.users:
                graph.erase_node(old)
            return
        if isinstance(new, Node):
            transfer_meta(new.meta, old)
            stops = set(pytree.tree_leaves(list(args)))
            for tag in ("recompute", "ac_graph_id"):
                if tag in old.meta:
                    _percolate_tag(new, tag, old.meta[tag], stops)
            old.replace_all_uses_with(new, delete_user_cb=not_added)
            if not old.users:
                graph.erase_node(old)
            return
        # one packed result replaced by several: its getitem users read the pieces directly
        for user in list(old.users):
            if user.op == "call_function" and user.target is operator.getitem:
                replace(user, new[user.args[1]])
            else:
                raise NotImplementedError(
                    f"replacing {old} (used whole by {user}) with several values")
        graph.erase_node(old)

    with graph.inserting_before(last_node):
        replacement = _Replacer(replacement_graph, graph, added).run(*args)
        if isinstance(replacement, Node):
            replacement = [replacement]
        if len(output_nodes) == len(replacement):
            for old, new in zip(output_nodes, replacement, strict=False):
                replace(old, new)
        else:
            assert len(output_nodes) == 1
            replace(output_nodes[0], replacement)

    match.erase_nodes()
    # dead replacement nodes go, so they do not count as users of anything later
    for node in reversed(added):
        if not node.users and not is_impure(node) and \
                not isinstance(node.target, HigherOrderOperator):
            graph.erase_node(node)
    return [node for node in added if not node._erased]


def _example_value(node: Node) -> Any:
    return node.meta["val"] if "val" in node.meta else node.meta["example_value"]


def replace_by_example(match: Match, replacement_fn: Callable[..., Any], args: Sequence[Any],
                       trace_fn: Callable[..., Any] | None = None,
                       run_functional_passes: bool = True) -> list[Node]:
    """Match.replace_by_example: trace `replacement_fn` on the values of `args` and insert it."""
    if trace_fn is None:
        if not _default_trace_fn:
            raise NotImplementedError(
                "torch._inductor.pattern_matcher.fwd_only is not available, so "
                "Match.replace_by_example needs a trace_fn")
        fwd_only = _default_trace_fn[0]

        def trace_fn(fn: Callable[..., Any], example: Any) -> Any:
            return fwd_only(fn, example, run_functional_passes=run_functional_passes)

    nodes = match.nodes
    if len(nodes) == 1 and "eager_input_vals" in nodes[0].meta and \
            getattr(nodes[0].target, "__name__", None) in ("auto_functionalized",
                                                           "auto_functionalized_v2"):
        # trace once on the eager-mode values, then retrace that graph on the graph's values
        node_to_val: dict[Node, Any] = {}
        fake_args, fake_kwargs = nodes[0].meta["eager_input_vals"]
        match_leaves = pytree.tree_leaves((tuple(match.args), match.kwargs))
        fake_leaves = pytree.tree_leaves((tuple(fake_args), {**fake_kwargs}))
        for leaf, val in zip(match_leaves, fake_leaves, strict=False):
            if isinstance(leaf, Node):
                node_to_val[leaf] = val
        with_eager_vals = trace_fn(replacement_fn, map_arg(args, node_to_val.__getitem__))
        replacement = trace_fn(with_eager_vals, map_arg(args, lambda a: a.meta["val"]))
        assert len(with_eager_vals.graph.nodes) == len(replacement.graph.nodes)
        for old_node, new_node in zip(with_eager_vals.graph.nodes, replacement.graph.nodes,
                                      strict=True):
            if "eager_input_vals" in old_node.meta:
                new_node.meta["eager_input_vals"] = old_node.meta["eager_input_vals"]
    else:
        example_vals = map_arg(args, _example_value)
        modes = [mode_of(v) for v in pytree.tree_leaves(example_vals) if isinstance(v, Tensor)]
        fake_mode = next((m for m in modes if m is not None), None)
        if fake_mode is not None:  # every fake value in the one mode tracing will use
            example_vals = map_aggregate(
                example_vals, lambda v: fake_mode.from_tensor(v)
                if isinstance(v, Tensor) and mode_of(v) not in (None, fake_mode) else v)
        replacement = trace_fn(replacement_fn, example_vals)
    if len(nodes) == 1:
        for n in replacement.graph.nodes:
            transfer_meta(n.meta, nodes[0])
    return replace_with_graph(match, match.ctx.graph, replacement, args)


__all__ = ["is_impure", "replace_by_example", "replace_with_graph", "schema_is_mutable",
           "set_default_trace_fn", "transfer_meta"]
