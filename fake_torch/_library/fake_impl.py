"""torch._library.fake_impl: the context a fake implementation asks for with
`torch.library.get_ctx()`, for an output whose size depends on data.

    @torch.library.register_fake("mylib::custom_nonzero")
    def _(x):
        nnz = torch.library.get_ctx().new_dynamic_size()   # an unbacked SymInt, u0
        return x.new_empty(nnz, x.dim(), dtype=torch.int64)

Whoever runs a fake implementation sets the getter around the call (`set_ctx_getter`):
torch.compile's tracer, with its ShapeEnv; outside one, `get_ctx()` gives None, as torch's
default getter does.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator
from typing import Any

from fake_torch._subclasses.fake_tensor import DynamicOutputShapeException
from fake_torch._sym import SymInt


def get_none() -> None:
    return None


global_ctx_getter: Callable[[], Any] = get_none


@contextlib.contextmanager
def set_ctx_getter(ctx_getter: Callable[[], Any]) -> Iterator[None]:
    """`get_ctx()` calls `ctx_getter` inside the block."""
    global global_ctx_getter
    prev = global_ctx_getter
    try:
        global_ctx_getter = ctx_getter
        yield
    finally:
        global_ctx_getter = prev


class FakeImplCtx:
    """What `torch.library.get_ctx()` returns inside a fake implementation: it makes the
    symbols for data-dependent output sizes in the fake mode's ShapeEnv."""

    def __init__(self, _fake_mode: Any, _op: Any) -> None:
        self._fake_mode = _fake_mode
        self._shape_env = getattr(_fake_mode, "shape_env", None)
        self._op = _op

    def create_unbacked_symint(self, *, min: int = 2, max: int | None = None) -> SymInt:
        """Deprecated alias of new_dynamic_size (with torch's FutureWarning and min=2)."""
        warnings.warn("`create_unbacked_symint` is deprecated, please use `new_dynamic_size` "
                      "instead", FutureWarning, stacklevel=2)
        return self.new_dynamic_size(min=min, max=max)

    def new_dynamic_size(self, *, min: int = 0, max: int | None = None) -> SymInt:
        """A new unbacked SymInt (`u0`) standing for a data-dependent size in [min, max]."""
        if self._shape_env is None or not self._shape_env.allow_dynamic_output_shape_ops:
            raise DynamicOutputShapeException(self._op)
        if isinstance(min, SymInt) or isinstance(max, SymInt):
            raise ValueError(f"ctx.new_dynamic_size(min={min}, max={max}): expected min and max "
                             "to be statically known ints but got SymInt. This is not "
                             "supported.")
        if min < 0:
            raise ValueError(f"ctx.new_dynamic_size(min={min}, ...): expected min to be greater "
                             "than or equal to 0: this API can only create non-negative sizes.")
        return allocate_size(self._shape_env, min, max)


def allocate_size(shape_env: Any, min_val: int = 0, max_val: int | None = None) -> SymInt:
    """An unbacked size of `shape_env` in [min_val, max_val]."""
    from fake_torch.fx.experimental.symbolic_shapes import _constrain_range_for_size

    result: SymInt = shape_env.create_unbacked_symint()
    _constrain_range_for_size(result, min=min_val, max=max_val)
    return result


__all__ = ["FakeImplCtx", "allocate_size", "get_none", "global_ctx_getter", "set_ctx_getter"]
