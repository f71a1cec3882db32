"""torch.fx.graph: an ordered list of Nodes with unique names, and the ways to build and edit it.

Names follow torch's rules: a node is named after its target ('add', 'linear', 'lin_weight'),
with '_1', '_2' suffixes for repeats, and never shadows a Python builtin or keyword ('sum' becomes
'sum_1'). `str(graph)` prints the FX text IR, `python_code()` the `forward` source that
`GraphModule.code` shows.
"""

from __future__ import annotations

import builtins
import copy
import importlib
import inspect
import keyword
import re
import weakref
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import TYPE_CHECKING, Any

from fake_torch._dtype import _ABBR, dtype
from fake_torch.fx._codegen import CodeGen, PythonCode, gen_python_code
from fake_torch.fx.node import Argument, Node, Target, map_arg

if TYPE_CHECKING:
    from fake_torch.fx.graph_module import GraphModule

# a name may not shadow a keyword or builtin, unless it IS that builtin
_illegal_names: dict[str, object] = {k: object() for k in keyword.kwlist}
_illegal_names.update(builtins.__dict__)
# each dtype's short name as graph code prints it ("f32[4, 8]"); torch's bits* dtypes, which
# fake_torch does not define, are absent
dtype_abbrs: dict[dtype, str] = dict(_ABBR)

_illegal_char_regex = re.compile("[^0-9a-zA-Z_]+")
_name_regex = re.compile(r"^([a-zA-Z_][0-9a-zA-Z_]*?)(?:_(\d+))?$")
_snake_case_sub = re.compile(r"(?<=[a-z])([A-Z])")


def _snake_case(s: str) -> str:
    """'pascalCase' -> 'pascal_case', 'ALL_CAPS' -> 'all_caps'."""
    return _snake_case_sub.sub(r"_\1", s).lower()


def _is_magic(x: str) -> bool:
    return x.startswith("__") and x.endswith("__")


class _Namespace:
    """Unique names for objects: one name per object, no repeats, no shadowed builtins."""

    def __init__(self) -> None:
        self._obj_to_name: dict[object, str] = {}
        self._used_names: set[str] = set()
        self._base_count: dict[str, int] = {}

    def create_name(self, candidate: str, obj: object | None) -> str:
        """A fresh name based on `candidate` ('add' -> 'add', then 'add_1', 'add_2', ...)."""
        if obj is not None and obj in self._obj_to_name:
            return self._obj_to_name[obj]
        match = _name_regex.match(candidate)
        if match is None:
            candidate = _illegal_char_regex.sub("_", candidate) or "_unnamed"
            if candidate[0].isdigit():
                candidate = f"_{candidate}"
            match = _name_regex.match(candidate)
            assert match is not None, f"Name regex failed to match candidate: {candidate}"
        base, num_text = match.group(1, 2)
        if num_text is None or candidate in self._used_names:
            num = self._base_count.get(base, 0)
            if _illegal_names.get(candidate, obj) is not obj:
                num += 1
                candidate = f"{base}_{num}"
        else:
            num = int(num_text)
        while candidate in self._used_names:
            num += 1
            candidate = f"{base}_{num}"
        self._used_names.add(candidate)
        self._base_count[base] = num
        if obj is not None:
            self._obj_to_name[obj] = candidate
        return candidate

    def associate_name_with_obj(self, name: str, obj: object) -> None:
        """Bind an already created name to `obj`."""
        existing = self._obj_to_name.setdefault(obj, name)
        assert existing is name, "obj is already associated"


class _node_list:  # torch's name
    """A live view of a Graph's nodes in order (reversible); skips nodes erased mid-walk."""

    def __init__(self, graph: Graph, direction: str = "_next") -> None:
        self.graph = graph
        self.direction = direction

    def __len__(self) -> int:
        return self.graph._len

    def __iter__(self) -> Iterator[Node]:
        root = self.graph._root
        cur = getattr(root, self.direction)
        while cur is not root:
            if not cur._erased:
                yield cur
            cur = getattr(cur, self.direction)  # read after the yield: the walker may edit

    def __reversed__(self) -> Iterator[Node]:
        return iter(_node_list(self.graph, "_prev" if self.direction == "_next" else "_next"))


class _InsertPoint:
    """Context manager that sets where `create_node` inserts, and restores it on exit."""

    def __init__(self, graph: Graph, new_insert: Callable[[Node], None]) -> None:
        self.graph = graph
        self.orig_insert, graph._insert = graph._insert, new_insert

    def __enter__(self) -> None:
        pass

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.graph._insert = self.orig_insert


class Graph:
    """A list of Nodes: placeholders (inputs), computation, one output (torch.fx.Graph)."""

    def __init__(self, owning_module: GraphModule | None = None,
                 tracer_cls: type | None = None,
                 tracer_extras: dict[str, Any] | None = None) -> None:
        self._version = 0  # bumped by every edit (new node, erase, move, new args)
        self._root = Node(self, "", "root", "", (), {})
        self._used_names: dict[str, int] = {}
        self._insert: Callable[[Node], None] = self._root.prepend
        self._len = 0
        self._graph_namespace = _Namespace()
        self.owning_module = owning_module
        self._tracer_cls = tracer_cls
        self._tracer_extras = tracer_extras
        self._codegen = CodeGen()  # how forward takes and returns values

    @property
    def owning_module(self) -> GraphModule | None:
        """The GraphModule this graph belongs to, if any (held weakly: the module holds its
        graph, and no cycle keeps what the module holds, CUDA graphs, alive past its users)."""
        return self._owning_module() if self._owning_module is not None else None

    @owning_module.setter
    def owning_module(self, mod: GraphModule | None) -> None:
        self._owning_module = weakref.ref(mod) if mod is not None else None

    @property
    def nodes(self) -> _node_list:
        """All nodes, in execution order."""
        return _node_list(self)

    def output_node(self) -> Node:
        """The graph's last node, which must be its output."""
        node = next(iter(reversed(self.nodes)))
        if node.op != "output":
            raise AssertionError(f"Expected output node, got op={node.op}")
        return node

    def find_nodes(self, *, op: str, target: Target | None = None,
                   sort: bool = True) -> list[Node]:
        """The nodes with this `op` (and `target`, if given), in graph order."""
        del sort  # always in graph order here
        return [n for n in self.nodes
                if n.op == op and (target is None or n.target == target)]

    # --- building ---------------------------------------------------------------------------

    def create_node(self, op: str, target: Target, args: tuple[Argument, ...] | None = None,
                    kwargs: dict[str, Argument] | None = None, name: str | None = None,
                    type_expr: Any | None = None) -> Node:
        """Create a Node and insert it at the current insert point (the end by default)."""
        args = () if not args else args
        kwargs = {} if not kwargs else kwargs
        assert isinstance(args, tuple), "args must be a tuple"
        assert isinstance(kwargs, dict), "kwargs must be a dict"
        candidate = name if name is not None else self._target_to_str(target)
        name = self._graph_namespace.create_name(candidate, None)
        n = Node(self, name, op, target, args, kwargs, type_expr)
        self._graph_namespace.associate_name_with_obj(name, n)
        self._insert(n)
        self._len += 1
        return n

    def placeholder(self, name: str, type_expr: Any | None = None,
                    default_value: Any = inspect.Signature.empty) -> Node:
        """A graph input named `name` (with an optional default value)."""
        args = () if default_value is inspect.Signature.empty else (default_value,)
        return self.create_node("placeholder", name, args=args, type_expr=type_expr)

    def get_attr(self, qualified_name: str, type_expr: Any | None = None) -> Node:
        """Read an attribute of the owning module by dotted name ('lin.weight')."""
        return self.create_node("get_attr", qualified_name, type_expr=type_expr)

    def call_module(self, module_name: str, args: tuple[Argument, ...] | None = None,
                    kwargs: dict[str, Argument] | None = None,
                    type_expr: Any | None = None) -> Node:
        """Call the submodule at dotted name `module_name`."""
        return self.create_node("call_module", module_name, args, kwargs, type_expr=type_expr)

    def call_method(self, method_name: str, args: tuple[Argument, ...] | None = None,
                    kwargs: dict[str, Argument] | None = None,
                    type_expr: Any | None = None) -> Node:
        """Call `args[0].<method_name>(*args[1:], **kwargs)`."""
        return self.create_node("call_method", method_name, args, kwargs, type_expr=type_expr)

    def call_function(self, the_function: Callable[..., Any],
                      args: tuple[Argument, ...] | None = None,
                      kwargs: dict[str, Argument] | None = None,
                      type_expr: Any | None = None, name: str | None = None) -> Node:
        """Call a free function (`torch.add`, `operator.getitem`, a custom op)."""
        return self.create_node("call_function", the_function, args, kwargs, name=name,
                                type_expr=type_expr)

    def output(self, result: Argument, type_expr: Any | None = None) -> Node:
        """The graph's return value (a Node, or a tuple/list/dict of them)."""
        return self.create_node("output", "output", (result,), type_expr=type_expr)

    def node_copy(self, node: Node,
                  arg_transform: Callable[[Node], Argument] = lambda x: x) -> Node:
        """Copy `node` (from any graph) into this one, mapping its input Nodes through
        `arg_transform`; the copy gets the same name where free, and a shallow copy of meta."""
        args = map_arg(node.args, arg_transform)
        kwargs = map_arg(node.kwargs, arg_transform)
        result = self.create_node(node.op, node.target, args, kwargs, node.name, node.type)
        result.meta = dict(node.meta)
        return result

    def graph_copy(self, g: Graph, val_map: dict[Node, Node],
                   return_output_node: bool = False) -> Argument | None:
        """Copy every node of `g` into this graph (recording old->new in `val_map`); returns
        the value `g`'s output node returned, mapped to the new nodes."""
        for node in g.nodes:
            if node in val_map:
                continue
            if node.op == "output":
                rv = map_arg(node.args[0], lambda n: val_map[n])
                return rv if not return_output_node else (rv, node)
            val_map[node] = self.node_copy(node, lambda n: val_map[n])
        return None

    def __deepcopy__(self, memo: dict[int, Any] | None = None) -> Graph:
        """A copy with new Nodes (same names, shallow-copied meta), built node by node."""
        g = Graph(tracer_cls=self._tracer_cls, tracer_extras=self._tracer_extras)
        g._codegen = copy.deepcopy(self._codegen)
        copied = g.graph_copy(self, val_map={}, return_output_node=True)
        if copied is not None:
            output_val, old_output = copied
            new_output = g.output(output_val, type_expr=old_output.type)
            new_output.meta = dict(old_output.meta)
        return g

    # --- editing ----------------------------------------------------------------------------

    def erase_node(self, to_erase: Node) -> None:
        """Remove a node that nothing uses any more."""
        if len(to_erase.users) > 0:
            raise RuntimeError(f"Tried to erase Node {to_erase} but it still had "
                               f"{len(to_erase.users)} users in the graph: {to_erase.users}!")
        if to_erase.graph is not self:
            raise RuntimeError(f"Attempting to remove {to_erase} from wrong graph!")
        if to_erase._erased:
            return
        to_erase._remove_from_list()
        to_erase._erased = True
        self._len -= 1
        to_erase.args, to_erase.kwargs = (), {}  # drop the use edges it held

    def inserting_before(self, n: Node | None = None) -> _InsertPoint:
        """`with graph.inserting_before(n):` new nodes go just before `n` (default: the start)."""
        if n is None:
            return self.inserting_after(self._root)
        assert n.graph is self, "Node to insert before is not in graph."
        return _InsertPoint(self, n.prepend)

    def inserting_after(self, n: Node | None = None) -> _InsertPoint:
        """`with graph.inserting_after(n):` new nodes go just after `n` (default: the end)."""
        if n is None:
            return self.inserting_before(self._root)
        assert n.graph is self, "Node to insert after is not in graph."
        return _InsertPoint(self, n.append)

    def eliminate_dead_code(self, is_impure_node: Callable[[Node], bool] | None = None) -> bool:
        """Erase call nodes (and get_attrs) whose values nothing uses; True if any went."""
        changed = False
        for node in reversed(self.nodes):
            if node.op in ("placeholder", "output") or node.users:
                continue
            if is_impure_node is not None and is_impure_node(node):
                continue
            self.erase_node(node)
            changed = True
        return changed

    def lint(self) -> None:
        """Check the graph's invariants (raises RuntimeError naming the broken one)."""
        seen_names: set[str] = set()
        seen_values: set[Node] = set()
        for node in self.nodes:
            if node.graph is not self:
                raise RuntimeError(f"Node '{node}' does not belong to this Graph!")
            if node.name in seen_names:
                raise RuntimeError(f"Node redefined name {node.name}!")
            seen_names.add(node.name)
            for arg in node._input_nodes:
                if arg.graph is not self:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' does not belong to "
                                       "this Graph, but was used as an argument! If you are "
                                       "copying nodes from another graph, make sure to use "
                                       "``arg_transform`` on node_copy() to remap values\n"
                                       f"{self}")
                if arg not in seen_values:
                    raise RuntimeError(f"Argument '{arg}' of Node '{node}' was used before it "
                                       "has been defined! Please check that Nodes in the graph "
                                       "are topologically ordered\n"
                                       f"{self}")
                if node not in arg.users:
                    raise RuntimeError(f"Node '{node}' reads '{arg}' but is missing from its "
                                       "users")
            seen_values.add(node)
        if self.owning_module is None:
            return
        for node in self.nodes:
            if node.op in ("get_attr", "call_module"):
                assert isinstance(node.target, str)
                obj: Any = self.owning_module
                for i, atom in enumerate(node.target.split(".")):
                    if not hasattr(obj, atom):
                        seen_qualname = ".".join(node.target.split(".")[:i])
                        raise RuntimeError(f"Node {node} target {node.target} references "
                                           f"nonexistent attribute {atom} of {seen_qualname}")
                    obj = getattr(obj, atom)

    # --- printing ---------------------------------------------------------------------------

    def _target_to_str(self, target: Target) -> str:
        if callable(target):
            op = getattr(target, "__name__", None) or type(target).__name__
        else:
            op = target
            if _is_magic(op):
                op = op[2:-2]
        return _snake_case(op)

    def python_code(self, root_module: str, *, verbose: bool = False,
                    include_stride: bool = False, include_device: bool = False,
                    colored: bool = False) -> PythonCode:
        """The `forward` source for this graph; `.src` is the text, `.globals` what it reads."""
        del colored  # no terminal colors here
        return gen_python_code(self.nodes, root_module, verbose=verbose,
                               include_stride=include_stride, include_device=include_device,
                               codegen=self._codegen)

    def process_inputs(self, *args: Any) -> Any:
        """forward's arguments as the placeholders' values (this graph's CodeGen decides)."""
        return self._codegen.process_inputs(*args)

    def process_outputs(self, out: Any) -> Any:
        """The output node's value as forward returns it (this graph's CodeGen decides)."""
        return self._codegen.process_outputs(out)

    def print_tabular(self) -> None:
        """Print the nodes as a table (opcode, name, target, args, kwargs); needs the
        `tabulate` package, as torch's does, and says so when it is missing."""
        try:
            tabulate = importlib.import_module("tabulate").tabulate  # optional, as in torch
        except ImportError:
            print("`print_tabular` relies on the library `tabulate`, which could not be found "
                  "on this machine. Run `pip install tabulate` to install the library.")
            raise
        node_specs = [[n.op, n.name, n.target, n.args, n.kwargs] for n in self.nodes]
        print(tabulate(node_specs, headers=["opcode", "name", "target", "args", "kwargs"]))

    def __str__(self) -> str:
        placeholder_names: list[str] = []
        maybe_return_typename = [""]
        node_strs = [node.format_node(placeholder_names) for node in self.nodes]
        s = f"graph({', '.join(placeholder_names)}){maybe_return_typename[0]}:"
        for node_str in node_strs:
            if node_str:
                s += "\n    " + node_str
        return s


__all__ = ["Graph", "PythonCode"]
