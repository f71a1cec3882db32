"""The aten graph inductor's post-grad passes see: a Dynamo graph traced again at the aten level,
as aot_autograd's inference path hands it to inductor.

`aten_graph(gm, example_inputs)` runs `gm` under make_fx's aten recorder on fake copies of the
inputs, with inductor's decompositions (`select_decomp_table`), and returns a GraphModule of
`torch.ops.aten.<name>.<overload>` nodes (custom ops as their OpOverloads). Placeholders are
named `arg<i>_1`, as aot_autograd's flat trace names them. The ops run on fake tensors of the
compile's fake mode (TracingContext's), so every `meta["val"]` is of that one mode, as in
torch (the pattern matcher's detect_fake_mode asks it). Each keeps the Dynamo placeholder's
example value as `meta["val"]`, so the sizes are Dynamo's symbols (`s77`), not new ones: a
SymInt input's placeholder is where its symbol is read (`aten.slice.Tensor(arg2_1, 0, 0,
arg0_1)`); a symbol no SymInt input carries is read with `aten.sym_size.int` from the first
tensor input whose size it is.

A custom op that writes whole tensors is recorded as `auto_functionalized`, with a `copy_` back
into each written input (_functional_custom_ops.py). Other writes are not functionalized:
in-place aten ops are recorded as they are (torch's graph has their functional forms and a
`copy_` back into each written input); remove_noop_ops keeps the copies such writes need.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fake_torch._dynamo.symbolic import SymbolicTrace
from fake_torch._guards import TracingContext
from fake_torch._inductor._functional_custom_ops import FunctionalCustomOps
from fake_torch._inductor.decomposition import select_decomp_table
from fake_torch._inductor.fx_passes.post_grad import is_impure
from fake_torch._subclasses.fake_tensor import FakeTensor, FakeTensorMode
from fake_torch._sym import SymFloat, SymInt
from fake_torch._tensor import Tensor
from fake_torch.fx import GraphModule, Node
from fake_torch.fx.experimental.proxy_tensor import _Tracer


def _symbolic_trace_of_compile() -> SymbolicTrace | None:
    """A SymbolicTrace over the ShapeEnv (and fake mode) of the Dynamo compile in progress, so
    the aten graph's sizes are the Dynamo graph's symbols; None outside a compile or when the
    compile has no symbols."""
    ctx = TracingContext.try_get()
    fake_mode = getattr(ctx, "fake_mode", None)
    env = getattr(fake_mode, "shape_env", None)
    if env is None or not isinstance(fake_mode, FakeTensorMode):
        return None
    trace = SymbolicTrace()
    trace.env, trace.fake_mode = env, fake_mode
    return trace


def _example_of(placeholder: Node, value: Any) -> Any:
    """The Dynamo placeholder's example value (symbolic sizes), else the input itself."""
    for key in ("example_value", "val"):
        found = placeholder.meta.get(key)
        if found is not None:
            return found
    return value


def aten_graph(gm: GraphModule, example_inputs: Sequence[Any]) -> GraphModule:
    """`gm` (a Dynamo graph) traced into a graph of aten ops on `example_inputs`."""
    tr = _Tracer("fake", select_decomp_table())
    tr.symbolic = _symbolic_trace_of_compile()
    ctx = TracingContext.try_get()
    if ctx is not None and isinstance(ctx.fake_mode, FakeTensorMode):
        tr.fake_mode = ctx.fake_mode  # every example value in the compile's one fake mode
    mode = FunctionalCustomOps(tr)
    placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
    if len(placeholders) != len(example_inputs):
        raise AssertionError(f"aten_graph: the graph has {len(placeholders)} inputs, "
                             f"{len(example_inputs)} examples were given")
    args: list[Any] = []
    tensor_dims: list[tuple[Any, Node, int]] = []  # (symbol, placeholder, dim) of tensor sizes
    for i, (ph, value) in enumerate(zip(placeholders, example_inputs, strict=True)):
        node = tr.graph.placeholder(f"arg{i}_1")
        example = _example_of(ph, value)
        if isinstance(value, Tensor):
            fake = tr.fake_mode.from_tensor(value)
            # Dynamo's symbolic example, else the fake input (Dynamo keeps a static input's
            # real tensor as its example)
            symbolic = isinstance(example, FakeTensor) and \
                getattr(example, "_sym_shape", None) is not None
            node.meta["val"] = example if symbolic else fake
            tr.bind(fake, node)
            args.append(fake)
            for d, size in enumerate(node.meta["val"].shape):
                if isinstance(size, SymInt) and size.node.expr.is_Symbol:
                    tensor_dims.append((size.node.expr, node, d))
        else:
            node.meta["val"] = example
            if isinstance(example, (SymInt, SymFloat)) and example.node.expr.is_Symbol:
                tr._symbol_nodes.setdefault(example.node.expr, node)  # read where it comes in
            args.append(example if tr.symbolic is not None else value)
    for symbol, node, d in tensor_dims:
        tr.symbol_places.setdefault(symbol, (node, d))
    with tr.fake_mode, mode:
        result = gm(*args)
    out = tr.arg(result)
    tr.graph.output(tuple(out) if isinstance(out, list) else out)  # aot's graphs return tuples
    mode.write_back(tr.graph)
    tr.graph.eliminate_dead_code(is_impure_node=is_impure)  # as aot's functional graph
    for node in tr.graph.nodes:  # a size expression's nodes (`floordiv = arg0_1 // 64`)
        if "val" not in node.meta and "example_value" in node.meta:
            node.meta["val"] = node.meta.pop("example_value")
    return GraphModule(dict(tr.constants), tr.graph)


__all__ = ["aten_graph"]
