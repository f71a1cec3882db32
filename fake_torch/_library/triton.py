"""torch.library.triton_op and wrap_triton: a custom operator whose body launches Triton
kernels (`wrap_triton(kernel)[grid](*args)`).

`triton_op` registers the operator as torch does (a custom op over the body, the body also
its fake impl), so decorating works at import. There is no Triton here to compile or launch a
kernel: `wrap_triton(...)` raises NotImplementedError, so calling such an operator, eagerly or
while tracing its fake impl, fails naming what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from fake_torch.library import CustomOpDef


# torch.library's custom_op and infer_schema: fake_torch/library.py, which imports this module
# for triton_op, registers them here when imported (so the two do not import each other)
library_api: tuple[Callable[..., Any] | None, Callable[..., str] | None] = (None, None)


def triton_op(name: str, fn: Callable[..., Any] | None = None, /, *,
              mutates_args: str | Iterable[str], schema: str | None = None) -> Callable[..., Any]:
    """Register `fn` (its kernels wrapped with `wrap_triton`) as the operator `name`
    ("namespace::name"); usable as a decorator. As in torch, the schema is inferred from fn's
    annotations (`schema` is accepted and not used) and fn is also the fake impl."""
    custom_op, infer_schema = library_api
    assert custom_op is not None and infer_schema is not None, "fake_torch/library.py sets them"

    def dec(fn: Callable[..., object]) -> CustomOpDef:
        result: CustomOpDef = custom_op(name, fn, mutates_args=mutates_args,
                                        schema=infer_schema(fn, mutates_args=mutates_args))
        result.register_fake(fn)
        return result

    if fn is None:
        return dec
    return dec(fn)


def wrap_triton(triton_kernel: Callable[..., Any], /) -> Any:
    """torch's handle for launching a triton.jit kernel from a triton_op body: refused (no
    Triton to compile or run it)."""
    name = getattr(triton_kernel, "__name__", type(triton_kernel).__name__)
    raise NotImplementedError(
        f"torch.library.wrap_triton is not emulated by fake_torch (kernel {name}): it has no "
        "Triton to compile or launch kernels with")
