"""torch.memory_format: `torch.contiguous_format`, `torch.preserve_format`,
`torch.channels_last` (NCHW sizes over NHWC memory), `torch.channels_last_3d` (NCDHW over
NDHWC), and the stride rules c10 gives each:

  strides_for(shape, fmt)       the dense strides a format lays a shape out with
  is_contiguous_as(...)         c10's is_contiguous(memory_format): strides exactly dense in the
                                format's dim order (size-1 dims skipped)
  suggest_memory_format(...)    c10's suggest_memory_format: channels_last when the strides
                                look like it (the format `to(memory_format=)` compares with)

preserve_format is no layout of its own: it keeps an input's (see fake_torch/_kernels/_strides.py
`dense_strides_like`). Only shapes and strides here; nothing imports Tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from fake_torch._sym import SymBool, SymInt, sym_max


class memory_format:
    """A torch memory format (compare with `is` or `==`); torch makes the four, none else."""

    __slots__ = ("_name",)
    _name: str

    def __new__(cls) -> memory_format:
        raise TypeError("cannot create 'torch.memory_format' instances")

    def __repr__(self) -> str:
        return f"torch.{self._name}"

    def __reduce__(self) -> str:
        return self._name


def _make(name: str) -> memory_format:
    fmt: memory_format = object.__new__(memory_format)
    fmt._name = name
    return fmt


contiguous_format = _make("contiguous_format")
preserve_format = _make("preserve_format")
channels_last = _make("channels_last")
channels_last_3d = _make("channels_last_3d")

# the channels-last formats: their rank, and their dims from innermost (stride 1) outwards
_CHANNELS_LAST = {channels_last: (4, (1, 3, 2, 0)), channels_last_3d: (5, (1, 4, 3, 2, 0))}
Shape = tuple[int, ...]


def memory_format_arg(value: Any, fn: str, *, optional: bool = True) -> memory_format:
    """A `memory_format=` argument as torch's argument parser reads it: None means
    preserve_format where the schema makes it optional (`clone`, `empty_like`, `to`), and is
    refused where it does not (`contiguous`, `is_contiguous`)."""
    if value is None and optional:
        return preserve_format
    if value.__class__ is not memory_format:
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(value).__name__}")
    return value


def contiguous_strides(shape: Sequence[int]) -> Shape:
    """Row-major strides; a size-0 dim counts as 1, as in torch (for a symbolic size,
    `Max(1, u0)`: torch's sym_max, no guard)."""
    strides = [0] * len(shape)
    acc = 1
    for i in range(len(shape) - 1, -1, -1):
        strides[i] = acc
        n = shape[i]
        acc *= sym_max(n, 1) if isinstance(n, SymInt) else max(n, 1)
    return tuple(strides)


def strides_for(shape: Sequence[int], fmt: memory_format) -> Shape:
    """The dense strides `fmt` lays `shape` out with (contiguous_format counts a size-0 dim
    as 1, as c10 does; the channels-last formats multiply the sizes as they are); c10's
    RuntimeError for a channels-last format of the wrong rank."""
    if fmt is contiguous_format:
        return contiguous_strides(shape)
    if fmt is preserve_format:
        raise RuntimeError("unsupported memory format Preserve")
    rank, order = _CHANNELS_LAST[fmt]
    if len(shape) != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {fmt._name} format")
    out = [0] * rank
    acc = 1
    for d in order:
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def is_contiguous(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """torch's rule: size-1 dims may have any stride; an empty tensor is contiguous."""
    for n in shape:  # (`0 in shape` would compare a SymInt: a guard)
        if isinstance(n, SymInt):
            return _is_contiguous_symbolic(shape, strides)
        if n == 0:
            return True
    expected = 1
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if size != 1 and stride != expected:
            return False
        expected *= size
    return True


def _is_contiguous_symbolic(shape: Sequence[Any], strides: Sequence[Any]) -> bool:
    """is_contiguous over SymInts as c10 computes it: what is not known without a value (an
    unbacked size) is taken the general way (not empty, not 1, strides checked)."""
    def known(cond: Any) -> bool:
        return cond.node.guard_or_false("", 0) if isinstance(cond, SymBool) else bool(cond)

    if any(known(n == 0) for n in shape):
        return True
    expected: Any = 1
    for size, stride in zip(reversed(shape), reversed(strides), strict=True):
        if known(size == 1):
            continue
        if not known(stride == expected):
            return False
        expected = expected * size
    return True


def is_contiguous_as(shape: Sequence[int], strides: Sequence[int], fmt: memory_format) -> bool:
    """c10's is_contiguous(memory_format): preserve_format asks contiguous_format's question
    (an empty tensor is contiguous); a channels-last format of another rank is never met."""
    if fmt is contiguous_format or fmt is preserve_format:
        return is_contiguous(shape, strides)
    rank, order = _CHANNELS_LAST[fmt]
    if len(shape) != rank:
        return False
    expected = 1
    for d in order:
        if shape[d] != 1:
            if strides[d] != expected:
                return False
            expected *= shape[d]
    return True


def suggest_memory_format(shape: Sequence[int], strides: Sequence[int]) -> memory_format:
    """c10's suggest_memory_format: the channels-last format whose dim order the strides
    follow (is_channels_last_strides_2d / _3d, which leave ambiguous layouts such as N111 to
    contiguous_format), else contiguous_format."""
    for fmt, (rank, order) in _CHANNELS_LAST.items():
        if len(shape) == rank and _strides_like(shape, strides, order):
            return fmt
    return contiguous_format


def _strides_like(shape: Sequence[int], strides: Sequence[int], order: tuple[int, ...]) -> bool:
    if strides[1] == 0:  # a broadcast C dim: NCHW by default
        return False
    least = 0
    for d in order:
        if shape[d] == 0 or strides[d] < least:
            return False
        if d == 0 and least == strides[1]:  # N111 (or a sliced N11W): ambiguous, so NCHW
            return False
        least = strides[d] * (shape[d] if shape[d] > 1 else 1)
    return True
