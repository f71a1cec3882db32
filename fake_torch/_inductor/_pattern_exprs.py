"""The pattern matcher's expressions (torch._inductor.pattern_matcher's PatternExpr family);
what a match returns is in _pattern_match.

A pattern is a DAG of PatternExpr objects mirroring the fx subgraph it finds: CallFunction(fn,
*args) matches a node calling `fn` whose arguments match the child patterns; KeywordArg("x") and
Arg() capture whatever node or constant stands in their place (handed to the handler);
Ignored() matches anything. Matching starts at the pattern's output node and walks its inputs.
"""

from __future__ import annotations

import inspect
import itertools
import operator
from abc import ABC, abstractmethod
from collections.abc import Generator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from fake_torch import _namespace
from fake_torch._inductor._pattern_match import (
    FailedMatch,
    Match,
    MatchContext,
    MatchResult,
    is_match,
)
from fake_torch._ops import OpOverload, OpOverloadPacket
from fake_torch.fx import Node
from fake_torch.utils import _pytree as pytree

if TYPE_CHECKING:
    from fake_torch._inductor._pattern_print import PatternPrettyPrinter


class Multiple:
    """The type of MULTIPLE: a node pattern whose node may have any number of users."""

    def __init__(self) -> None:
        assert "MULTIPLE" not in globals() or self is MULTIPLE, "Multiple is a singleton"


MULTIPLE = Multiple()


class PatternExpr(ABC):
    """Base of the pattern expressions; `match(node)` tries this pattern rooted at `node`."""

    @abstractmethod
    def _match(self, node: Any, ctx: MatchContext) -> MatchResult: ...

    def match(self, node: Node) -> MatchResult:
        try:
            return MatchContext([self], graph=node.graph).match(self, node)
        except FailedMatch as e:
            return e

    def has_multiple_users(self) -> bool:
        return False

    def __repr__(self) -> str:
        return self.__class__.__name__ + "()"

    def find_anchor_nodes(self, ctx: MatchContext,
                          searched: set[Node]) -> Generator[Node | None, None, None]:
        if self in ctx.pattern_to_node:
            yield ctx.pattern_to_node[self]

    def pattern_eq(self, other: Any) -> bool:
        """Whether `other` has the same structure (not a match)."""
        return isinstance(other, self.__class__)


class Arg(PatternExpr):
    """Captures anything as the next positional input of the handler."""

    def _match(self, node: Any, ctx: MatchContext) -> MatchResult:
        return Match(ctx, self, args=[node])


class Ignored(PatternExpr):
    """Matches anything, captures nothing."""

    def _match(self, node: Any, ctx: MatchContext) -> MatchResult:
        return Match(ctx, self)

    def __repr__(self) -> str:
        return "*"

    def pretty_print(self, pp: PatternPrettyPrinter) -> str:
        return "Ignored()"


class KeywordArg(PatternExpr):
    """Captures anything as the handler's keyword argument `name`."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"KeywordArg({self.name!r})"

    def _match(self, node: Any, ctx: MatchContext) -> MatchResult:
        return Match(ctx, self, kwargs={self.name: node})

    def pattern_eq(self, other: Any) -> bool:
        return super().pattern_eq(other) and self.name == other.name


class ExclusiveKeywordArg(PatternExpr):
    """KeywordArg that fails when the same node was already taken by another exclusive arg."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"ExclusiveKeywordArg({self.name!r})"

    def _match(self, node: Any, ctx: MatchContext) -> MatchResult:
        if node in ctx.exclusive_node_set:
            return FailedMatch("exclusive arg appears twice")
        ctx.exclusive_node_set.append(node)
        return Match(ctx, self, kwargs={self.name: node})

    def pattern_eq(self, other: Any) -> bool:
        return super().pattern_eq(other) and self.name == other.name


def op_overloads(packet: OpOverloadPacket) -> list[Any]:
    """A packet's OpOverloads (torch's OpOverloadPacket.op_overloads())."""
    return [getattr(packet, name) for name in packet.overloads()]


def extract_target(node: Node) -> Any:
    """A node's target as patterns key it: a call_module node's is its module's class."""
    if node.op == "call_module":
        assert isinstance(node.target, str)
        root = node.graph.owning_module
        if root is None:
            raise AssertionError("node.graph.owning_module must not be None")
        mod: Any = root
        for atom in node.target.split("."):
            mod = getattr(mod, atom)
        return mod.__class__
    return node.target


class _TargetExpr(PatternExpr):
    """A pattern for one node, by op and target (`fns`: the targets accepted; a packet stands
    for all its overloads); `users`: how many users the node must have (or MULTIPLE)."""

    op: str

    def __init__(self, fns: Any, users: Multiple | int = 1) -> None:
        fns = [fns] if callable(fns) or isinstance(fns, str) else list(fns)
        for fn in list(fns):
            if isinstance(fn, OpOverloadPacket):
                fns.extend(op_overloads(fn))
        self.fns: list[Any] = fns
        self.fns_set = set(fns)
        self.users = users

    def fns_repr(self) -> str:
        first = self.fns[0]
        first_repr = first if isinstance(first, str) else first.__name__
        if len(self.fns) > 1:
            return f"[{first_repr}, ...]"
        if first is getattr(_namespace.torch(), first_repr, None):
            return f"torch.{first_repr}"
        if first is getattr(operator, first_repr, None):
            return f"operator.{first_repr}"
        if isinstance(first, OpOverload):
            return str(first)
        return str(first_repr)

    def __repr__(self) -> str:
        if self.users is MULTIPLE:
            comma_users = ", MULTIPLE"
        elif self.users != 1:
            comma_users = f", {self.users})"  # torch's text, stray parenthesis included
        else:
            comma_users = ""
        return f"{self.__class__.__name__}({self.fns_repr()}{comma_users})"

    def has_multiple_users(self) -> bool:
        return isinstance(self.users, Multiple) or self.users > 1

    def find_anchor_nodes(self, ctx: MatchContext,
                          searched: set[Node]) -> Generator[Node | None, None, None]:
        raise NotImplementedError

    def _match_fns(self, node: Any) -> bool:
        return isinstance(node, Node) and node.op == self.op and \
            extract_target(node) in self.fns_set

    def _match_users(self, node: Node, ctx: MatchContext) -> bool:
        return self in ctx.outputs or self.users is MULTIPLE or len(node.users) == self.users

    def pattern_eq(self, other: Any) -> bool:
        return super().pattern_eq(other) and self.op == other.op and \
            self.fns == other.fns and self.users == other.users


def _normalize_call(target: Any, args: tuple[Any, ...], kwargs: dict[str, Any],
                    ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """torch.fx.operator_schemas.normalize_function for Python signatures: bind, fill defaults,
    keep as many positionals as given. None where the signature is unknown or unsupported
    (fake_torch's OpOverloads carry no parsed schema)."""
    try:
        sig = inspect.signature(inspect.unwrap(target))
    except (TypeError, ValueError):
        return None
    kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    if any(p.kind not in kinds for p in sig.parameters.values()):
        return None
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError:
        return None
    bound.apply_defaults()
    new_args, new_kwargs = [], {}
    for i, name in enumerate(sig.parameters):
        if i < len(args):
            new_args.append(bound.arguments[name])
        else:
            new_kwargs[name] = bound.arguments[name]
    return tuple(new_args), new_kwargs


def _to_tuples(x: Any) -> Any:
    """Lists (fx's immutable lists included) as tuples, recursively, for structural compares."""
    if isinstance(x, (list, tuple)) and not hasattr(x, "_fields"):
        return tuple(_to_tuples(y) for y in x)
    if isinstance(x, dict):
        return {k: _to_tuples(v) for k, v in x.items()}
    return x


class _TargetArgsExpr(_TargetExpr):
    """A node pattern that also matches the node's args and kwargs against sub-patterns and
    constants (lists compare element-wise)."""

    def __init__(self, fns: Any, *args: Any, _users: int | Multiple = 1, **kwargs: Any) -> None:
        super().__init__(fns, _users)
        self.args = tuple(args)
        self.kwargs = dict(kwargs)
        nested = any(isinstance(x, (dict, list, tuple))
                     for x in itertools.chain(args, kwargs.values()))
        self.flatten = self.pytree_flatten if nested else self.simple_flatten
        self.flat_args_kwargs = self.flatten(self.args, self.kwargs)

    @staticmethod
    def simple_flatten(args: Sequence[Any], kwargs: Mapping[Any, Any],
                       ) -> tuple[Sequence[Any], Any]:
        return (*args, *kwargs.values()), (len(args), *kwargs.keys())

    @staticmethod
    def pytree_flatten(args: Sequence[Any], kwargs: Mapping[Any, Any],
                       ) -> tuple[Sequence[Any], Any]:
        return pytree.tree_flatten(_to_tuples((tuple(args), dict(kwargs))))

    def __repr__(self) -> str:
        args = [self.fns_repr(), *map(repr, self.args),
                *[f"{k}={v}" for k, v in self.kwargs.items()]]
        if self.users is MULTIPLE:
            args.append("_users=MULTIPLE")
        elif self.users != 1:
            args.append(f"_users={self.users}")
        return f"{self.__class__.__name__}({', '.join(args)})"

    def pretty_print(self, pp: PatternPrettyPrinter) -> str:
        args = [self.fns_repr(), *(pp.pretty_print(x) for x in self.args),
                *[f"{k}={pp.pretty_print(v)}" for k, v in self.kwargs.items()]]
        if self.users is MULTIPLE:
            args.append("_users=MULTIPLE")
        elif self.users != 1:
            args.append(f"_users={self.users}")
        return f"{self.__class__.__name__}({', '.join(args)})"

    def _match(self, node: Any, ctx: MatchContext) -> MatchResult:
        if not self._match_fns(node) or len(node.args) != len(self.args):
            return FailedMatch("function_mismatch: node={}, pattern={}", node, self)
        if not self._match_users(node, ctx):
            return FailedMatch("multiple_users {}", self)
        node_args, node_kwargs = node.args, node.kwargs
        if len(node_kwargs) < len(self.kwargs):
            # the pattern names kwargs the call left to their defaults: fill them in
            normalized = _normalize_call(node.target, node_args, node_kwargs)
            if normalized is None:
                return FailedMatch("function_mismatch: node={}, pattern={}", node, self)
            node_args, node_kwargs = normalized
            if len(node_args) != len(self.args) or len(node_kwargs) < len(self.kwargs):
                return FailedMatch("function_mismatch: node={}, pattern={}", node, self)
        node_kwargs = {k: v for k, v in node_kwargs.items() if k in self.kwargs}
        node_items, node_spec = self.flatten(node_args, node_kwargs)
        self_items, self_spec = self.flat_args_kwargs
        if node_spec != self_spec:
            return FailedMatch("args_structure {} {}", node_spec, self_spec)
        assert len(node_items) == len(self_items)
        m = Match(ctx, self)
        for pattern, child_node in zip(self_items, node_items, strict=False):
            if isinstance(pattern, PatternExpr):
                child_match = ctx.match(pattern, child_node)
                if not is_match(child_match):
                    return child_match
                assert isinstance(child_match, Match)
                m.extend(child_match)
            elif isinstance(child_node, Node) or child_node != pattern:
                return FailedMatch("constant_args: {} {!r}!={pattern!r}", node, child_node,
                                   pattern=pattern)
        m.nodes.append(node)
        m.targets[self] = node.target
        return m

    def find_anchor_nodes(self, ctx: MatchContext,
                          searched: set[Node]) -> Generator[Node | None, None, None]:
        """Nodes this pattern might match that use a node an already-matched input bound
        (a multi-output pattern's other outputs are found through shared inputs)."""
        if self in ctx.pattern_to_node:
            yield ctx.pattern_to_node[self]
            return
        for pattern in self.flat_args_kwargs[0]:
            if not isinstance(pattern, PatternExpr):
                continue
            for other_node in pattern.find_anchor_nodes(ctx, searched):
                if not isinstance(other_node, Node):
                    continue
                for node in other_node.users:
                    if node not in searched and self._match_fns(node):
                        yield node
                        searched.add(node)

    def pattern_eq(self, other: Any) -> bool:
        return super().pattern_eq(other) and \
            self.flat_args_kwargs[1] == other.flat_args_kwargs[1] and \
            all(a.pattern_eq(b) if isinstance(a, PatternExpr) else a == b
                for a, b in zip(self.flat_args_kwargs[0], other.flat_args_kwargs[0], strict=False))


class CallFunction(_TargetArgsExpr):
    """Matches a call_function node: `fns[i](*args, **kwargs)`."""

    op = "call_function"


class CallMethod(_TargetArgsExpr):
    """Matches a call_method node: `args[0].fns[i](*args[1:], **kwargs)`."""

    op = "call_method"


class CallModule(_TargetArgsExpr):
    """Matches a call_module node whose module is an instance of `fns[i]`."""

    op = "call_module"


class _TargetExprVarArgs(_TargetExpr):
    """A node pattern with any arguments: they become the handler's args and kwargs."""

    def _match(self, node: Any, ctx: MatchContext) -> MatchResult:
        if not self._match_fns(node):
            return FailedMatch("function_mismatch")
        if not self._match_users(node, ctx):
            return FailedMatch("multiple_users")
        m = Match(ctx, self)
        m.nodes.append(node)
        m.targets[self] = node.target
        m.args.extend(node.args)
        m.kwargs.update(node.kwargs)
        return m


class CallFunctionVarArgs(_TargetExprVarArgs):
    op = "call_function"


class CallMethodVarArgs(_TargetExprVarArgs):
    op = "call_method"


class CallModuleVarArgs(_TargetExprVarArgs):
    op = "call_module"


class ListOf(PatternExpr):
    """Matches a list whose every element (some, with partial=True) matches `pattern`."""

    def __init__(self, pattern: PatternExpr, partial: bool = False) -> None:
        assert isinstance(pattern, PatternExpr)
        self.pattern = pattern
        self.partial = partial

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.pattern})"

    def _match(self, node: Any, ctx: MatchContext) -> MatchResult:
        if not isinstance(node, (list, tuple)) or len(node) == 0:
            return FailedMatch("non_list")
        m = Match(ctx, self)
        # multi-user sub-patterns carry over, so shared nodes bind once across elements
        pattern_to_node = ctx.filter_multi_user_patterns()
        matched = False
        for i, child_node in enumerate(node):
            child_ctx = MatchContext(ctx.outputs, pattern_to_node, graph=child_node.graph)
            child_match = child_ctx.match(self.pattern, child_node)
            pattern_to_node = child_ctx.filter_multi_user_patterns()
            if not is_match(child_match):
                if not self.partial:
                    return FailedMatch("list[{}]: {}", i, child_match)
                continue
            assert isinstance(child_match, Match)
            matched = True
            m.extend(child_match.bundle())
        if not matched:
            return FailedMatch("list: no_match")
        return m.bundle()

    def pattern_eq(self, other: Any) -> bool:
        return super().pattern_eq(other) and self.pattern.pattern_eq(other.pattern) and \
            self.partial == other.partial


class MultiOutputPattern(PatternExpr):
    """Several output patterns matched together: the first anchors the match, the others are
    found among the users of nodes already bound."""

    def __init__(self, outputs: Sequence[PatternExpr | None]) -> None:
        assert isinstance(outputs[0], _TargetExpr)
        assert all(x is None or isinstance(x, PatternExpr) for x in outputs), outputs
        self.outputs: list[PatternExpr | None] = list(outputs)
        self.op = outputs[0].op

    @property
    def fns(self) -> list[Any]:
        first = self.outputs[0]
        assert isinstance(first, _TargetExpr)
        return first.fns

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}({self.outputs})"

    def pretty_print(self, pp: PatternPrettyPrinter) -> str:
        args = [pp.pretty_print(x) for x in self.outputs]
        joined = ",\n  ".join(args)
        return f"{self.__class__.__name__}([{joined}\n])"

    def _match(self, node: Any, ctx: MatchContext) -> MatchResult:
        first = self.outputs[0]
        assert first is not None
        m = ctx.match(first, node)
        if not is_match(m):
            return m
        assert isinstance(m, Match)
        for pattern in self.outputs[1:]:
            if pattern is None:
                continue
            child_match = self._match_from_anchors(pattern, ctx)
            if not is_match(child_match):
                return child_match
            assert isinstance(child_match, Match)
            m.extend(child_match)
        return m

    def _match_from_anchors(self, pattern: PatternExpr, ctx: MatchContext) -> MatchResult:
        prior = dict(ctx.pattern_to_node)
        m: MatchResult = FailedMatch("no anchor found")
        for node in pattern.find_anchor_nodes(ctx, set()):
            m = ctx.match(pattern, node)
            if is_match(m):
                return m
            ctx.pattern_to_node = dict(prior)  # undo the partial match
        return m

    def match(self, node: Node) -> MatchResult:
        try:
            return MatchContext(self.outputs, graph=node.graph).match(self, node)
        except FailedMatch as e:
            return e

    def pattern_eq(self, other: Any) -> bool:
        return super().pattern_eq(other) and len(self.outputs) == len(other.outputs) and \
            all(a.pattern_eq(b) if isinstance(a, PatternExpr) else a == b
                for a, b in zip(self.outputs, other.outputs, strict=False))


class RepeatedExpr(PatternExpr):
    """Matches `inner_pattern` at the node and at every sibling it anchors (e.g. all the
    getitems after a split)."""

    def __init__(self, inner_pattern: _TargetExpr) -> None:
        self.inner_pattern = inner_pattern
        self.op = inner_pattern.op

    @property
    def fns(self) -> list[Any]:
        return self.inner_pattern.fns

    def _match(self, node: Any, ctx: MatchContext) -> MatchResult:
        m = ctx.match(self.inner_pattern, node)
        if not is_match(m):
            return m
        assert isinstance(m, Match)
        ctx.pattern_to_node.pop(self.inner_pattern)
        for anchor_node in self.inner_pattern.find_anchor_nodes(ctx, {node}):
            anchor_m = MatchContext([self], graph=node.graph).match(self.inner_pattern,
                                                                    anchor_node)
            if not is_match(anchor_m):
                return anchor_m
            assert isinstance(anchor_m, Match)
            m.extend(anchor_m)
        return m

    def pattern_eq(self, other: Any) -> bool:
        return super().pattern_eq(other) and self.inner_pattern.pattern_eq(other.inner_pattern)


__all__ = [
    "MULTIPLE",
    "Arg",
    "CallFunction",
    "CallFunctionVarArgs",
    "CallMethod",
    "CallMethodVarArgs",
    "CallModule",
    "CallModuleVarArgs",
    "ExclusiveKeywordArg",
    "Ignored",
    "KeywordArg",
    "ListOf",
    "MultiOutputPattern",
    "Multiple",
    "PatternExpr",
    "RepeatedExpr",
    "extract_target",
]
