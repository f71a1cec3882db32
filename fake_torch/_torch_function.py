"""The API-level door: torch's `__torch_function__` protocol, which every public op enters by.

A public op (a torch function, a Tensor method or property, an nn.functional function, a
torch.ops operator) is an ENTRY made by `make_entry`: a function with its implementation's
exact signature that calls the implementation at once, unless `state.dispatch` says that some
thread has a TorchFunctionMode pushed, or a layer below the modes (autocast), or that a Tensor
subclass overriding `__torch_function__` exists. Then `handle` does what torch does:

  1. the innermost mode of THIS thread's stack, popped while it runs, gets
     `mode.__torch_function__(func, types, args, kwargs)` (calls it makes go to the modes
     below it, so a logging mode sees only the outermost call);
  2. else (or when the mode returned NotImplemented) each overloaded argument's type, subclasses
     first, gets `cls.__torch_function__(...)`; exact Tensors and types whose
     `__torch_function__` is `_disabled_torch_function_impl` (nn.Parameter) do not take part;
  3. with neither, the implementation runs: through this thread's layer when it has one
     (`set_layer`: autocast, which torch's dispatcher runs below Python, so modes see the
     call as written and never the casts it makes).

`func` is what torch would pass: `torch.add`, `Tensor.add` (also for `x + y`, as torch maps
`__add__`). The entry the user's code actually called (`Tensor.__add__`) is `called_entry()`
while a mode runs: the tracer reads it to record `operator.add`, as Dynamo does.

Mode stacks and the disable flags are per thread, as in torch. Nothing here imports Tensor.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from fake_torch._dtype import dtype_arg

Function = Callable[..., Any]


class _State:
    """`enabled`: some thread has a mode or a Tensor subclass takes part (Tensor metadata
    checks it). `dispatch` is the entries' fast-path switch: enabled, or some thread has a
    layer below the modes (autocast); False means an entry may call its implementation
    directly."""

    enabled = False
    dispatch = False
    num_modes = 0  # modes pushed, summed over threads
    num_layers = 0  # threads with a layer below the modes
    subclasses = False  # a Tensor subclass overriding __torch_function__ was defined
    num_tracing = 0  # fx traces running: their Proxies (no Tensors) take part
    lock = threading.Lock()


state = _State()


class _Local(threading.local):
    def __init__(self) -> None:
        self.stack: list[Any] = []  # this thread's TorchFunctionModes, innermost last
        self.no_subclasses = False  # DisableTorchFunctionSubclass
        self.disabled = False  # DisableTorchFunction: modes and subclasses both
        self.called: Function | None = None  # the entry whose call a mode is handling
        self.layer: Layer | None = None  # what runs an implementation here (autocast)


_local = _Local()
# a layer below the modes, as torch's dispatcher keys below Python (autocast): it gets
# (entry, implementation, args, kwargs) where the implementation would run, and runs it
Layer = Callable[[Function, Function, tuple[Any, ...], dict[str, Any]], Any]


def _update() -> None:
    state.enabled = state.num_modes > 0 or state.subclasses or state.num_tracing > 0
    state.dispatch = state.enabled or state.num_layers > 0


def current_layer() -> Layer | None:
    """This thread's layer below the modes, or None."""
    return _local.layer


def set_layer(layer: Layer | None) -> Layer | None:
    """Install (None: remove) this thread's layer below the modes; returns the one before."""
    before = _local.layer
    _local.layer = layer
    change = (layer is not None) - (before is not None)
    if change:
        with state.lock:
            state.num_layers += change
            _update()
    return before


# --- the mode stack ---------------------------------------------------------------------------

def push_mode(mode: Any) -> None:
    """Push `mode` on this thread's stack (TorchFunctionMode.__enter__)."""
    _local.stack.append(mode)
    with state.lock:
        state.num_modes += 1
        _update()


def pop_mode() -> Any:
    """Pop this thread's innermost mode (TorchFunctionMode.__exit__)."""
    if not _local.stack:
        raise RuntimeError("Trying to pop from an empty mode stack")
    mode = _local.stack.pop()
    with state.lock:
        state.num_modes -= 1
        _update()
    return mode


def remove_mode(mode: Any) -> bool:
    """Take `mode` off this thread's stack wherever it is; whether it was there (a tracer
    suspends its mode this way, also from inside a call its mode is handling)."""
    stack = _local.stack
    for i in range(len(stack) - 1, -1, -1):
        if stack[i] is mode:
            del stack[i]
            with state.lock:
                state.num_modes -= 1
                _update()
            return True
    return False


def mode_stack() -> list[Any]:
    """This thread's modes, outermost first (a copy)."""
    return list(_local.stack)


@contextmanager
def pop_mode_temporarily() -> Iterator[Any]:
    mode = pop_mode()
    try:
        yield mode
    finally:
        push_mode(mode)


def is_mode_enabled() -> bool:
    """A mode would see the next call (torch._C._is_torch_function_mode_enabled)."""
    return bool(_local.stack) and not _local.disabled


def is_enabled() -> bool:
    """torch._C._is_torch_function_enabled: False inside DisableTorchFunction(Subclass)."""
    return not (_local.disabled or _local.no_subclasses)


def enable_subclasses() -> None:
    """A Tensor subclass overriding __torch_function__ exists: entries check their args."""
    state.subclasses = True
    _update()


@contextmanager
def tracing_proxies() -> Iterator[None]:
    """Inside (an fx trace), entries check their args: values of a type that is no Tensor
    but defines __torch_function__ (torch.fx.Proxy) take part, as in torch."""
    with state.lock:
        state.num_tracing += 1
        _update()
    try:
        yield
    finally:
        with state.lock:
            state.num_tracing -= 1
            _update()


class DisableTorchFunctionSubclass:
    """torch._C.DisableTorchFunctionSubclass: inside, subclasses' __torch_function__ is not
    called (modes still are)."""

    def __enter__(self) -> DisableTorchFunctionSubclass:
        self._saved = _local.no_subclasses
        _local.no_subclasses = True
        return self

    def __exit__(self, *exc: object) -> None:
        _local.no_subclasses = self._saved


class DisableTorchFunction:
    """torch._C.DisableTorchFunction: inside, neither modes nor subclasses are called."""

    def __enter__(self) -> DisableTorchFunction:
        self._saved = _local.disabled
        _local.disabled = True
        return self

    def __exit__(self, *exc: object) -> None:
        _local.disabled = self._saved


def _disabled_torch_function_impl(func: Function, types: Any, args: Any = (),
                                  kwargs: Any = None) -> Any:
    """torch._C._disabled_torch_function_impl: a `__torch_function__` that takes no part
    (nn.Parameter's); called, it runs `func` with subclass dispatch off."""
    with DisableTorchFunctionSubclass():
        return func(*args, **(kwargs or {}))


# --- dispatch ---------------------------------------------------------------------------------

_plain_types: list[type] = []  # exact Tensor: its default __torch_function__ takes no part


def register_plain_type(cls: type) -> None:
    """Instances of exactly `cls` never take part in dispatch (torch: Tensor, Parameter)."""
    _plain_types.append(cls)


def _overloaded_type(arg: Any) -> bool:
    cls = type(arg)
    if cls in _plain_types:
        return False
    impl = getattr(cls, "__torch_function__", None)
    return impl is not None and impl is not _disabled_torch_function_impl


def overloaded_args(relevant: Any) -> list[Any]:
    """The arguments whose types' __torch_function__ takes part, one per type, subclasses
    before their superclasses, else left to right (NEP-18's order, as torch)."""
    if _local.disabled or _local.no_subclasses:
        return []
    found: list[Any] = []
    for arg in relevant:
        if isinstance(arg, (list, tuple)):
            found = _add_overloaded(found, arg)
        elif _overloaded_type(arg):
            found = _add_overloaded(found, (arg,))
    return found


def _add_overloaded(found: list[Any], args: Any) -> list[Any]:
    for arg in args:
        cls = type(arg)
        if not _overloaded_type(arg) or any(type(a) is cls for a in found):
            continue
        index = next((i for i, a in enumerate(found) if issubclass(cls, type(a))), len(found))
        found.insert(index, arg)
    return found


def handle(func: Function, impl: Function | None, args: tuple[Any, ...],
           kwargs: dict[str, Any], called: Function | None = None,
           relevant: Any = None) -> Any:
    """Run one public call through the modes and subclasses (see the module docstring); with
    neither, `impl` (None: torch's TypeError). `relevant`: the arguments whose types take
    part (default: all of them, and the items of list and tuple arguments)."""
    overloaded = overloaded_args((*args, *kwargs.values()) if relevant is None else relevant)
    mode_on = bool(_local.stack) and not _local.disabled
    if not overloaded and not mode_on and impl is not None:
        layer = _local.layer
        if layer is None:
            return impl(*args, **kwargs)
        return layer(called or func, impl, args, kwargs)
    types = tuple(type(a) for a in overloaded)
    if mode_on:
        saved = _local.called
        _local.called = called or func
        try:
            with pop_mode_temporarily() as mode:
                result = mode.__torch_function__(func, types, args, kwargs)
        finally:
            _local.called = saved
        if result is not NotImplemented:
            return result
    for arg in overloaded:
        result = type(arg).__torch_function__(func, types, args, kwargs)
        if result is not NotImplemented:
            return result
    mode = _local.stack[-1] if mode_on else None
    raise TypeError(_no_implementation(func, called, overloaded, mode))


def _no_implementation(func: Function, called: Function | None, overloaded: list[Any],
                       mode: Any) -> str:
    """torch's text when every handler declined: its C++ dispatcher's for the ops torch
    implements in C++ (torch.add, Tensor.add), its Python one's otherwise (F.silu)."""
    cpp_name = getattr(called, "_cpp_name", None)
    if cpp_name is not None:
        handlers = ([f"  - mode object {mode!r}"] if mode is not None else []) + [
            f"  - tensor subclass {type(a)!r}" for a in overloaded]
        return (f"Multiple dispatch failed for '{cpp_name}'; all __torch_function__ handlers "
                "returned NotImplemented:\n\n" + "\n".join(handlers) + "\n\nFor more "
                "information, try re-running with TORCH_LOGS=not_implemented")
    name = f"{getattr(func, '__module__', '')}.{getattr(func, '__name__', func)}"
    msg = (f"no implementation found for '{name}' on types that implement __torch_function__: "
           f"{[type(a) for a in overloaded]}")
    if mode is not None:
        msg += f" nor in mode {mode}"
    return msg


def called_entry() -> Function | None:
    """The entry the user's code called, while a mode handles it (`Tensor.__add__` where the
    mode was given `Tensor.add`)."""
    return _local.called


# --- entries ----------------------------------------------------------------------------------

_KIND_TEXT = {
    inspect.Parameter.POSITIONAL_ONLY: "{name}{default}",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "{name}{default}",
    inspect.Parameter.KEYWORD_ONLY: "{name}{default}",
    inspect.Parameter.VAR_POSITIONAL: "*{name}",
    inspect.Parameter.VAR_KEYWORD: "**{name}",
}


def make_entry(impl: Function, *, name: str, qualname: str, module: str,
               func: Function | None = None, first: str | None = None,
               cpp_name: str | None = None, operator: bool = False) -> Function:
    """A public entry calling `impl`, with impl's signature (its first parameter renamed
    `first` for a method). Under a mode or a subclass it goes through `handle` with `func`
    as the function modes are shown (default: the entry itself), passing only the arguments
    given: trailing positional ones and keyword-only ones still at their default (by
    identity) are left out, as the caller left them out. `cpp_name`: the name torch's C++
    dispatcher gives the op in its errors ('torch.Tensor.add'); `operator`: a binary Python
    operator, whose TypeError there becomes NotImplemented (Python then tries the other
    operand, and raises its own TypeError), as torch's do."""
    params = list(inspect.signature(impl).parameters.values())
    if first is not None and params:
        params[0] = params[0].replace(name=first)
    env: dict[str, Any] = {"_impl": impl, "_handle": handle, "_state": state, "_given": _given,
                           "_type": type, "_dtype_arg": dtype_arg}
    decl, call, positional, keywords, defaults = [], [], [], [], []
    star = ""
    for i, p in enumerate(params):
        default = ""
        if p.default is not inspect.Parameter.empty:
            env[f"_d{i}"] = p.default
            default = f"=_d{i}"
        if p.kind is inspect.Parameter.KEYWORD_ONLY and not star:
            decl.append("*")
            star = "*"
        if p.kind is inspect.Parameter.VAR_POSITIONAL:
            star = "*"
        decl.append(_KIND_TEXT[p.kind].format(name=p.name, default=default))
        if p.kind is inspect.Parameter.POSITIONAL_ONLY and (
                i + 1 == len(params) or params[i + 1].kind is not p.kind):
            decl.append("/")
        if p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD):
            call.append(p.name)
            positional.append(p.name)
            defaults.append(f"_d{i}" if default else "_NO")
        elif p.kind is inspect.Parameter.VAR_POSITIONAL:
            call.append(f"*{p.name}")
        elif p.kind is inspect.Parameter.KEYWORD_ONLY:
            call.append(f"{p.name}={p.name}")
            keywords.append((p.name, f"_d{i}" if default else "_NO"))
        else:
            call.append(f"**{p.name}")
    var_pos = next((p.name for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL), None)
    var_kw = next((p.name for p in params if p.kind is inspect.Parameter.VAR_KEYWORD), None)
    env["_NO"] = _NO
    pos_text = f"({', '.join(positional)},)" if positional else "()"
    kw_text = "{" + ", ".join(f"{k!r}: ({k}, {d})" for k, d in keywords) + "}"
    slow = (f"_given({pos_text}, ({', '.join(defaults)}{',' if defaults else ''}), "
            f"{var_pos or '()'}, {kw_text}, {var_kw or '{}'})")
    # torch's argument parser reads Python's int/float/bool/complex as dtypes (int64, ...):
    # here, for a `dtype` parameter typed as one; modes and subclasses see what was passed
    parse = "".join(f"    if {p.name}.__class__ is _type: {p.name} = _dtype_arg({p.name})\n"
                    for p in params if p.name == "dtype" and p.annotation in _DTYPE_TYPES)
    runs = "_impl"
    if parse:
        runs = "_parsed"
        src = f"def _parsed({', '.join(decl)}):\n{parse}    return _impl({', '.join(call)})\n"
        exec(compile(src, f"<fake_torch parser {module}.{qualname}>", "exec"), env)
    dispatch = f"_handle(_func, {runs}, *{slow}, _entry)"
    if operator:
        dispatch = f"_not_implemented_on_type_error(lambda: {dispatch})"
    env["_not_implemented_on_type_error"] = _not_implemented_on_type_error
    src = (f"def {name}({', '.join(decl)}):\n"
           f"    if _state.dispatch:\n"
           f"        return {dispatch}\n"
           f"{parse}"
           f"    return _impl({', '.join(call)})\n")
    exec(compile(src, f"<fake_torch entry {module}.{qualname}>", "exec"), env)
    entry: Function = env[name]
    env["_entry"] = entry
    env["_func"] = func if func is not None else entry
    entry.__qualname__ = qualname
    entry.__module__ = module
    entry._cpp_name = cpp_name  # type: ignore[attr-defined]
    entry.__doc__ = impl.__doc__
    entry.__wrapped__ = impl  # type: ignore[attr-defined]
    return entry


# the annotations of a parameter torch's schema types `ScalarType dtype` / `ScalarType? dtype`
_DTYPE_TYPES = frozenset({"dtype", "dtype | None"})


def _not_implemented_on_type_error(call: Callable[[], Any]) -> Any:
    try:
        return call()
    except TypeError:
        return NotImplemented


def show_as(entry: Function, func: Function) -> None:
    """Modes are shown `func` for calls of `entry` (a property's getter: its `__get__`,
    which exists only once the property does)."""
    entry.__globals__["_func"] = func


class _NoDefault:
    def __repr__(self) -> str:
        return "<no default>"


_NO = _NoDefault()


def _given(positional: tuple[Any, ...], defaults: tuple[Any, ...], var_pos: tuple[Any, ...],
           keywords: dict[str, tuple[Any, Any]], var_kw: dict[str, Any]
           ) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """(args, kwargs) as the caller gave them (see make_entry)."""
    n = len(positional)
    if not var_pos:
        while n and positional[n - 1] is defaults[n - 1]:
            n -= 1
    args = positional[:n] + tuple(var_pos)
    kwargs = {k: v for k, (v, d) in keywords.items() if v is not d}
    kwargs.update(var_kw)
    return args, kwargs
