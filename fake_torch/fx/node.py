"""torch.fx.node: one operation of a Graph (placeholder, get_attr, call_*, output).

A Node keeps its inputs (`args`, `kwargs`, which may nest Nodes inside tuples, lists, dicts and
slices) and, on every node it reads, a back edge in `users`; setting `args`/`kwargs` keeps both
directions in step, as torch does. Nodes of a Graph form a doubly linked list around a sentinel
`root` node, so inserting before/after any node is O(1).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from fake_torch.fx.graph import Graph

# What a node argument may hold: Nodes, nested tuples/lists/dicts/slices, and Python constants
# (ints, floats, dtypes, devices, ...). torch spells it out as a long Union; `Any` says the same.
Argument = Any
Target = Callable[..., Any] | str
ArgumentT = TypeVar("ArgumentT")

_legal_ops = ("placeholder", "get_attr", "call_function", "call_method", "call_module", "output")


def _find_exported_name(func: object) -> str | None:
    """The torch-namespace path under which fake_torch exports `func` ('torch.add',
    'torch.nn.functional.linear', 'torch.linalg.norm', 'torch.Tensor.add'), or None."""
    from fake_torch import _namespace
    from fake_torch.nn import functional

    torch = _namespace.torch()
    name = getattr(func, "__name__", None)
    if not isinstance(name, str):
        return None
    module_name = getattr(func, "__module__", None) or ""
    if module_name.startswith(("torch.ops.", "torch._ops.")):  # custom ops: torch.ops.<ns>
        return f"torch.ops.{module_name.split('.', 2)[2]}.{name}"
    namespaces: tuple[tuple[str, object], ...] = (
        ("torch", torch),
        ("torch.nn.functional", functional),
        ("torch.linalg", torch.linalg),
        ("torch.Tensor", torch.Tensor),
    )
    for prefix, namespace in namespaces:
        if getattr(namespace, name, None) is func:
            return f"{prefix}.{name}"
    return None


def _get_qualified_name(func: Callable[..., Any]) -> str:
    """How a call_function target prints: builtins by name ('getattr'), fake_torch's exported
    functions by their torch path ('torch.add'), anything else as 'module.qualname'."""
    name = getattr(func, "__name__", None) or type(func).__name__
    if getattr(builtins, name, None) is func:
        return name
    exported = _find_exported_name(func)
    if exported is not None:
        return exported
    module = _torch_module_name(getattr(func, "__module__", None) or "builtins")
    qualname = getattr(func, "__qualname__", name)
    return f"{module}.{qualname}"


def _torch_module_name(module: str) -> str:
    """'fake_torch.nn.parameter' -> 'torch.nn.parameter' (others as they are: '_operator')."""
    if module == "fake_torch" or module.startswith("fake_torch."):
        return "torch" + module[len("fake_torch"):]
    return module


def _type_repr(obj: object) -> str:
    """A type annotation as text ('int', 'torch.Tensor', 'list[int]')."""
    if isinstance(obj, type):
        if obj.__module__ == "builtins":
            return obj.__qualname__
        exported = _find_exported_name(obj)
        if exported is not None:
            return exported
        return f"{_torch_module_name(obj.__module__)}.{obj.__qualname__}"
    if obj is ...:
        return "..."
    return repr(obj)


def _format_arg(arg: object, max_list_len: float = float("inf")) -> str:
    """One argument as `str(graph)` prints it: Nodes as '%name', containers recursively."""
    if isinstance(arg, list):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        return f"[{items}{more}]"
    if isinstance(arg, tuple):
        items = ", ".join(_format_arg(a) for i, a in enumerate(arg) if i < max_list_len)
        more = "" if len(arg) < max_list_len + 1 else f", ...[total_len={len(arg)}]"
        comma = "," if len(arg) == 1 else ""
        return f"({items}{comma}{more})"
    if isinstance(arg, dict):
        items_str = ", ".join(f"{k}: {_format_arg(v)}" for k, v in arg.items())
        return f"{{{items_str}}}"
    if isinstance(arg, Node):
        return "%" + str(arg)
    return str(arg)


class Node:
    """One operation in a Graph (torch.fx.Node)."""

    def __init__(self, graph: Graph, name: str, op: str, target: Target,
                 args: tuple[Argument, ...], kwargs: dict[str, Argument],
                 return_type: Any | None = None) -> None:
        if op in ("call_function",) and not callable(target):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a Callable is expected")
        if op not in _legal_ops and op != "root":
            raise AssertionError(f"Unknown node op: {op}")
        if op in ("placeholder", "get_attr", "call_method", "call_module", "output") and \
                not isinstance(target, str):
            raise ValueError(f"Node [graph = {graph}, name = '{name}'] target {target} has "
                             f"type {type(target)} but a str is expected")
        self.graph = graph
        self.name = name  # unique within the graph
        self.op = op
        self.target = target
        self.type = return_type
        self.meta: dict[str, Any] = {}
        # nodes that read this one (ordered set); nodes this one reads
        self.users: dict[Node, None] = {}
        self._input_nodes: dict[Node, None] = {}
        self._args: tuple[Argument, ...] = ()
        self._kwargs: dict[str, Argument] = {}
        self._prev: Node = self
        self._next: Node = self
        self._erased = False
        self._update_args_kwargs(args, kwargs)

    # --- inputs -------------------------------------------------------------------------------

    @property
    def args(self) -> tuple[Argument, ...]:
        """Positional arguments; Nodes inside stand for the values they produce."""
        return self._args

    @args.setter
    def args(self, a: tuple[Argument, ...]) -> None:
        self._update_args_kwargs(a, self._kwargs)

    @property
    def kwargs(self) -> dict[str, Argument]:
        """Keyword arguments; Nodes inside stand for the values they produce."""
        return self._kwargs

    @kwargs.setter
    def kwargs(self, k: dict[str, Argument]) -> None:
        self._update_args_kwargs(self._args, k)

    @property
    def all_input_nodes(self) -> list[Node]:
        """Every distinct Node this one reads, in order of first appearance."""
        return list(self._input_nodes)

    def update_arg(self, idx: int, arg: Argument) -> None:
        """Set `args[idx]`, keeping use lists right."""
        args = list(self._args)
        args[idx] = arg
        self.args = tuple(args)

    def update_kwarg(self, key: str, arg: Argument) -> None:
        """Set `kwargs[key]`, keeping use lists right."""
        self.kwargs = {**self._kwargs, key: arg}

    def _update_args_kwargs(self, new_args: tuple[Argument, ...],
                            new_kwargs: dict[str, Argument]) -> None:
        for old_use in self._input_nodes:
            old_use.users.pop(self)
        self._input_nodes = {}
        self._args = tuple(map_aggregate(tuple(new_args), self._collect_input))
        self._kwargs = dict(map_aggregate(dict(new_kwargs), self._collect_input))
        for new_use in self._input_nodes:
            new_use.users.setdefault(self)
        self.graph._version += 1

    def _collect_input(self, a: Argument) -> Argument:
        if isinstance(a, Node):
            self._input_nodes.setdefault(a)
        return a

    def replace_all_uses_with(self, replace_with: Node,
                              delete_user_cb: Callable[[Node], bool] | None = None, *,
                              propagate_meta: bool = False) -> list[Node]:
        """Make every user read `replace_with` instead of this node; returns the users changed."""
        if propagate_meta:
            if replace_with.meta:
                raise AssertionError("Called node.replace_all_uses_with(replace_with, "
                                     "propagate_meta=True), but replace_with already has "
                                     "metadata.")
            replace_with.meta.update(self.meta)
        changed = []
        for user in list(self.users):
            if delete_user_cb is not None and not delete_user_cb(user):
                continue
            user.replace_input_with(self, replace_with)
            changed.append(user)
        return changed

    def replace_input_with(self, old_input: Node, new_input: Node) -> None:
        """Read `new_input` wherever this node read `old_input`."""
        def swap(n: Node) -> Node:
            return new_input if n is old_input else n
        self._update_args_kwargs(map_arg(self._args, swap), map_arg(self._kwargs, swap))

    # --- position in the graph ------------------------------------------------------------------

    @property
    def next(self) -> Node:
        """The next node in the graph's order (the sentinel root after the last)."""
        return self._next

    @property
    def prev(self) -> Node:
        """The previous node in the graph's order (the sentinel root before the first)."""
        return self._prev

    def prepend(self, x: Node) -> None:
        """Move or insert `x` just before this node."""
        assert self.graph is x.graph, "Attempting to move a Node into a different Graph"
        if self is x:
            return
        x._remove_from_list()
        self.graph._version += 1
        p = self._prev
        p._next, x._prev = x, p
        x._next, self._prev = self, x

    def append(self, x: Node) -> None:
        """Move or insert `x` just after this node."""
        self._next.prepend(x)

    def _remove_from_list(self) -> None:
        # keep this node's own links: a walk that stands on it can still step on
        p, n = self._prev, self._next
        p._next, n._prev = n, p

    # --- printing -------------------------------------------------------------------------------

    @property
    def stack_trace(self) -> str | None:
        """The user code that produced this node, if the tracer recorded it."""
        value = self.meta.get("stack_trace")
        return value if isinstance(value, str) else None

    @staticmethod
    def _pretty_print_target(target: object) -> str:
        """Targets as `str(graph)` prints them: 'builtins.x', 'operator.x', 'torch.add'."""
        if isinstance(target, str):
            return target
        module = getattr(target, "__module__", None)
        name = getattr(target, "__name__", None)
        if name is not None and module == "builtins":
            return f"builtins.{name}"
        if name is not None and module == "_operator":
            return f"operator.{name}"
        assert callable(target)
        return _get_qualified_name(target)

    def format_node(self, placeholder_names: list[str] | None = None,
                    maybe_return_typename: list[str] | None = None) -> str | None:
        """This node as one line of `str(graph)`: '%add : [num_users=1] = call_function[...]'."""
        if self.op == "placeholder":
            assert isinstance(self.target, str)
            if placeholder_names:  # torch passes an empty list here, so this stays unused
                placeholder_names.append(self.target)
                return None
            typename = f"{_type_repr(self.type)} " if self.type else ""
            default = "(default=" + str(self.args[0]) + ")" if self.args else ""
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self.target}]{default}")
        if self.op == "get_attr":
            typename = f"{_type_repr(self.type)} " if self.type is not None else ""
            return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                    f"{self.op}[target={self._pretty_print_target(self.target)}]")
        if self.op == "output":
            if self.type and maybe_return_typename:
                maybe_return_typename[0] = f" -> {_type_repr(self.type)}"
            return f"return {self.args[0]}"
        typename = f"{_type_repr(self.type)} " if self.type is not None else ""
        return (f"%{self.name} : {typename}[num_users={len(self.users)}] = "
                f"{self.op}[target={self._pretty_print_target(self.target)}]("
                f"args = {_format_arg(self.args)}, kwargs = {_format_arg(self.kwargs)})")

    def __repr__(self) -> str:
        return self.name


def map_arg(a: ArgumentT, fn: Callable[[Node], Argument]) -> ArgumentT:
    """Apply `fn` to every Node inside `a` (tuples, lists, dicts, slices), rebuilding the rest."""
    def on_leaf(x: Argument) -> Argument:
        return fn(x) if isinstance(x, Node) else x
    return map_aggregate(a, on_leaf)


def map_aggregate(a: ArgumentT, fn: Callable[[Argument], Argument]) -> ArgumentT:
    """Apply `fn` to every leaf of `a`, rebuilding tuples (and NamedTuples), lists, dicts and
    slices around the results."""
    result: Any
    if isinstance(a, tuple):
        items = tuple(map_aggregate(elem, fn) for elem in a)
        result = items if not hasattr(a, "_fields") else type(a)(*items)
    elif isinstance(a, list):
        result = [map_aggregate(elem, fn) for elem in a]
    elif isinstance(a, dict):
        result = {k: map_aggregate(v, fn) for k, v in a.items()}
    elif isinstance(a, slice):
        result = slice(map_aggregate(a.start, fn), map_aggregate(a.stop, fn),
                       map_aggregate(a.step, fn))
    else:
        result = fn(a)
    return result  # type: ignore[no-any-return]


__all__ = ["Argument", "Node", "Target", "map_aggregate", "map_arg"]
