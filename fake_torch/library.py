"""torch.library: turn a Python function into an operator, `torch.ops.<namespace>.<name>`.

    @torch.library.custom_op("mylib::attention", mutates_args=())
    def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor: ...

    @attention.register_fake
    def _(q, k, v): return torch.empty_like(q)

Eager, the operator launches exactly what its body launches. Traced by torch.compile it is ONE
graph node whose target is the operator (`torch.ops.mylib.attention.default`), so a backend can
split the graph at it, which is how vLLM registers attention. Tracing needs the fake impl: it
gives the output's shape without running the body.

`Library` is the lower level vLLM uses (`direct_register_custom_op`): `define` a schema,
`impl` a kernel per dispatch key, `_register_fake`; see fake_torch/_library/.
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
import warnings
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from fake_torch import _ops
from fake_torch._dtype import dtype as DType
from fake_torch._library import op_entry, opaque_object
from fake_torch._library import triton as _triton
from fake_torch._library.library_handle import Library, entry_of
from fake_torch._library.triton import triton_op, wrap_triton
from fake_torch._missing_names import missing_attribute
from fake_torch._ops import OpOverload, OpOverloadPacket
from fake_torch._tensor import Tensor
from fake_torch._torch_device import device as Device

__all__ = ["CustomOpDef", "Library", "custom_op", "impl_abstract", "infer_schema",
           "register_autograd", "register_fake", "triton_op", "wrap_triton"]


class CustomOpDef:
    """What `custom_op` returns: call it like the function it wraps; it runs the operator
    `torch.ops.<namespace>.<name>`."""

    def __init__(self, namespace: str, name: str, schema: str, fn: Callable[..., Any],
                 mutated_args: tuple[str, ...], device_types: tuple[str, ...] | None) -> None:
        self._namespace = namespace
        self._name = name
        self._schema = schema
        self._init_fn = fn
        self._mutated_args = mutated_args
        self._device_types = device_types
        self._abstract_fn: Callable[..., Any] | None = None
        self._backward_fn: Callable[..., Any] | None = None
        self._setup_context_fn: Callable[..., Any] | None = None
        packet = _ops.register(namespace, name, schema, self._run)
        self._opoverload: OpOverload = packet.default
        _defs[packet.default] = self
        _defs[packet] = self
        self.__name__ = name
        self.__doc__ = fn.__doc__

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._opoverload(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._namespace}::{self._name})>"

    def register_fake(self, fn: Callable[..., Any], /) -> Callable[..., Any]:
        """Give the operator a fake impl: outputs of the right shape, dtype and device (use
        torch.empty_like and friends), computed without running the body."""
        self._abstract_fn = fn
        return fn

    def register_autograd(self, backward: Callable[..., Any], /, *,
                          setup_context: Callable[..., Any] | None = None) -> None:
        """Store the operator's backward formula. fake_torch emulates no autograd: it is kept,
        never called."""
        self._backward_fn, self._setup_context_fn = backward, setup_context

    def __getattr__(self, name: str) -> Any:
        if name in _NOT_EMULATED_METHODS:
            raise NotImplementedError(f"torch.library.CustomOpDef.{name} is not emulated by "
                                      "fake_torch")
        raise AttributeError(f"'CustomOpDef' object has no attribute '{name}'")

    # --- what a call runs -----------------------------------------------------------------------

    def _run(self, *args: Any, **kwargs: Any) -> Any:
        """Eager: the body, after torch's device check; outputs must not alias inputs."""
        tensors = [a for a in _flat(args, kwargs) if isinstance(a, Tensor)]
        if self._device_types is not None:
            for t in tensors:
                if t.device.type not in self._device_types:
                    raise NotImplementedError(
                        f"Could not run '{self._namespace}::{self._name}' with arguments from "
                        f"the '{t.device.type.upper()}' backend. This could be because the "
                        "operator doesn't exist for this backend (custom_op was given "
                        f"device_types={list(self._device_types)}).")
        result = self._init_fn(*args, **kwargs)
        _check_no_aliasing(self._name, tensors, result)
        return result

    def _run_fake(self, *args: Any, **kwargs: Any) -> Any:
        if self._abstract_fn is None:
            raise RuntimeError(
                f"There was no fake impl registered for {self!r}. This is necessary for "
                "torch.compile/export/fx tracing to work. Please use "
                f"`{self._init_fn.__name__}.register_fake` to add an fake impl.")
        return self._abstract_fn(*args, **kwargs)


_defs: dict[OpOverload | OpOverloadPacket, CustomOpDef] = {}
_NOT_EMULATED_METHODS = frozenset({"register_kernel", "register_autocast",
                                   "register_torch_dispatch", "register_vmap",
                                   "register_effect", "set_kernel_enabled"})
_NOT_EMULATED = frozenset({"define", "impl", "register_kernel",
                           "register_torch_dispatch", "register_vmap",
                           "register_autocast", "opcheck", "triton_op", "wrap_triton",
                           "get_ctx", "fallthrough_kernel"})


def __getattr__(name: str) -> Any:
    if name in _NOT_EMULATED:
        raise NotImplementedError(f"torch.library.{name} is not emulated by fake_torch: "
                                  "register operators with torch.library.custom_op or "
                                  "torch.library.Library")
    return missing_attribute(sys.modules[__name__], name)


def _flat(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            out.extend(a)
        else:
            out.append(a)
    return out


def _check_no_aliasing(name: str, inputs: list[Tensor], result: Any) -> None:
    outputs = [r for r in (result if isinstance(result, (list, tuple)) else (result,))
               if isinstance(r, Tensor)]
    for i, out in enumerate(outputs):
        others = inputs + outputs[:i]
        if any(np.may_share_memory(out._a, o._a) for o in others):
            raise RuntimeError(
                f"{name} (with implementation in {sys.modules[__name__]}): The output of this "
                "custom operator (1) must not also be an input to this custom operator and (2) "
                "may not alias any inputs to this custom operator or other returns. The most "
                "common way to trigger this error is if we have y = custom_op(x) and y and x "
                "are the same Tensor. Please instead return a clone of the offending output "
                "tensor(s) (e.g. return x.clone()) or refactor the custom operator to not "
                "return y.")


# --- the public functions -------------------------------------------------------------------


@typing.overload
def custom_op(name: str, fn: None = None, /, *, mutates_args: str | Iterable[str],
              device_types: str | Sequence[str] | None = None, schema: str | None = None,
              tags: Any = None) -> Callable[[Callable[..., object]], CustomOpDef]: ...


@typing.overload
def custom_op(name: str, fn: Callable[..., object], /, *, mutates_args: str | Iterable[str],
              device_types: str | Sequence[str] | None = None, schema: str | None = None,
              tags: Any = None) -> CustomOpDef: ...


def custom_op(name: str, fn: Callable[..., Any] | None = None, /, *,
              mutates_args: str | Iterable[str], device_types: str | Sequence[str] | None = None,
              schema: str | None = None, tags: Any = None
              ) -> CustomOpDef | Callable[[Callable[..., object]], CustomOpDef]:
    """Wrap `fn` as the operator `name` ("namespace::name"); usable as a decorator. List in
    `mutates_args` every argument the body writes to (or "unknown")."""

    def inner(fn: Callable[..., Any]) -> CustomOpDef:
        namespace, opname = name.split("::")  # torch's own unpacking, and its ValueError
        op_schema = schema if schema is not None else infer_schema(fn, mutates_args=mutates_args)
        devices = (device_types,) if isinstance(device_types, str) else device_types
        return CustomOpDef(namespace, opname, op_schema, fn, _mutated_names(op_schema),
                           None if devices is None else tuple(devices))

    if fn is None:
        return inner
    return inner(fn)


def register_fake(op: str | OpOverload | OpOverloadPacket | CustomOpDef,
                  func: Callable[..., Any] | None = None, /, *, lib: Any = None,
                  _stacklevel: int = 1, allow_override: bool = True) -> Any:
    """Register the fake impl of an operator (by "namespace::name", its torch.ops object or
    its CustomOpDef); usable as a decorator."""
    custom = _resolve(op, "register_fake")

    def inner(func: Callable[..., Any]) -> Callable[..., Any]:
        if isinstance(custom, CustomOpDef):
            return custom.register_fake(func)
        if lib is not None:
            lib._register_fake(custom.qualname.split("::")[1], func,
                               allow_override=allow_override)
        else:
            custom.fake = func
        return func

    if func is None:
        return inner
    return inner(func)


def impl_abstract(qualname: str | OpOverload | OpOverloadPacket | CustomOpDef,
                  func: Callable[..., Any] | None = None, *, lib: Any = None,
                  _stacklevel: int = 1) -> Any:
    """The old name of register_fake (torch warns with a FutureWarning, as here)."""
    warnings.warn(
        "`torch.library.impl_abstract` was renamed to `torch.library.register_fake`. Please "
        "use that instead; we will remove `torch.library.impl_abstract` in a future version "
        "of PyTorch.", FutureWarning, stacklevel=2)
    return register_fake(qualname, func, lib=lib, _stacklevel=_stacklevel)


def register_autograd(op: str | OpOverload | CustomOpDef, backward: Callable[..., Any], /, *,
                      setup_context: Callable[..., Any] | None = None, lib: Any = None) -> None:
    """Register the operator's backward formula. fake_torch emulates no autograd: the formula
    is stored (with setup_context), never called."""
    custom = _resolve(op, "register_autograd")
    if isinstance(custom, CustomOpDef):
        custom.register_autograd(backward, setup_context=setup_context)
    else:
        custom.autograd = (backward, setup_context)


def _resolve(op: object, api: str) -> CustomOpDef | op_entry.OperatorEntry:
    """The CustomOpDef or Library-defined entry behind "ns::name" or a torch.ops object."""
    if isinstance(op, str):
        entry = op_entry.defined(op)
        if entry is not None:
            return entry
        packet = _ops.lookup(op)
        if packet is None:
            raise RuntimeError(f"operator {op} does not exist")
        op = packet
    found = custom_op_def(op)
    if found is None:
        raise NotImplementedError(f"torch.library.{api}({op}): only operators made by "
                                  "torch.library.custom_op or torch.library.Library are "
                                  "emulated by fake_torch")
    return found


def custom_op_def(op: object) -> CustomOpDef | op_entry.OperatorEntry | None:
    """fake_torch only: the CustomOpDef, or the torch.library.Library-defined operator, behind
    a torch.ops packet or overload (else None)."""
    if isinstance(op, CustomOpDef):
        return op
    if isinstance(op, (OpOverload, OpOverloadPacket)):
        return _defs.get(op) or entry_of(op)
    return None


def run_fake(op: OpOverload | OpOverloadPacket, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> Any:
    """fake_torch only: what tracing uses for a custom op's output: its fake impl, or torch's
    RuntimeError when none was registered."""
    custom = custom_op_def(op)
    assert custom is not None, f"{op} is not a custom operator"
    return custom._run_fake(*args, **kwargs)


def mutated_arg_names(op: OpOverload | OpOverloadPacket) -> tuple[str, ...]:
    """fake_torch only: the arguments a custom op declared in `mutates_args` (or its schema
    marks `Tensor(a!)`)."""
    custom = custom_op_def(op)
    assert custom is not None, f"{op} is not a custom operator"
    return custom._mutated_args


# --- schema inference (torch.library.infer_schema) ------------------------------------------


def infer_schema(prototype_function: Callable[..., Any], /, *,
                 mutates_args: str | Iterable[str], op_name: str | None = None,
                 tags: Any = ()) -> str:
    """The operator schema of a type-annotated function: "(Tensor x, float y) -> Tensor"."""
    sig = inspect.signature(prototype_function)

    def error(what: str) -> ValueError:
        return ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    try:
        hints = typing.get_type_hints(prototype_function)
    except Exception as e:  # an annotation that does not evaluate
        raise error(f"Could not evaluate the annotations ({e}).") from e
    names = set(sig.parameters)
    if mutates_args != "unknown":
        if isinstance(mutates_args, str):
            raise ValueError("mutates_args must be a set of argument names or the string "
                             "'unknown'")
        missing = set(mutates_args) - names
        if missing:
            raise error(f"{missing} in mutates_args were not found in the custom op's "
                        "signature. mutates_args should contain the names of all args that "
                        "the custom op mutates, or just the string 'unknown' if you don't know.")
    params: list[str] = []
    seen_kwonly = False
    for idx, p in enumerate(sig.parameters.values()):
        if p.annotation is inspect.Parameter.empty:
            raise error(f"Parameter {p.name} must have a type annotation.")
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            raise error("We do not support positional-only args, varargs, or varkwargs.")
        type_str = _arg_type(hints.get(p.name, p.annotation))
        if type_str is None:
            raise error(f"Parameter {p.name} has unsupported type {p.annotation}.")
        if mutates_args != "unknown" and p.name in set(mutates_args) \
                and not type_str.startswith("Tensor"):
            raise error(f"Parameter {p.name} is in mutable_args but only Tensors or "
                        "collections of Tensors can be mutated")
        mutated = mutates_args == "unknown" or p.name in set(mutates_args)
        if mutated and type_str.startswith("Tensor"):  # the alias set is the position
            type_str = type_str.replace("Tensor", f"Tensor(a{idx}!)", 1)
        if p.kind is inspect.Parameter.KEYWORD_ONLY and not seen_kwonly:
            params.append("*")
            seen_kwonly = True
        default = "" if p.default is inspect.Parameter.empty else f"={_default(p.default)}"
        params.append(f"{type_str} {p.name}{default}")
    ret = _return_type(hints.get("return", sig.return_annotation))
    if ret is None:
        raise error(f"Return has unsupported type {sig.return_annotation}.")
    return f"{op_name or ''}({', '.join(params)}) -> {ret}"


_SCALARS: dict[Any, str] = {int: "SymInt", float: "float", bool: "bool", str: "str",
                            DType: "ScalarType", Device: "Device", Tensor: "Tensor"}


def _arg_type(ann: Any) -> str | None:
    if ann in _SCALARS:
        return _SCALARS[ann]
    if isinstance(ann, type) and opaque_object.is_opaque_type(ann):
        return opaque_object.get_opaque_type_name(ann)
    args = typing.get_args(ann)
    origin = typing.get_origin(ann)
    if origin in (typing.Union, types.UnionType):
        if set(args) == {int, float, bool}:
            return "Scalar"
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            inner = _arg_type(rest[0])
            return None if inner is None else f"{inner}?"
        return None
    if origin in (list, Sequence, typing.Sequence) and len(args) == 1:
        inner = _arg_type(args[0])
        return None if inner is None else f"{inner}[]"
    return None


def _return_type(ann: Any) -> str | None:
    if ann is None or ann is type(None):
        return "()"
    if typing.get_origin(ann) is tuple:
        parts = [_arg_type(a) for a in typing.get_args(ann)]
        if any(p is None for p in parts):
            return None
        return f"({', '.join(typing.cast(list[str], parts))})"
    return _arg_type(ann)


def _default(value: Any) -> str:
    if isinstance(value, (str, Device)):
        return f'"{value}"'
    if isinstance(value, DType):
        return str(value).removeprefix("torch.")
    return repr(value)


def _mutated_names(schema: str) -> tuple[str, ...]:
    """The argument names a schema marks as written to, e.g. "Tensor(a0!) x"."""
    args = schema[schema.index("(") + 1:schema.rindex(") ->")]
    return tuple(part.split()[-1].split("=")[0] for part in args.split(",")
                 if "!)" in part)


_triton.library_api = (custom_op, infer_schema)  # torch.library.triton_op
