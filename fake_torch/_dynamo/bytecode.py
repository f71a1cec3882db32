"""The code a compiled frame hands to bytecode hooks (torch._dynamo.convert_frame.
register_bytecode_hook), and what that code calls.

torch's Dynamo writes new bytecode for each frame it compiles: it has the original code's
signature, name, file and free variables, loads the graph's inputs from the frame's locals,
calls `__compiled_fn_<n>_<uuid>` (a global it puts in the function's module) and rebuilds the
return value. The eval-frame cache checks the guards and then runs that code; nothing in the
code checks them. vLLM installs it as `forward.__code__` and calls forward directly, so its
calls run the graph with no guard and no Dynamo.

fake_torch's Dynamo traces by running the Python and writes no bytecode, so it makes code of
the same contract: the original signature (positional-only, positional, *args, keyword-only,
**kwargs), co_name, co_qualname, co_filename, co_firstlineno and free variables (a function's
__code__ takes only code with as many free variables, and `super()` needs `__class__`), whose
body passes its arguments to `__compiled_fn_<n>_<uuid>` in the function's globals: a
`CompiledFn`, which runs the frame's compiled entry on them (convert_frame.CompiledFrame.
run_entry) with no guard check, as torch's code runs its graph.
"""

from __future__ import annotations

import inspect
import itertools
import uuid
from collections.abc import Callable
from types import CodeType, FunctionType
from typing import TYPE_CHECKING, Any

from fake_torch._dynamo.state import is_tracing

if TYPE_CHECKING:
    from fake_torch._dynamo.convert_frame import CompiledFrame, DirectEntry

_CO_VARARGS = inspect.CO_VARARGS
_CO_VARKEYWORDS = inspect.CO_VARKEYWORDS
_UNSUPPORTED = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_numbers = itertools.count(1)


def compiled_fn_name() -> str:
    """`__compiled_fn_<n>_<uuid>`, as torch names the compiled graphs new code calls."""
    return f"__compiled_fn_{next(_numbers)}_{str(uuid.uuid4()).replace('-', '_')}"


def _signature(code: CodeType) -> tuple[str, str]:
    """(the parameter list, the call passing every parameter on) of `code`."""
    names = code.co_varnames
    n_pos, n_kw = code.co_argcount, code.co_kwonlyargcount
    positional, keyword = list(names[:n_pos]), list(names[n_pos:n_pos + n_kw])
    at = n_pos + n_kw
    star = names[at] if code.co_flags & _CO_VARARGS else None
    at += 1 if star else 0
    star_star = names[at] if code.co_flags & _CO_VARKEYWORDS else None
    params = list(positional)
    if code.co_posonlyargcount:
        params.insert(code.co_posonlyargcount, "/")
    if star:
        params.append(f"*{star}")
    elif keyword:
        params.append("*")
    params += keyword
    if star_star:
        params.append(f"**{star_star}")
    passed = list(positional) + ([f"*{star}"] if star else []) + [f"{k}={k}" for k in keyword]
    if star_star:
        passed.append(f"**{star_star}")
    return ", ".join(params), ", ".join(passed)


def transformed_code(code: CodeType, fn_name: str) -> CodeType | None:
    """Code with `code`'s signature, names and free variables whose body returns
    `fn_name(<its arguments>)`; None for a generator or coroutine (torch skips those)."""
    if code.co_flags & _UNSUPPORTED:
        return None
    params, passed = _signature(code)
    free = code.co_freevars
    lines = ["def __make():"]
    if free:
        lines.append(f"    {' = '.join(free)} = None")
    lines.append(f"    def __transformed({params}):")  # named as the original below
    if free:  # read (never run): they stay free variables, as the original's
        lines.append(f"        if 0: ({', '.join(free)},)")
    lines.append(f"        return {fn_name}({passed})")
    lines.append("    return __transformed")
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), code.co_filename, "exec"), namespace)
    made: CodeType = namespace["__make"]().__code__
    if made.co_freevars != free:  # another order: name them as the original does
        made = made.replace(co_freevars=free)
    return made.replace(co_name=code.co_name, co_qualname=code.co_qualname,
                        co_firstlineno=code.co_firstlineno)


def parameter_defaults(fn: FunctionType) -> dict[str, Any]:
    """name -> default of `fn`'s parameters that have one."""
    code = fn.__code__
    defaults = fn.__defaults__ or ()
    positional = code.co_varnames[:code.co_argcount]
    out = dict(zip(positional[len(positional) - len(defaults):], defaults, strict=True))
    out.update(fn.__kwdefaults__ or {})
    return out


def as_called(code: CodeType, defaults: dict[str, Any], form: tuple[int, tuple[str, ...]],
              args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> tuple[tuple[Any, ...], dict[str, Any]] | None:
    """The new code's call (every positional parameter and *args positionally, keyword-only
    and **kwargs by name) in the form the compiled entry was traced with (`form`: how many
    positional arguments, which keywords), or None when it cannot be: an argument the trace
    did not pass is not its default, or one it passed is missing."""
    n_args, keywords = form
    positional = code.co_varnames[:code.co_argcount]
    values = dict(zip(positional, args, strict=False))
    values.update(kwargs)
    if n_args > len(positional):  # the trace passed *args too
        if len(args) != n_args:
            return None
    elif len(args) > len(positional):  # *args now, none then
        return None
    call_args = args[:n_args]
    if any(k not in values for k in keywords):
        return None
    passed = set(positional[:n_args]) | set(keywords)
    for name, value in values.items():
        if name not in passed and (name not in defaults or defaults[name] is not value):
            return None
    return call_args, {k: values[k] for k in keywords}


class CompiledFn:
    """`__compiled_fn_<n>_<uuid>`: what the new code calls. Outside tracing it runs the
    frame's compiled entry on the call (or, for a frame whose Python re-runs around graph
    breaks, the frame itself); inside a trace (fake_torch re-tracing a new size, or a compiled
    caller inlining this function) it runs the original code, as Dynamo traces the original
    bytecode, never the transformed one."""

    def __init__(self, name: str, frame: CompiledFrame, entry: DirectEntry | None,
                 original: Callable[..., Any], defaults: dict[str, Any],
                 form: tuple[int, tuple[str, ...]]) -> None:
        self.__name__ = self.__qualname__ = name
        self.frame = frame
        self.entry = entry
        self.original = original  # the function with its original code
        self.defaults = defaults
        self.form = form

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if is_tracing():
            return self.original(*args, **kwargs)
        return self.frame.run_entry(self, args, kwargs)


def original_function(fn: FunctionType, code: CodeType) -> FunctionType:
    """`fn` with `code` (its code before anyone replaced it): same globals, defaults, closure."""
    copy = FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    copy.__qualname__ = fn.__qualname__
    return copy


__all__ = ["CompiledFn", "as_called", "compiled_fn_name", "original_function",
           "parameter_defaults", "transformed_code"]
