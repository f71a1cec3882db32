"""torch._subclasses.fake_tensor: tensors with metadata and no values.

`with FakeTensorMode():` makes every tensor created inside fake: shape, stride, dtype and device
as torch would give them, ops on them propagating that metadata, no kernel run and no launch
counted. It is a kernel-door mode, the one Dynamo's tracer uses (TraceMode): outputs are
allocated (zeroed host memory, never device memory), kernels are skipped. Reading a value
(`.item()`, `bool(t)`, printing) raises DataDependentOutputException, as torch's does.

Differences from torch: a fake tensor made under the mode is a plain `Tensor` whose storage its
mode allocated (`isinstance(t, FakeTensor)` asks the modes; `type(t)` stays Tensor) and its
sizes are concrete ints: ops under the mode compute no symbols, even with a `shape_env`. Only
the example values of a symbolic trace (`FakeTensor.symbolic`, what torch.compile hands a
backend) carry SymInt sizes; real tensors may be mixed in (torch refuses them unless
allow_non_fake_inputs=True); memory is allocated host-side, so a huge fake tensor costs RAM.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

from fake_torch._simulated import _dispatch
from fake_torch._tensor import Size, Tensor, base_array
from fake_torch._torch_function import _disabled_torch_function_impl

_modes: weakref.WeakSet[FakeTensorMode] = weakref.WeakSet()  # every live mode, for isinstance


class DataDependentOutputException(RuntimeError):
    """A fake tensor's value was needed (`.item()`, control flow on a tensor)."""


class UnsupportedFakeTensorException(RuntimeError):
    """An op that fake tensors cannot run."""


class FakeTensorMode(_dispatch.Mode):
    """Inside `with FakeTensorMode():` tensors are fake: metadata, no values, no launches."""

    name = "fake"
    counts_launches = False

    def __init__(self, *, allow_fallback_kernels: bool = True,
                 allow_non_fake_inputs: bool = False, shape_env: Any = None,
                 static_shapes: bool | None = None, export: bool = False) -> None:
        self.allow_fallback_kernels = allow_fallback_kernels
        self.allow_non_fake_inputs = allow_non_fake_inputs
        # a compile's ShapeEnv (what its symbolic example values' sizes are expressed in); ops
        # run inside the mode itself still compute concrete sizes
        self.shape_env = shape_env
        self.static_shapes = (shape_env is None) if static_shapes is None else static_shapes
        self.export = export
        self._roots: dict[int, weakref.ref[np.ndarray]] = {}  # id(root array) -> the array
        _modes.add(self)

    # --- the kernel door ------------------------------------------------------------------

    def allocate(self, shape: tuple[int, ...], np_dtype: np.dtype[Any],
                 on_cuda: bool) -> tuple[np.ndarray, None]:
        a = np.zeros(shape, np_dtype)  # zeros: nothing reads it, but deterministic if it did
        self._roots[id(a)] = weakref.ref(a)
        return a, None

    def run(self, op: str, kernel: _dispatch.Kernel, outs: tuple[np.ndarray, ...],
            inputs: tuple[Any, ...], params: dict[str, Any], kind: str, on_cuda: bool) -> None:
        return None  # fake: no kernel runs, no launch is counted

    def host_sync(self, what: str) -> None:
        if what in ("to", "copy_"):  # a device<->host copy is an op on metadata like any other
            return
        raise DataDependentOutputException(
            "aten._local_scalar_dense.default" if what in ("item", "repr") else what)

    # --- the mode -------------------------------------------------------------------------

    def __enter__(self) -> FakeTensorMode:
        _dispatch.enter_mode(self)
        return self

    def __exit__(self, *exc: object) -> None:
        _dispatch.exit_mode(self)

    def owns(self, t: Tensor) -> bool:
        """Whether `t` is a fake tensor of this mode (its storage was allocated here)."""
        root = base_array(t._a)
        ref = self._roots.get(id(root))
        return ref is not None and ref() is root

    def from_tensor(self, tensor: Tensor, *, static_shapes: bool | None = None,
                    source: Any = None, symbolic_context: Any = None,
                    trace: bool = True) -> Tensor:
        """A fake tensor with `tensor`'s size, stride, dtype, device and requires_grad."""
        if self.owns(tensor):
            return tensor
        from fake_torch._kernels._strides import empty_strided

        with _dispatch.push_mode(self):
            out = empty_strided(tuple(tensor.size()), tuple(tensor.stride()), tensor.dtype,
                                tensor.device)
        out.requires_grad_(tensor.requires_grad)
        return out


class _FakeTensorMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, Tensor) and (type.__instancecheck__(cls, obj)
                                            or mode_of(obj) is not None)


class FakeTensor(Tensor, metaclass=_FakeTensorMeta):
    """The class torch gives fake tensors. fake_torch's fake tensors are Tensors made under a
    FakeTensorMode: `isinstance(t, FakeTensor)` is True for them; make one with
    `FakeTensorMode().from_tensor(t)`. A traced graph's example values with symbolic sizes
    (`node.meta["example_value"]` of size `(s77, 4)`) are instances of this class: their
    `shape`, `size()`, `stride()`, `numel()` and `storage_offset()` give SymInts, while the
    memory under them is laid out at the sizes' hints (zeros, never read)."""

    # ops on one give plain tensors
    __torch_function__ = _disabled_torch_function_impl  # type: ignore[assignment]
    _sym_shape: tuple[Any, ...] | None = None
    _sym_stride: tuple[Any, ...] = ()
    _sym_offset: Any = 0
    fake_mode: FakeTensorMode | None = None

    def __new__(cls, *args: Any, **kwargs: Any) -> FakeTensor:
        raise NotImplementedError(
            "torch._subclasses.fake_tensor.FakeTensor(...) is not emulated by fake_torch: make "
            "fake tensors under FakeTensorMode, or with FakeTensorMode().from_tensor(t)")

    @classmethod
    def symbolic(cls, like: Tensor, shape: tuple[Any, ...], stride: tuple[Any, ...],
                 offset: Any, mode: FakeTensorMode | None) -> FakeTensor:
        """A fake tensor over `like`'s memory (laid out at the hints) whose metadata is
        `shape`, `stride` and `offset`: ints and SymInts."""
        t: FakeTensor = object.__new__(cls)
        t._set(like._a, like._device, like._storage, like._dtype)
        t.requires_grad = like.requires_grad
        t._sym_shape, t._sym_stride, t._sym_offset = tuple(shape), tuple(stride), offset
        t.fake_mode = mode
        return t

    @property
    def shape(self) -> Size:
        return Size(self._sym_shape) if self._sym_shape is not None else super().shape

    def size(self, dim: int | None = None) -> Any:
        if self._sym_shape is None:
            return super().size(dim)
        return Size(self._sym_shape) if dim is None else \
            self._sym_shape[dim + len(self._sym_shape) if dim < 0 else dim]

    def stride(self, dim: int | None = None) -> Any:
        if self._sym_shape is None:
            return super().stride(dim)
        return self._sym_stride if dim is None else \
            self._sym_stride[dim + len(self._sym_stride) if dim < 0 else dim]

    def numel(self) -> Any:
        if self._sym_shape is None:
            return super().numel()
        n: Any = 1
        for size in self._sym_shape:
            n = n * size
        return n

    def storage_offset(self) -> Any:
        return self._sym_offset if self._sym_shape is not None else super().storage_offset()

    def __repr__(self) -> str:
        sizes = ", ".join(str(s) for s in self.shape)
        comma = "," if len(self.shape) == 1 else ""
        return f"FakeTensor(..., size=({sizes}{comma}))"


def mode_of(t: Tensor) -> FakeTensorMode | None:
    """The FakeTensorMode that made `t`, or None for a real tensor."""
    return next((m for m in list(_modes) if m.owns(t)), None)


@contextmanager
def unset_fake_temporarily() -> Iterator[FakeTensorMode | None]:
    """Leave the innermost FakeTensorMode of this thread for the block: tensors made inside
    are real. Yields that mode, or None when none was active."""
    mode = active_fake_mode()
    if mode is None:
        yield None
        return
    with _dispatch.suspended(mode):
        yield mode


def active_fake_mode() -> FakeTensorMode | None:
    """The innermost FakeTensorMode entered on this thread, if any."""
    return next((m for m in reversed(_dispatch.modes()) if isinstance(m, FakeTensorMode)), None)


__all__ = ["DataDependentOutputException", "FakeTensor", "FakeTensorMode",
           "UnsupportedFakeTensorException", "unset_fake_temporarily"]
