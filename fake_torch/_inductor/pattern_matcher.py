"""torch._inductor.pattern_matcher: graph rewrites by pattern (search a subgraph, replace it).

The classes that passes build and subclass are here: `PatternMatcherPass` (a set of patterns,
applied to a graph) and `PatternPrettyPrinter`. Registering a pattern needs torch's tracing of
the search and replacement functions into patterns, which fake_torch does not emulate: the
registration functions raise NotImplementedError. A pass with no patterns applies honestly:
it matches nothing and returns 0.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import Any

from fake_torch._inductor.lowering import fallback_node_due_to_unsupported_type
from fake_torch.fx import Graph, GraphModule


def _not_emulated(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch._inductor.pattern_matcher.{name} is not emulated by fake_torch: it does not "
        "trace functions into search/replace patterns")


class Match:
    """One place a pattern matched (made only by matching, which fake_torch does not do)."""

    def __init__(self, ctx: Any, pattern: Any, args: Sequence[Any] | None = None,
                 kwargs: dict[str, Any] | None = None) -> None:
        raise _not_emulated("Match")


class CallFunctionVarArgs:
    """A pattern: a call_function node of `fns` with any arguments."""

    def __init__(self, fns: Any, users: int = 1) -> None:
        self.fns = list(fns) if isinstance(fns, (list, tuple)) else [fns]
        self.users = users


class PatternMatcherPass:
    """Patterns grouped by the node target they start at, applied to a graph by `apply`."""

    def __init__(self, pass_name: str | None = None, subsystem: str | None = None) -> None:
        self.patterns: defaultdict[tuple[str, Any], list[Any]] = defaultdict(list)
        self.pass_name = pass_name
        self.subsystem = subsystem
        self.seen_patterns: dict[str, list[str | None]] = defaultdict(list)

    def __getitem__(self, item: tuple[str, Any]) -> list[Any]:
        return self.patterns[item]

    def apply(self, gm: GraphModule | Graph) -> int:
        """Rewrite every match in `gm`; the number of matches. With no patterns: 0."""
        if self.patterns:
            raise _not_emulated("PatternMatcherPass.apply")
        return 0

    def clear(self) -> None:
        self.patterns.clear()


class PatternPrettyPrinter:
    """Prints a pattern as the Python that builds it (for pattern dumps)."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {}
        self.memoized_objs_names: dict[Any, str] = {}
        self.memoized_objs_pp: dict[Any, str] = {}

    @staticmethod
    def run(obj: Any, output_name: str = "output") -> str:
        raise _not_emulated("PatternPrettyPrinter.run")

    def pretty_print(self, obj: Any) -> str:
        raise _not_emulated("PatternPrettyPrinter.pretty_print")

    def memoize(self, obj: Any) -> str:
        raise _not_emulated("PatternPrettyPrinter.memoize")


def register_replacement(search_fn: Callable[..., Any], replace_fn: Callable[..., Any],
                         example_inputs: Sequence[Any], trace_fn: Callable[..., Any],
                         pass_dicts: Any, extra_check: Callable[[Match], bool] | None = None,
                         scalar_workaround: dict[str, float | int] | None = None,
                         exclusive_arg_names: Sequence[str] = (),
                         search_fn_pattern: Any = None, skip_duplicates: bool = False,
                         pattern_name: str | None = None,
                         get_decomp_fn: Callable[..., Any] | None = None) -> bool:
    """Register "replace what `search_fn` computes with `replace_fn`" (not emulated)."""
    raise _not_emulated("register_replacement")


def register_graph_pattern(pattern: Any, extra_check: Callable[[Match], bool] | None = None,
                           *, pass_dict: Any, prepend: bool = False,
                           ) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated function as the handler of `pattern` (not emulated)."""
    raise _not_emulated("register_graph_pattern")


def fwd_only(fn: Callable[..., Any], args: Sequence[Any], *, run_functional_passes: bool = True,
             get_decomp_fn: Callable[..., Any] | None = None) -> GraphModule:
    """Trace `fn` on `args` into a forward-only aten graph: make_fx's (real tracing) with
    inductor's decompositions (`select_decomp_table()`, or `get_decomp_fn()`'s table). Torch
    also removes no-op ops (remove_noop_ops) first when run_functional_passes: not here."""
    from fake_torch._inductor.decomposition import select_decomp_table
    from fake_torch.fx.experimental.proxy_tensor import make_fx

    table = get_decomp_fn() if get_decomp_fn is not None else select_decomp_table()
    gm = make_fx(fn, table, tracing_mode="real")(*args)
    if run_functional_passes:
        gm.graph.eliminate_dead_code(_mutates)
    gm.recompile()
    return gm


def _mutates(node: Any) -> bool:
    """An in-place op (`add_`, `index_put_`) or a custom op whose schema writes an argument
    (`Tensor(a!) out`) is kept by dead-code elimination, as torch keeps them."""
    name = getattr(getattr(node.target, "overloadpacket", None), "__name__", "")
    schema = getattr(node.target, "_schema", "")
    return (name.endswith("_") and not name.endswith("__")) or \
        (isinstance(schema, str) and "!" in schema)


__all__ = ["CallFunctionVarArgs", "Match", "PatternMatcherPass", "PatternPrettyPrinter",
           "fallback_node_due_to_unsupported_type", "fwd_only", "register_graph_pattern",
           "register_replacement"]
