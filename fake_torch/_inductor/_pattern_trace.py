"""Patterns from traced functions (torch._inductor.pattern_matcher's fx_to_pattern and
register_replacement).

register_replacement(search_fn, replace_fn, example_inputs, trace_fn, pass_dicts) traces
search_fn with `trace_fn` (usually fwd_only) and turns the graph into a pattern that ignores
burned-in ints, floats, lists, devices and dtypes. When that loose pattern matches, the check
re-traces search_fn on fresh tensors shaped like the matched inputs (their meta["val"]), matches
the exact pattern (nothing ignored), runs the user's extra_check on that match, and traces
replace_fn on the same tensors: the graph the match is then replaced with.
"""

from __future__ import annotations

import inspect
import itertools
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fake_torch import _dtype, _namespace, _torch_device
from fake_torch._guards import detect_fake_mode
from fake_torch._inductor._pattern_exprs import (
    CallFunction,
    ExclusiveKeywordArg,
    Ignored,
    KeywordArg,
    MultiOutputPattern,
    PatternExpr,
)
from fake_torch._inductor._pattern_match import Match, is_match
from fake_torch._inductor._pattern_pass import (
    PatternMatcherPass,
    ReplacementPatternEntry,
    _return_true,
)
from fake_torch._inductor._pattern_print import PatternPrettyPrinter
from fake_torch._inductor._pattern_replace import transfer_meta
from fake_torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from fake_torch._sym import SymInt
from fake_torch._tensor import Tensor
from fake_torch.fx import Graph, GraphModule, Interpreter, Node, map_arg
from fake_torch.fx.experimental.symbolic_shapes import statically_known_true
from fake_torch.utils import _pytree as pytree

# --- fx graph -> pattern -----------------------------------------------------------------------


def _not_implemented(*args: Any, **kwargs: Any) -> Any:
    raise NotImplementedError


def fx_to_pattern(gm: GraphModule | Graph, ignore_types: Sequence[type[Any]] = (),
                  argnames: Sequence[str] = (),
                  scalar_workaround: dict[str, float | int] | None = None,
                  exclusive_arg_names: Sequence[str] = ()) -> PatternExpr:
    """The pattern of an fx graph of call_function nodes: placeholders become KeywordArgs (named
    by `argnames`, else by the placeholder), constants of `ignore_types` Ignored(), values
    listed in `scalar_workaround` the KeywordArg named for them; each node pattern requires as
    many users as its node has. Several outputs make a MultiOutputPattern."""
    scalar_workaround = scalar_workaround or {}
    inv_scalar_workaround = {v: k for k, v in scalar_workaround.items()}
    assert len(inv_scalar_workaround) == len(scalar_workaround)

    def process_arg(x: Any, ignore: Sequence[type[Any]] | None = None) -> Any:
        current = ignore if ignore is not None else ignore_types
        if isinstance(x, (float, int)) and x in inv_scalar_workaround:
            return KeywordArg(inv_scalar_workaround[x])
        if type(x) in current:
            return Ignored()
        if isinstance(x, list) and x and all(isinstance(y, Ignored) for y in x):
            return Ignored()
        return x

    argnum = itertools.count()

    class Converter(Interpreter):
        call_method = _not_implemented
        call_module = _not_implemented
        get_attr = _not_implemented

        def placeholder(self, target: Any, args: Any, kwargs: Any) -> PatternExpr:
            n = next(argnum)
            if n < len(argnames):
                name = argnames[n]
            elif argnames:
                assert target.startswith("tangent")
                name = target
            else:
                name = re.sub(r"_\d+$", "", target)  # de-mangle 'x_1' back to 'x'
            return ExclusiveKeywordArg(name) if name in exclusive_arg_names else KeywordArg(name)

        def call_function(self, target: Any, args: Any, kwargs: Any) -> PatternExpr:
            process = process_arg
            if target is operator.getitem:
                # the index picks the output: never ignore it
                no_int = tuple(t for t in ignore_types if t is not int)

                def process(x: Any, ignore: Sequence[type[Any]] | None = no_int) -> Any:
                    return process_arg(x, ignore)
            args, kwargs = pytree.tree_map(process, (args, kwargs),
                                           is_leaf=lambda x: isinstance(x, PatternExpr))
            if list in ignore_types:  # a burned-in size is now [Ignored(), Ignored(), ...]
                args = [process(a) for a in args]
                kwargs = {k: process(a) for k, a in kwargs.items()}
            return CallFunction(target, *args, **kwargs)

        def run_node(self, n: Node) -> Any:
            rv = super().run_node(n)
            if n.op == "output" and isinstance(rv, (tuple, list)):
                outs = n.args[0]
                assert isinstance(outs, (tuple, list)) and len(rv) == len(outs)
                for r, arg in zip(rv, outs, strict=False):
                    r.users = len(arg.users)
            else:
                rv.users = len(n.users)
            return rv

    module = gm if isinstance(gm, GraphModule) else GraphModule({}, gm)
    converter = Converter(module, garbage_collect_values=False)
    converter.extra_traceback = False
    pattern = converter.run(enable_io_processing=False)
    if not isinstance(pattern, PatternExpr):
        return MultiOutputPattern(pytree.tree_leaves(
            pattern, is_leaf=lambda x: isinstance(x, PatternExpr)))
    return pattern


# --- argument names of a traced function -------------------------------------------------------


@dataclass(frozen=True)
class _TraceArgInfo:
    argnames: list[str]
    flat_argnames: list[str]  # one per pytree leaf: 'x', or 'x_0', 'x_1' for a structure
    arg_specs: dict[str, Any]
    arg_flat_names: dict[str, list[str]]


def _unique_argname(name: str, used: set[str]) -> str:
    candidate, i = name, 0
    while candidate in used:
        candidate, i = f"{name}_{i}", i + 1
    used.add(candidate)
    return candidate


def _trace_args_for_initial_trace(argnames: Sequence[str], example_inputs: Sequence[Any],
                                  scalar_workaround: dict[str, float | int]) -> list[Any]:
    inputs = iter(example_inputs)
    return [scalar_workaround[name] if name in scalar_workaround else next(inputs)
            for name in argnames]


def _trace_arg_info(argnames: Sequence[str], args: Sequence[Any]) -> _TraceArgInfo:
    flat_argnames: list[str] = []
    arg_specs: dict[str, Any] = {}
    arg_flat_names: dict[str, list[str]] = {}
    used: set[str] = set()
    for argname, arg in zip(argnames, args, strict=False):
        leaves, spec = pytree.tree_flatten(arg)
        arg_specs[argname] = spec
        if len(leaves) == 1:
            names = [_unique_argname(argname, used)]
        else:
            names = [_unique_argname(f"{argname}_{i}", used) for i in range(len(leaves))]
        flat_argnames.extend(names)
        arg_flat_names[argname] = names
    return _TraceArgInfo(list(argnames), flat_argnames, arg_specs, arg_flat_names)


def _unflatten_match_kwargs(kwargs: Mapping[str, Any], info: _TraceArgInfo,
                            defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """A match's flat kwargs ('x_0', 'x_1') regrouped into the function's arguments ('x')."""
    flat = dict(kwargs)
    result: dict[str, Any] = {}
    for argname in info.argnames:
        flat_names = info.arg_flat_names[argname]
        found = [name for name in flat_names if name in flat]
        if len(found) != len(flat_names):
            if defaults is not None and argname in defaults and not found:
                result[argname] = defaults[argname]
                continue
            missing = [name for name in flat_names if name not in flat]
            raise RuntimeError(
                "Not all inputs to pattern found in match.kwargs. Perhaps one of the inputs is "
                f"unused? argname={argname}, flat_argnames={flat_names}, "
                f"missing_argnames={missing}, match.kwargs={flat}")
        result[argname] = pytree.tree_unflatten([flat.pop(name) for name in flat_names],
                                                info.arg_specs[argname])
    result.update(flat)
    return result


def _get_match_node_value(node: Node) -> Any:
    return node.meta["val"] if "val" in node.meta else node.meta["example_value"]


def _wrap_bound_method(fn: Any, argnames: list[str]) -> Any:
    """A bound method as a plain function of `argnames` (no `self` for the tracer to see)."""
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)
    params = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in argnames]
    wrapper.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    return wrapper


def _trace(trace_fn: Callable[..., GraphModule], fn: Callable[..., Any], args: Sequence[Any],
           get_decomp_fn: Callable[..., Any] | None) -> GraphModule:
    # torch always passes get_decomp_fn=; fake_torch has no decomposition table of its own to
    # default to, so it passes one only when the caller chose it
    if get_decomp_fn is None:
        return trace_fn(fn, args)
    return trace_fn(fn, args, get_decomp_fn=get_decomp_fn)


def _fake_mode_of(values: Any) -> FakeTensorMode:
    """The fake mode the matched values live in (torch asserts there is one). fake_torch graphs
    may carry real example values: those are re-made under a fresh mode."""
    mode = detect_fake_mode(values)
    return mode if mode is not None else FakeTensorMode()


def _is_integer_dtype(dtype: Any) -> bool:
    return not dtype.is_floating_point and not dtype.is_complex and dtype is not _dtype.bool_


def _fresh_like(arg: Tensor, requires_grad: bool, mode: FakeTensorMode) -> Tensor:
    """An uninitialized tensor with arg's sizes, strides, dtype and device (torch's
    empty_strided under the fake mode). A symbolic example value stays symbolic: its memory is
    laid out at the hints, its sizes and strides are arg's SymInts."""
    size, stride = tuple(Tensor.size(arg)), tuple(Tensor.stride(arg))  # concrete: the hints
    extent = 1 + sum((s - 1) * st for s, st in zip(size, stride, strict=True)) if all(size) \
        else 0
    out: Tensor = _namespace.torch().empty(extent, dtype=arg.dtype,
                                   device=arg.device).as_strided(size, stride)
    if requires_grad:
        out = out.requires_grad_(True)
    if getattr(arg, "_sym_shape", None) is not None:  # (a mode's plain fake tensor has none)
        out = FakeTensor.symbolic(out, tuple(arg.shape), tuple(arg.stride()), 0, mode)
    return out


# --- registering a replacement -----------------------------------------------------------------

_seen_patterns: set[str] = set()  # torch keeps this module global for its internal callers


def check_and_add_duplicate_pattern(pattern: PatternExpr, graph: Graph | None,
                                    seen_patterns: dict[str, list[str | None]],
                                    skip_duplicates: bool = False) -> bool:
    """True (with skip_duplicates) when the same pattern from the same search graph was already
    registered in this pass; without skip_duplicates that raises RuntimeError."""
    pattern_repr = PatternPrettyPrinter.run(pattern)
    equiv = seen_patterns.get(pattern_repr)
    if not equiv:
        seen_patterns[pattern_repr].append(str(graph) if graph else None)
        return False
    if graph is None:
        if skip_duplicates:
            return True
        raise RuntimeError(f"Duplicate pattern: {pattern_repr} with no graph")
    new_graph_str = str(graph)
    for graph_str in equiv:
        if new_graph_str != graph_str:
            continue
        if skip_duplicates:
            return True
        raise RuntimeError(  # torch._check's failure
            f"Duplicate pattern: {pattern_repr} with duplicated match graph {graph_str} ")
    equiv.append(new_graph_str)
    return False


def register_replacement(search_fn: Callable[..., Any], replace_fn: Callable[..., Any],
                         example_inputs: Sequence[Any], trace_fn: Callable[..., GraphModule],
                         pass_dicts: Any, extra_check: Callable[[Match], bool] = _return_true,
                         scalar_workaround: dict[str, float | int] | None = None,
                         exclusive_arg_names: Sequence[str] = (),
                         search_fn_pattern: PatternExpr | None = None,
                         skip_duplicates: bool = False, pattern_name: str | None = None,
                         get_decomp_fn: Callable[..., Any] | None = None) -> Any:
    """Register "replace what `search_fn` computes with `replace_fn`" in `pass_dicts`; returns
    the registered pattern (False when skip_duplicates skipped it)."""
    argnames_static = [*inspect.signature(search_fn).parameters.keys()]
    if inspect.ismethod(search_fn):
        search_fn = _wrap_bound_method(search_fn, argnames_static)
    if inspect.ismethod(replace_fn):
        replace_fn = _wrap_bound_method(replace_fn,
                                        [*inspect.signature(replace_fn).parameters.keys()])
    if not isinstance(example_inputs, (list, tuple)):
        raise TypeError(f"example_inputs must be a list or tuple, got {type(example_inputs)}")
    scalar_workaround = scalar_workaround or {}
    initial_args = _trace_args_for_initial_trace(argnames_static, example_inputs,
                                                 scalar_workaround)
    initial_info = _trace_arg_info(argnames_static, initial_args)
    requires_grad = pytree.tree_map(lambda x: isinstance(x, Tensor) and x.requires_grad,
                                    initial_args)

    def check_fn(match: Match) -> bool:
        """Re-check the loose match with the matched inputs' real sizes (the loose pattern
        ignored the sizes burned into the trace), then trace the replacement for them."""
        structured = _unflatten_match_kwargs(match.kwargs, initial_info)
        args = list(map_arg([structured[name] for name in argnames_static],
                            _get_match_node_value))
        sym_args: list[Any] = []
        fake_mode = _fake_mode_of(args)
        with fake_mode:
            invalid = False
            grads = iter(pytree.tree_leaves(requires_grad))

            def refresh_arg(arg: Any) -> Any:
                nonlocal invalid
                grad = next(grads)
                if not isinstance(arg, Tensor):
                    return arg
                if grad and _is_integer_dtype(arg.dtype):
                    invalid = True
                    return arg
                fresh = _fresh_like(arg, grad, fake_mode)
                for v in itertools.chain(fresh.shape, fresh.stride()):
                    if isinstance(v, SymInt) and \
                            all(statically_known_true(v != a) for a in sym_args):
                        sym_args.append(v)
                return fresh

            args = pytree.tree_map(refresh_arg, args)
            if invalid:
                return False
            specific_pattern = search_fn_pattern
            specific_info = _trace_arg_info(argnames_static, args)
            specific_argnames = specific_info.flat_argnames
            if not specific_pattern:
                try:
                    if sym_args:
                        # sizes the tracer would read off the inputs come in as inputs, so
                        # their size nodes do not get in the pattern's way
                        def search_fn_new(*args_new: Any, **_: Any) -> Any:
                            return search_fn(*args_new[len(args_new) - len(args):])
                        specific_graph = _trace(trace_fn, search_fn_new, sym_args + args,
                                                get_decomp_fn)
                        specific_argnames = _rename_specific_placeholders(
                            specific_graph, len(sym_args), specific_argnames)
                    else:
                        specific_graph = _trace(trace_fn, search_fn, args, get_decomp_fn)
                except RuntimeError:
                    return False  # the search function does not trace at these shapes
                specific_pattern = fx_to_pattern(specific_graph, argnames=specific_argnames,
                                                 exclusive_arg_names=exclusive_arg_names,
                                                 scalar_workaround=scalar_workaround)
            node = match.output_nodes()[0]
            assert node is not None
            specific_match = specific_pattern.match(node)
            if not is_match(specific_match):
                return False
            assert isinstance(specific_match, Match)
            specific_match.kwargs = _unflatten_match_kwargs(specific_match.kwargs,
                                                            specific_info, defaults=structured)
            if not extra_check(specific_match):
                return False
            match.replacement_graph = _trace(trace_fn, replace_fn, args, get_decomp_fn)
            match.kwargs = structured
            if len(match.nodes) == 1:
                for n in match.replacement_graph.graph.nodes:
                    transfer_meta(n.meta, match.nodes[0])
            return True

    def normalize_args(**kwargs: Any) -> list[Any]:
        # flat kwargs come from the loose match; check_fn regrouped them when it accepted
        if not all(name in kwargs for name in argnames_static):
            kwargs = _unflatten_match_kwargs(kwargs, initial_info)
        args: list[Any] = []
        for name in argnames_static:
            args.extend(pytree.tree_leaves(kwargs.pop(name)))
        for i in range(1, len(kwargs) + 1):
            if f"tangents_{i}" not in kwargs:
                break
            args.append(kwargs.pop(f"tangents_{i}"))
        assert not kwargs, f"leftover kwargs: {kwargs!r}"
        return args

    gm: GraphModule | None
    if search_fn_pattern is None:
        pattern, gm = gen_pattern_and_search_gm(search_fn, example_inputs, trace_fn,
                                                scalar_workaround, exclusive_arg_names,
                                                get_decomp_fn=get_decomp_fn)
    else:
        pattern, gm = search_fn_pattern, None
    passes = pass_dicts if isinstance(pass_dicts, Sequence) else [pass_dicts]
    for pm_pass in passes:
        if isinstance(pm_pass, PatternMatcherPass) and check_and_add_duplicate_pattern(
                pattern, gm.graph if gm else None, pm_pass.seen_patterns,
                skip_duplicates=skip_duplicates):
            return False
    entry = ReplacementPatternEntry(pattern=pattern, extra_check=check_fn,
                                    normalize_args=normalize_args, pattern_name=pattern_name)
    entry.register(pass_dicts)
    return entry.pattern


def _rename_specific_placeholders(gm: GraphModule, num_sym: int,
                                  argnames: list[str]) -> list[str]:
    """The leading size placeholders keep their names; the tensor ones take the argnames."""
    sym_names: list[str] = []
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    for i, placeholder in enumerate(placeholders[:num_sym + len(argnames)]):
        if i < num_sym:
            sym_names.append(str(placeholder.target))
            continue
        with gm.graph.inserting_after(placeholder):
            new_node = gm.graph.placeholder(argnames[i - num_sym])
        new_node.target = new_node.name
        placeholder.replace_all_uses_with(new_node)
        gm.graph.erase_node(placeholder)
    return sym_names + argnames


def gen_pattern_and_search_gm(search_fn: Callable[..., Any], example_inputs: Sequence[Any],
                              trace_fn: Callable[..., GraphModule],
                              scalar_workaround: dict[str, float | int] | None = None,
                              exclusive_arg_names: Sequence[str] = (),
                              get_decomp_fn: Callable[..., Any] | None = None,
                              ) -> tuple[PatternExpr, GraphModule]:
    """The loose search pattern of `search_fn` (sizes, dtypes, devices ignored) and its graph."""
    argnames = [*inspect.signature(search_fn).parameters.keys()]
    scalar_workaround = scalar_workaround or {}
    flat_inputs = _trace_args_for_initial_trace(argnames, example_inputs, scalar_workaround)
    info = _trace_arg_info(argnames, flat_inputs)
    search_gm = _trace(trace_fn, search_fn, flat_inputs, get_decomp_fn)
    pattern = fx_to_pattern(search_gm,
                            ignore_types=(int, float, list, _torch_device.device, _dtype.dtype),
                            argnames=info.flat_argnames, scalar_workaround=scalar_workaround,
                            exclusive_arg_names=exclusive_arg_names)
    return pattern, search_gm


def gen_pattern(search_fn: Callable[..., Any], example_inputs: Sequence[Any],
                trace_fn: Callable[..., GraphModule],
                scalar_workaround: dict[str, float | int] | None = None,
                exclusive_arg_names: Sequence[str] = ()) -> PatternExpr:
    return gen_pattern_and_search_gm(search_fn, example_inputs, trace_fn, scalar_workaround,
                                     exclusive_arg_names)[0]


def gen_register_replacement(unique_name: str, search_fn: Callable[..., Any],
                             replace_fn: Callable[..., Any], example_inputs: Iterable[Any],
                             trace_fn: Callable[..., GraphModule], pass_dicts: Any,
                             extra_check: Callable[[Match], bool] = _return_true,
                             scalar_workaround: dict[str, float | int] | None = None,
                             exclusive_arg_names: Sequence[str] = (),
                             skip_duplicates: bool = False,
                             get_decomp_fn: Callable[..., Any] | None = None) -> None:
    """register_replacement with a pattern generated up front. torch loads it from the files
    torchgen/fuse/gen_patterns.py wrote; fake_torch ships none, so it generates it here, the
    way those files were made."""
    example_inputs = tuple(example_inputs)
    pattern = gen_pattern(search_fn, example_inputs, trace_fn, scalar_workaround)
    register_replacement(search_fn, replace_fn, example_inputs, trace_fn, pass_dicts,
                         extra_check, scalar_workaround, exclusive_arg_names,
                         search_fn_pattern=pattern, skip_duplicates=skip_duplicates,
                         pattern_name=unique_name, get_decomp_fn=get_decomp_fn)


__all__ = ["check_and_add_duplicate_pattern", "fx_to_pattern", "gen_pattern",
           "gen_pattern_and_search_gm", "gen_register_replacement", "register_replacement"]
