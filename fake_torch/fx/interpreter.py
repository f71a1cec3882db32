"""torch.fx.Interpreter: run a graph node by node on real values.

Placeholders take the positional arguments in order, get_attr reads the module's attribute,
call_function calls `target(*args, **kwargs)`, call_method `args[0].target(...)`, call_module the
submodule, and output returns its argument. Each value is dropped from the environment after
its last use, as the generated code's `x = None` lines drop it. Nothing here launches anything:
the launches are those of the called ops, so a graph costs exactly what running its calls eagerly
costs.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fake_torch.fx.graph import Graph
from fake_torch.fx.node import Argument, Node, Target, map_arg

if TYPE_CHECKING:
    from fake_torch.nn.modules.module import Module

# graph -> (its edit version, user -> values last read by that user), rebuilt after an edit
_last_use_cache: weakref.WeakKeyDictionary[Graph, tuple[int, dict[Node, list[Node]]]] = \
    weakref.WeakKeyDictionary()


def _last_uses(graph: Graph) -> dict[Node, list[Node]]:
    cached = _last_use_cache.get(graph)
    if cached is not None and cached[0] == graph._version:
        return cached[1]
    seen: set[Node] = set()
    table: dict[Node, list[Node]] = {}
    for node in reversed(graph.nodes):
        for n in node._input_nodes:
            if n not in seen:
                seen.add(n)
                table.setdefault(node, []).append(n)
    _last_use_cache[graph] = (graph._version, table)
    return table


class Interpreter:
    """Execute an FX graph node by node (torch.fx.Interpreter); override a method per op
    (`call_function`, `call_module`, ...) or `run_node` to change what one kind of node does."""

    def __init__(self, module: Module, garbage_collect_values: bool = True,
                 graph: Graph | None = None) -> None:
        self.module = module
        if graph is None:
            graph = getattr(module, "graph", None)
            if not isinstance(graph, Graph):
                raise AssertionError("Interpreter needs a graph: pass graph= or a GraphModule")
        self.graph: Graph = graph
        self.env: dict[Node, Any] = {}
        self.name = "Interpreter"
        self.garbage_collect_values = garbage_collect_values
        self.extra_traceback = True
        self.args_iter: Iterator[Any] = iter(())

    def run(self, *args: Any, initial_env: dict[Node, Any] | None = None,
            enable_io_processing: bool = True) -> Any:
        """Run the graph on `args` (one per placeholder) and return what its output returns
        (with `enable_io_processing`, through the graph's CodeGen: a pytree-flattened graph
        takes and returns the original structures)."""
        if enable_io_processing:
            args = self.graph.process_inputs(*args)
        self.env = initial_env if initial_env is not None else {}
        self.args_iter = iter(args)
        last_uses = _last_uses(self.graph) if self.garbage_collect_values else {}
        if type(self) is Interpreter:  # no method overridden: the calls inline (_run_plain)
            return self._run_plain(last_uses, enable_io_processing)
        for node in self.graph.nodes:
            if node in self.env:
                continue  # given in initial_env
            try:
                self.env[node] = self.run_node(node)
            except Exception as e:
                self._annotate(e, node)
                raise
            for to_delete in last_uses.get(node, ()):
                del self.env[to_delete]
            if node.op == "output":
                output_val = self.env[node]
                self.env = {}
                return self.graph.process_outputs(output_val) if enable_io_processing \
                    else output_val
        self.env = {}
        return None

    def _run_plain(self, last_uses: dict[Node, list[Node]], enable_io_processing: bool) -> Any:
        """`run`'s loop for this class itself: what run_node, fetch_args_kwargs_from_env and
        call_function do for a call_function node, written inline (a GraphModule's forward
        runs here, every node of every call); other nodes go through their methods."""
        env = self.env
        for node in self.graph.nodes:
            if node in env:
                continue  # given in initial_env
            try:
                if node.op == "call_function":
                    try:  # (the argument tuple's level written out: mostly nodes)
                        args = tuple([env[a] if type(a) is Node else _values(a, env)
                                      for a in node.args])
                        kwargs = _values(node.kwargs, env) if node.kwargs else {}
                    except KeyError:  # (the slow way names the missing node)
                        args, kwargs = self.fetch_args_kwargs_from_env(node)
                    target = node.target
                    assert callable(target)
                    env[node] = target(*args, **kwargs)
                else:
                    env[node] = self.run_node(node)
            except Exception as e:
                self._annotate(e, node)
                raise
            for to_delete in last_uses.get(node, ()):
                del env[to_delete]
            if node.op == "output":
                output_val = env[node]
                self.env = {}
                return self.graph.process_outputs(output_val) if enable_io_processing \
                    else output_val
        self.env = {}
        return None

    def _annotate(self, e: Exception, node: Node) -> None:
        """With extra_traceback: the failing node's text appended to the error's message (a
        KeyError raised as a RuntimeError, as torch does)."""
        if self.extra_traceback:
            msg = f"While executing {node.format_node()}"
            msg = f"{e.args[0]}\n\n{msg}" if e.args else msg
            e.args = (msg, *e.args[1:])
            if isinstance(e, KeyError):
                raise RuntimeError(*e.args) from e

    def run_node(self, n: Node) -> Any:
        """Run one node: fetch its argument values, then call the method named by its op."""
        args, kwargs = self.fetch_args_kwargs_from_env(n)
        return getattr(self, n.op)(n.target, args, kwargs)

    # --- one method per op ------------------------------------------------------------------

    def placeholder(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        """The next positional input (all the rest for a '*args' placeholder)."""
        assert isinstance(target, str)
        if target.startswith("*"):
            return list(self.args_iter)
        try:
            return next(self.args_iter)
        except StopIteration as si:
            if len(args) > 0:
                return args[0]
            raise RuntimeError(f"Expected positional argument for parameter {target}, but "
                               "one was not passed in!") from si

    def get_attr(self, target: Target, args: tuple[Argument, ...],
                 kwargs: dict[str, Any]) -> Any:
        assert isinstance(target, str)
        return self.fetch_attr(target)

    def call_function(self, target: Target, args: tuple[Argument, ...],
                      kwargs: dict[str, Any]) -> Any:
        assert callable(target)
        return target(*args, **kwargs)

    def call_method(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        assert isinstance(target, str)
        self_obj, *args_tail = args
        return getattr(self_obj, target)(*args_tail, **kwargs)

    def call_module(self, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Any]) -> Any:
        assert isinstance(target, str)
        return self.fetch_attr(target)(*args, **kwargs)

    def output(self, target: Target, args: tuple[Argument, ...],
               kwargs: dict[str, Any]) -> Any:
        return args[0]

    # --- helpers ----------------------------------------------------------------------------

    def fetch_attr(self, target: str) -> Any:
        """The module attribute at dotted path `target`."""
        atoms = target.split(".")
        attr_itr: Any = self.module
        for i, atom in enumerate(atoms):
            if not hasattr(attr_itr, atom):
                raise RuntimeError(f"Node referenced nonexistent target {'.'.join(atoms[:i + 1])}")
            attr_itr = getattr(attr_itr, atom)
        return attr_itr

    def fetch_args_kwargs_from_env(self, n: Node) -> tuple[tuple[Any, ...], dict[str, Any]]:
        """`n`'s args and kwargs with every Node replaced by the value it produced."""
        args = self.map_nodes_to_values(n.args, n)
        kwargs = self.map_nodes_to_values(n.kwargs, n)
        assert isinstance(args, tuple) and isinstance(kwargs, dict)
        return args, kwargs

    def map_nodes_to_values(self, args: Argument, n: Node) -> Argument:
        """`args` with every Node replaced by its value from the environment."""
        try:
            return _values(args, self.env)
        except KeyError:
            pass  # a node not in the environment: name it, as torch does

        def load_arg(n_arg: Node) -> Any:
            if n_arg not in self.env:
                raise RuntimeError(f"Node {n} referenced nonexistent value {n_arg}! Run "
                                   "Graph.lint() to diagnose such issues")
            return self.env[n_arg]
        return map_arg(args, load_arg)


def _values(a: Any, env: dict[Node, Any]) -> Any:
    """map_arg(a, env.__getitem__) for the plain containers a graph's arguments are made of
    (this runs for every node of every run of a GraphModule: no closures, no generators);
    anything else (a NamedTuple, a container subclass) goes the general way."""
    t = type(a)
    if t is Node:
        return env[a]
    if t is tuple:
        return tuple([_values(x, env) for x in a])
    if t is list:
        return [_values(x, env) for x in a]
    if t is dict:
        return {k: _values(v, env) for k, v in a.items()}
    if isinstance(a, (Node, tuple, list, dict, slice)):
        return map_arg(a, env.__getitem__)
    return a


__all__ = ["Interpreter"]
