"""torch.nn.functional.one_hot: int64 class indices to one-hot rows, as ATen's composite does it
(aten/src/ATen/native/Onehot.cpp): a zeros tensor with one more dim, then `scatter_` of 1s.

Launches, by device (the class count `num_classes=-1` asks for is read on the host):
  cuda   [max, _local_scalar_dense] when num_classes is -1; zeros; scatter_. Out-of-range
         classes are left to scatter_'s own index check (a device assert on a GPU).
  cpu    aminmax and one read of each end, checking the classes' range; zeros; scatter_.
  meta   torch's functional form, eq against an arange, cast to int64 (no value is read: a
         class count of -1 refuses, as item() does on meta).
Traced by torch.compile, a call without a class count is torch's graph break gb0246. fake_torch
sees a call as its door normalises it (an argument equal to its default dropped, keywords made
positional), so `one_hot(x, -1)`, `one_hot(x, num_classes=-1)` and `one_hot(input=x)` all read
as `one_hot(x)`: the same break, where torch's context text (and, for `num_classes=-1` by
keyword, its break: at the host read) differs.
"""

from __future__ import annotations

from typing import Any

from fake_torch import _meta
from fake_torch._dtype import int64
from fake_torch._factories import arange, zeros
from fake_torch._kernels._common import new_tensor
from fake_torch._kernels._reduce_util import cast
from fake_torch._kernels.compare import eq
from fake_torch._kernels.host import scalar
from fake_torch._kernels.index_ops import scatter_
from fake_torch._kernels.reduction import aminmax, max
from fake_torch._kernels.shape import unsqueeze
from fake_torch._memory_format import contiguous_strides
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, Break, op
from fake_torch._tensor import Tensor

_TRACKED_TENSOR = "LazyVariableTracker(realized: TensorVariable())"  # how Dynamo prints one


def _one_hot_break(args: tuple[Any, ...], kwargs: dict[str, Any]) -> Break | None:
    """Dynamo's rule: one argument in all, or two positional with -1 classes, breaks."""
    if len(args) + len(kwargs) == 1 or (len(args) == 2 and _is_minus_one(args[1])):
        def shown(v: Any) -> str:
            return _TRACKED_TENSOR if isinstance(v, Tensor) else \
                f"ConstantVariable({type(v).__name__}: {v!r})"
        items = [shown(a) for a in args]
        positional = f"({', '.join(items)}{',' if len(items) == 1 else ''})"
        named = "{" + ", ".join(f"{k!r}: {shown(v)}" for k, v in kwargs.items()) + "}"
        return ("one_hot", f"args={positional}, kwargs={named}")
    return None


def _is_minus_one(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value == -1


@op(COMPOSITE, namespace="torch.nn.functional", graph_break=_one_hot_break)
def one_hot(input: Tensor, num_classes: int = -1) -> Tensor:
    """input's int64 class indices as rows of 0s with a 1 at each class: shape
    (*input.shape, num_classes), int64; num_classes=-1 means input.max() + 1."""
    if not isinstance(input, Tensor):
        raise TypeError(f"one_hot(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int):
        raise TypeError(f"one_hot(): argument 'num_classes' (position 2) must be int, not "
                        f"{type(num_classes).__name__}")
    if input.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    shape = list(input.shape)
    if input.device.type == "meta":  # torch's functional form: no value can be read
        if num_classes == -1:
            raise RuntimeError(_meta.ITEM)
        if num_classes <= 0:
            raise RuntimeError("Class values must be smaller than num_classes.")
        classes = arange(num_classes, dtype=int64, device=input.device)
        return cast(eq(unsqueeze(input, -1), classes), int64)
    if input.numel() == 0:
        if num_classes <= 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        return new_tensor([*shape, num_classes], int64, input.device)  # empty: no launch
    if input.is_cuda:  # no range check: scatter_'s index check stands for the device assert
        if num_classes == -1:
            num_classes = scalar(max(input), "one_hot") + 1
        elif num_classes < 1:
            raise RuntimeError("num_classes should be positive")
    else:
        low, high = aminmax(input)
        if scalar(low, "one_hot") < 0:
            raise RuntimeError("Class values must be non-negative.")
        top = scalar(high, "one_hot")
        if num_classes == -1:
            num_classes = top + 1
        elif num_classes <= top:
            raise RuntimeError("Class values must be smaller than num_classes.")
    result = zeros(*shape, num_classes, dtype=int64, device=input.device)
    return scatter_(result, -1, unsqueeze(input, -1), 1)


@register_meta("torch.nn.functional.one_hot")
def _one_hot_rule(input: Tensor, num_classes: int = -1) -> TensorMeta:
    """A fresh int64 tensor (*input.shape, num_classes); num_classes=-1 reads the values (no
    rule). Whether the class values fit is checked on the values, when the kernel runs."""
    if not isinstance(input, Tensor):
        raise TypeError(f"one_hot(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int):
        raise TypeError(f"one_hot(): argument 'num_classes' (position 2) must be int, not "
                        f"{type(num_classes).__name__}")
    if input.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        raise NotImplementedError("torch.nn.functional.one_hot with num_classes=-1: the class "
                                  "count is the values' maximum + 1, no output rule")
    if num_classes <= 0:
        raise RuntimeError("Class values must be smaller than num_classes.")
    shape = (*input.shape, num_classes)
    return TensorMeta(shape, int64, contiguous_strides(shape))
