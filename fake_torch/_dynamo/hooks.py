"""The op hooks: while a trace runs, every public op is wrapped so that its outermost call is
recorded as one node, and every host read is a graph break.

Wrapped (only while tracing; restored after, so there is zero overhead outside it):
  - the functions in `__all__` of the op modules (fake_torch._kernels.*), fake_torch._factories,
    fake_torch.nn.functional and fake_torch.linalg, wherever a fake_torch module (or the
    compiled function's own module) holds them: `call_function(<the function>)` nodes;
  - Tensor methods: `call_method("<name>")` nodes; Python operators: `call_function(operator.
    add)` ...; `.T` / `.mT`: `call_function(getattr)`, as Dynamo records them;
  - custom ops (torch.ops.<namespace>.<name>, torch.library.custom_op): one node each;
  - host reads (`item`, `tolist`, `numpy`, `bool()`, `float()`, `repr`, `print`) and ops whose
    output shape or value depends on the data (`nonzero`, `masked_select`, boolean-mask
    indexing, `repeat_interleave` with tensor repeats, `equal`, `allclose`, `multinomial`):
    graph breaks with torch's texts (graph_breaks.py).
Calls inside a recorded call (depth > 0) run through untouched.
"""

from __future__ import annotations

import builtins
import dis
import functools
import importlib
import operator
import pkgutil
import sys
from collections.abc import Callable, Iterable
from types import FunctionType, ModuleType
from typing import Any

from fake_torch import _ops
from fake_torch._dtype import bool_, uint8
from fake_torch._dynamo import graph_breaks as gb
from fake_torch._dynamo.state import _state
from fake_torch._kernels._tensor_casts import TensorCasts
from fake_torch._tensor import Tensor

Rule = Callable[[tuple[Any, ...], dict[str, Any]], str | None]

# Tensor methods that read metadata only, or state outside the graph: never recorded
_METADATA = frozenset({
    "size", "dim", "ndimension", "numel", "nelement", "stride", "storage_offset",
    "is_contiguous", "data_ptr", "untyped_storage", "element_size", "get_device",
    "is_floating_point", "requires_grad_", "backward", "__len__", "__hash__",
    "__init__", "__iter__", "__array_priority__",
})
# not ops: type queries, RNG state, classes
_NOT_OPS = frozenset({
    "can_cast", "is_floating_point", "is_tensor", "numel", "result_type", "broadcast_shapes",
    "Generator", "default_generator", "get_rng_state", "initial_seed", "manual_seed", "seed",
    "set_rng_state",
})

_OPERATORS: dict[str, tuple[Callable[..., Any], bool]] = {
    "__getitem__": (operator.getitem, False), "__setitem__": (operator.setitem, False),
    "__neg__": (operator.neg, False), "__pos__": (operator.pos, False),
    "__abs__": (operator.abs, False), "__invert__": (operator.invert, False),
    "__matmul__": (operator.matmul, False), "__rmatmul__": (operator.matmul, True),
}
for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
              "lshift", "rshift"):
    _fn = getattr(operator, _name + "_" if _name in ("and", "or") else _name)
    _OPERATORS[f"__{_name}__"] = (_fn, False)
    _OPERATORS[f"__r{_name}__"] = (_fn, True)
    _OPERATORS[f"__i{_name}__"] = (getattr(operator, "i" + _name), False)
for _name in ("eq", "ne", "lt", "le", "gt", "ge"):
    _OPERATORS[f"__{_name}__"] = (getattr(operator, _name), False)


# --- graph-break rules --------------------------------------------------------------------------

def _has_mask(index: Any) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(i, Tensor) and i.dtype in (bool_, uint8) for i in items)


def _always(text: str) -> Rule:
    return lambda args, kwargs: text


_NONZERO = gb.dynamic_shape("aten.nonzero.default")
_RULES: dict[str, Rule] = {
    "nonzero": _always(_NONZERO),
    "argwhere": _always(_NONZERO),
    "masked_select": _always(gb.dynamic_shape("aten.masked_select.default")),
    "equal": _always(gb.data_dependent("aten.equal.default")),
    "allclose": _always(gb.data_dependent("aten.allclose.default")),
    "multinomial": _always(gb.data_dependent("aten.multinomial.default")),
    "repeat_interleave": lambda args, kwargs: (
        gb.dynamic_shape("aten.repeat_interleave.Tensor")
        if (isinstance(kwargs.get("repeats", args[1] if len(args) > 1 else None), Tensor)
            and kwargs.get("output_size") is None) else None),
    "__getitem__": lambda args, kwargs: _NONZERO if _has_mask(args[1]) else None,
    "__setitem__": lambda args, kwargs: _NONZERO if _has_mask(args[1]) else None,
    "tensor": lambda args, kwargs: (gb.data_dependent("aten._local_scalar_dense.default")
                                    if args and isinstance(args[0], Tensor) else None),
    "as_tensor": lambda args, kwargs: (gb.data_dependent("aten._local_scalar_dense.default")
                                       if args and isinstance(args[0], Tensor) else None),
}

# a host sync met inside an op (cuda): the op's text
_SYNC_TEXT = {"index": _NONZERO, "nonzero": _NONZERO,
              "masked_select": gb.dynamic_shape("aten.masked_select.default"),
              "repeat_interleave": gb.dynamic_shape("aten.repeat_interleave.Tensor"),
              "multinomial": gb.data_dependent("aten.multinomial.default"),
              "item": gb.ITEM, "repr": gb.REPR}


def _on_sync(what: str) -> str:
    return _SYNC_TEXT.get(what, gb.data_dependent("aten._local_scalar_dense.default"))


# --- wrappers -----------------------------------------------------------------------------------

def _function_hook(fn: Callable[..., Any]) -> Callable[..., Any]:
    rule = _RULES.get(fn.__name__)

    @functools.wraps(fn)
    def hooked(*args: Any, **kwargs: Any) -> Any:
        tracer = _state.tracer
        if tracer is None or _state.depth:
            return fn(*args, **kwargs)
        text = rule(args, kwargs) if rule is not None else None
        if text is not None:
            return tracer.breaking_call(gb.GraphBreak(text, text), fn, *args, **kwargs)
        return tracer.call(fn, args, kwargs, "call_function", fn, on_sync=_on_sync)

    return hooked


def _method_hook(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    rule = _RULES.get(name)
    op, target, reflected = "call_method", name, False
    if name in _OPERATORS:
        op = "call_function"
        target, reflected = _OPERATORS[name]  # type: ignore[assignment]

    @functools.wraps(fn)
    def hooked(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        tracer = _state.tracer
        if tracer is None or _state.depth:
            return fn(self, *args, **kwargs)
        call_args = (self, *args)
        text = rule(call_args, kwargs) if rule is not None else None
        if text is not None:
            return tracer.breaking_call(gb.GraphBreak(text, text), fn, *call_args, **kwargs)
        node_args = (args[0], self) if reflected else call_args
        return tracer.call(fn, call_args, kwargs, op, target, node_args=node_args,
                           on_sync=_on_sync)

    return hooked


def _property_hook(name: str, prop: property) -> property:
    getter = prop.fget
    assert getter is not None

    def hooked(self: Tensor) -> Any:
        tracer = _state.tracer
        if tracer is None or _state.depth:
            return getter(self)
        return tracer.call(getter, (self,), {}, "call_function", getattr,
                           node_args=(self, name))

    return property(hooked, prop.fset, prop.fdel, prop.__doc__)


def _breaking_method(fn: Callable[..., Any], text_for: Callable[..., gb.GraphBreak | str],
                     ) -> Callable[..., Any]:
    @functools.wraps(fn)
    def hooked(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        tracer = _state.tracer
        if tracer is None or _state.depth:
            return fn(self, *args, **kwargs)
        brk = text_for(self)
        if isinstance(brk, str):
            brk = gb.GraphBreak(brk, brk)
        return tracer.breaking_call(brk, fn, self, *args, **kwargs)

    return hooked


def _item_hook(fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)
    def hooked(self: Tensor) -> Any:
        tracer = _state.tracer
        if tracer is None or _state.depth:
            return fn(self)
        if tracer.capture_scalars and self.dtype is not bool_ and self.numel() == 1:
            return tracer.capture_item(self)
        return tracer.breaking_call(gb.GraphBreak(gb.ITEM, gb.ITEM), fn, self)

    return hooked


def _bool_break(t: Tensor) -> gb.GraphBreak:
    """`if t:` (a jump on the tensor) is data-dependent branching; `bool(t)` reads .item()."""
    tracer = _state.tracer
    assert tracer is not None
    frame = sys._getframe(2)  # the code that asked for the truth value
    opname = dis.opname[frame.f_code.co_code[frame.f_lasti]]
    if "JUMP" not in opname and opname not in ("TO_BOOL", "UNARY_NOT"):
        return gb.GraphBreak(gb.ITEM, gb.ITEM)
    seg = tracer.segment
    lines: list[str] = []
    if seg is not None:
        entry = seg.nodes.get(id(t))
        if entry is not None and entry[0]() is t and entry[1].op.startswith("call"):
            lines.append(_describe(entry[1]))
    stack = gb.summarize(gb.user_frames(tracer.frame.code))
    text = gb.branching(lines, stack[-1] if stack else None)
    return gb.GraphBreak(text, gb.BRANCH_EXPLAIN, "unimplemented")


def _describe(node: Any) -> str:
    """`gt = gt(sum_1, 0)`: a node as torch's branching message shows it."""
    def fmt(a: Any) -> str:
        return a.name if hasattr(a, "op") else repr(a)
    args = [fmt(a) for a in node.args] + [f"{k}={fmt(v)}" for k, v in node.kwargs.items()]
    if node.op == "call_method":
        return f"{node.name} = {args[0]}.{node.target}({', '.join(args[1:])})"
    return f"{node.name} = {getattr(node.target, '__name__', node.target)}({', '.join(args)})"


def _number_break() -> str:
    tracer = _state.tracer
    return gb.PYTHON_NUMBER if tracer is not None and tracer.capture_scalars else gb.ITEM


def _tolist_break(t: Tensor) -> str:
    if t.dtype.is_floating_point:
        return gb.TOLIST_FLOAT
    return gb.data_dependent("aten._local_scalar_dense.default")


_BREAKING: dict[str, Callable[..., gb.GraphBreak | str]] = {
    "tolist": _tolist_break,
    "numpy": lambda t: gb.NUMPY,
    "__array__": lambda t: gb.NUMPY,
    "__bool__": _bool_break,
    "__float__": lambda t: _number_break(),
    "__int__": lambda t: _number_break(),
    "__index__": lambda t: _number_break(),
    "__repr__": lambda t: gb.REPR,
}

_PRINT = builtins.print


def _custom_op_hook(op: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """torch.ops.<namespace>.<name>(...) (torch.library.custom_op): ONE node, whose target is
    the operator, however many ops its body runs."""
    tracer = _state.tracer
    if tracer is None or _state.depth:
        return _ops.run_kernel(op, args, kwargs)

    def run(*a: Any, **k: Any) -> Any:
        return _ops.run_kernel(op, a, k)

    return tracer.call(run, args, kwargs, "call_function", op, on_sync=_on_sync)


def _print_hook(*args: Any, **kwargs: Any) -> None:
    tracer = _state.tracer
    if tracer is None or _state.depth:
        return _PRINT(*args, **kwargs)
    text = gb.builtin_call("print", args, kwargs)
    tracer.breaking_call(gb.GraphBreak(text, text), _PRINT, *args, **kwargs)
    return None


# --- what to patch, and where -------------------------------------------------------------------

_SKIP_MODULES = ("fake_torch._dynamo", "fake_torch.fx", "fake_torch._inductor",
                 "fake_torch._compile", "fake_torch.compiler")
_function_hooks: dict[int, tuple[Any, Callable[..., Any]]] | None = None
_class_sites: list[tuple[type, str, Any, Any]] | None = None
_module_sites: tuple[int, list[tuple[dict[str, Any], str, Any, Any]]] | None = None


def _op_modules() -> list[ModuleType]:
    import fake_torch._kernels as ops

    modules = []
    for info in pkgutil.iter_modules(ops.__path__):
        if not info.name.startswith("_"):
            modules.append(importlib.import_module(f"fake_torch._kernels.{info.name}"))
    for name in ("fake_torch._factories", "fake_torch.nn.functional", "fake_torch.linalg"):
        modules.append(importlib.import_module(name))
    return modules


def _functions() -> dict[int, tuple[Any, Callable[..., Any]]]:
    """id(public op function) -> (the function, its hook)."""
    global _function_hooks
    if _function_hooks is None:
        _function_hooks = {}
        for module in _op_modules():
            for name in getattr(module, "__all__", ()):
                fn = getattr(module, name, None)
                if isinstance(fn, FunctionType) and name not in _NOT_OPS:
                    _function_hooks.setdefault(id(fn), (fn, _function_hook(fn)))
    return _function_hooks


def _classes() -> list[tuple[type, str, Any, Any]]:
    """(class, attribute, original, hook) for every recorded Tensor method and property."""
    global _class_sites
    if _class_sites is None:
        _class_sites = []
        for cls in (Tensor, TensorCasts):
            for name, value in list(vars(cls).items()):
                hook: Any = None
                if name == "item":
                    hook = _item_hook(value)
                elif name in _BREAKING:
                    hook = _breaking_method(value, _BREAKING[name])
                elif name in ("equal", "allclose") and isinstance(value, FunctionType):
                    hook = _breaking_method(value, lambda t, n=name: _RULES[n]((t,), {}) or "")
                elif isinstance(value, property) and name in ("T", "mT"):
                    hook = _property_hook(name, value)
                elif (isinstance(value, FunctionType) and name not in _METADATA
                      and (not name.startswith("_") or name in _OPERATORS)):
                    hook = _method_hook(name, value)
                if hook is not None:
                    _class_sites.append((cls, name, value, hook))
    return _class_sites


def _namespaces(extra: Iterable[dict[str, Any]]) -> list[tuple[dict[str, Any], str, Any, Any]]:
    """Module-global sites holding a public op: fake_torch's modules (cached until a new one
    is imported) and the compiled code's own globals."""
    global _module_sites
    functions = _functions()
    modules = [m for n, m in list(sys.modules.items())
               if (n == "fake_torch" or n.startswith("fake_torch.")) and m is not None
               and not n.startswith(_SKIP_MODULES)]
    if _module_sites is None or _module_sites[0] != len(modules):
        sites = []
        for module in modules:
            sites.extend(_sites_in(vars(module), functions))
        _module_sites = (len(modules), sites)
    sites = list(_module_sites[1])
    seen = {id(vars(m)) for m in modules}
    for namespace in extra:
        if id(namespace) not in seen:
            seen.add(id(namespace))
            sites.extend(_sites_in(namespace, functions))
    return sites


def _sites_in(namespace: dict[str, Any], functions: dict[int, tuple[Any, Callable[..., Any]]]
              ) -> list[tuple[dict[str, Any], str, Any, Any]]:
    found = []
    for name, value in list(namespace.items()):
        entry = functions.get(id(value))
        if entry is not None and entry[0] is value:
            found.append((namespace, name, value, entry[1]))
    return found


_installed: list[tuple[dict[str, Any], str, Any, Any]] | None = None
_depth = 0


def install(extra_globals: Iterable[dict[str, Any]] = ()) -> None:
    """Put the hooks in place (nested installs count; the outermost one patches)."""
    global _installed, _depth
    _depth += 1
    if _depth > 1:
        return
    _installed = _namespaces(extra_globals)
    for namespace, name, _, hook in _installed:
        namespace[name] = hook
    for cls, name, _, hook in _classes():
        setattr(cls, name, hook)
    builtins.print = _print_hook
    _ops.set_trace_hook(_custom_op_hook)


def uninstall() -> None:
    """Take the hooks away again (when the outermost install ends)."""
    global _installed, _depth
    _depth -= 1
    if _depth > 0:
        return
    builtins.print = _PRINT
    _ops.set_trace_hook(None)
    for cls, name, original, _ in _classes():
        setattr(cls, name, original)
    for namespace, name, original, hook in _installed or ():
        if namespace.get(name) is hook:
            namespace[name] = original
    _installed = None


def user_break() -> None:
    """torch._dynamo.graph_break(): end the graph here."""
    tracer = _state.tracer
    if tracer is None or _state.depth:
        return
    tracer.breaking_call(gb.GraphBreak(gb.USER_BREAK, gb.USER_BREAK), lambda: None)


__all__ = ["install", "uninstall", "user_break"]
