"""torch._inductor.fx_passes.joint_graph: the passes inductor runs on the graph aot_autograd
traced, before view_to_reshape and the post-grad passes (on an inference graph too).

Run, in torch 2.13's order: config.joint_custom_pre_pass, `remove_noop_ops` (always, as
torch), with config.pattern_matcher the early patterns that drop pointless views (a view to
its input's own size, a view of a view back to the first one's input size, a permute undone by
the next), config.joint_custom_post_pass, and the stable topological sort when a pass changed
something. Not run: torch's folding of uniform constants into `full`
(config.joint_graph_constant_folding; one fill either way) and its other pattern passes
(fake_torch's scheduler fuses what remains).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fake_torch._inductor import config
from fake_torch._inductor._pattern_exprs import CallFunction, KeywordArg
from fake_torch._inductor._pattern_match import Match
from fake_torch._inductor._pattern_pass import (
    PatternMatcherPass,
    register_graph_pattern,
    stable_topological_sort,
)
from fake_torch._inductor.custom_graph_pass import get_custom_graph_passes
from fake_torch._inductor.fx_passes.post_grad import remove_noop_ops
from fake_torch._ops import ops
from fake_torch._sym import SymInt
from fake_torch.fx import GraphModule, Node
from fake_torch.fx.experimental.symbolic_shapes import guard_or_false, guard_or_true

early_patterns = PatternMatcherPass()


def definitely_equal(old_sizes: Sequence[Any], new_sizes: Sequence[Any]) -> bool:
    """True when a view's `new_sizes` (ints, SymInts or size nodes; one -1 allowed) are known
    to be `old_sizes` (a tensor's shape), without guarding."""
    if len(old_sizes) != len(new_sizes):
        return False
    inferred = 0
    for old, new in zip(old_sizes, new_sizes, strict=True):
        if isinstance(new, Node):
            new = new.meta["val"]
        assert isinstance(old, (int, SymInt)), type(old)
        assert isinstance(new, (int, SymInt)), type(new)
        if guard_or_false(old == new):
            continue
        if guard_or_true(new != -1):
            return False
        inferred += 1
        if inferred > 1:
            return False
    return True


def _register_early_patterns() -> None:
    view, permute = ops.aten.view.default, ops.aten.permute.default

    @register_graph_pattern(CallFunction(view, KeywordArg("arg"), KeywordArg("size")),
                            pass_dict=early_patterns)
    def pointless_view(match: Match, arg: Node, size: Sequence[Any]) -> None:
        """A view to its input's own size."""
        node = match.output_node()
        source = node.args[0]
        assert isinstance(source, Node)
        if definitely_equal(list(source.meta["val"].shape), size):
            node.replace_all_uses_with(source)
            match.erase_nodes()

    @register_graph_pattern(
        CallFunction(view, CallFunction(view, KeywordArg("arg"), KeywordArg("size1")),
                     KeywordArg("size2")), pass_dict=early_patterns)
    def pointless_view_pair(match: Match, arg: Node, size1: Sequence[Any],
                            size2: Sequence[Any]) -> None:
        """A view of a view back to the first view's input size."""
        if definitely_equal(list(arg.meta["val"].shape), size2):
            match.output_node().replace_all_uses_with(arg)
            match.erase_nodes()

    @register_graph_pattern(
        CallFunction(permute, CallFunction(permute, KeywordArg("arg"), KeywordArg("perm1")),
                     KeywordArg("perm2")), pass_dict=early_patterns)
    def pointless_permute_pair(match: Match, arg: Node, perm1: Sequence[int],
                               perm2: Sequence[int]) -> None:
        """A permute undone by the next."""
        if any(perm1[perm2[i]] != i for i in range(len(perm1))):
            return
        match.output_node().replace_all_uses_with(arg)
        match.erase_nodes()


_register_early_patterns()


def joint_graph_passes(graph: GraphModule) -> GraphModule:
    """The joint-graph passes on `graph` (changed in place, and returned)."""
    count = 0
    for custom in get_custom_graph_passes(config.joint_custom_pre_pass):
        custom(graph.graph)
        count += 1
    remove_noop_ops(graph.graph)
    if config.pattern_matcher:
        count += early_patterns.apply(graph.graph)
    for custom in get_custom_graph_passes(config.joint_custom_post_pass):
        custom(graph.graph)
        count += 1
    if count:
        stable_topological_sort(graph.graph)
        graph.graph.lint()
    graph.recompile()
    return graph


__all__ = ["definitely_equal", "early_patterns", "joint_graph_passes"]
