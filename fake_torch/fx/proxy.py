"""torch.fx.proxy: Proxy objects stand for values while a function is traced symbolically.

A Proxy wraps a Node. Everything done to it becomes a new node of the tracer's graph:
operators (`x + 1` -> call_function(operator.add)), attribute reads (`x.shape` -> getattr,
added lazily: `x.sum()` is one call_method node, not a getattr and a call), and torch functions
(`torch.relu(x)` -> call_function(torch.relu); a Tensor method reached through torch's API,
`t.add(x)`, -> call_method("add")). Torch functions find the Proxy through `__torch_function__`,
as in torch: fake_torch's ops all enter by that door (fake_torch/_torch_function.py), so a
Proxy only has to exist for its type to take part. What a Proxy cannot give, a concrete value
(`bool(x)`, `len(x)`, iteration), raises torch's errors: TraceError for control flow.
"""

from __future__ import annotations

import copy
import dis
import inspect
import operator
from collections import OrderedDict
from collections.abc import Callable, Iterator
from dataclasses import fields, is_dataclass
from enum import Enum
from typing import Any

from fake_torch import _torch_function
from fake_torch._dtype import dtype
from fake_torch._tensor import Tensor
from fake_torch._torch_device import device
from fake_torch.fx._codegen import magic_methods, reflectable_magic_methods
from fake_torch.fx.graph import Graph
from fake_torch.fx.node import Argument, Node, Target, map_aggregate, map_arg

# values a node may hold as they are (torch's fx.node.base_types, for fake_torch's types)
base_types: tuple[type, ...] = (str, int, float, bool, complex, dtype, Tensor, device)


class Scope:
    """The module whose forward is being traced: its qualified name and type."""

    def __init__(self, module_path: str, module_type: Any) -> None:
        self.module_path = module_path
        self.module_type = module_type


class ScopeContextManager:
    """Set a tracer's scope for a block (one module call), restoring it after."""

    def __init__(self, scope: Scope, current_scope: Scope) -> None:
        self._prev_scope = copy.copy(scope)
        scope.module_path = current_scope.module_path
        scope.module_type = current_scope.module_type
        self._scope = scope

    def __enter__(self) -> Scope:
        return self._scope

    def __exit__(self, *args: object) -> None:
        self._scope.module_path = self._prev_scope.module_path
        self._scope.module_type = self._prev_scope.module_type


class TraceError(ValueError):
    """A traced value was used where tracing needs a concrete one (torch.fx.proxy.TraceError)."""


class TracerBase:
    """What every tracer does: make nodes from calls on Proxies, lower arguments into node
    arguments, and refuse control flow on traced values."""

    graph: Graph
    record_stack_traces: bool = False
    check_mutable_operations: bool = False
    trace_asserts: bool = False
    proxy_buffer_attributes: bool = False
    traced_func_name: str = "forward"
    scope: Scope
    module_stack: OrderedDict[str, tuple[str, Any]]
    node_name_to_scope: dict[str, tuple[str, type]]

    def create_node(self, kind: str, target: Target, args: tuple[Argument, ...],
                    kwargs: dict[str, Argument], name: str | None = None,
                    type_expr: Any | None = None) -> Node:
        """Insert a node into the graph (override to check or change what is recorded)."""
        node = self.graph.create_node(kind, target, args, kwargs, name, type_expr)
        self.node_name_to_scope[node.name] = (self.scope.module_path, self.scope.module_type)
        if self.module_stack:
            node.meta["nn_module_stack"] = copy.copy(self.module_stack)
        return node

    def proxy(self, node: Node) -> Proxy:
        """The Proxy standing for `node`'s value."""
        return Proxy(node, self)

    def create_proxy(self, kind: str, target: Target, args: tuple[Any, ...],
                     kwargs: dict[str, Any], name: str | None = None,
                     type_expr: Any | None = None,
                     proxy_factory_fn: Callable[[Node], Proxy] | None = None) -> Proxy:
        """A node for this call (its arguments lowered by `create_arg`), wrapped in a Proxy."""
        args_ = self.create_arg(args)
        kwargs_ = self.create_arg(kwargs)
        if not isinstance(args_, tuple):
            raise AssertionError(f"Expected args_ to be tuple, got {type(args_)}")
        if not isinstance(kwargs_, dict):
            raise AssertionError(f"Expected kwargs_ to be dict, got {type(kwargs_)}")
        node = self.create_node(kind, target, args_, kwargs_, name, type_expr)
        return proxy_factory_fn(node) if proxy_factory_fn else self.proxy(node)

    def create_arg(self, a: Any) -> Argument:
        """Lower a value seen as an argument into what a node may hold: Proxies become their
        Nodes, containers are lowered item by item, constants stay."""
        if isinstance(a, Proxy):
            return a.node
        if hasattr(a, "__fx_create_arg__"):
            return a.__fx_create_arg__(self)
        if isinstance(a, tuple):
            items = [self.create_arg(elem) for elem in a]
            return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
        if isinstance(a, list):
            return [self.create_arg(elem) for elem in a]
        if isinstance(a, dict):
            return self._create_arg_dict(a)
        if isinstance(a, slice):
            return slice(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if isinstance(a, range):
            return range(self.create_arg(a.start), self.create_arg(a.stop),
                         self.create_arg(a.step))
        if is_dataclass(a) and not isinstance(a, type):
            kwargs = {f.name: self.create_arg(getattr(a, f.name)) for f in fields(a)}
            return self.create_node("call_function", a.__class__, (), kwargs)
        if isinstance(a, (*base_types, Enum)) or a is None or a is ...:
            return a
        raise NotImplementedError(f"argument of type: {type(a)}")

    def _create_arg_dict(self, a: dict[Any, Any]) -> dict[Any, Argument]:
        r: dict[Any, Argument] = {}
        for k, v in a.items():
            if not isinstance(k, str):
                k = self.create_arg(k)
                map_arg(k, _no_nodes_error)
            r[k] = self.create_arg(v)
        return r

    def to_bool(self, obj: Proxy) -> bool:
        """`bool(proxy)` (an `if`, a `while`, `and`/`or`): a traced value has no truth value."""
        raise TraceError("symbolically traced variables cannot be used as inputs to control flow")

    def iter(self, obj: Proxy) -> Iterator[Any]:
        """`for v in proxy` / `f(*proxy)`: a traced value has no length to iterate over."""
        raise TraceError("Proxy object cannot be iterated. This can be attempted when the Proxy "
                         "is used in a loop or as a *args or **kwargs function argument. See the "
                         "torch.fx docs on pytorch.org for a more detailed explanation of what "
                         "types of control flow can be traced, and check out the Proxy docstring "
                         "for help troubleshooting Proxy iteration errors")

    def keys(self, obj: Proxy) -> Proxy:
        """`proxy.keys()` (what `**proxy` calls): a call_method node."""
        return Attribute(obj, "keys")()


def _no_nodes_error(arg: Argument) -> Any:
    raise RuntimeError("Keys for dictionaries used as an argument cannot contain a Node. "
                       f"Got key: {arg}")


class GraphAppendingTracer(TracerBase):
    """The tracer of a Proxy made around a Node by hand: calls append to that node's graph."""

    def __init__(self, graph: Graph) -> None:
        super().__init__()
        self.graph = graph
        self.scope = Scope("", None)
        self.module_stack = OrderedDict()
        self.node_name_to_scope = {}


def _is_tensor_method_or_property(func: Any) -> bool:
    """A Tensor method (`Tensor.add`, what `t + proxy` reaches) or a property's getter."""
    name = getattr(func, "__name__", None)
    if not isinstance(name, str):
        return False
    return getattr(Tensor, name, None) is func or name == "__get__"


class Proxy:
    """A value being traced: a Node of a Graph, and the tracer that records what is done to it
    (torch.fx.Proxy). It cannot be iterated, measured with len() or used as a condition; factor
    such code out with `torch.fx.wrap`, or specialise it with `concrete_args`."""

    def __init__(self, node: Node, tracer: TracerBase | None = None) -> None:
        if tracer is None:
            tracer = GraphAppendingTracer(node.graph)
        self.tracer = tracer
        self.node = node
        if not (_torch_function.state.num_tracing or _torch_function.state.subclasses):
            # made outside a trace (around a Node, by hand): from now on ops check their
            # arguments, as they do for a Tensor subclass
            _torch_function.enable_subclasses()

    def __repr__(self) -> str:
        return f"Proxy({self.node.name})"

    def __getattr__(self, k: str) -> Attribute:
        # no node yet: a method call becomes one call_method node
        return Attribute(self, k)

    def __getstate__(self) -> dict[str, Any]:
        return self.__dict__

    def __setstate__(self, d: dict[str, Any]) -> None:
        self.__dict__ = d

    def __deepcopy__(self, memo: dict[int, Any]) -> Proxy:
        # defined here, or deepcopy would find an Attribute('__deepcopy__')
        new_dict = {k: copy.deepcopy(v, memo) for k, v in self.__dict__.items()}
        new_proxy = Proxy(new_dict["node"], new_dict["tracer"])
        new_proxy.__dict__.update(new_dict)
        return new_proxy

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", "__call__", (self, *args), kwargs)

    def __iter__(self) -> Iterator[Proxy]:
        # `a, b = proxy` unpacks a known number of items: one getitem each
        frame = inspect.currentframe()
        calling = frame.f_back if frame is not None else None
        if calling is not None:
            inst = next((i for i in dis.get_instructions(calling.f_code)
                         if i.offset == calling.f_lasti), None)
            if inst is not None and inst.opname == "UNPACK_SEQUENCE":
                return (self[i] for i in range(inst.argval))  # type: ignore[index]
        return self.tracer.iter(self)

    def __abs__(self) -> Proxy:
        return self.tracer.create_proxy("call_function", operator.abs, (self,), {})

    def __bool__(self) -> bool:
        return self.tracer.to_bool(self)

    def keys(self) -> Proxy:
        return self.tracer.keys(self)

    def __len__(self) -> int:
        raise RuntimeError("'len' is not supported in symbolic tracing by default. If you want "
                           "this call to be recorded, please call torch.fx.wrap('len') at "
                           "module scope")

    @classmethod
    def __torch_function__(cls, orig_method: Callable[..., Any], types: tuple[type, ...],
                           args: tuple[Any, ...] | None = None,
                           kwargs: dict[str, Any] | None = None) -> Proxy:
        """A torch function or Tensor method called on Proxies: one node, by the tracer of
        the Proxies among the arguments."""
        args = args if args else ()
        kwargs = kwargs if kwargs else {}
        tracers: dict[TracerBase, None] = {}

        def find_tracer(a: Any) -> Any:
            if isinstance(a, cls):
                tracers[a.tracer] = None
            return a

        map_aggregate(args, find_tracer)
        map_aggregate(kwargs, find_tracer)
        if len(tracers) > 1:
            raise RuntimeError(f"Found multiple different tracers {list(tracers.keys())} while "
                               f"trying to trace operations {orig_method}")
        tracer = next(iter(tracers.keys()))
        if _is_tensor_method_or_property(orig_method):
            return tracer.create_proxy("call_method", orig_method.__name__, args, kwargs)
        return tracer.create_proxy("call_function", orig_method, args, kwargs,
                                   name=tracer.graph._target_to_str(orig_method.__name__))


class Attribute(Proxy):
    """`proxy.name`: a getattr node when its value is used, a call_method node when called."""

    def __init__(self, root: Proxy, attr: str) -> None:
        self.root = root
        self.attr = attr
        self.tracer = root.tracer
        self._node: Node | None = None

    @property
    def node(self) -> Node:  # type: ignore[override]
        # added lazily: most attributes are methods, called at once
        if self._node is None:
            self._node = self.tracer.create_proxy("call_function", getattr,
                                                  (self.root, self.attr), {}).node
        return self._node

    def __call__(self, *args: Any, **kwargs: Any) -> Proxy:
        return self.tracer.create_proxy("call_method", self.attr, (self.root, *args), kwargs)


class ParameterProxy(Proxy):
    """A parameter's Proxy whose shape, size(), dim() and numel() are the parameter's own
    (Tracer(param_shapes_constant=True)), so code may branch on them."""

    def __init__(self, tracer: TracerBase, node: Node, name: str, param: Tensor) -> None:
        super().__init__(node, tracer)
        self.param = param
        self.name = name

    def __repr__(self) -> str:
        return f"ParameterProxy({self.name})"

    @property
    def shape(self) -> Any:
        return self.param.shape

    def size(self) -> Any:
        return self.param.size()

    def dim(self) -> int:
        return self.param.dim()

    @property
    def ndim(self) -> int:
        return self.param.ndim

    def numel(self) -> int:
        return self.param.numel()

    def nelement(self) -> int:
        return self.param.nelement()


def _define_magic(method: str) -> None:
    def impl(*args: Any, **kwargs: Any) -> Proxy:
        tracer: TracerBase = args[0].tracer
        target = getattr(operator, method)
        return tracer.create_proxy("call_function", target, args, kwargs)

    impl.__name__ = method
    setattr(Proxy, f"__{method.strip('_')}__", impl)


def _define_reflectable(orig_method_name: str) -> None:
    method_name = f"__r{orig_method_name.strip('_')}__"

    def impl(self: Proxy, rhs: Any) -> Proxy:
        target = getattr(operator, orig_method_name)
        return self.tracer.create_proxy("call_function", target, (rhs, self), {})

    impl.__name__ = impl.__qualname__ = method_name
    setattr(Proxy, method_name, impl)


for _method in magic_methods:
    _define_magic(_method)
for _method in reflectable_magic_methods:
    _define_reflectable(_method)


__all__ = ["Attribute", "GraphAppendingTracer", "ParameterProxy", "Proxy", "Scope",
           "ScopeContextManager", "TraceError", "TracerBase"]
