"""torch.fx.GraphModule: an nn.Module that owns a Graph and runs it as its forward.

Construction copies what the graph reads from `root` (get_attr targets: parameters stay
parameters, other tensors become buffers; call_module targets: the submodules themselves), so
the GraphModule stands alone. `forward` runs the graph through an Interpreter; `.code` is the
source torch would generate for it, `print_readable()` the annotated listing of it and of every
GraphModule child.
"""

from __future__ import annotations

import copy
import keyword
import weakref
from collections.abc import Callable
from typing import Any

from fake_torch._tensor import Tensor
from fake_torch.fx._codegen import _PyTreeCodeGen
from fake_torch.fx.graph import Graph, PythonCode
from fake_torch.fx.interpreter import Interpreter
from fake_torch.fx.node import Node
from fake_torch.nn.modules.module import Module, _addindent
from fake_torch.nn.parameter import Parameter


def _copy_attr(from_module: Module, to_module: Module, target: str) -> None:
    """Copy `from_module.<target>` to the same dotted path on `to_module`, creating empty
    Modules on the way (a plain tensor becomes a buffer)."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:
            return  # a parent is already installed, and with it this attribute
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    if isinstance(orig, Tensor) and not isinstance(orig, Parameter):
        to_module.register_buffer(field, orig)
    else:
        setattr(to_module, field, orig)


def _assign_attr(from_obj: object, to_module: Module, target: str) -> None:
    """Put `from_obj` at dotted path `target` on `to_module` (a plain tensor as a buffer)."""
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    if isinstance(from_obj, Tensor) and not isinstance(from_obj, Parameter):
        to_module.register_buffer(field, from_obj)
    else:
        setattr(to_module, field, from_obj)


class GraphModule(Module):
    """A Module generated from a Graph (torch.fx.GraphModule)."""

    def __new__(cls, *args: Any, **kwargs: Any) -> GraphModule:
        # each instance gets its own class, so that class_name renames only this one
        for t in cls.__mro__:
            if t.__qualname__.split(".")[-1] != "GraphModuleImpl":
                cls = t
                break

        class GraphModuleImpl(cls):  # type: ignore[valid-type, misc]
            pass

        return super().__new__(GraphModuleImpl)

    def __init__(self, root: Module | dict[str, Any], graph: Graph,
                 class_name: str = "GraphModule") -> None:
        super().__init__()
        self.__class__.__name__ = class_name
        if isinstance(root, Module):
            self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    assert isinstance(node.target, str)
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            targets_to_copy = []
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    assert isinstance(node.target, str)
                    if node.target not in root:
                        raise RuntimeError(f"Node {node} referenced target {node.target} but "
                                           "that target was not provided in ``root``!")
                    targets_to_copy.append(node.target)
            # shallower paths first, so 'foo.bar' does not wipe an assigned 'foo.bar.baz'
            targets_to_copy.sort(key=lambda t: t.count("."))
            for target_to_copy in targets_to_copy:
                _assign_attr(root[target_to_copy], self, target_to_copy)
        else:
            raise RuntimeError("Unsupported type " + str(root) + " passed for root!")
        self.meta: dict[str, Any] = {}
        self.graph = graph

    @property
    def graph(self) -> Graph:
        """The Graph this module runs."""
        return self._graph

    @graph.setter
    def graph(self, g: Graph) -> None:
        assert isinstance(g, Graph), f"Expected a Graph instance, but got {type(g)}"
        self._graph = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self) -> str:
        """The Python source of `forward` as torch would generate it."""
        return self._code

    def recompile(self) -> PythonCode:
        """Regenerate `.code` after editing `.graph` (forward always runs the current graph)."""
        codegen = self._graph._codegen
        if isinstance(codegen, _PyTreeCodeGen):
            self._in_spec = codegen.pytree_info.in_spec
            self._out_spec = codegen.pytree_info.out_spec
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        return python_code

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the graph, taking arguments as its generated `forward` signature does: one per
        placeholder (by position or name; `*args`, `**kwargs` placeholders collect the rest),
        or, under a pytree CodeGen, the original signature's, flattened by `_in_spec`."""
        graph = self._graph
        codegen = graph._codegen
        binder = _binder(graph)
        if binder is None:  # placeholder names that are not Python names
            if kwargs:
                args = self._bind_kwargs(args, kwargs)
            interpreter = Interpreter(self, graph=graph)
            interpreter.extra_traceback = False  # errors read as the generated code's would
            return interpreter.run(*args)
        values = binder(self, *args, **kwargs)
        if isinstance(codegen, _PyTreeCodeGen):
            values = tuple(_flatten_inputs(codegen, values))
        return _run(self, values)

    def _bind_kwargs(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
        names = [str(n.target) for n in self._graph.nodes if n.op == "placeholder"]
        bound = list(args)
        for name in names[len(args):]:
            if name not in kwargs:
                break
            bound.append(kwargs.pop(name))
        if kwargs:
            raise TypeError(f"forward() got an unexpected keyword argument '{next(iter(kwargs))}'")
        return tuple(bound)

    def __deepcopy__(self, memo: dict[int, Any]) -> GraphModule:
        """A GraphModule over deep copies of the graph and of every attribute (as in torch,
        the copy is named 'GraphModule' again)."""
        state = copy.deepcopy({k: v for k, v in self.__dict__.items() if k != "_graph"}, memo)
        fake_mod = Module()
        fake_mod.__dict__.update(state)
        res = GraphModule(fake_mod, copy.deepcopy(self._graph, memo))
        for store in ("_modules", "_parameters", "_buffers"):
            for name, value in state[store].items():
                if name not in getattr(res, store):
                    getattr(res, store)[name] = value
        res.meta = state.get("meta", {})
        memo[id(self)] = res
        return res

    def __copy__(self) -> GraphModule:
        """A new GraphModule sharing this one's graph and attributes."""
        res = GraphModule(self, self._graph)
        res.__dict__ = self.__dict__.copy()
        return res

    # --- submodules -------------------------------------------------------------------------

    def add_submodule(self, target: str, m: Module) -> bool:
        """Install `m` at dotted path `target`, creating empty parents; False if a non-Module
        is in the way."""
        *prefix, field = target.split(".")
        mod: Module = self
        for item in prefix:
            submod = getattr(mod, item, None)
            if submod is None:
                submod = Module()
                mod.add_module(item, submod)
            if not isinstance(submod, Module):
                return False
            mod = submod
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target: str) -> bool:
        """Remove the submodule at dotted path `target`; False if there is none."""
        *path, name = target.split(".")
        mod: Any = self
        for item in path:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not hasattr(mod, name) or not isinstance(getattr(mod, name), Module):
            return False
        delattr(mod, name)
        return True

    def delete_all_unused_submodules(self) -> None:
        """Drop the submodules that no call_module node (or get_attr) reaches."""
        used: list[str] = []
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr"):
                atoms = str(node.target).split(".")
                used.extend(".".join(atoms[:i]) for i in range(1, len(atoms) + 1))
        to_delete = [name for name, _ in self.named_modules()
                     if name and name not in used]
        for name in to_delete:
            self.delete_submodule(name)

    # --- printing ---------------------------------------------------------------------------

    def print_readable(self, print_output: bool = True, include_stride: bool = False,
                       include_device: bool = False, colored: bool = False) -> str:
        """The annotated source of this module and its GraphModule children; printed too,
        unless print_output=False."""
        del colored
        return _print_readable(self, self._get_name(), print_output, include_stride,
                               include_device)

    def __str__(self) -> str:
        reminder = "# To see more debug info, please use `graph_module.print_readable()`"
        return "\n".join([super().__str__(), self._code, reminder])


# graph -> (its edit version, its signature's key, the binder); an edit that leaves the
# placeholders and the CodeGen as they were (a re-specialised node's args) keeps the binder
_Binder = Callable[..., tuple[Any, ...]]
_binders: weakref.WeakKeyDictionary[Graph, tuple[int, Any, _Binder | None]] = \
    weakref.WeakKeyDictionary()


def _signature(graph: Graph) -> tuple[list[str], list[str], dict[str, Any]] | None:
    """The generated forward's parameters (declared, with defaults), their names, and the
    defaults' namespace; None where a placeholder name is not a Python name."""
    codegen = graph._codegen
    env: dict[str, Any] = {}
    params: list[str] = []
    if isinstance(codegen, _PyTreeCodeGen):
        params = [a for a in codegen.pytree_info.orig_args if a != "self"]
        names = list(codegen.pytree_info.orig_args)
    else:
        for i, node in enumerate(graph.find_nodes(op="placeholder")):
            assert isinstance(node.target, str)
            default = ""
            if node.args:
                env[f"_d{i}"] = node.args[0]
                default = f"=_d{i}"
            params.append(node.target + default)
        names = [p.split("=")[0].lstrip("*") for p in params]
    bare = [n for n in names if n != "self"]
    if not all(n.isidentifier() and not keyword.iskeyword(n) for n in bare) \
            or len(set(bare)) != len(bare):
        return None
    return params, names, env


def _binder(graph: Graph) -> Callable[..., tuple[Any, ...]] | None:
    """A function with the generated forward's signature returning its parameters' values
    (so a wrong call fails with Python's own TypeError, as torch's generated forward does);
    None where a placeholder name is not a Python name."""
    cached = _binders.get(graph)
    if cached is not None and cached[0] == graph._version:
        return cached[2]
    key = (id(graph._codegen),
           [(n.target, tuple(map(id, n.args))) for n in graph.find_nodes(op="placeholder")])
    if cached is not None and cached[1] == key:
        _binders[graph] = (graph._version, key, cached[2])
        return cached[2]
    fn: _Binder | None = None
    found = _signature(graph)
    if found is not None:
        params, names, env = found
        src = f"def forward({', '.join(['self', *params])}):\n" \
              f"    return ({''.join(n + ', ' for n in names)})\n"
        exec(compile(src, "<fx forward signature>", "exec"), env)
        fn = env["forward"]
    _binders[graph] = (graph._version, key, fn)
    return fn


def traceable_forward(graph: Graph) -> Callable[..., Any] | None:
    """GraphModule.forward under the generated forward's signature (what symbolic_trace reads
    a GraphModule's placeholders from when it traces one again), or None."""
    found = _signature(graph)
    if found is None or isinstance(graph._codegen, _PyTreeCodeGen):
        return None
    params, names, env = found
    env["_run"] = _run
    src = f"def forward({', '.join(['self', *params])}):\n" \
          f"    return _run(self, ({''.join(n + ', ' for n in names)}))\n"
    exec(compile(src, "<fx forward signature>", "exec"), env)
    fn: Callable[..., Any] = env["forward"]
    for node in graph.nodes:  # the annotations the generated code carries
        if node.type is not None and node.op in ("placeholder", "output"):
            key = str(node.target).lstrip("*") if node.op == "placeholder" else "return"
            fn.__annotations__[key] = node.type
    return fn


# graph -> (its edit version, its placeholders): _run's, found once per edit, not per call
_placeholder_cache: weakref.WeakKeyDictionary[Graph, tuple[int, list[Node]]] = \
    weakref.WeakKeyDictionary()


def _placeholders(graph: Graph) -> list[Node]:
    cached = _placeholder_cache.get(graph)
    if cached is not None and cached[0] == graph._version:
        return cached[1]
    found = graph.find_nodes(op="placeholder")
    _placeholder_cache[graph] = (graph._version, found)
    return found


def _run(module: GraphModule, values: tuple[Any, ...]) -> Any:
    """Run the module's graph with one value per placeholder (a `*args` one: the tuple)."""
    graph = module.graph
    placeholders = _placeholders(graph)
    if len(values) != len(placeholders):
        raise RuntimeError(f"forward() flattened its inputs into {len(values)} values, but the "
                           f"graph has {len(placeholders)} placeholders")
    interpreter = Interpreter(module, graph=graph)
    interpreter.extra_traceback = False  # errors read as the generated code's would
    out = interpreter.run(initial_env=dict(zip(placeholders, values, strict=True)),
                          enable_io_processing=False)
    return graph.process_outputs(out)


def _flatten_inputs(codegen: _PyTreeCodeGen, values: tuple[Any, ...]) -> list[Any]:
    """forward's arguments, flattened by the pytree spec into the placeholders' values."""
    info = codegen.pytree_info
    in_spec = info.in_spec
    if (in_spec.type is tuple and in_spec.num_children == 2
            and in_spec.child(0).type is tuple and in_spec.child(1).type is dict):
        count = in_spec.child(0).num_children
        tree: Any = (tuple(values[:count]),
                     dict(zip(in_spec.child(1).context, values[count:], strict=False)))
    else:
        tree = in_spec.type(values) if in_spec.type in (tuple, list) else list(values)
    leaves: list[Any] = in_spec.flatten_up_to(tree)
    if info.orig_args and info.orig_args[0] == "self":
        leaves = leaves[1:]  # the traced module itself: not a placeholder
    return leaves


def _print_readable(module: GraphModule, module_name: str, print_output: bool,
                    include_stride: bool, include_device: bool) -> str:
    verbose_code = module.graph.python_code(root_module="self", verbose=True,
                                            include_stride=include_stride,
                                            include_device=include_device)
    module_code = verbose_code.src.lstrip("\n")
    module_code = f"class {module_name}(torch.nn.Module):\n" + module_code
    module_code = _addindent(module_code, 4)
    submodule_code_list = [""]
    for submodule_name, submodule in module.named_children():
        if isinstance(submodule, GraphModule):
            submodule_code_list.append(_print_readable(submodule, submodule_name, False,
                                                       include_stride, include_device))
    submodule_code = _addindent("\n".join(submodule_code_list), 4)
    output = module_code + submodule_code
    if print_output:
        print(output)
    return output


__all__ = ["GraphModule"]
