"""torch.fx.symbolic_trace: record a function or Module as a Graph by running it on Proxies.

The Tracer calls the function with one Proxy per parameter; every torch call, Tensor method
and operator on a Proxy becomes a node (fx/proxy.py). Modules are handled as torch handles
them, by patching `nn.Module.__call__` and `__getattr__` for the duration of the trace: a
torch.nn module (a leaf) becomes one `call_module` node, a user module is traced through, and
a parameter read becomes one `get_attr` node. Tensors the code finds elsewhere become
`_tensor_constant<n>` attributes. Control flow on a traced value raises TraceError; a parameter
given in `concrete_args` is specialised (its value baked in, checked by an assert node) instead.
Functions registered with `fx.wrap` (and `math`'s, as torch autowraps them) are kept as calls.
"""

from __future__ import annotations

import collections
import functools
import inspect
import math
import warnings
from collections.abc import Callable
from types import CodeType, FunctionType, ModuleType
from typing import Any, ClassVar, TypeVar, overload

from fake_torch import _torch_function
from fake_torch._tensor import Tensor
from fake_torch.fx._codegen import _PyTreeCodeGen, _PyTreeInfo
from fake_torch.fx._patching import (
    _autowrap_check,
    _patch_wrapped_functions,
    _Patcher,
    _wrapped_fns_to_patch,
)
from fake_torch.fx.graph import Graph
from fake_torch.fx.graph_module import GraphModule, traceable_forward
from fake_torch.fx.node import Argument, Node
from fake_torch.fx.proxy import (
    ParameterProxy,
    Proxy,
    Scope,
    ScopeContextManager,
    TracerBase,
    base_types,
)
from fake_torch.nn.modules.container import Sequential
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter
from fake_torch.overrides import handle_torch_function, has_torch_function
from fake_torch.utils import _pytree as pytree

HAS_VARSTUFF = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS
_F = TypeVar("_F", bound=Callable[..., Any])
_is_fx_tracing_flag = False


def is_fx_tracing() -> bool:
    """True while symbolic_trace (a Tracer) runs."""
    return _is_fx_tracing_flag


def is_fx_symbolic_tracing() -> bool:
    """True while symbolic_trace (a Tracer) runs."""
    return _is_fx_tracing_flag


class PHBase:
    """A placeholder inside `concrete_args`: this leaf stays an input of the graph."""

    def __repr__(self) -> str:
        return "PH"


PH = PHBase()


class PHWithMeta(PHBase):
    """A placeholder inside `concrete_args` with a key (its attributes go to the node)."""

    def __init__(self, ph_key: str | None = None) -> None:
        super().__init__()
        self.ph_key = ph_key


def _transfer_attrs(fr: object, to: object) -> None:
    for attr_name in dir(fr):
        attr_val = getattr(fr, attr_name)
        if not callable(attr_val) and not attr_name.startswith("__") \
                and not hasattr(to, attr_name):
            setattr(to, attr_name, attr_val)


def _patch_function(fn: FunctionType, nargs: int) -> FunctionType:
    """`fn` taking its `*args` and `**kwargs` as `nargs` plain positional parameters (their
    placeholders' Proxies are passed as single values)."""
    co: CodeType = fn.__code__.replace(co_argcount=nargs, co_posonlyargcount=0,
                                       co_kwonlyargcount=0,
                                       co_flags=fn.__code__.co_flags & ~HAS_VARSTUFF)
    return FunctionType(co, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


def _assert(condition: Any, message: str) -> None:
    """torch._assert: `assert condition, message`, recorded as a node when traced."""
    if type(condition) is not Tensor and has_torch_function((condition,)):
        handle_torch_function(_assert, (condition,), condition, message)
        return
    if not condition:
        raise AssertionError(message)


_assert.__module__ = "fake_torch"  # torch._assert, as nodes print it


def _assert_is_none(value: object, msg: str) -> None:
    if value is not None:
        raise AssertionError(msg)


@overload
def wrap(fn_or_name: _F) -> _F: ...
@overload
def wrap(fn_or_name: str) -> str: ...
def wrap(fn_or_name: str | Callable[..., Any]) -> str | Callable[..., Any]:
    """Register a module-level function (or its name) as a leaf: traced code calling it on a
    Proxy records one call_function node instead of tracing into it. Call at module scope."""
    if not callable(fn_or_name) and not isinstance(fn_or_name, str):
        raise RuntimeError("Unsupported type for global function! Must be either a callable or "
                           "string name")
    fn_name = fn_or_name if isinstance(fn_or_name, str) else fn_or_name.__name__
    currentframe = inspect.currentframe()
    f = currentframe.f_back if currentframe is not None else None
    if f is None:
        raise AssertionError("currentframe.f_back is None")
    if f.f_code.co_name != "<module>":
        raise NotImplementedError("wrap must be called at the top level of a module")
    _wrapped_fns_to_patch[(id(f.f_globals), fn_name)] = f.f_globals
    return fn_or_name


# --- the tracer -----------------------------------------------------------------------------------

class Tracer(TracerBase):
    """Records a function or Module as a Graph (torch.fx.Tracer); subclass it to change what
    is a leaf (`is_leaf_module`), how values become node arguments (`create_arg`), or what a
    module call records (`call_module`). `symbolic_trace(m)` is `Tracer().trace(m)` made into
    a GraphModule."""

    _qualname_counter: ClassVar[dict[str, int]] = collections.defaultdict(int)

    def __init__(self, autowrap_modules: tuple[ModuleType, ...] = (math,),
                 autowrap_functions: tuple[Callable[..., Any], ...] = (),
                 param_shapes_constant: bool = False) -> None:
        super().__init__()
        self._autowrap_function_ids: set[int] = {
            id(value) for m in autowrap_modules for name, value in m.__dict__.items()
            if not name.startswith("_") and callable(value)}
        self._autowrap_function_ids.update(id(f) for f in autowrap_functions)
        self._autowrap_search: list[ModuleType] = list(autowrap_modules)
        self.param_shapes_constant = param_shapes_constant
        self.submodule_paths: dict[Module, str] | None = None
        self.root_module_name = ""
        self.scope = Scope("", None)
        self.module_stack = collections.OrderedDict()
        self.num_calls: dict[str, int] = {}
        self.node_name_to_scope = {}
        self.tensor_attrs: dict[Tensor, str] = {}

    def get_fresh_qualname(self, prefix: str) -> str:
        """A name `<prefix><n>` that is not yet an attribute of the root."""
        qualname = f"{prefix}0"
        if not hasattr(self.root, qualname):
            self._qualname_counter[prefix] = 0
            return qualname
        i = self._qualname_counter[prefix]
        while True:
            qualname = f"{prefix}{i}"
            i += 1
            if not hasattr(self.root, qualname):
                break
        self._qualname_counter[prefix] = i
        return qualname

    def create_arg(self, a: Any) -> Argument:
        """As TracerBase's, and: a parameter, buffer or submodule of the root becomes a
        get_attr node; any other tensor is stored on the root as `_tensor_constant<n>`."""
        if isinstance(a, Parameter):
            for n, p in self.root.named_parameters():
                if a is p:
                    return self.create_node("get_attr", n, (), {})
            raise NameError("parameter is not a member of this module")
        if isinstance(a, Tensor):
            for n_, p_ in self.root.named_buffers():
                if a is p_:
                    return self.create_node("get_attr", n_, (), {})
        elif isinstance(a, Module):
            for n_, m_ in self.root.named_modules():
                if a is m_:
                    return self.create_node("get_attr", n_, (), {})
        if isinstance(a, tuple) and hasattr(a, "_fields"):
            args = tuple(self.create_arg(elem) for elem in a)
            return self.create_node("call_function", a.__class__, args, {})
        if isinstance(a, Tensor):
            qualname = self.tensor_attrs.get(a)
            if not qualname:
                qualname = self.get_fresh_qualname("_tensor_constant")
                self.tensor_attrs[a] = qualname
                setattr(self.root, qualname, a)
            return self.create_node("get_attr", qualname, (), {})
        return super().create_arg(a)

    def is_leaf_module(self, m: Module, module_qualified_name: str) -> bool:
        """torch.nn's modules (but Sequential) are leaves: one call_module node each."""
        module_name = type(m).__module__.removeprefix("fake_")
        return module_name.startswith(("torch.nn", "torch.ao.nn")) \
            and not isinstance(m, Sequential)

    def path_of_module(self, mod: Module) -> str:
        """`mod`'s qualified name in the root ('foo.bar')."""
        if self.submodule_paths:
            path = self.submodule_paths.get(mod)
            if path is None:
                raise NameError("module is not installed as a submodule")
            return path
        for n, p in self.root.named_modules():
            if mod is p:
                return n
        raise NameError("module is not installed as a submodule")

    def call_module(self, m: Module, forward: Callable[..., Any], args: tuple[Any, ...],
                    kwargs: dict[str, Any]) -> Any:
        """A module call: a call_module node for a leaf, else its forward traced through."""
        module_qualified_name = self.path_of_module(m)
        with ScopeContextManager(self.scope, Scope(module_qualified_name, type(m))) as scope:
            num_calls = self.num_calls.get(module_qualified_name, 0)
            module_key = f"{scope.module_path}@{num_calls}" if num_calls > 0 \
                else scope.module_path
            self.module_stack[module_key] = (module_qualified_name, scope.module_type)
            self.num_calls[module_qualified_name] = num_calls + 1
            if not self.is_leaf_module(m, module_qualified_name):
                ret_val = forward(*args, **kwargs)
            else:
                ret_val = self.create_proxy("call_module", module_qualified_name, args, kwargs)
            key, _ = self.module_stack.popitem(last=True)
            if key != module_key:
                raise AssertionError(f"Unexpected key {key}, expected {module_key}")
        return ret_val

    def getattr(self, attr: str, attr_val: Any, parameter_proxy_cache: dict[str, Proxy]) -> Any:
        """A module attribute read: a parameter of the root becomes one get_attr Proxy (the
        same for every read); anything else is returned as it is."""
        def proxy_for(collection: Any) -> Proxy | None:
            for n, p in collection:
                if attr_val is p:
                    if n not in parameter_proxy_cache:
                        factory = None
                        if self.param_shapes_constant:
                            def factory(node: Node, n: str = n) -> Proxy:
                                return ParameterProxy(self, node, n, attr_val)
                        parameter_proxy_cache[n] = self.create_proxy(
                            "get_attr", n, (), {}, proxy_factory_fn=factory)
                    return parameter_proxy_cache[n]
            return None

        if isinstance(attr_val, Parameter):
            found = proxy_for(self.root.named_parameters())
            if found is not None:
                return found
        if self.proxy_buffer_attributes and isinstance(attr_val, Tensor):
            found = proxy_for(self.root.named_buffers())
            if found is not None:
                return found
        return attr_val

    def create_args_for_root(self, root_fn: Callable[..., Any], is_module: bool,
                             concrete_args: dict[str, Any] | tuple[Any, ...] | None = None
                             ) -> tuple[Callable[..., Any], list[Any]]:
        """One placeholder per parameter of `root_fn` (`*args`, `**kwargs` included), or the
        concrete value given for it; structured concrete values flatten through a pytree."""
        fn_for_analysis = inspect.unwrap(root_fn)
        co = fn_for_analysis.__code__
        total_args = co.co_argcount + co.co_kwonlyargcount
        orig_args = list(co.co_varnames)
        names_iter = iter(co.co_varnames)
        args: list[Any] = []
        skip_arg_idx = 0
        if is_module:
            if total_args == 0:
                raise RuntimeError("``self`` argument cannot be part of *args expansion!")
            skip_arg_idx = 1
            next(names_iter)  # self
            args.append(self.root)
        sig = inspect.signature(fn_for_analysis)
        if isinstance(concrete_args, tuple) and len(concrete_args) > 0 \
                and (co.co_flags & HAS_VARSTUFF) and total_args == 1:
            for name_idx, concrete_arg in enumerate(concrete_args):
                out = self.create_proxy("placeholder", f"input_{name_idx}", (), {})
                if isinstance(concrete_arg, PHBase) and concrete_arg is not PH:
                    _transfer_attrs(fr=concrete_arg, to=out.node)
                args.append(out)
            return root_fn, args
        arg_names = [next(names_iter) for _ in range(skip_arg_idx, total_args)]
        if isinstance(concrete_args, tuple):
            if len(arg_names) != len(concrete_args):
                raise RuntimeError(f"Tracing expected {len(arg_names)} arguments but got "
                                   f"{len(concrete_args)} concrete arguments")
            concrete_args = dict(zip(arg_names, concrete_args, strict=True))
        args.extend(self._proxy_placeholder(name, concrete_args, sig, fn_for_analysis)
                    for name in arg_names)
        if co.co_kwonlyargcount > 0 or co.co_flags & HAS_VARSTUFF:
            if co.co_flags & inspect.CO_VARARGS:
                args.append(self._proxy_placeholder("*" + next(names_iter), concrete_args, sig,
                                                    fn_for_analysis))
            if co.co_flags & inspect.CO_VARKEYWORDS:
                args.append(self._proxy_placeholder("**" + next(names_iter), concrete_args,
                                                    sig, fn_for_analysis))
            assert isinstance(root_fn, FunctionType)
            root_fn = _patch_function(root_fn, len(args))
        flat_args, in_spec = pytree.tree_flatten(tuple(args))
        if all(child.is_leaf() for child in in_spec.children()):
            return root_fn, args
        # structured concrete values: forward takes the structure, flattened by in_spec
        codegen = _PyTreeCodeGen(_PyTreeInfo(orig_args[:total_args], in_spec, None))
        self.graph._codegen = codegen
        fn = root_fn

        def flatten_fn(*flat: Any) -> Any:
            tree_out = fn(*pytree.tree_unflatten(list(flat), in_spec))
            out_args, out_spec = pytree.tree_flatten(tree_out)
            codegen.pytree_info = codegen.pytree_info._replace(out_spec=out_spec)
            return out_args

        flatten_fn.__annotations__ = {}  # not the generated forward's return annotation
        return flatten_fn, flat_args

    def _proxy_placeholder(self, name: str, concrete_args: dict[str, Any] | None,
                           sig: inspect.Signature, fn_for_analysis: Callable[..., Any]) -> Any:
        if concrete_args is not None and name in concrete_args:
            cnt = 0

            def replace_ph(x: Any) -> Any:
                nonlocal cnt
                cnt += 1
                param = sig.parameters[name]
                default = () if param.default is inspect.Parameter.empty else (param.default,)
                out = self.create_proxy("placeholder", f"{name}_{cnt}", default, {})
                if isinstance(x, PHBase):
                    if x is not PH:
                        _transfer_attrs(fr=x, to=out.node)
                    return out
                if type(x) is bool or (type(x) in base_types and type(x) is not Tensor):
                    _assert(out == x, f"{name} has been specialized to have value {x} but got "
                                      "another value")
                elif x is None:
                    msg = f"{name} has been specialized to have value None but got another value"
                    self.create_proxy("call_function", _assert_is_none, (out, msg), {})
                else:
                    warnings.warn(f"Was not able to add assertion to guarantee correct input "
                                  f"{name} to specialized function. It is up to the user to make "
                                  "sure that your inputs match the inputs you specialized the "
                                  "function with.", stacklevel=1)
                return x

            return pytree.tree_map(replace_ph, concrete_args[name])
        if name[0] == "*":
            default: tuple[Any, ...] = ()
        else:
            param = sig.parameters[name]
            default = () if param.default is inspect.Parameter.empty else (param.default,)
        return self.create_proxy("placeholder", name, default, {},
                                 type_expr=fn_for_analysis.__annotations__.get(name, None))

    def trace(self, root: Module | Callable[..., Any],
              concrete_args: dict[str, Any] | None = None) -> Graph:
        """Run `root` (a Module's forward, or a function) on Proxies; the recorded Graph.
        A function's constants are stored on a fresh Module, `self.root`."""
        global _is_fx_tracing_flag
        old_flag = _is_fx_tracing_flag
        _is_fx_tracing_flag = True
        try:
            with _torch_function.tracing_proxies():  # ops look for Proxies meanwhile
                self._trace(root, concrete_args)
        finally:
            _is_fx_tracing_flag = old_flag
        return self.graph

    def _trace(self, root: Module | Callable[..., Any],
               concrete_args: dict[str, Any] | None) -> None:
        fn: Any
        if isinstance(root, Module):
            self.root = root
            if not hasattr(type(root), self.traced_func_name):
                raise AssertionError(f"traced_func_name={self.traced_func_name} doesn't "
                                     f"exist in {type(root).__name__}")
            fn = getattr(type(root), self.traced_func_name)
            if isinstance(root, GraphModule) and self.traced_func_name == "forward":
                fn = traceable_forward(root.graph) or fn  # its generated code's signature
            self.root_module_name = root._get_name()
            self.submodule_paths = {mod: name for name, mod in root.named_modules()}
        else:
            self.root = Module()
            fn = root
        self.graph = Graph(tracer_cls=type(self))
        self.tensor_attrs = {}
        self._collect_tensor_attrs(self.root, [])
        if not isinstance(fn, FunctionType):
            raise AssertionError(f"Expected FunctionType, got {type(fn)}")
        fn_globals = fn.__globals__  # before it is patched
        traced_fn, args = self.create_args_for_root(fn, isinstance(root, Module),
                                                    concrete_args)
        with _Patcher() as patcher:
            self._patch_modules(patcher)
            _patch_wrapped_functions(patcher)
            _autowrap_check(patcher, fn_globals, self._autowrap_function_ids)
            for module in self._autowrap_search:
                _autowrap_check(patcher, module.__dict__, self._autowrap_function_ids)
            ann = inspect.get_annotations(inspect.unwrap(traced_fn))
            self.create_node("output", "output", (self.create_arg(traced_fn(*args)),), {},
                             type_expr=ann.get("return", None))
        self.submodule_paths = None

    def _collect_tensor_attrs(self, m: Module, prefix_atoms: list[str]) -> None:
        """Plain tensor attributes of the module tree: a constant found there is read back
        by its path instead of being stored again."""
        for k, v in m.__dict__.items():
            if isinstance(v, Tensor):
                self.tensor_attrs[v] = ".".join([*prefix_atoms, k])
        for k, child in m.named_children():
            self._collect_tensor_attrs(child, [*prefix_atoms, k])

    def _patch_modules(self, patcher: _Patcher) -> None:
        """Module calls and parameter reads come to the tracer while it runs (as torch's do)."""
        orig_getattr = Module.__getattr__
        orig_call = Module.__call__
        parameter_proxy_cache: dict[str, Proxy] = {}

        @functools.wraps(orig_getattr)
        def module_getattr_wrapper(mod: Module, attr: str) -> Any:
            return self.getattr(attr, orig_getattr(mod, attr), parameter_proxy_cache)

        @functools.wraps(orig_call)
        def module_call_wrapper(mod: Module, *args: Any, **kwargs: Any) -> Any:
            def forward(*args: Any, **kwargs: Any) -> Any:
                return orig_call(mod, *args, **kwargs)

            _autowrap_check(patcher, getattr(getattr(mod, "forward", mod), "__globals__", {}),
                            self._autowrap_function_ids)
            return self.call_module(mod, forward, args, kwargs)

        patcher.patch_method(Module, "__getattr__", module_getattr_wrapper)
        patcher.patch_method(Module, "__call__", module_call_wrapper)


def symbolic_trace(root: Module | Callable[..., Any],
                   concrete_args: dict[str, Any] | None = None) -> GraphModule:
    """Trace `root` (a Module or a function) into a GraphModule named after it; parameters in
    `concrete_args` are specialised to the values given (PH keeps a leaf an input)."""
    tracer = Tracer()
    graph = tracer.trace(root, concrete_args)
    name = root.__class__.__name__ if isinstance(root, Module) else getattr(root, "__name__", "")
    return GraphModule(tracer.root, graph, name)


__all__ = ["PH", "PHBase", "PHWithMeta", "Tracer", "is_fx_tracing", "symbolic_trace", "wrap"]
