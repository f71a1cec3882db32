"""torch._dynamo._trace_wrapped_higher_order_op: `TransformGetItemToIndex`, a function mode
that turns `tensor[tensor_index]` into `aten.index` calls while tracing flex-attention score
functions (not emulated)."""

from __future__ import annotations

from typing import Any

from fake_torch.overrides import TorchFunctionMode


class TransformGetItemToIndex(TorchFunctionMode):
    """Inside it, `Tensor.__getitem__` with tensor indices becomes `torch.ops.aten.index`."""

    def __torch_function__(self, func: Any, types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        raise NotImplementedError(
            "torch._dynamo._trace_wrapped_higher_order_op.TransformGetItemToIndex is not "
            "emulated by fake_torch")


__all__ = ["TransformGetItemToIndex"]
