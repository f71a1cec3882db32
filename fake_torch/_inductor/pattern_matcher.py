"""torch._inductor.pattern_matcher: graph rewrites by pattern (search a subgraph, replace it).

Patterns are DAGs of expressions (`CallFunction`, `KeywordArg`, `Ignored`, ...: _pattern_exprs;
a match is a `Match`: _pattern_match), grouped by anchor target in a `PatternMatcherPass`
(_pattern_pass) whose `apply(graph)` rewrites every match: `register_graph_pattern` hooks a
handler, `register_replacement` (_pattern_trace) traces a search and a replacement function with
a trace function into a pattern and the graph to put in its place, and `PatternPrettyPrinter`
(_pattern_print) writes a pattern out as Python. fwd_only, the aten-level tracer torch's
patterns are usually traced with, is not emulated yet: it raises NotImplementedError, and so
does Match.replace_by_example without a trace_fn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from fake_torch._inductor._pattern_exprs import (
    MULTIPLE,
    Arg,
    CallFunction,
    CallFunctionVarArgs,
    CallMethod,
    CallMethodVarArgs,
    CallModule,
    CallModuleVarArgs,
    ExclusiveKeywordArg,
    Ignored,
    KeywordArg,
    ListOf,
    MultiOutputPattern,
    Multiple,
    PatternExpr,
    RepeatedExpr,
    extract_target,
)
from fake_torch._inductor._pattern_match import (
    FailedMatch,
    Match,
    MatchContext,
    MatchResult,
    is_match,
)
from fake_torch._inductor._pattern_pass import (
    GraphPatternEntry,
    LoweringPatternEntry,
    PatternEntry,
    PatternMatcherPass,
    ReplacementPatternEntry,
    compute_mutation_region_ids,
    config_flag,
    filter_nodes,
    get_arg_value,
    get_mutation_region_id,
    init_once_fakemode,
    is_mutation_op,
    is_start_of_fx_graph,
    register_graph_pattern,
    register_lowering_pattern,
    should_compute_mutation_region_ids,
    stable_topological_sort,
)
from fake_torch._inductor._pattern_print import PatternPrettyPrinter
from fake_torch._inductor._pattern_replace import set_default_trace_fn
from fake_torch._inductor._pattern_trace import (
    _seen_patterns,
    check_and_add_duplicate_pattern,
    fx_to_pattern,
    gen_pattern,
    gen_pattern_and_search_gm,
    gen_register_replacement,
    register_replacement,
)
from fake_torch._inductor.lowering import fallback_node_due_to_unsupported_type
from fake_torch.fx import GraphModule


def _not_emulated(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch._inductor.pattern_matcher.{name} is not emulated by fake_torch: it does not "
        "trace functions into search/replace patterns")


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


set_default_trace_fn(fwd_only)  # Match.replace_by_example's default tracer


__all__ = ["MULTIPLE", "Arg", "CallFunction", "CallFunctionVarArgs", "CallMethod",
           "CallMethodVarArgs", "CallModule", "CallModuleVarArgs", "ExclusiveKeywordArg",
           "FailedMatch", "GraphPatternEntry", "Ignored", "KeywordArg", "ListOf",
           "LoweringPatternEntry", "Match", "MatchContext", "MatchResult", "MultiOutputPattern",
           "Multiple", "PatternEntry", "PatternExpr", "PatternMatcherPass",
           "PatternPrettyPrinter", "RepeatedExpr", "ReplacementPatternEntry", "_seen_patterns",
           "check_and_add_duplicate_pattern", "compute_mutation_region_ids", "config_flag",
           "extract_target", "fallback_node_due_to_unsupported_type", "filter_nodes",
           "fwd_only", "fx_to_pattern", "gen_pattern", "gen_pattern_and_search_gm",
           "gen_register_replacement", "get_arg_value", "get_mutation_region_id",
           "init_once_fakemode", "is_match", "is_mutation_op", "is_start_of_fx_graph",
           "register_graph_pattern", "register_lowering_pattern", "register_replacement",
           "should_compute_mutation_region_ids", "stable_topological_sort"]
