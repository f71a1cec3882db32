"""torch._higher_order_ops.triton_kernel_wrap: the higher-order operators through which a
user-written Triton kernel appears in a graph: `triton_kernel_wrapper_mutation` (the kernel
writes its tensor arguments) and `triton_kernel_wrapper_functional` (its functional form, which
writes clones and returns them).

fake_torch compiles no Triton, so no graph of its holds them: they exist for graph passes that
test a node's target against them (vLLM treats the functional one as writing nothing), and a
call raises."""

from __future__ import annotations

from typing import Any

from fake_torch._ops import HigherOrderOperator

__all__ = ["TritonKernelWrapperFunctional", "TritonKernelWrapperMutation",
           "triton_kernel_wrapper_functional", "triton_kernel_wrapper_mutation"]


def _refuse(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"torch._higher_order_ops.triton_kernel_wrap.{name} is not emulated by fake_torch: "
        "running a Triton kernel needs Triton and a GPU")


class TritonKernelWrapperMutation(HigherOrderOperator):
    """The operator that runs a user Triton kernel in place (one instance)."""

    def __init__(self) -> None:
        super().__init__("triton_kernel_wrapper_mutation", cacheable=True)

    def __call__(self, kernel_idx: int, constant_args_idx: int, grid: list[Any],
                 tma_descriptor_metadata: dict[str, Any], kwargs: dict[str, Any]) -> Any:
        raise _refuse("triton_kernel_wrapper_mutation")


class TritonKernelWrapperFunctional(HigherOrderOperator):
    """The functional form: the kernel writes clones of `tensors_to_clone` (one instance)."""

    def __init__(self) -> None:
        super().__init__("triton_kernel_wrapper_functional", cacheable=True)

    def __call__(self, kernel_idx: int, constant_args_idx: int, grid: list[Any],
                 tma_descriptor_metadata: dict[str, Any], kwargs: dict[str, Any],
                 tensors_to_clone: list[str]) -> dict[str, Any]:
        raise _refuse("triton_kernel_wrapper_functional")


triton_kernel_wrapper_mutation = TritonKernelWrapperMutation()
triton_kernel_wrapper_functional = TritonKernelWrapperFunctional()
