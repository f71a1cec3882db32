"""torch.fx.passes.split_module: cut a GraphModule into partitions, one submodule each.

`split_callback(node) -> int` numbers every call node's partition. Each partition becomes a
GraphModule `submod_<i>`; the returned module's graph calls them in topological order (or in the
order partitions first appear, with keep_original_order=True). A value made in one partition and
read in another becomes an output of the first (several outputs: a tuple, unpacked by
`operator.getitem` nodes) and a placeholder of the second. Graph inputs and tensor attributes
stay in the base graph (placeholder / get_attr) and are passed in; submodules travel into the
partition that calls them. This is how vLLM cuts a model at its attention ops and wraps each
piece in a CUDA graph.

Copied nodes keep their meta (shallow copy) and point at the node they came from through
`meta["orig"]` (the first original, for a copy of a copy), so per-node tables kept by the tracer
follow the pieces.
"""

from __future__ import annotations

import inspect
import operator
from collections.abc import Callable
from typing import Any

from fake_torch.fx.graph import Graph
from fake_torch.fx.graph_module import GraphModule
from fake_torch.fx.node import Node, map_arg
from fake_torch.nn.modules.module import Module


class Partition:
    """One piece of the split: its nodes, the values it reads and makes, its graph."""

    def __init__(self, name: str) -> None:
        self.name: str = name
        self.submod_name = f"submod_{name}"
        self.node_names: list[str] = []
        self.inputs: dict[str, None] = {}
        self.outputs: dict[str, None] = {}
        self.dependencies: dict[str, None] = {}
        self.dependents: dict[str, None] = {}
        self.graph: Graph = Graph()
        self.environment: dict[Node, Node] = {}
        self.targets: dict[str, Any] = {}

    def __repr__(self) -> str:
        return (f"name: {self.name},\n"
                f" nodes: {self.node_names},\n"
                f" inputs: {self.inputs},\n"
                f" outputs: {self.outputs},\n"
                f" partitions depended on: {self.dependencies},\n"
                f" partition dependents: {self.dependents}")


def _get_attr_from_qualname(mod: Module, qualname: str) -> Any:
    attr_val: Any = mod
    for atom in qualname.split("."):
        if not hasattr(attr_val, atom):
            raise AttributeError(f"Node target {qualname} not found!")
        attr_val = getattr(attr_val, atom)
    return attr_val


def _copy_meta(new: Node, old: Node) -> None:
    new.meta = old.meta.copy()
    new.meta.setdefault("orig", old)


class _Splitter:
    """The state of one split_module call; `run` is the whole algorithm, phase by phase."""

    def __init__(self, m: GraphModule, split_callback: Callable[[Node], int],
                 qualname_map: dict[str, str] | None, keep_original_order: bool,
                 keep_original_node_name: bool, keep_original_input_name: bool,
                 partition_affix: str | None, tuple_return: bool) -> None:
        self.m = m
        self.split_callback = split_callback
        self.qualname_map = qualname_map
        self.keep_original_order = keep_original_order
        self.keep_original_node_name = keep_original_node_name
        self.keep_original_input_name = keep_original_input_name
        self.partition_affix = partition_affix
        self.tuple_return = tuple_return
        self.partitions: dict[str, Partition] = {}
        self.node_partition: dict[Node, str] = {}
        self.orig_nodes: dict[str, Node] = {}
        self.base_graph = Graph()
        self.base_env: dict[str, Node] = {}
        self.base_attrs: dict[str, Any] = {}
        self.symbol_nodes: dict[Any, Node] = {}  # sympy symbol -> the node binding it

    def run(self) -> GraphModule:
        nodes = list(self.m.graph.nodes)
        # assign: every call node to the partition its callback names
        for node in nodes:
            if node.op not in ("placeholder", "get_attr", "output"):
                self.assign(node)
        # record: values that cross partitions become outputs / inputs
        for node in nodes:
            self.orig_nodes[node.name] = node
            self.bind_symbol(node)
            if node.op in ("placeholder", "get_attr"):
                continue
            for def_node in node.all_input_nodes:  # args then kwargs, first appearance
                self.record_use(def_node, None if node.op == "output" else node)
        original_partition_order = list(self.partitions)
        sorted_partitions = self.topological_order()
        for name in sorted_partitions:
            self.add_inputs(self.partitions[name])
        # copy: each call node into its partition's graph
        for node in nodes:
            if node in self.node_partition:
                self.copy_into_partition(node)
        # build: the base graph calling submod_<i> in order
        if not self.keep_original_order:
            for node in nodes:
                self.construct_base_input(node)
        order = original_partition_order if self.keep_original_order else sorted_partitions
        placeholders = [n for n in nodes if n.op == "placeholder"]
        constructed: set[Node] = set()
        for name in order:
            partition = self.partitions[name]
            outputs = tuple(partition.environment[self.orig_nodes[o]] for o in partition.outputs)
            if len(outputs) == 1 and not self.tuple_return:
                partition.graph.output(outputs[0])
            else:
                partition.graph.output(outputs)
            if self.keep_original_order:
                needed = placeholders + [self.orig_nodes[key] for key in partition.inputs]
                for node in needed:
                    if node not in constructed:
                        self.construct_base_input(node)
                        constructed.add(node)
            self.base_attrs[partition.submod_name] = GraphModule(partition.targets,
                                                                 partition.graph)
            self.emit_call(partition)
        if self.keep_original_order and not self.base_env:
            for node in nodes:
                self.construct_base_input(node)
        for node in nodes:
            if node.op == "output":
                self.base_graph.output(map_arg(node.args[0], lambda n: self.base_env[n.name]))
        ret = GraphModule(self.base_attrs, self.base_graph)
        ret.meta["partition_names"] = {p.submod_name for p in self.partitions.values()}
        return ret

    # --- phases -----------------------------------------------------------------------------

    def assign(self, node: Node) -> None:
        name = str(self.split_callback(node))
        if self.partition_affix is not None:
            name = f"{self.partition_affix}_{name}"
        partition = self.partitions.get(name)
        if partition is None:
            partition = self.partitions[name] = Partition(name)
        partition.node_names.append(node.name)
        self.node_partition[node] = name

    def record_use(self, def_node: Node, use_node: Node | None) -> None:
        defined = self.node_partition.get(def_node)
        used = self.node_partition.get(use_node) if use_node is not None else None
        if defined == used:
            return
        if defined is not None:
            self.partitions[defined].outputs.setdefault(def_node.name)
            if used is not None:
                self.partitions[defined].dependents.setdefault(used)
        if used is not None:
            self.partitions[used].inputs.setdefault(def_node.name)
            self.add_symbols(def_node, used)
            if defined is not None:
                self.partitions[used].dependencies.setdefault(defined)

    def bind_symbol(self, node: Node) -> None:
        """A node whose value is a bare symbol (`s77`'s placeholder, first) binds it."""
        from fake_torch._sym import SymFloat, SymInt

        val = node.meta.get("example_value")
        if isinstance(val, (SymInt, SymFloat)):
            expr = val.node.expr
            if expr.is_Symbol and expr not in self.symbol_nodes:
                self.symbol_nodes[expr] = node

    def add_symbols(self, def_node: Node, used: str) -> None:
        """A value with symbolic sizes crossing into a partition brings the symbols in too,
        as torch's split_module does (a symbol made by a call is an output of its own
        partition)."""
        val = def_node.meta.get("example_value")
        if val is None or not self.symbol_nodes:
            return
        from fake_torch.fx.experimental.symbolic_shapes import free_symbols

        partition = self.partitions[used]
        for symbol in sorted(free_symbols(val), key=str):
            s_node = self.symbol_nodes.get(symbol)
            if s_node is None:
                continue
            partition.inputs.setdefault(s_node.name)
            s_defined = self.node_partition.get(s_node)
            if s_node.op != "placeholder" and s_defined is not None:
                self.partitions[s_defined].outputs.setdefault(s_node.name)
                self.partitions[s_defined].dependents.setdefault(used)
                partition.dependencies.setdefault(s_defined)

    def topological_order(self) -> list[str]:
        """Partitions so that each comes after those it reads from (torch's LIFO walk)."""
        pending = {name: dict(p.dependencies) for name, p in self.partitions.items()}
        roots = [name for name, deps in pending.items() if not deps]
        order: list[str] = []
        while roots:
            root = roots.pop()
            order.append(root)
            for dependent in self.partitions[root].dependents:
                pending[dependent].pop(root)
                if not pending[dependent]:
                    roots.append(dependent)
        if len(order) != len(self.partitions):
            raise RuntimeError("cycle exists between partitions!")
        return order

    def add_inputs(self, partition: Partition) -> None:
        """Placeholders for what the partition reads (submodules it reads: get_attr)."""
        def is_module_attr(inp: str) -> bool:
            node = self.orig_nodes[inp]
            return node.op == "get_attr" and isinstance(
                _get_attr_from_qualname(self.m, str(node.target)), Module)

        ordered = [i for i in partition.inputs if not is_module_attr(i)] + \
                  [i for i in partition.inputs if is_module_attr(i)]
        new_inputs: dict[str, None] = {}
        counter = 0
        for inp in ordered:
            orig = self.orig_nodes[inp]
            if is_module_attr(inp):
                new = partition.graph.get_attr(str(orig.target))
                partition.targets[str(orig.target)] = _get_attr_from_qualname(self.m,
                                                                              str(orig.target))
            else:
                name = inp if self.keep_original_input_name else f"arg_{counter}"
                counter += 0 if self.keep_original_input_name else 1
                new = partition.graph.placeholder(name, type_expr=orig.type)
                new_inputs[inp] = None
            _copy_meta(new, orig)
            partition.environment[orig] = new
        partition.inputs = new_inputs

    def copy_into_partition(self, node: Node) -> None:
        partition = self.partitions[self.node_partition[node]]
        env = partition.environment
        args = map_arg(node.args, lambda n: env[n])
        kwargs = map_arg(node.kwargs, lambda n: env[n])
        target = node.target
        if node.op in ("call_module", "get_attr"):
            assert isinstance(node.target, str)
            target = node.target.replace(".", "_")
            partition.targets[target] = _get_attr_from_qualname(self.m, node.target)
            if self.qualname_map is not None:
                self.qualname_map[f"{partition.submod_name}.{target}"] = node.target
        name = node.name if self.keep_original_node_name else None
        new = partition.graph.create_node(node.op, target, args, kwargs, name=name,
                                          type_expr=node.type)
        _copy_meta(new, node)
        env[node] = new

    def construct_base_input(self, node: Node) -> None:
        """Graph inputs and attributes live in the base graph (only those: others are no-op)."""
        if node.op == "placeholder":
            default = node.args[0] if node.args else inspect.Signature.empty
            if self.keep_original_node_name:
                args = () if default is inspect.Signature.empty else (default,)
                new = self.base_graph.create_node("placeholder", node.name, args=args,
                                                  type_expr=node.type)
            else:
                assert isinstance(node.target, str)
                new = self.base_graph.placeholder(node.target, type_expr=node.type,
                                                  default_value=default)
        elif node.op == "get_attr":
            assert isinstance(node.target, str)
            new = self.base_graph.get_attr(node.target)
            self.base_attrs[node.target] = _get_attr_from_qualname(self.m, node.target)
        else:
            return
        _copy_meta(new, node)
        self.base_env[node.name] = new

    def emit_call(self, partition: Partition) -> None:
        output_val = self.base_graph.call_module(
            partition.submod_name, tuple(self.base_env[name] for name in partition.inputs))
        num_outputs = len(partition.outputs)
        if num_outputs > 1 or (num_outputs == 1 and self.tuple_return):
            for i, output_name in enumerate(partition.outputs):
                self.base_env[output_name] = self.base_graph.call_function(
                    operator.getitem, (output_val, i))
        elif num_outputs == 1:
            self.base_env[next(iter(partition.outputs))] = output_val


def split_module(m: GraphModule, root_m: Module | None,
                 split_callback: Callable[[Node], int],
                 qualname_map: dict[str, str] | None = None,
                 keep_original_order: bool | None = False,
                 keep_original_node_name: bool | None = False,
                 keep_original_input_name: bool = True, *,
                 partition_affix: str | None = None,
                 tuple_return: bool = False) -> GraphModule:
    """Split `m` into submodules `submod_<i>` by `split_callback(node) -> i`
    (torch.fx.passes.split_module.split_module; `root_m` is unused, as in torch)."""
    del root_m
    return _Splitter(m, split_callback, qualname_map, bool(keep_original_order),
                     bool(keep_original_node_name), keep_original_input_name,
                     partition_affix, tuple_return).run()


__all__ = ["Partition", "split_module"]
