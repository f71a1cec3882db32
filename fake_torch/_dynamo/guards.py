"""Guards: what a compiled entry assumed about its inputs, checked before each later call.

A call's arguments are flattened into named leaves (`x`, `xs[0]`, `cfg['n']`). Guards check the
leaves' structure, every tensor's dtype, device, rank, sizes (a dynamic dim accepts any size
>= 2, as torch specialises 0 and 1), strides and requires_grad, Python numbers, strings and None
by value (a dynamic int or float accepts any value of its type), an instance of a user class
by its type and what the trace read (object_guards.py), other objects (functions, classes,
enum members) by identity, and the simple values (int/float/bool/str/None) of the globals and
closure cells the code reads. A tensor marked mark_static_address(t, guard=True): its identity.
First of all, as Dynamo's GLOBAL_STATE guard, the state the trace ran under: grad mode,
autocast (on, and its dtype, per device type; whether its cache is used) and the default dtype.

An nn.Module argument (a compiled module is its forward's `self`) is guarded as Dynamo guards
it, never by identity: its type and its submodules' types, the simple attributes its code reads
(`self.eps`, a Dropout's `self.training`), and the tensors the graph takes from it by their
properties, so nine instances of one module class share one graph. A failure says why in
torch's words ("tensor 'x' size mismatch at index 0. expected 4, actual 8").
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from types import CodeType
from typing import Any, Protocol

from fake_torch._dtype import dtype, get_default_dtype
from fake_torch._grad_mode import is_grad_enabled
from fake_torch._memory_format import contiguous_strides
from fake_torch._tensor import Tensor
from fake_torch._torch_device import device
from fake_torch.amp import _state as _autocast
from fake_torch.nn.modules.module import Module

_SIMPLE = (int, float, bool, str, type(None))
_SCALAR_NAME = {"float32": "Float", "float64": "Double", "float16": "Half",
                "bfloat16": "BFloat16", "int64": "Long", "int32": "Int", "int16": "Short",
                "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _scalar_name(dt: dtype) -> str:
    name = str(dt).removeprefix("torch.")
    return _SCALAR_NAME.get(name, name)


def _key_set(dev: device) -> str:
    backend = "CUDA" if dev.type == "cuda" else "CPU"
    return f"DispatchKeySet({backend}, BackendSelect, ADInplaceOrView, Autograd{backend})"


@dataclass
class Leaf:
    name: str
    value: Any


def flatten(names: list[str], args: tuple[Any, ...], kwargs: dict[str, Any]
            ) -> tuple[tuple[Any, ...], list[Leaf]]:
    """(structure, leaves) of a call: containers (list, tuple, dict) are walked, everything
    else is a leaf named after the parameter it came in."""
    leaves: list[Leaf] = []
    spec = []
    for i, value in enumerate(args):
        name = names[i] if i < len(names) else f"args[{i}]"
        spec.append(_walk(name, value, leaves))
    for key in kwargs:
        spec.append((key, _walk(key, kwargs[key], leaves)))
    return tuple(spec), leaves


def _walk(name: str, value: Any, leaves: list[Leaf]) -> Any:
    if type(value) in (list, tuple) or (isinstance(value, tuple) and hasattr(value, "_fields")):
        return (type(value), tuple(_walk(f"{name}[{i}]", v, leaves)
                                   for i, v in enumerate(value)))
    if type(value) is dict:
        return (dict, tuple((k, _walk(f"{name}[{k!r}]", v, leaves)) for k, v in value.items()))
    leaves.append(Leaf(name, value))
    return None


def parameter_names(fn: Callable[..., Any]) -> list[str]:
    """The positional parameter names of fn (for leaf names)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]


@dataclass
class TensorGuard:
    """What a compiled entry assumed about one tensor; `dynamic` dims accept any size >= 2."""

    name: str
    dtype: dtype
    device: device
    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    requires_grad: bool
    dynamic: frozenset[int] = frozenset()
    obj_id: int | None = None  # mark_static_address(t, guard=True): this very tensor
    # guard_filter_fn may drop the TENSOR_MATCH part (all but the dynamic dims' bounds) and
    # the SHAPE_ENV part (a dynamic dim's `2 <= size`) separately
    match: bool = True
    shape_env: bool = True

    @classmethod
    def of(cls, name: str, t: Tensor, dynamic: frozenset[int] = frozenset()) -> TensorGuard:
        guarded = getattr(t, "_dynamo_static_input_type", None) == "guarded"
        return cls(name, t.dtype, t.device, tuple(t.shape), tuple(t.stride()),
                   t.requires_grad, dynamic, id(t) if guarded else None)

    def check(self, t: Any) -> str | None:
        if not self.match:
            return self._check_dynamic_bounds(t) if self.shape_env else None
        if not isinstance(t, Tensor):
            return f"___check_type_id({self.name}, {id(Tensor)})"
        if self.obj_id is not None and id(t) != self.obj_id:
            return f"___check_obj_id({self.name}, {self.obj_id})"
        if t.dtype is not self.dtype:
            return (f"tensor '{self.name}' dtype mismatch. expected "
                    f"{_scalar_name(self.dtype)}, actual {_scalar_name(t.dtype)}")
        if t.device != self.device:
            return (f"tensor '{self.name}' dispatch key set mismatch. expected "
                    f"{_key_set(self.device)}, actual {_key_set(t.device)}")
        if t.requires_grad != self.requires_grad:
            return (f"tensor '{self.name}' requires_grad mismatch. expected "
                    f"requires_grad={int(self.requires_grad)}")
        shape = t.shape
        if len(shape) != len(self.sizes):
            return (f"tensor '{self.name}' rank mismatch. expected {len(self.sizes)}, actual "
                    f"{len(shape)}")
        for i, (expected, actual) in enumerate(zip(self.sizes, shape, strict=True)):
            if i in self.dynamic:
                if actual < 2 and self.shape_env:
                    return f"2 <= {self.name}.size()[{i}]"
            elif expected != actual:
                return (f"tensor '{self.name}' size mismatch at index {i}. expected {expected}, "
                        f"actual {actual}")
        return self._check_strides(t)

    def _check_dynamic_bounds(self, t: Any) -> str | None:
        """The shape environment's part alone: each dynamic dim's `2 <= size`."""
        shape = getattr(t, "shape", ())
        for i in sorted(self.dynamic):
            if i < len(shape) and shape[i] < 2:
                return f"2 <= {self.name}.size()[{i}]"
        return None

    def _check_strides(self, t: Tensor) -> str | None:
        strides = t.stride()
        if not self.dynamic:
            for i, (expected, actual) in enumerate(zip(self.strides, strides, strict=True)):
                if expected != actual and self.sizes[i] > 1:
                    return (f"tensor '{self.name}' stride mismatch at index {i}. expected "
                            f"{expected}, actual {actual}")
            return None
        expected_strides = contiguous_strides(tuple(t.shape)) if self._was_contiguous() else None
        if expected_strides is not None:
            for i, (expected, actual) in enumerate(zip(expected_strides, strides, strict=True)):
                if expected != actual and t.shape[i] > 1:
                    return (f"tensor '{self.name}' stride mismatch at index {i}. expected "
                            f"{expected}, actual {actual}")
        return None

    def _was_contiguous(self) -> bool:
        return all(e == s or n <= 1 for e, s, n in zip(contiguous_strides(self.sizes),
                                                     self.strides, self.sizes, strict=True))

    def dynamic_values(self, t: Tensor) -> tuple[int | None, ...]:
        shape = getattr(t, "shape", ())  # (with dropped guards: any value, any rank)
        return tuple(shape[i] if i < len(shape) else None for i in sorted(self.dynamic))


@dataclass
class ValueGuard:
    """A Python value the code baked in: equal (or, when dynamic, of the same type)."""

    name: str
    value: Any
    dynamic: bool = False

    def check(self, v: Any) -> str | None:
        if self.dynamic:
            if type(v) is not type(self.value):
                return f"___check_type_id({self.name}, {id(type(self.value))})"
            return None
        if type(v) is not type(self.value) or v != self.value:
            return f"{self.name} == {self.value!r}"
        return None


@dataclass
class IdGuard:
    """Any other object: the very same one."""

    name: str
    obj: Any

    def check(self, v: Any) -> str | None:
        return None if v is self.obj else f"___check_obj_id({self.name}, {id(self.obj)})"


@dataclass
class ModuleGuard:
    """An nn.Module leaf: its type, its submodules' types, the simple attributes its code
    reads, and the tensors the graph takes from it (by their properties)."""

    name: str
    cls: type
    modules: list[tuple[str, type]]  # qualified submodule name -> its type
    attrs: list[tuple[str, ValueGuard]]  # qualified attribute -> its value
    tensors: list[tuple[str, TensorGuard]]  # qualified tensor name -> its properties
    check_type: bool = True  # False: guard_filter_fn dropped the module's TYPE_MATCH

    def check(self, v: Any) -> str | None:
        if self.check_type and type(v) is not self.cls:
            return f"___check_type_id({self.name}, {id(self.cls)})"
        for qualname, cls in self.modules:
            if type(resolve_attr(v, qualname)) is not cls:
                return f"___check_type_id({self.name}.{qualname}, {id(cls)})"
        for qualname, value_guard in self.attrs:
            failure = value_guard.check(resolve_attr(v, qualname))
            if failure is not None:
                return failure
        for qualname, tensor_guard in self.tensors:
            failure = tensor_guard.check(resolve_attr(v, qualname))
            if failure is not None:
                return failure
        return None


LeafGuard = TensorGuard | ValueGuard | IdGuard | ModuleGuard


class Guard(Protocol):
    """What a frame checks per argument leaf (these, and object_guards.ObjectGuard)."""

    name: str

    def check(self, v: Any) -> str | None: ...


def is_constant(v: Any) -> bool:
    """A value guarded by equality (a number, string, None, dtype, device)."""
    return isinstance(v, _SIMPLE) or isinstance(v, (dtype, device))


def leaf_guard(leaf: Leaf, dims: frozenset[int], dynamic_scalar: bool) -> LeafGuard:
    """The guard of a tensor, simple value or other object (a module's: `module_guard`)."""
    v = leaf.value
    if isinstance(v, Tensor):
        return TensorGuard.of(leaf.name, v, dims)
    if is_constant(v):
        scalar = isinstance(v, (int, float)) and not isinstance(v, bool)
        return ValueGuard(leaf.name, v, dynamic_scalar and scalar)
    return IdGuard(leaf.name, v)


def module_guard(leaf: Leaf, code: CodeType | None, tensors: list[str]) -> ModuleGuard:
    """The guard of a module leaf: `code` is the compiled function's (it reads the leaf's
    attributes too); `tensors`, the qualified names of the tensors the graph took from it."""
    root: Module = leaf.value
    modules: list[tuple[str, type]] = []
    attrs: list[tuple[str, ValueGuard]] = []
    for qualname, module in root.named_modules():
        if qualname:
            modules.append((qualname, type(module)))
        names = read_names(getattr(type(module).forward, "__code__", None))
        if not qualname:
            names |= read_names(code)
        dot = f"{qualname}." if qualname else ""
        for name in sorted(names & vars(module).keys()):
            value = vars(module)[name]
            if isinstance(value, _SIMPLE) or isinstance(value, (dtype, device)):
                attrs.append((dot + name, ValueGuard(f"{leaf.name}.{dot}{name}", value)))
    return ModuleGuard(leaf.name, type(root), modules, attrs,
                       [(q, TensorGuard.of(f"{leaf.name}.{q}", resolve_attr(root, q)))
                        for q in tensors])


def read_names(code: CodeType | None) -> set[str]:
    """The attribute and global names a code object (and the functions nested in it) reads."""
    if code is None:
        return set()
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= read_names(const)
    return names


@dataclass(frozen=True)
class GlobalState:
    """The global state a graph was traced under (torch's GlobalStateGuard, the part of it
    fake_torch has)."""

    grad_mode: bool
    autocast: tuple[tuple[str, bool, dtype], ...]  # (device type, on, dtype), torch's order
    autocast_cache: bool
    default_dtype: dtype

    @classmethod
    def now(cls) -> GlobalState:
        on = _autocast.enabled_types()
        return cls(is_grad_enabled(),
                   tuple((t, t in on, _autocast.get_autocast_dtype(t))
                         for t in _autocast.DEFAULT_DTYPES),
                   _autocast.is_autocast_cache_enabled(), get_default_dtype())

    def check(self) -> str | None:
        """None when the state is unchanged, else the failure in torch's words."""
        now = GlobalState.now()
        if now == self:
            return None
        changed = ["grad_mode"] if now.grad_mode != self.grad_mode else []
        for (kind, on, dt), (_, was_on, was_dt) in zip(now.autocast, self.autocast,
                                                       strict=True):
            if on != was_on:
                changed.append(f"autocast({kind})_enabled")
            elif on and dt is not was_dt:
                changed.append(f"autocast({kind})_dtype")
        if now.autocast_cache != self.autocast_cache:
            changed.append("autocast_cache_enabled")
        if now.default_dtype is not self.default_dtype:
            changed.append("default_dtype")
        if not changed:  # only the dtype of a device type autocast is off for: no change
            return None
        return "GLOBAL_STATE changed: " + "".join(f"{c} " for c in changed)


@dataclass
class FrameGuards:
    """Everything one compiled entry checks before it runs."""

    spec: tuple[Any, ...]
    leaves: list[Guard]
    globals_: list[tuple[Callable[[], Any], ValueGuard]] = field(default_factory=list)
    state: GlobalState | None = field(default_factory=GlobalState.now)  # None: not checked
    # a symbolic entry's shape guards (symbols read from the leaves' sizes)
    shapes: Callable[[list[Leaf]], str | None] | None = None

    def check(self, spec: tuple[Any, ...], leaves: list[Leaf]) -> str | None:
        failure = self.state.check() if self.state is not None else None
        if failure is not None:
            return failure
        if spec != self.spec:
            return "___check_args_structure(L)"  # a different number or nesting of arguments
        for guard, leaf in zip(self.leaves, leaves, strict=True):
            failure = guard.check(leaf.value)
            if failure is not None:
                return failure
        for read, value_guard in self.globals_:
            failure = value_guard.check(read())
            if failure is not None:
                return failure
        return self.shapes(leaves) if self.shapes is not None else None

    def checks_shape_env(self) -> bool:
        """Whether the dynamic dims' bounds (`2 <= size`) are checked: not once a guard
        filter dropped SHAPE_ENV; then a dynamic dim takes any size, 0 and 1 too."""
        return all(g.shape_env for g in self.leaves if isinstance(g, TensorGuard))

    def dynamic_key(self, leaves: list[Leaf]) -> tuple[Any, ...]:
        """The values of the dynamic dims and numbers: one graph specialisation per key."""
        key: list[Any] = []
        for guard, leaf in zip(self.leaves, leaves, strict=True):
            if isinstance(guard, TensorGuard) and guard.dynamic:
                key.extend(guard.dynamic_values(leaf.value))
            elif isinstance(guard, ValueGuard) and guard.dynamic:
                key.append(leaf.value)
        return tuple(key)


def resolve_attr(root: Any, qualname: str) -> Any:
    obj = root
    for atom in qualname.split("."):
        obj = getattr(obj, atom, None)
    return obj


def global_guards(code: CodeType | None, globals_: dict[str, Any],
                  closure: tuple[Any, ...] | None) -> list[tuple[Callable[[], Any], ValueGuard]]:
    """Value guards on the simple globals and closure cells `code` reads."""
    if code is None:
        return []
    out: list[tuple[Callable[[], Any], ValueGuard]] = []
    for name in code.co_names:
        if name in globals_ and isinstance(globals_[name], _SIMPLE):
            out.append(((lambda n=name: globals_.get(n)),  # type: ignore[misc]
                        ValueGuard(f"G[{name!r}]", globals_[name])))
    for name, cell in zip(code.co_freevars, closure or (), strict=False):
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if isinstance(value, _SIMPLE):
            out.append(((lambda c=cell: c.cell_contents),  # type: ignore[misc]
                        ValueGuard(name, value)))
    return out


def module_tensors(root: Module) -> dict[int, tuple[str, str]]:
    """id -> (qualified name, placeholder path) of every tensor of `root`: parameters,
    buffers and plain tensor attributes (a KV cache kept as an attribute), first name wins.
    The path names the placeholder as Dynamo does: `modules_lin_parameters_weight`."""
    found: dict[int, tuple[str, str]] = {}
    for prefix, module in root.named_modules(remove_duplicate=False):
        dot = f"{prefix}." if prefix else ""
        path = "".join(f"modules_{part}_" for part in prefix.split(".")) if prefix else ""
        for kind, store in (("parameters_", module._parameters), ("buffers_", module._buffers),
                            ("", vars(module))):
            for name, value in store.items():
                if isinstance(value, Tensor) and id(value) not in found:
                    found[id(value)] = (dot + name, f"{path}{kind}{name}")
    return found


__all__ = ["FrameGuards", "Guard", "Leaf", "ModuleGuard", "TensorGuard", "ValueGuard", "flatten",
           "module_guard", "module_tensors"]
