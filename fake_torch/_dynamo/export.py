"""torch._dynamo.export: one whole graph of a function, with the function's own signature.

The function is compiled as torch.compile(fullgraph=True) compiles it (the same frame, tracer
and graph breaks: a break raises torch's Unsupported), with a backend that keeps the graph;
the frame's entry says where each placeholder's value came from (an argument leaf, a module's
tensor, a tensor found elsewhere) and how the return value is made of graph outputs, inputs
and constants. The exported GraphModule takes the original arguments: a pytree CodeGen
flattens them into placeholders `arg0, arg1, ...` (renamed after the graph's own, `l_x_`) and
rebuilds the return value; a module's tensors and found tensors become attributes read by
get_attr (`L__self___lin_weight`, a global `G_0`, a closure's `C`), as in torch.

fake_torch exports static shapes, where torch exports dynamic ones: a graph whose Python read
a tensor size (`x.shape[0]`) has that size baked in, so calling it at other sizes raises
NotImplementedError instead of computing with the traced size. aten_graph, dynamic_shapes and
constraints are not emulated (NotImplementedError naming them).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any, NamedTuple

from fake_torch._dynamo import reconstruct
from fake_torch._dynamo.convert_frame import CompiledFrame, DirectEntry, _source_value
from fake_torch._dynamo.eval_frame import _options, optimize_callable
from fake_torch._dynamo.exc import UserError, UserErrorType
from fake_torch._dynamo.guards import Guard, flatten
from fake_torch._dynamo.state import _state
from fake_torch._dynamo.trace import Source
from fake_torch._tensor import Tensor
from fake_torch.fx import Graph, GraphModule, Node
from fake_torch.fx._codegen import _PyTreeCodeGen, _PyTreeInfo
from fake_torch.nn.modules.module import Module
from fake_torch.overrides import TorchFunctionMode
from fake_torch.utils import _pytree as pytree

_CONSTANT_TYPES = (int, float, bool, str, bytes, type(None), type(...))
_SIZE_METHODS = frozenset({"size", "numel", "nelement", "stride", "storage_offset", "__len__"})


class ExportResult(NamedTuple):
    """What torch._dynamo.export(f)(*args) returns."""

    graph_module: GraphModule
    guards: list[Guard]  # the entry's guards, one per argument leaf (torch: a GuardsSet)


def is_size_read(func: Any) -> bool:
    """`func` reads a tensor's size or strides (`x.shape`, `x.size()`, `x.numel()`, len(x))."""
    name = getattr(func, "__name__", "")
    if name == "__get__":
        prop = getattr(func, "__self__", None)
        return prop is inspect.getattr_static(Tensor, "shape")
    return name in _SIZE_METHODS and getattr(Tensor, name, None) is func


class SizeReads(TorchFunctionMode):
    """Notes whether traced Python (not the ops it calls, nor the tracer) read a tensor size."""

    def __init__(self) -> None:
        super().__init__()
        self.seen = False

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        if _state.tracer is not None and not _state.depth and is_size_read(func):
            self.seen = True
        return func(*args, **(kwargs or {}))


def _innermost_fn(fn: Any) -> Any:
    while hasattr(fn, "_torchdynamo_orig_callable"):
        fn = fn._torchdynamo_orig_callable
    return fn


def _argument_names(sig: inspect.Signature, args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> list[str]:
    """forward's parameters: the positional ones given, `<varargs>_<i>` for the rest, and
    the keywords given (torch's argument_names)."""
    params = list(sig.parameters.values())
    positional = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    varargs = next((p.name for p in params if p.kind is p.VAR_POSITIONAL), None)
    names = positional[:len(args)]
    if len(args) > len(positional):
        if varargs is None:
            raise AssertionError("More arguments than expected")
        names += [f"{varargs}_{i}" for i in range(len(args) - len(names))]
    return names + list(kwargs)


def _check_values(values: list[Any], error_type: UserErrorType) -> None:
    kind = "input" if error_type is UserErrorType.INVALID_INPUT else "output"
    for v in values:
        if isinstance(v, (Tensor, *_CONSTANT_TYPES)):
            continue
        raise UserError(error_type, f"It looks like one of the {kind}s with type `{type(v)}` is "
                        f"not supported or pytree-flattenable. \nExported graphs {kind}s can "
                        "only contain the following supported types: [Tensor, int, float, bool, "
                        "str, None]. \nIf you are using a custom class object, please register "
                        "a pytree_flatten/unflatten function using "
                        "`torch.utils._pytree.register_pytree_node` or "
                        "`torch.export.register_dataclass`.")


def _found_name(frame: CompiledFrame, obj: Tensor, counter: list[int]) -> tuple[str, bool]:
    """The attribute a tensor found outside the arguments is kept under, and whether it is
    read on entry: a closure's by its name (on entry, as Dynamo installs closures), a global's
    as `<name>_0`, anything else `_tensor_constant<n>` (both where first used)."""
    code = frame.code
    if code is not None and frame.closure:
        for name, cell in zip(code.co_freevars, frame.closure, strict=False):
            if cell.cell_contents is obj:
                return name, True
    for name, value in frame.globals.items():
        if value is obj:
            return f"{name}_0", False
    counter[0] += 1
    return f"_tensor_constant{counter[0] - 1}", False


def _exported(frame: CompiledFrame, entry: DirectEntry, call_args: tuple[Any, ...],
              args: tuple[Any, ...], kwargs: dict[str, Any], result: Any,
              same_signature: bool, sig: inspect.Signature) -> GraphModule:
    """The export graph: the entry's graph with its placeholders taken from the flattened
    arguments (or attributes), and an output list rebuilding `result`."""
    graph = entry.segment.graph
    _, leaves = flatten(frame.names, call_args, kwargs)
    if not same_signature:
        return entry.segment.gm
    flat_args, in_spec = pytree.tree_flatten((args, kwargs))
    _check_values(flat_args, UserErrorType.INVALID_INPUT)
    flat_results, out_spec = pytree.tree_flatten(result)
    _check_values(flat_results, UserErrorType.INVALID_OUTPUT)
    position = {id(v): i for i, v in enumerate(flat_args)}
    names = [f"arg{i}" for i in range(len(flat_args))]
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    for node, source in zip(placeholders, entry.plan, strict=True):
        if not source.attr and source.obj is None and not source.path:
            names[position[id(_source_value(source, leaves))]] = node.name
    if entry.segment.compiled is None:  # no op at all: the tensor arguments by their names
        params = list(sig.parameters)
        for i, value in enumerate(flat_args[:len(params)]):
            if isinstance(value, Tensor):
                names[i] = params[i]
    returned: dict[int, Source] = {}
    _walk_template(entry.template, result, {}, returned)
    for key, source in returned.items():
        if key in position and names[position[key]].startswith("arg"):
            names[position[key]] = source.name.lower()  # a returned input, named as Dynamo
    new = Graph()
    arg_nodes = [new.create_node("placeholder", f"arg{i}", name=name)
                 for i, name in enumerate(names)]
    root: dict[str, Any] = {}
    val_map: dict[Node, Node] = {}
    attrs: dict[Node, str] = {}  # placeholder -> attribute, read where first used
    counter = [0]
    for node, source in zip(placeholders, entry.plan, strict=True):
        value = _source_value(source, leaves)
        if source.attr or source.obj is not None or source.path:
            target, on_entry = ("L__self___" + source.attr.replace(".", "_"), False) \
                if source.attr else _found_name(frame, value, counter)
            root[target] = value
            if on_entry:
                val_map[node] = new.get_attr(target)
            else:
                attrs[node] = target
        else:
            val_map[node] = arg_nodes[position[id(value)]]

    def mapped(n: Node) -> Node:
        if n not in val_map:
            val_map[n] = new.get_attr(attrs[n])
        return val_map[n]

    outs: list[Node] = []
    for node in graph.nodes:
        if node.op == "output":
            outs = list(node.args[0])
        elif node.op != "placeholder":
            val_map[node] = new.node_copy(node, mapped)
    by_id: dict[int, Any] = {}
    _walk_template(entry.template, result, by_id, {})
    out_values: list[Any] = []
    for r in flat_results:
        found = by_id.get(id(r))
        if isinstance(found, int):
            out_values.append(val_map[outs[found]])
        elif found is not None:
            out_values.append(arg_nodes[position[id(r)]])
        elif isinstance(r, _CONSTANT_TYPES):
            out_values.append(r)
        else:
            raise AssertionError(f"Unexpectedly found a {type(r)} in the outputs.\nPlease file "
                                 'an issue along with a paste of the logs from '
                                 'TORCH_LOGS="+export"')
    new.output(out_values)
    new._codegen = _PyTreeCodeGen(_PyTreeInfo(_argument_names(sig, args, kwargs), in_spec,
                                              out_spec))
    return GraphModule(root, new)


def _walk_template(template: Any, value: Any, by_id: dict[int, Any],
                   returned: dict[int, Source]) -> None:
    """Match a direct entry's return template to the returned value: id -> output index
    (an int) or the Source of a returned input."""
    for (kind, found), v in reconstruct.leaves(template, value):
        by_id[id(v)] = found
        if kind == "source":
            returned[id(v)] = found


def _shape_check(metas: list[tuple[int, tuple[int, ...]]]) -> Callable[..., None]:
    """A forward pre-hook refusing inputs of other sizes than the traced ones."""
    def check(module: Module, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        flat = pytree.tree_leaves((args, kwargs))
        for i, shape in metas:
            if i < len(flat) and isinstance(flat[i], Tensor) and tuple(flat[i].shape) != shape:
                raise NotImplementedError(
                    f"torch._dynamo.export: this graph read tensor sizes while it was traced, "
                    f"and fake_torch exports static shapes: input {i} has shape "
                    f"{tuple(flat[i].shape)}, traced at {shape} (export again at these sizes)")
    return check


def export(f: Callable[..., Any], *extra_args: Any, aten_graph: bool = False,
           pre_dispatch: bool = False, decomposition_table: dict[Any, Any] | None = None,
           tracing_mode: str = "symbolic", dynamic_shapes: Any = None,
           specialize_float: bool = True, assume_static_by_default: bool = False,
           same_signature: bool = True, disable_constraint_solver: bool = False,
           prefer_deferred_runtime_asserts_over_guards: bool = False,
           _log_export_usage: bool = True, constraints: list[Any] | None = None,
           **extra_kwargs: Any) -> Callable[..., ExportResult]:
    """export(f)(*args, **kwargs): f traced into one graph (a graph break raises torch's
    Unsupported), as ExportResult(graph_module, guards)."""

    def inner(*args: Any, **kwargs: Any) -> ExportResult:
        if decomposition_table is not None and not aten_graph:
            raise AssertionError("Specifying a decomposition_table table or tracing mode is "
                                 "illegal without setting aten_graph=True")
        if pre_dispatch and not aten_graph:
            raise AssertionError("pre_dispatch=True can only be used when aten_graph=True")
        for name, value, default in (("aten_graph", aten_graph, False),
                                     ("dynamic_shapes", dynamic_shapes, None),
                                     ("constraints", constraints, None)):
            if value != default:
                raise NotImplementedError(f"torch._dynamo.export({name}=...) is not emulated by "
                                          "fake_torch: it exports Python-level graphs with "
                                          "static shapes")
        fn = _innermost_fn(f)
        sig = inspect.signature(fn.forward if isinstance(fn, Module) else fn)
        options = _options(lambda gm, example_inputs: gm.forward, True, False, None, None)
        compiled = optimize_callable(fn, options, isolate=True)
        sizes = SizeReads()
        with sizes:
            result = compiled(*args, **kwargs)
        frame: CompiledFrame = compiled._frame
        if not frame.entries:
            raise NotImplementedError(
                "torch._dynamo.export: fake_torch could not export this function as one graph "
                "(its Python has effects a graph cannot hold: it assigns globals or module "
                "attributes, or keeps a tensor it made)")
        entry = frame.entries[-1]
        call_args = (fn, *args) if isinstance(fn, Module) else args
        gm = _exported(frame, entry, call_args, args, kwargs, result, same_signature, sig)
        if sizes.seen:
            flat = pytree.tree_leaves((args, kwargs))
            metas = [(i, tuple(t.shape)) for i, t in enumerate(flat) if isinstance(t, Tensor)]
            gm.register_forward_pre_hook(_shape_check(metas), with_kwargs=True)
        return ExportResult(gm, list(entry.guards.leaves))

    if extra_args or extra_kwargs:
        import warnings

        warnings.warn("export(f, *args, **kwargs) is deprecated, use export(f)(*args, **kwargs) "
                      "instead.  If you don't migrate, we may break your export call in the "
                      "future if your user defined kwargs conflict with future kwargs added to "
                      "export(f).", FutureWarning, stacklevel=2)
        return inner(*extra_args, **extra_kwargs)  # type: ignore[return-value]
    return inner


__all__ = ["ExportResult", "export"]
