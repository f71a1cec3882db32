"""The "inductor" backend: compile_fx(gm, example_inputs) -> the callable torch.compile runs.

Compile ("lowering"): the graph runs once on the example inputs under a probe mode that runs
no kernel and counts nothing, so every node's launches (op, kind, sizes), the inputs it writes
and the devices it touches are known. The scheduler turns that into kernels (see scheduler.py).
Run: the graph executes node by node, each fused kernel's nodes inside ONE
`_dispatch.fused(name)` block: the numpy work is the eager ops', the count is one launch per
kernel. An index_copy_ into a graph input still runs in place (eager's values); the copy in and
the copy back inductor adds around it are launches that run no work (copying the target out and
back changes nothing the scatter does not). With config.triton.cudagraphs
(mode="reduce-overhead") the compiled graph runs through the CUDA graph trees
(cudagraph_trees.py) unless torch would skip them.
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from fake_torch import _generator, _opdef, library
from fake_torch._functorch._aot_autograd import autograd_cache  # noqa: F401  (as torch's loads it)
from fake_torch._inductor import config, cudagraph_trees
from fake_torch._inductor._aten_graph import aten_graph
from fake_torch._inductor._functional_custom_ops import reinplace
from fake_torch._inductor._pattern_pass import stable_topological_sort
from fake_torch._inductor._tensor_constants import lift_tensor_constants
from fake_torch._inductor.cudagraph_utils import (
    bump_counter,
    cpu_device_message,
    format_default_skip_message,
    get_mutation_stack_trace,
    log_cudagraph_skip_and_bump_counter,
)
from fake_torch._inductor.custom_graph_pass import get_custom_graph_passes
from fake_torch._inductor.fx_passes import joint_graph, post_grad
from fake_torch._inductor.scheduler import Kernel, Launch, NodeInfo, plan_kernels
from fake_torch._simulated import _dispatch
from fake_torch._sym import SymFloat, SymInt
from fake_torch._tensor import Tensor
from fake_torch.fx import GraphModule, Interpreter, Node
from fake_torch.fx.node import Target

# ops whose output size or value the host reads: a CUDA graph cannot hold them
_HOST_READS = (_opdef.DATA_DEPENDENT, _opdef.HOST)
_TRANSFERS = frozenset({"to", "copy_"})  # host waits that are device copies, not data reads


# --- the probe: what each node launches -----------------------------------------------------


class _ProbeMode(_dispatch.Mode):
    """Compile time: ops run their Python, no kernel runs, nothing is counted. Buffers are
    zeroed host memory, so no device memory moves and data-dependent sizes stay small."""

    name = "inductor_probe"
    counts_launches = False

    def __init__(self) -> None:
        self.launches: list[Launch] = []
        self.writes: list[tuple[np.ndarray, ...]] = []  # each launch's output buffers
        self.syncs: list[str] = []  # host reads: data-dependent ops

    def allocate(self, shape: tuple[int, ...], np_dtype: np.dtype[Any],
                 on_cuda: bool) -> tuple[np.ndarray, None]:
        return np.zeros(shape, np_dtype), None

    def run(self, op: str, kernel: _dispatch.Kernel, outs: tuple[np.ndarray, ...],
            inputs: tuple[Any, ...], params: dict[str, Any], kind: str, on_cuda: bool) -> None:
        in_numel = max((x.size for x in inputs if isinstance(x, np.ndarray)), default=0)
        self.launches.append(Launch(op, kind, max((o.size for o in outs), default=0), in_numel,
                                    on_cuda))
        self.writes.append(outs)

    def host_sync(self, what: str) -> None:
        self.syncs.append(what)


@dataclass
class _NodeProbe:
    launches: list[Launch] = field(default_factory=list)
    writes: list[np.ndarray] = field(default_factory=list)
    syncs: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    writes_input: bool = False  # in place: a launch wrote one of the node's own inputs
    writes_graph_input: bool = False  # ... and that memory is a graph input's (or an attribute's)


class _Prober(Interpreter):
    """Runs the graph under the probe mode, noting each node's launches; a custom op runs its
    fake impl (when it has one), as torch never runs an op's body at compile time."""

    def __init__(self, gm: GraphModule, mode: _ProbeMode) -> None:
        super().__init__(gm, garbage_collect_values=False)
        self.mode = mode
        self.probes: dict[Node, _NodeProbe] = {}
        self._declared: list[np.ndarray] = []  # what the current custom op says it writes
        self._graph_inputs: list[np.ndarray] = []  # placeholders' and get_attrs' memory

    def run_node(self, n: Node) -> Any:
        mode = self.mode
        first_launch, first_sync = len(mode.launches), len(mode.syncs)
        self._declared = []
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        value = super().run_node(n)
        writes = [a for outs in mode.writes[first_launch:] for a in outs] + self._declared
        read = _tensors([*args, *kwargs.values()])
        if n.op in ("placeholder", "get_attr"):
            self._graph_inputs += [t._a for t in _tensors(value)]
        writes_input = any(np.may_share_memory(w, t._a) for w in writes for t in read)
        self.probes[n] = _NodeProbe(
            mode.launches[first_launch:], writes, mode.syncs[first_sync:],
            [t.device.type for t in _tensors(value)], writes_input,
            writes_input and any(np.may_share_memory(w, a) for w in writes
                                 for a in self._graph_inputs))
        return value

    def call_function(self, target: Target, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> Any:
        custom = library.custom_op_def(target)
        if custom is None:
            return super().call_function(target, args, kwargs)
        bound = inspect.signature(custom._init_fn).bind(*args, **kwargs)
        self._declared = [t._a for name in custom._mutated_args
                          for t in _tensors(bound.arguments.get(name))]
        if custom._abstract_fn is not None:
            return custom._abstract_fn(*args, **kwargs)
        return super().call_function(target, args, kwargs)


def _tensors(value: Any) -> list[Tensor]:
    if isinstance(value, Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for v in value for t in _tensors(v)]
    return []


@dataclass
class GraphInfo:
    """What compile time learned about a graph."""

    kernels: list[Kernel]
    static_input_idxs: tuple[int, ...]  # inputs marked static (torch._dynamo's marking)
    mutated_input_idxs: tuple[int, ...]
    input_stack_traces: tuple[str | None, ...]  # per input: the node that writes it
    output_stack_traces: tuple[str | None, ...]
    device_nodes: dict[str, Node]  # device type -> the first node on it
    incompatible: tuple[Node, str] | None  # the first data-dependent node, and its op


def _is_size(n: Node) -> bool:
    """A node whose value is a size (a symbol's placeholder, size arithmetic), not memory."""
    return isinstance(n.meta.get("example_value"), (SymInt, SymFloat))


def analyze(gm: GraphModule, example_inputs: Sequence[Any]) -> GraphInfo:
    """Probe `gm` on `example_inputs`: its kernels, written inputs, devices, unsafe ops. A
    symbol's SymInt runs at its hint (the sizes the probe's kernels see are the trace's)."""
    example_inputs = [x.node.hint if isinstance(x, (SymInt, SymFloat)) else x
                      for x in example_inputs]
    mode = _ProbeMode()
    prober = _Prober(gm, mode)
    states = [g.get_state() for g in (_generator.default_generator,
                                      *_generator.cuda_default_generators())]
    try:
        with _dispatch.push_mode(mode):
            prober.run(*example_inputs)
    finally:  # a probed draw advanced the generators: put them back
        for g, state in zip((_generator.default_generator, *_generator.cuda_default_generators()),
                            states, strict=True):
            g.set_state(state)
    nodes = list(gm.graph.nodes)
    placeholders = [n for n in nodes if n.op == "placeholder"]
    inputs = list(example_inputs)
    mutated: list[int] = []
    input_traces: list[str | None] = [None] * len(placeholders)
    for idx, inp in enumerate(inputs[:len(placeholders)]):
        if not isinstance(inp, Tensor):
            continue
        for n in nodes:
            probe = prober.probes.get(n)
            if probe and any(np.may_share_memory(w, inp._a) for w in probe.writes):
                mutated.append(idx)
                input_traces[idx] = n.stack_trace
                break
    device_nodes: dict[str, Node] = {}
    incompatible: tuple[Node, str] | None = None
    for n in nodes:
        probe = prober.probes.get(n)
        if probe is None:
            continue
        for dev in probe.devices:
            device_nodes.setdefault(dev, n)
        unsafe = [x.op for x in probe.launches if _opdef.aten_kind(x.op) in _HOST_READS] + [
            what for what in probe.syncs if what not in _TRANSFERS]
        if incompatible is None and unsafe:
            incompatible = (n, unsafe[0])
    out = next(n for n in reversed(nodes) if n.op == "output")
    out_args = out.args[0] if isinstance(out.args[0], (list, tuple)) else (out.args[0],)
    empty = _NodeProbe()
    kernels = plan_kernels([  # (a size's node, e.g. a symbol `s72`, is no data kernels share)
        NodeInfo(n.name, n.op, [i.name for i in n.all_input_nodes if not _is_size(i)],
                 prober.probes.get(n, empty).launches, _opaque_name(n),
                 prober.probes.get(n, empty).writes_input,
                 prober.probes.get(n, empty).writes_graph_input)
        for n in nodes])
    return GraphInfo(kernels, _static_input_idxs(placeholders, inputs), tuple(mutated),
                     tuple(input_traces),
                     tuple(a.stack_trace if isinstance(a, Node) else None for a in out_args),
                     device_nodes, incompatible)


def _static_input_idxs(placeholders: list[Node], inputs: list[Any]) -> tuple[int, ...]:
    """Inputs whose address stays put from call to call, as torch._dynamo marks them
    (`_dynamo_static_input_type`: tensors of nn.Modules, torch._dynamo.mark_static_address).
    The graph's get_attr tensors are static too: they are not inputs at all."""
    def marked(node: Node, value: Any) -> bool:
        tensor_dict = node.meta.get("tensor_dict") or {}
        return bool(getattr(value, "_dynamo_static_input_type", None)
                    or tensor_dict.get("_dynamo_static_input_type"))

    return tuple(i for i, (node, value) in enumerate(zip(placeholders, inputs, strict=False))
                 if marked(node, value))


def _opaque_name(n: Node) -> str | None:
    """torch.ops.<ns>.<name>.default for a custom op node (inductor's fallback kernel)."""
    if n.op == "call_function" and library.custom_op_def(n.target) is not None:
        return f"torch.ops.{n.target}"
    return None


# --- the compiled graph ---------------------------------------------------------------------


class _FusedInterpreter(Interpreter):
    """Runs the graph; the nodes of each fused kernel inside one `_dispatch.fused` block, and
    each inlined node inside a block of its kernel that counts nothing: its work is part of
    a launch counted when that kernel runs."""

    def __init__(self, gm: GraphModule, plan: _Plan) -> None:
        super().__init__(gm)
        self.plan = plan
        self._open: Any = None  # the fused block now open

    def run_node(self, n: Node) -> Any:
        plan = self.plan
        inlined_into = plan.inlined.get(n)
        if inlined_into is not None:
            with _dispatch.fused(inlined_into) as kernel:
                kernel.launched = True  # counted at its kernel's launch
                return super().run_node(n)
        name = plan.starts.get(n)
        if name is not None:
            for copy in plan.copies_before.get(n, ()):
                _launch_copy(copy)
            self._open = _dispatch.fused(name)
            self._open.__enter__()
        try:
            value = super().run_node(n)
        finally:
            if n in plan.ends:
                self._close()
        for copy in plan.copies_after.get(n, ()):
            _launch_copy(copy)
        return value

    def _close(self) -> None:
        if self._open is not None:
            self._open.__exit__(None, None, None)
            self._open = None

    def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().run(*args, **kwargs)
        finally:
            self._close()


def _no_work(*outs_and_inputs: Any, **params: Any) -> None:
    """The kernel of a copy whose work the in-place scatter already did."""


def _launch_copy(kernel: Kernel) -> None:
    """One launch of a copy kernel around an index_copy_ into a graph input (see _Plan)."""
    _dispatch.launch(kernel.name, _no_work, (), (), on_cuda=kernel.on_cuda)


@dataclass
class _Plan:
    """Where fused blocks open and close, per fx node, and the copy kernels launched around
    the kernel of an index_copy_ into a graph input: the copy in before it opens, the copy
    back after it closes."""

    starts: dict[Node, str]  # first node of a kernel -> its name
    ends: set[Node]  # last node of a kernel
    inlined: dict[Node, str]  # inlined node -> the kernel that does its work
    copies_before: dict[Node, list[Kernel]] = field(default_factory=dict)  # first node -> ...
    copies_after: dict[Node, list[Kernel]] = field(default_factory=dict)  # last node -> ...

    @classmethod
    def of(cls, gm: GraphModule, kernels: list[Kernel]) -> _Plan:
        by_name = {n.name: n for n in gm.graph.nodes}
        fused = [k for k in kernels if k.fused and k.copy is None]
        plan = cls({by_name[k.nodes[0]]: k.name for k in fused},
                   {by_name[k.nodes[-1]] for k in fused},
                   {by_name[m]: k.name for k in fused for m in k.inlined})
        kernel_of = {m: k for k in fused for m in k.nodes}
        for k in kernels:
            if k.copy == "in":
                first = by_name[kernel_of[k.nodes[0]].nodes[0]]
                plan.copies_before.setdefault(first, []).append(k)
            elif k.copy == "back":
                last = by_name[kernel_of[k.nodes[0]].nodes[-1]]
                plan.copies_after.setdefault(last, []).append(k)
        return plan


class CompiledFxGraph:
    """What compile_fx returns: call it with the graph's inputs, it returns the graph's
    outputs. `kernels` lists the launches one call makes (fused kernels and extern ops)."""

    def __init__(self, gm: GraphModule, info: GraphInfo) -> None:
        self.gm = gm
        self.info = info
        self.kernels = info.kernels
        self._plan = _Plan.of(gm, info.kernels)

    def __call__(self, *args: Any) -> Any:
        return _FusedInterpreter(self.gm, self._plan).run(*args)

    def run_boxed(self, inputs: list[Any]) -> Any:
        """The trees' calling convention: inputs as one list."""
        return self(*inputs)


def compile_fx(model_: GraphModule, example_inputs_: Sequence[Any], *,
               config_patches: dict[str, Any] | None = None) -> Any:
    """Compile an FX graph with (fake) inductor: fuse, and with triton.cudagraphs wrap the
    result in CUDA graph trees."""
    with config.patch(config_patches or {}):
        if config.graph_partition:
            raise NotImplementedError("torch._inductor.config.graph_partition=True is not "
                                      "emulated by fake_torch")
        if not config.triton.unique_kernel_names:
            raise NotImplementedError("torch._inductor.config.triton.unique_kernel_names=False "
                                      "is not emulated by fake_torch (its kernels keep their "
                                      "fused names)")
        if config.combo_kernels and not config.benchmark_combo_kernel:
            raise NotImplementedError("torch._inductor.config.combo_kernels=True (without "
                                      "benchmark_combo_kernel) is not emulated by fake_torch")
        gm = lift_tensor_constants(_recursive_pre_grad_passes(model_))
        if config.post_grad_custom_pre_pass is not None or \
                config.post_grad_custom_post_pass is not None:
            gm = _post_grad_graph(gm, example_inputs_)
        compiled = CompiledFxGraph(gm, analyze(gm, example_inputs_))
        if not config.triton.cudagraphs:
            return compiled
        if not config.triton.cudagraph_trees:
            raise NotImplementedError("torch._inductor.config.triton.cudagraph_trees=False is "
                                      "not emulated by fake_torch")
        return _cudagraphify_or_skip(compiled)


def _recursive_pre_grad_passes(gm: GraphModule) -> GraphModule:
    """torch's pre-grad passes on Dynamo's graph: of them, config.pre_grad_custom_pass (its
    own pattern passes change no launch here), then the stable topological sort (a graph no
    pass changed is already sorted: left as it is)."""
    passes = get_custom_graph_passes(config.pre_grad_custom_pass)
    if not config.use_pre_grad_passes or not passes:
        return gm
    for custom in passes:
        custom(gm.graph)
    stable_topological_sort(gm.graph)
    gm.graph.lint()
    gm.recompile()
    return gm


def _post_grad_graph(gm: GraphModule, example_inputs: Sequence[Any]) -> GraphModule:
    """The aten graph torch's inductor lowers: Dynamo's graph traced to aten ops (as
    aot_autograd does for inference), the joint-graph passes, views made reshapes, then the
    post-grad passes (the custom ones among them). fake_torch takes this path only when a
    post-grad custom pass is set: otherwise the Dynamo graph is compiled as it is, as before
    this path existed (the kernels can differ where a decomposition or a removed no-op changes
    the ops)."""
    aten = aten_graph(gm, example_inputs)
    if config.use_joint_graph_passes:
        aten = joint_graph.joint_graph_passes(aten)
    post_grad.view_to_reshape(aten)
    post_grad.post_grad_passes(aten, is_inference=True)
    reinplace(aten.graph)  # auto_functionalized back to its op, in place, where safe
    aten.recompile()
    return aten


def _cudagraphify_or_skip(compiled: CompiledFxGraph) -> Any:
    """Wrap in CUDA graph trees, unless torch's inductor would not: then say why, once."""
    info = compiled.info
    reason = None
    if info.incompatible is not None:
        node, op = info.incompatible
        reason = f"disabling cudagraphs due to incompatible op aten.{op}.default"
        if node.stack_trace:
            reason = f"{reason} Found from {node.stack_trace}\n"
    elif "cpu" in info.device_nodes:
        cpu_node = info.device_nodes["cpu"]
        trace = next((u.stack_trace for u in cpu_node.users if u.stack_trace), None)
        reason = cpu_device_message(cpu_node.name, trace)
    if reason is not None:  # found while lowering: torch prefixes it once more
        reason = format_default_skip_message(reason)
    elif not config.triton.cudagraph_support_input_mutation:
        mutated = [i for i in info.mutated_input_idxs if i not in info.static_input_idxs]
        if mutated:
            reason = get_mutation_stack_trace(mutated, info.input_stack_traces)
    if reason is not None:
        if "cuda" in info.device_nodes:
            log_cudagraph_skip_and_bump_counter(reason)
        else:  # a graph with no cuda tensor: counted, not said (torch's behaviour)
            bump_counter("cudagraph_skips")
        return compiled
    return CUDAGraphed(compiled.run_boxed, info, compiled.kernels)


class CUDAGraphed:
    """A compiled graph run through CUDA graph trees: call it like the graph."""

    def __init__(self, model: cudagraph_trees.Model, info: GraphInfo,
                 kernels: list[Kernel], static: bool = True) -> None:
        self.kernels = kernels
        self._run = cudagraph_trees.cudagraphify(
            model, info.static_input_idxs if static else (),
            mutated_input_idxs=info.mutated_input_idxs, stack_traces=info.output_stack_traces,
            input_stack_traces=info.input_stack_traces)

    def __call__(self, *args: Any) -> Any:
        return self._run(list(args))


def graph_returns_tuple(gm: GraphModule) -> bool:
    """True if an FX graph returns a tuple (or list), or one node of an operator whose schema
    returns several tensors. Anything but a GraphModule: assumed True, as torch does."""
    if not isinstance(gm, GraphModule):
        return True
    output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    (rv,) = output.args
    if isinstance(rv, (list, tuple)):
        return True
    schema = getattr(rv.target, "_schema", None) if isinstance(rv, Node) else None
    if isinstance(schema, str) and "->" in schema:  # "ns::f(...) -> (Tensor a, Tensor b)"
        returns = schema.rsplit("->", 1)[1].strip()
        if returns.startswith("(") and returns.endswith(")"):
            types = [r.split()[0] for r in returns[1:-1].split(",") if r.strip()]
            return len(types) > 1 and all(t == "Tensor" for t in types)
    return False
