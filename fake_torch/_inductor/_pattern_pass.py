"""PatternMatcherPass and the entries registered into it (torch._inductor.pattern_matcher).

A pass maps (op, target) -> the pattern entries anchored at nodes of that target. `apply(graph)`
visits the candidate nodes from the last to the first; for each, the entries in registration
order: a match that spans a mutation (an in-place op between its nodes) or two streams is
discarded, one whose `extra_check` fails is skipped, and the first accepted entry rewrites the
graph (a handler call, a lowering node, or a replacement graph). The count returned is the number
of accepted matches.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from fake_torch._dynamo.utils import counters
from fake_torch._higher_order_ops.auto_functionalize import AutoFunctionalized
from fake_torch._inductor import config
from fake_torch._inductor._pattern_exprs import PatternExpr, extract_target, op_overloads
from fake_torch._inductor._pattern_match import Match, is_match
from fake_torch._inductor._pattern_replace import (
    replace_with_graph,
    schema_is_mutable,
    transfer_meta,
)
from fake_torch._inductor.lowering import fallback_node_due_to_unsupported_type
from fake_torch._ops import OpOverload, OpOverloadPacket
from fake_torch._subclasses.fake_tensor import FakeTensorMode, unset_fake_temporarily
from fake_torch.fx import Graph, GraphModule, Node, map_arg
from fake_torch.fx.experimental.symbolic_shapes import guard_or_false

_BACKEND = "inductor"  # torch's TORCHINDUCTOR_PATTERN_MATCH_BACKEND default, its counters' key


def _return_true(match: Match) -> bool:
    return True


@dataclasses.dataclass
class PatternEntry:
    pattern: PatternExpr
    extra_check: Callable[[Match], bool]

    def apply(self, match: Match, graph: Graph, node: Node) -> None:
        raise NotImplementedError

    def register(self, pass_dicts: Any, target: Any = None, prepend: bool = False) -> None:
        """Add this entry under (pattern.op, target) for each of the pattern's targets, in
        each pass (a PatternMatcherPass, a dict, or a sequence of them)."""
        if target is None:
            assert hasattr(self.pattern, "fns")
            for fn in self.pattern.fns:
                self.register(pass_dicts, fn, prepend=prepend)
        elif isinstance(pass_dicts, (dict, PatternMatcherPass)):
            assert hasattr(self.pattern, "op")
            key = (self.pattern.op, target)
            entries = pass_dicts.setdefault(key, []) if isinstance(pass_dicts, dict) \
                else pass_dicts[key]
            if prepend:
                entries.insert(0, self)
            else:
                entries.append(self)
        else:
            for x in pass_dicts:
                self.register(x, target, prepend=prepend)


@dataclasses.dataclass
class LoweringPatternEntry(PatternEntry):
    """Replaces the match by one call of `handler(match, *args, **kwargs)`."""

    handler: Callable[..., Any]

    def apply(self, match: Match, graph: Graph, node: Node) -> None:
        handler = functools.wraps(self.handler)(functools.partial(self.handler, match))
        with graph.inserting_before(node):
            replacement = graph.call_function(handler, tuple(match.args), match.kwargs)
            transfer_meta(replacement.meta, node)
            node.replace_all_uses_with(replacement)
        assert match.nodes[-1] is node
        match.erase_nodes()


@dataclasses.dataclass
class GraphPatternEntry(PatternEntry):
    """Calls `handler(match, *match.args, **match.kwargs)`, inserting before the anchor."""

    handler: Callable[..., Any]

    def apply(self, match: Match, graph: Graph, node: Node) -> None:
        with graph.inserting_before(node):
            self.handler(match, *match.args, **match.kwargs)


@dataclasses.dataclass
class ReplacementPatternEntry(PatternEntry):
    """Replaces the match by the replacement graph register_replacement's check traced."""

    normalize_args: Callable[..., list[Any]]
    pattern_name: str | None = None

    @staticmethod
    def replace_with_graph(match: Match, graph: Graph, replacement_graph: Any,
                           args: Sequence[Any], pass_name: str | None = None) -> list[Node]:
        return replace_with_graph(match, graph, replacement_graph, args, pass_name)

    def apply(self, match: Match, graph: Graph, node: Node) -> None:
        assert match.replacement_graph is not None
        replace_with_graph(match, graph, match.replacement_graph,
                           self.normalize_args(*match.args, **match.kwargs),
                           self.pattern_name or "replace_with_graph")


# --- mutation regions: a match must not span an in-place op ------------------------------------

# in-place names: copy_, relu_, _set_grad_enabled, manual_seed, _enter_autocast (not __rshift__)
_mutation_op_re = re.compile(r"(?<!_)(_$|_[.]|(\b|_)(set|enter|exit|seed)(\b|_))(?!_)")


def is_mutation_op(node: Node) -> bool:
    if isinstance(node.target, OpOverload):
        return schema_is_mutable(node.target)
    if isinstance(node.target, AutoFunctionalized):  # functional by construction
        return False
    if node.op == "call_function":
        if _mutation_op_re.search(getattr(node.target, "__name__", "")):
            return True
    elif node.op == "call_method":
        assert isinstance(node.target, str)
        if _mutation_op_re.search(node.target):
            return True
    return node.kwargs.get("out") is not None


def compute_mutation_region_ids(graph: Graph) -> None:
    region = 0
    for nd in graph.nodes:
        if is_mutation_op(nd):
            region += 1
        nd.meta["mutation_region_id"] = region


def get_mutation_region_id(graph: Graph, node: Node) -> int:
    """`node`'s region; a node added since the last numbering gets its id from the nearest
    numbered node before it."""
    n = node
    while "mutation_region_id" not in n.meta and n is not next(iter(graph.nodes)):
        n = n.prev
    region: int = n.meta.get("mutation_region_id", 0)
    while n is not node:
        n = n.next
        if is_mutation_op(n):
            region += 1
        n.meta["mutation_region_id"] = region
    return region


def should_compute_mutation_region_ids(graph: Graph) -> bool:
    return "mutation_region_id" not in next(iter(graph.nodes)).meta


@contextlib.contextmanager
def _track_mutation_ops(graph: Graph) -> Iterator[list[bool]]:
    """While a handler runs: [whether it created or erased a mutating node]."""
    changed = [False]
    create_node, erase_node = graph.create_node, graph.erase_node

    def tracked_create(*args: Any, **kwargs: Any) -> Node:
        node = create_node(*args, **kwargs)
        changed[0] = changed[0] or is_mutation_op(node)
        return node

    def tracked_erase(to_erase: Node) -> None:
        if not to_erase._erased and is_mutation_op(to_erase):
            changed[0] = True
        erase_node(to_erase)

    saved = {name: graph.__dict__.get(name) for name in ("create_node", "erase_node")}
    graph.__dict__["create_node"], graph.__dict__["erase_node"] = tracked_create, tracked_erase
    try:
        yield changed
    finally:
        for name, value in saved.items():  # back to what was there (nested tracking)
            if value is None:
                del graph.__dict__[name]
            else:
                graph.__dict__[name] = value


# --- the pass ----------------------------------------------------------------------------------


class PatternMatcherPass:
    """Registry of patterns to match and replace in fx graphs."""

    def __init__(self, pass_name: str | None = None, subsystem: str | None = None) -> None:
        self.patterns: defaultdict[tuple[str, Any], list[PatternEntry]] = defaultdict(list)
        self.pass_name = pass_name
        self.subsystem = subsystem
        # pattern text -> the search graphs (as text) that produced it, to refuse duplicates
        self.seen_patterns: dict[str, list[str | None]] = defaultdict(list)

    def __getitem__(self, item: tuple[str, Any]) -> list[PatternEntry]:
        return self.patterns[item]

    def apply(self, gm: GraphModule | Graph) -> int:
        """Apply every registered pattern to the graph; the number of matches applied."""
        if not self.patterns:
            return 0
        if isinstance(gm, GraphModule):
            graph = gm.graph
        elif isinstance(gm, Graph):
            graph = gm
        else:
            raise RuntimeError("The input to PatternMatcherPass must be a GraphModule or a "
                               f"Graph, but got {type(gm)}")
        if should_compute_mutation_region_ids(graph):
            compute_mutation_region_ids(graph)
        keys = set(self.patterns)
        has_call_module = any(op == "call_module" for op, _ in keys)
        # candidates, last first, fixed before any rewrite (nodes added later are not visited)
        candidates = [n for n in graph.nodes
                      if (n.op == "call_module" and has_call_module)
                      or (n.op != "call_module" and (n.op, n.target) in keys)]
        count = 0
        for node in reversed(candidates):
            target = extract_target(node)
            if node.op == "call_module" and (node.op, target) not in self.patterns:
                continue
            if fallback_node_due_to_unsupported_type(node, allow_cpu_inputs=False):
                continue
            for entry in self.patterns[(node.op, target)]:
                if node._erased:
                    break
                m = entry.pattern.match(node)
                if not is_match(m):
                    continue
                assert isinstance(m, Match)
                if len({get_mutation_region_id(graph, n) for n in m.nodes}) != 1:
                    continue  # crosses a mutation
                if len({n.meta.get("custom", {}).get("stream", 0) for n in m.nodes}) != 1:
                    continue  # crosses a stream boundary
                if not guard_or_false(entry.extra_check(m)):
                    continue
                count += 1
                self._apply_entry(entry, m, graph, node)
                counters[_BACKEND]["pattern_matcher_count"] += 1
                counters[_BACKEND]["pattern_matcher_nodes"] += len(m.nodes)
        return count

    @staticmethod
    def _apply_entry(entry: PatternEntry, m: Match, graph: Graph, node: Node) -> None:
        """Rewrite, renumbering mutation regions where the rewrite may have moved them."""
        if isinstance(entry, GraphPatternEntry):
            with _track_mutation_ops(graph) as changed:
                entry.apply(m, graph, node)
            if changed[0]:
                compute_mutation_region_ids(graph)
            return
        renumber = not isinstance(entry, ReplacementPatternEntry) or \
            any(map(is_mutation_op, m.nodes)) or \
            any(map(is_mutation_op, m.replacement_graph.graph.nodes))
        entry.apply(m, graph, node)
        if renumber:
            compute_mutation_region_ids(graph)

    def clear(self) -> None:
        self.patterns.clear()


def register_lowering_pattern(pattern: PatternExpr,
                              extra_check: Callable[[Match], bool] = _return_true, *,
                              pass_dict: Any, prepend: bool = False,
                              ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: replace each match by one node calling the decorated handler."""
    def decorator(handler: Callable[..., Any]) -> Callable[..., Any]:
        assert callable(handler)
        LoweringPatternEntry(pattern=pattern, extra_check=extra_check,
                             handler=handler).register(pass_dict, prepend=prepend)
        handler._inductor_lowering_function = True  # type: ignore[attr-defined]
        return handler
    return decorator


def register_graph_pattern(pattern: PatternExpr,
                           extra_check: Callable[[Match], bool] = _return_true, *,
                           pass_dict: Any, prepend: bool = False,
                           ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: on each match, call `handler(match, *args, **kwargs)` to edit the graph."""
    def decorator(handler: Callable[..., Any]) -> Callable[..., Any]:
        assert callable(handler)
        GraphPatternEntry(pattern=pattern, extra_check=extra_check,
                          handler=handler).register(pass_dict, prepend=prepend)
        return handler
    return decorator


def stable_topological_sort(graph: Graph) -> None:
    """Reorder `graph` so every node follows its inputs, moving as few nodes as possible
    (nodes already in order keep their order)."""
    pending = list(reversed(graph.nodes))
    ready: set[Node] = set()
    waiting: defaultdict[Node, list[Node]] = defaultdict(list)
    cursor: Node | None = None
    while pending:
        node = pending.pop()
        inputs: list[Any] = []
        map_arg((node.args, node.kwargs), inputs.append)
        waiting_for = [x for x in inputs if x not in ready]
        if waiting_for:
            # wait on the last input, so an already sorted graph rechecks each node once
            waiting[waiting_for[-1]].append(node)
        else:
            ready.add(node)
            if cursor and cursor.next is not node:
                cursor.append(node)
            cursor = node
            pending.extend(reversed(waiting.pop(node, ())))
    assert not waiting and len(ready) == len(graph.nodes)


def init_once_fakemode(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Run a lazy pattern-registration function once, under a fresh FakeTensorMode."""
    params = inspect.signature(fn).parameters

    @functools.cache
    @functools.wraps(fn)
    def lazy_init(input_device: Any | None = None,
                  get_decomp_fn: Callable[..., Any] | None = None) -> Any:
        saved = counters[_BACKEND].copy()
        kwargs: dict[str, Any] = {}
        if "input_device" in params:
            kwargs["input_device"] = input_device
        if "get_decomp_fn" in params and get_decomp_fn is not None:
            kwargs["get_decomp_fn"] = get_decomp_fn
        with unset_fake_temporarily(), FakeTensorMode():
            result = fn(**kwargs)
        counters[_BACKEND] = saved  # tracing's own matches are not the program's
        return result

    return lazy_init


def config_flag(name: str) -> Callable[[Match], Any]:
    """An extra_check that reads torch._inductor.config.<name>."""
    def flag_check(match: Match) -> Any:
        return getattr(config, name)
    return flag_check


def get_arg_value(node: Node, arg_number: int, kwarg_name: str | None = None) -> Any:
    if len(node.args) > arg_number:
        return node.args[arg_number]
    return None if kwarg_name is None else node.kwargs.get(kwarg_name)


def filter_nodes(nodes: Iterable[Node], fn: Any) -> list[Node]:
    fns = [fn, *(op_overloads(fn) if isinstance(fn, OpOverloadPacket) else ())]
    return [node for node in nodes if node.target in fns]


def is_start_of_fx_graph(graph: Graph, node: Node) -> bool:
    return node is next(iter(graph.nodes))


__all__ = ["GraphPatternEntry", "LoweringPatternEntry", "PatternEntry", "PatternMatcherPass",
           "ReplacementPatternEntry", "compute_mutation_region_ids", "config_flag",
           "filter_nodes", "get_arg_value", "get_mutation_region_id", "init_once_fakemode",
           "is_mutation_op", "is_start_of_fx_graph", "register_graph_pattern",
           "register_lowering_pattern", "should_compute_mutation_region_ids",
           "stable_topological_sort"]
