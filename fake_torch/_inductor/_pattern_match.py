"""What matching a pattern gives (torch._inductor.pattern_matcher's Match, FailedMatch,
MatchContext): the nodes a pattern covered and the inputs it captured, or why it failed."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fake_torch._inductor._pattern_replace import replace_by_example, replace_with_graph
from fake_torch.fx import Graph, Node

if TYPE_CHECKING:
    from fake_torch._inductor._pattern_exprs import PatternExpr, _TargetExpr


class Match:
    """One place a pattern matched: the captured `args`/`kwargs` (what the handler receives),
    the graph `nodes` the pattern covered (inputs first, the anchor last), and `ctx`."""

    def __init__(self, ctx: MatchContext, pattern: PatternExpr,
                 args: Sequence[Any] | None = None, kwargs: dict[str, Any] | None = None) -> None:
        self.pattern = pattern
        self.args: list[Any] = list(args or [])
        self.kwargs: dict[str, Any] = kwargs or {}
        self.nodes: list[Node] = []
        self.targets: dict[_TargetExpr, Any] = {}  # node pattern -> the target it matched
        self.ctx = ctx
        self.replacement_graph: Any = None  # register_replacement's traced replacement

    @property
    def graph(self) -> Graph:
        return self.ctx.graph

    def extend(self, other: Match) -> None:
        """Merge a child's match into this one (a kwarg captured twice must agree)."""
        for key in self.kwargs.keys() & other.kwargs.keys():
            if self.kwargs[key] != other.kwargs[key]:
                raise FailedMatch("kwarg mismatch: {}", key)
        self.args.extend(other.args)
        self.nodes.extend(other.nodes)
        self.kwargs.update(other.kwargs)
        self.targets.update(other.targets)

    def bundle(self) -> Match:
        """Wrap the captured args in one tuple (ListOf's per-element results)."""
        self.args = [tuple(self.args)] if self.args else []
        return self

    def __repr__(self) -> str:
        return f"Match(..., {self.args}, {self.kwargs})"

    def erase_nodes(self) -> None:
        """Erase the matched nodes nothing uses any more (anchor first)."""
        for n in reversed(self.nodes):
            if not n._erased and not n.users:
                self.graph.erase_node(n)

    def output_nodes(self) -> list[Node | None]:
        return [self.ctx.pattern_to_node[p] if p is not None else None
                for p in self.ctx.outputs]

    def output_node(self) -> Node:
        return next(p for p in self.output_nodes() if p)

    def replace_with_graph(self, replacement_graph: Any, args: Sequence[Any]) -> list[Node]:
        """Insert `replacement_graph` (a GraphModule) fed by `args` in place of the match;
        the nodes added."""
        return replace_with_graph(self, self.ctx.graph, replacement_graph, args)

    def replace_by_example(self, replacement_fn: Callable[..., Any], args: Sequence[Any],
                           trace_fn: Callable[..., Any] | None = None,
                           run_functional_passes: bool = True) -> list[Node]:
        """Trace `replacement_fn` on the example values of `args` (their meta["val"]) and
        insert the traced graph in place of the match (trace_fn defaults to fwd_only)."""
        return replace_by_example(self, replacement_fn, args, trace_fn, run_functional_passes)


class FailedMatch(RuntimeError):
    """A pattern did not match; false in a boolean test, its message formatted lazily."""

    def __init__(self, format_string: str, *args: Any, **kwargs: Any) -> None:
        self.format_string = format_string
        if len(format_string) > 200:
            raise RuntimeError("Format string too long - use lazy construction of strings "
                               f"instead. Format string is\n {format_string}")
        self.args = args
        self.kwargs = kwargs

    def __str__(self) -> str:
        return self.format_string.format(*self.args, **self.kwargs)

    def __bool__(self) -> bool:
        return False


MatchResult = Match | FailedMatch


def is_match(m: MatchResult) -> bool:
    return bool(m)


class MatchContext:
    """State of one match attempt: which node each sub-pattern bound (a sub-pattern used twice
    must bind the same node), and the nodes ExclusiveKeywordArgs took."""

    def __init__(self, outputs: list[PatternExpr | None],
                 pattern_to_node: Mapping[PatternExpr, Node | None] | None = None, *,
                 graph: Graph) -> None:
        self.outputs = outputs
        self.pattern_to_node: dict[PatternExpr, Node | None] = dict(pattern_to_node or {})
        self.graph = graph
        self.exclusive_node_set: list[Any] = []

    def match(self, pattern: PatternExpr, node: Any) -> MatchResult:
        if pattern in self.pattern_to_node:
            if self.pattern_to_node[pattern] == node:
                return Match(self, pattern)  # this sub-pattern already bound this node
            return FailedMatch("repeated pattern differs")
        m = pattern._match(node, self)
        assert pattern not in self.pattern_to_node
        self.pattern_to_node[pattern] = node if m else None
        return m

    def filter_multi_user_patterns(self) -> dict[PatternExpr, Node]:
        return {p: n for p, n in self.pattern_to_node.items()
                if p.has_multiple_users() and n is not None}


__all__ = ["FailedMatch", "Match", "MatchContext", "MatchResult", "is_match"]
