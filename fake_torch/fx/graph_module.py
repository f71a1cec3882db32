"""torch.fx.GraphModule: an nn.Module that owns a Graph and runs it as its forward.

Construction copies what the graph reads from `root` (get_attr targets: parameters stay
parameters, other tensors become buffers; call_module targets: the submodules themselves), so
the GraphModule stands alone. `forward` runs the graph through an Interpreter; `.code` is the
source torch would generate for it, `print_readable()` the annotated listing of it and of every
GraphModule child.
"""

from __future__ import annotations

import copy
from typing import Any

from fake_torch._tensor import Tensor
from fake_torch.fx.graph import Graph, PythonCode
from fake_torch.fx.interpreter import Interpreter
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
        python_code = self._graph.python_code(root_module="self")
        self._code = python_code.src
        return python_code

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """Run the graph: one positional argument per placeholder (or keyword by its name)."""
        if kwargs:
            args = self._bind_kwargs(args, kwargs)
        interpreter = Interpreter(self, graph=self._graph)
        interpreter.extra_traceback = False  # errors read as the generated code's would
        return interpreter.run(*args)

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
