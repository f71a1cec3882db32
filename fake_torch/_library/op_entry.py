"""The registry of operators defined with torch.library.Library: per operator, its schema, a
kernel per dispatch key, its fake impl, its autograd formula.

A call binds its arguments against the schema (the dispatcher's RuntimeErrors), then picks the
kernel torch's dispatcher would: from the tensors' device the backend key ("CUDA" for any cuda
tensor, else "CPU"), a kernel registered for it, else CompositeExplicitAutograd, else
CompositeImplicitAutograd (the key an empty dispatch_key means). The chosen kernel runs eagerly
and launches exactly what its body launches.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from fake_torch._library.schema import FunctionSchema
from fake_torch._tensor import Tensor

# dispatch keys Library.impl accepts; only the ones `_kernel_for` names ever run here (no other
# backend exists in fake_torch)
DISPATCH_KEYS = frozenset({
    "CPU", "CUDA", "Meta", "XPU", "HIP", "MPS", "MTIA", "HPU", "XLA", "Lazy", "PrivateUse1",
    "SparseCPU", "SparseCUDA", "QuantizedCPU", "QuantizedCUDA", "BackendSelect", "Python",
    "Functionalize", "ADInplaceOrView", "CompositeExplicitAutograd",
    "CompositeExplicitAutogradNonFunctional", "CompositeImplicitAutograd", "Autograd",
    "AutogradCPU", "AutogradCUDA", "AutogradXPU", "AutogradMeta", "AutogradPrivateUse1",
    "AutogradOther", "Autocast", "AutocastCPU", "AutocastCUDA", "AutocastXPU",
    "FuncTorchBatched", "FuncTorchDynamicLayerFrontMode", "FuncTorchDynamicLayerBackMode",
    "PreDispatch", "PythonDispatcher", "Conjugate", "Negative", "ZeroTensor"})
_COMPOSITE = ("CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional",
              "CompositeImplicitAutograd")


class OperatorEntry:
    """One operator overload, "ns::name[.overload]". It may collect kernels before it is
    defined, as torch's registrations can come in any order."""

    def __init__(self, qualname: str) -> None:
        self.qualname = qualname
        self.schema: FunctionSchema | None = None
        self.tags: tuple[Any, ...] = ()
        self.kernels: dict[str, tuple[Callable[..., Any], bool]] = {}  # key -> (fn, keyset)
        self.fake: Callable[..., Any] | None = None
        self.autograd: tuple[Callable[..., Any], Callable[..., Any] | None] | None = None
        self._init_fn = self._make_init_fn()

    def _make_init_fn(self) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            return self.run(*args, **kwargs)
        return call

    # --- what torch.compile's backends read (as for a CustomOpDef) ---------------------------

    @property
    def _mutated_args(self) -> tuple[str, ...]:
        return () if self.schema is None else self.schema.mutated_names()

    @property
    def _abstract_fn(self) -> Callable[..., Any] | None:
        """The fake impl; else a Meta kernel, which FakeTensor would run instead."""
        if self.fake is not None:
            return self.fake
        meta = self.kernels.get("Meta")
        return None if meta is None else meta[0]

    def _run_fake(self, *args: Any, **kwargs: Any) -> Any:
        fn = self._abstract_fn
        if fn is None:
            raise RuntimeError(
                f"There was no fake impl registered for {self.qualname}. This is necessary for "
                "torch.compile/export/fx tracing to work. Please use "
                "`torch.library.register_fake` to add an fake impl.")
        return fn(*args, **kwargs)

    def set_schema(self, schema: FunctionSchema | None) -> None:
        self.schema = schema
        if schema is not None:
            self._init_fn.__signature__ = schema.signature()  # type: ignore[attr-defined]

    # --- a call -------------------------------------------------------------------------------

    def run(self, *args: Any, **kwargs: Any) -> Any:
        """Bind against the schema, pick the kernel, run it."""
        schema = self.schema
        assert schema is not None, "only a defined operator is reachable through torch.ops"
        self._bind(schema, args, kwargs)
        if self._abstract_fn is not None and _in_fake_mode():  # as FakeTensorMode dispatches it
            from fake_torch._library.fake_impl import FakeImplCtx, set_ctx_getter
            from fake_torch._subclasses.fake_tensor import active_fake_mode

            with set_ctx_getter(lambda: FakeImplCtx(active_fake_mode(), self.qualname)):
                return self._run_fake(*args, **kwargs)
        tensors = _tensors((*args, *kwargs.values()))
        if not tensors:
            key = next((k for k in _COMPOSITE if k in self.kernels), None)
            if key is None:
                raise NotImplementedError(
                    "There were no tensor arguments to this function (e.g., you passed an "
                    "empty list of Tensors), but no fallback function is registered for schema "
                    f"{self.qualname}.  This usually means that this function requires a "
                    "non-empty list of Tensors, or that you (the operator writer) forgot to "
                    "register a fallback function.")
        else:
            backend = "CUDA" if any(t.device.type == "cuda" for t in tensors) else "CPU"
            key = self._kernel_for(backend)
        fn, with_keyset = self.kernels[key]
        if with_keyset:
            raise NotImplementedError(
                f"torch.library.Library.impl(with_keyset=True) for {self.qualname}: fake_torch "
                "has no DispatchKeySet to pass the kernel")
        result = fn(*args, **kwargs)
        if schema.returns == "()" and result is not None:
            raise RuntimeError(f"Expected PythonKernelHolder for {self.qualname} to return "
                               "None but it returned something else instead.")
        return result

    def _kernel_for(self, backend: str) -> str:
        for autograd in ("Autograd", f"Autograd{backend}"):
            if autograd in self.kernels:  # torch runs it before the backend, grad or not
                raise NotImplementedError(
                    f"{self.qualname}: its {autograd} kernel would run first, and autograd is "
                    "not emulated by fake_torch")
        for key in (backend, *_COMPOSITE):
            if key in self.kernels:
                return key
        raise NotImplementedError(
            f"Could not run '{self.qualname}' with arguments from the '{backend}' backend. "
            "This could be because the operator doesn't exist for this backend, or was omitted "
            "during the selective/custom build process (if using custom build). "
            f"'{self.qualname}' has kernels for: {sorted(self.kernels)}.")

    def _bind(self, schema: FunctionSchema, args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> None:
        """The dispatcher's argument checks (not its type checks), with its texts."""
        positional = [a for a in schema.arguments if not a.kwarg_only]
        if len(args) > len(positional):
            raise RuntimeError(
                f"{self.qualname}() takes {len(positional)} positional argument(s) but "
                f"{len(args)} was/were given.  Declaration: {self.declaration()}")
        names = {a.name for a in schema.arguments}
        for name in kwargs:
            if name not in names:
                raise RuntimeError(f"Unknown keyword argument '{name}' for operator "
                                   f"'{self.qualname}'. Schema: {self.declaration()}")
        given = {a.name for a in positional[:len(args)]} | set(kwargs)
        for a in schema.arguments:
            if a.name not in given and a.default is inspect.Parameter.empty:
                raise RuntimeError(f"{self.qualname}() is missing value for argument "
                                   f"'{a.name}'. Declaration: {self.declaration()}")

    def declaration(self) -> str:
        """"ns::name(args) -> returns", as torch prints a schema."""
        schema = self.schema
        assert schema is not None
        return f"{self.qualname}{schema.text[schema.text.index('('):]}"


def _tensors(values: tuple[Any, ...]) -> list[Tensor]:
    out: list[Tensor] = []
    for v in values:
        if isinstance(v, Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            out.extend(_tensors(tuple(v)))
    return out


# "ns::name" or "ns::name.overload" -> its entry
_entries: dict[str, OperatorEntry] = {}


def find(qualname: str) -> OperatorEntry:
    """The entry of "ns::name[.overload]" (".default" is the same as none), made on first use."""
    qualname = qualname.removesuffix(".default")
    entry = _entries.get(qualname)
    if entry is None:
        entry = _entries[qualname] = OperatorEntry(qualname)
    return entry


def defined(qualname: str) -> OperatorEntry | None:
    """The entry of a defined operator, else None."""
    entry = _entries.get(qualname.removesuffix(".default"))
    return entry if entry is not None and entry.schema is not None else None


def _in_fake_mode() -> bool:
    """Whether a FakeTensorMode is active here (ops then run their fake impl, as in torch;
    one without a fake impl or Meta kernel runs its kernel on the mode's zero-filled tensors,
    torch's fallback)."""
    from fake_torch._subclasses.fake_tensor import active_fake_mode

    return active_fake_mode() is not None
