"""Which launches inductor fuses into one kernel: the fusion plan of a graph.

Each launch a node made (seen once, at compile time) is pointwise, a reduction or extern, as its
aten op's definition says (fake_torch._opdef: an undefined launch name is an error, never a
silent pointwise):
  - extern: matmuls, attention, sorts, scans, random draws other than inductor's own,
    transfers, data-dependent ops and custom ops keep their own launch (torch calls
    `extern_kernels.mm`, aten fallbacks);
  - a pointwise node read only by pointwise or reduction nodes (not returned, writing no
    input) is INLINED: its work is done inside the kernels that read it (counted in the first),
    unless several read it and it is big (inductor's realize_reads_threshold);
  - the other pointwise and reduction nodes fuse. Walking the graph in order, consecutive such
    nodes join one kernel while they share data (one reads what another made or read) and
    iterate over the same elements, or, once the kernel holds a reduction, over its output
    rows (a composite RMSNorm's `mean + eps`, `rsqrt`: ONE kernel). An extern node, another size or
    unrelated data starts the next kernel.
An index_copy_ into memory the graph did not make (a graph input, parameter or buffer, or a view
of one: a KV-cache write) is three kernels. Functionalization turns it into `y = index_copy(x)`
and `x.copy_(y)`, and inductor does not turn index_copy back into an in-place store: a copy of x
into a new buffer (its own kernel), the scatter into that buffer (fused with the ops that make
the values, never with another scatter) and the copy back into x (its own kernel). Into a tensor
the graph made, index_copy_ stays one in-place scatter.
Kernels are named as inductor names its Triton kernels: `triton_poi_fused_add_mul_0` (pointwise),
`triton_per_fused_...` (a reduction over <= 1024 elements: persistent) or `triton_red_fused_...`
(`cpp_fused_...` on the cpu, where nothing is counted), listing the aten ops it absorbed.
Kernels with the same ops and sizes share one name: inductor reuses a kernel whose source is
the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fake_torch._inductor import config
from fake_torch._opdef import SCHEDULER_CLASS, aten_kind

POINTWISE, REDUCTION, EXTERN = "pointwise", "reduction", "extern"

# in-place scatters are pointwise stores over their source (index_copy_ of a KV-cache write
# fuses with the ops that make the keys)
_SCATTERS = frozenset({"index_put_", "index_copy_", "scatter_", "scatter_add_"})
# scatters into a graph input that inductor runs as copy + scatter + copy back (an H200, torch
# 2.11, 2026-11-29, ran a KV-cache index_copy_ so). Its reinplacing pass knows index_put, not
# index_copy; index_put_ and the others stay one in-place kernel: no GPU measurement of them yet
_COPIED_SCATTERS = frozenset({"index_copy_"})
_TRANSFERS = frozenset({"memcpy_h2d", "memcpy_d2h"})


def launch_class(op: str, kind: str) -> str:
    """pointwise, reduction or extern: how inductor treats a launch of `op` (of door kind
    `kind`: a host<->device copy is extern whatever its op)."""
    if kind in _TRANSFERS:
        return EXTERN
    return SCHEDULER_CLASS[aten_kind(op)]


@dataclass(frozen=True)
class Launch:
    """One launch a node made when probed: its op, door kind and sizes (in elements)."""

    op: str
    kind: str
    out_numel: int  # elements it writes
    in_numel: int  # elements of its largest input array
    on_cuda: bool = True


@dataclass
class Kernel:
    """One launch of the compiled graph: a fused Triton kernel or an extern launch."""

    name: str
    kind: str  # pointwise, reduction or extern
    nodes: list[str]  # fx nodes it runs, in graph order
    ops: list[str]  # the eager launches it stands for, in graph order
    inlined: list[str] = field(default_factory=list)  # nodes computed inside it
    on_cuda: bool = True  # a cpu kernel (cpp_fused_...) counts nothing
    # "in" (the target into a new buffer) or "back" (the result into the target): a copy around
    # an index_copy_ into a graph input, nodes[0]; it stands for no eager launch
    copy: str | None = None

    @property
    def fused(self) -> bool:
        return self.kind != EXTERN


@dataclass
class NodeInfo:
    """What compile time saw of one fx node."""

    name: str
    op: str  # the fx op: placeholder, get_attr, call_function, ..., output
    inputs: list[str]  # its input nodes' names
    launches: list[Launch] = field(default_factory=list)
    opaque: str | None = None  # a custom op's name: its body is not seen at compile time
    writes_input: bool = False  # in place: what it makes is not a value to inline
    writes_graph_input: bool = False  # in place into a graph input, parameter or buffer (or a view)

    @property
    def copied_scatter(self) -> bool:
        """An index_copy_ into a graph input: inductor copies the target in and back."""
        return self.writes_graph_input and any(x.op in _COPIED_SCATTERS for x in self.launches)


def node_class(launches: list[Launch]) -> str | None:
    """None for a node that launches nothing (a view); extern if any launch is; else
    reduction if any launch reduces; else pointwise."""
    if not launches:
        return None
    classes = {launch_class(x.op, x.kind) for x in launches}
    if EXTERN in classes:
        return EXTERN
    return REDUCTION if REDUCTION in classes else POINTWISE


@dataclass
class _Group:
    on_cuda: bool  # a kernel runs on one device
    numel: int  # elements the kernel iterates over
    rows: int | None = None  # a reduction's output elements, once it holds one
    nodes: list[str] = field(default_factory=list)
    data: set[str] = field(default_factory=set)  # what its nodes made or read
    scatters: bool = False  # it holds a scatter
    copied: str | None = None  # its last node: an index_copy_ into a graph input

    def fits(self, on_cuda: bool, cls: str, numel: int, rows: int | None) -> bool:
        if len(self.nodes) >= config.max_fusion_size or on_cuda != self.on_cuda:
            return False
        if cls == POINTWISE:
            return numel == self.numel or (self.rows is not None and numel == self.rows)
        return numel == self.numel and (self.rows is None or rows == self.rows)


class _Graph:
    """The graph as the scheduler reads it: classes, users, what inlining leaves."""

    def __init__(self, nodes: list[NodeInfo]) -> None:
        self.nodes = nodes
        self.info = {n.name: n for n in nodes}
        self.index = {n.name: i for i, n in enumerate(nodes)}
        self.users: dict[str, list[str]] = {n.name: [] for n in nodes}
        for n in nodes:
            for i in n.inputs:
                self.users[i].append(n.name)
        self.cls = {n.name: EXTERN if n.opaque else node_class(n.launches) for n in nodes}
        self._sources: dict[str, frozenset[str]] = {}
        self._inlined_into: dict[str, frozenset[str]] = {}
        self.inlined: set[str] = set()
        for n in nodes:  # in graph order: a node's producers are decided before it
            if self._inlinable(n):
                self.inlined.add(n.name)

    def transparent(self, name: str) -> bool:
        """Launches nothing of its own: a view, or a node inlined into its readers."""
        return (self.cls[name] is None and self.info[name].op not in (
            "placeholder", "get_attr", "output")) or name in self.inlined

    def readers(self, name: str, through: set[str] | None = None) -> list[str]:
        """The launching nodes (and "output") that read `name`, seen through views."""
        found, stack, seen = [], list(self.users[name]), set()
        while stack:
            u = stack.pop()
            if u in seen:
                continue
            seen.add(u)
            if self.info[u].op == "output":
                found.append(u)
            elif self.cls[u] is None or (through is not None and u in through):
                stack.extend(self.users[u])
            else:
                found.append(u)
        return found

    def _inlinable(self, n: NodeInfo) -> bool:
        """Inductor's rule: a pointwise value read by fusible nodes only is computed inside
        its readers; read by several, it is stored instead once it reads more than
        realize_reads_threshold buffers or its code grows past realize_opcount_threshold."""
        if self.cls[n.name] != POINTWISE or n.writes_input:
            return False
        readers = self.readers(n.name)
        if not readers or any(self.cls[r] not in (POINTWISE, REDUCTION) for r in readers):
            return False
        if len(readers) == 1:
            return True
        opcount = len(n.launches) + sum(len(self.info[a].launches)
                                        for a in self.inlined_into(n.name))
        return (len(self.reads(n.name)) <= config.realize_reads_threshold
                and opcount <= config.realize_opcount_threshold)

    def sources(self, name: str) -> frozenset[str]:
        """The nodes whose memory a kernel reads for `name`'s value."""
        cached = self._sources.get(name)
        if cached is None:
            if self.transparent(name):
                cached = frozenset().union(*(self.sources(i) for i in self.info[name].inputs))
            else:
                cached = frozenset({name})
            self._sources[name] = cached
        return cached

    def reads(self, name: str) -> frozenset[str]:
        return frozenset().union(*(self.sources(i) for i in self.info[name].inputs))

    def inlined_into(self, name: str) -> frozenset[str]:
        """The inlined nodes whose work `name` does (its inlined producers, transitively)."""
        cached = self._inlined_into.get(name)
        if cached is None:
            out: set[str] = set()
            for i in self.info[name].inputs:
                if self.transparent(i):
                    out |= self.inlined_into(i) | ({i} if i in self.inlined else set())
            cached = self._inlined_into[name] = frozenset(out)
        return cached


def plan_kernels(nodes: list[NodeInfo]) -> list[Kernel]:
    """The kernels of a graph (every fx node, in graph order), in launch order. A custom op is
    one extern entry: at run time it launches what its body launches."""
    graph = _Graph(nodes)
    kernels: list[Kernel] = []
    kernel_of: dict[str, Kernel] = {}
    names: dict[tuple[object, ...], str] = {}
    group: _Group | None = None

    def close() -> None:
        nonlocal group
        if group is not None:
            copied = group.copied
            if copied is not None:  # named first: inductor generates the copy in first
                kernels.append(_copy_kernel(graph, copied, "in", group.on_cuda, names))
            kernel = _fused_kernel(graph, group, names)
            kernels.append(kernel)
            kernel_of.update(dict.fromkeys(group.nodes, kernel))
            if copied is not None:
                kernels.append(_copy_kernel(graph, copied, "back", group.on_cuda, names))
            group = None

    for n in nodes:
        cls = graph.cls[n.name]
        if cls is None or n.name in graph.inlined:
            continue
        if n.opaque is not None or cls == EXTERN:
            close()
            kernels.extend([Kernel(n.opaque, EXTERN, [n.name], [n.opaque])] if n.opaque else
                           [Kernel(x.op, EXTERN, [n.name], [x.op], on_cuda=x.on_cuda)
                            for x in n.launches])
            continue
        numel = max(x.out_numel if launch_class(x.op, x.kind) == POINTWISE
                    and x.op not in _SCATTERS else x.in_numel for x in n.launches)
        rows = next((x.out_numel for x in n.launches
                     if launch_class(x.op, x.kind) == REDUCTION), None)
        reads = graph.reads(n.name)
        on_cuda = n.launches[0].on_cuda
        scatters = any(x.op in _SCATTERS for x in n.launches)
        if group is None or not group.fits(on_cuda, cls, numel, rows) or not (
                reads & group.data) or (n.copied_scatter and group.scatters):
            close()
            group = _Group(on_cuda, numel)
        group.nodes.append(n.name)
        group.data |= reads | {n.name}
        group.scatters |= scatters
        if cls == REDUCTION and group.rows is None:
            group.rows = rows
        if n.copied_scatter:  # the copy back comes next: nothing fuses past the scatter
            group.copied = n.name
            close()
    close()
    # an inlined node runs inside the kernel of its first reader that has one
    for name in sorted(graph.inlined, key=graph.index.__getitem__):
        readers = [r for r in graph.readers(name, through=graph.inlined) if r in kernel_of]
        if readers:
            kernel = kernel_of[min(readers, key=graph.index.__getitem__)]
            kernel.inlined.append(name)
    for kernel in kernels:
        if kernel.fused and kernel.copy is None:
            members = sorted(kernel.nodes + kernel.inlined, key=graph.index.__getitem__)
            kernel.ops = [x.op for m in members for x in graph.info[m].launches]
    return kernels


def _fused_kernel(graph: _Graph, group: _Group, names: dict[tuple[object, ...], str]) -> Kernel:
    computed = set(group.nodes).union(*(graph.inlined_into(m) for m in group.nodes))
    ops = sorted({x.op.rstrip("_") for m in computed  # add_ is named add
                  for x in graph.info[m].launches})
    if not group.on_cuda:  # inductor's C++ kernels (not counted: cpu work launches nothing)
        prefix, kind = "cpp", POINTWISE if group.rows is None else REDUCTION
    elif group.rows is None:
        prefix, kind = "triton_poi", POINTWISE
    else:
        rnumel = group.numel // max(group.rows, 1)
        persistent = config.triton.persistent_reductions and rnumel <= 1024
        prefix, kind = ("triton_per" if persistent else "triton_red"), REDUCTION
    reads = len(group.data - set(group.nodes))
    key = (prefix, tuple(ops), group.numel, group.rows, reads)
    name = names.get(key)
    if name is None:  # same source, same kernel: inductor reuses it
        shown = "_".join(ops[:config.kernel_name_max_ops])
        name = names[key] = f"{prefix}_fused_{shown}_{len(names)}"
    return Kernel(name, kind, list(group.nodes), [], on_cuda=group.on_cuda)


def _copy_kernel(graph: _Graph, node: str, copy: str, on_cuda: bool,
                 names: dict[tuple[object, ...], str]) -> Kernel:
    """A copy around the index_copy_ `node` into a graph input, over the whole target. Named
    as inductor names them: the copy in after the index_copy it serves, the copy back after
    its `copy_` (and the `view` it writes through, when the target is a view)."""
    info = graph.info[node]
    numel = max(x.out_numel for x in info.launches if x.op in _COPIED_SCATTERS)
    target = graph.info[info.inputs[0]]
    if copy == "in":
        ops: tuple[str, ...] = ("index_copy",)
    else:
        ops = ("copy_",) if target.op in ("placeholder", "get_attr") else ("copy_", "view")
    prefix = "triton_poi" if on_cuda else "cpp"
    key = (prefix, ops, numel, None, copy)
    name = names.get(key)
    if name is None:  # every copy of this size is the same source: one kernel
        name = names[key] = f"{prefix}_fused_{'_'.join(ops)}_{len(names)}"
    return Kernel(name, POINTWISE, [node], [], on_cuda=on_cuda, copy=copy)
