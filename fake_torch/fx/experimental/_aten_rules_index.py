"""make_fx's rules for indexing: `x[...]` as torch's applySlicing does it (slice, select,
unsqueeze), then index for tensors; `x[...] = v` as those views then copy_ / fill_ /
index_put_. See _aten_rules for what a rule is."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from fake_torch import _dtype, _factories
from fake_torch._sym import SymInt
from fake_torch._tensor import Tensor
from fake_torch.fx.experimental._aten_rules import rule

if TYPE_CHECKING:
    from fake_torch.fx.experimental.proxy_tensor import _Tracer


def _basic_index(tr: _Tracer, x: Tensor, index: Any) -> tuple[Tensor, list[Any]]:
    """Slices, ints, None and Ellipsis as views; the tensors left for advanced indexing, by
    the dim they index (None elsewhere)."""
    items = list(index) if isinstance(index, tuple) else [index]
    dim = 0
    advanced: list[Any] = []
    for i, item in enumerate(items):
        if item is Ellipsis:  # the dims the items after it do not index
            later = sum(1 for it in items[i + 1:] if it is not None and it is not Ellipsis)
            skip = max(x.dim() - dim - later, 0)
            dim += skip
            advanced.extend([None] * skip)
        elif item is None:
            x = tr.call("unsqueeze", "default", x, dim)
            dim += 1
            advanced.append(None)
        elif isinstance(item, int) and not isinstance(item, bool):
            x = tr.call("select", "int", x, dim, item)
        elif isinstance(item, slice):
            size = x.shape[dim]
            start, stop, step = item.start, item.stop, item.step
            # torch skips a slice that keeps every element; not on a symbolic size (one a
            # guard has specialised to a number is static again), and a SymInt bound is not
            # compared with the size (that would guard on it)
            full = start in (None, 0) and step in (None, 1) and not _symbolic_size(tr, x, dim) \
                and (stop is None or (not isinstance(stop, SymInt) and stop >= size))
            if not full:
                x = tr.call("slice", "Tensor", x, dim, 0 if start is None else start,
                            2 ** 63 - 1 if stop is None else stop,
                            *(() if step in (None, 1) else (step,)))
            dim += 1
            advanced.append(None)
        elif isinstance(item, Tensor):
            dim += 1
            advanced.append(item)
        else:
            raise NotImplementedError(f"make_fx: indexing with {type(item).__name__} is not "
                                      "emulated by fake_torch")
    return x, advanced


def _symbolic_size(tr: _Tracer, x: Tensor, dim: int) -> bool:
    if tr.symbolic is None:
        return False
    size = tr.sizes(x)[dim]
    return isinstance(size, SymInt) and not tr.symbolic.env.replace(size.node.expr).is_number


@rule("__getitem__")
def _getitem(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, index = args
    if isinstance(index, Tensor) and index.dtype == _dtype.bool_:
        return tr.call("index", "Tensor", x, [index])
    x, advanced = _basic_index(tr, x, index)
    if any(a is not None for a in advanced):
        while advanced and advanced[-1] is None:
            advanced.pop()
        return tr.call("index", "Tensor", x, advanced)
    if x is args[0]:  # x[...] / x[:]: torch still makes a new view
        return tr.call("alias", "default", x)
    return x


@rule("__setitem__")
def _setitem(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    x, index, value = args
    if not isinstance(value, Tensor):  # torch wraps a number as a constant tensor first
        value = tr.call("lift_fresh_copy", "default", _factories.tensor(value))
    target, advanced = _basic_index(tr, x, index)
    if any(a is not None for a in advanced):
        while advanced and advanced[-1] is None:
            advanced.pop()
        tr.call("index_put_", "default", target, advanced, value)
    elif value.dim() == 0:  # a 0-dim value (a number's too) fills
        tr.call("fill_", "Tensor", target, value)
    else:
        _guard_broadcast(tr, value, target)
        tr.call("copy_", "default", target, value)
    return None


def _guard_broadcast(tr: _Tracer, src: Tensor, dst: Tensor) -> None:
    """copy_'s check that src broadcasts to dst, with symbolic sizes: the guard torch records
    for each aligned pair of sizes (`s0 == 2` specialises s0 where dst's size is static)."""
    if tr.symbolic is None:
        return
    for a, b in zip(reversed(tr.sizes(src)), reversed(tr.sizes(dst)), strict=False):
        if (isinstance(a, SymInt) or isinstance(b, SymInt)) and not (isinstance(a, int)
                                                                    and a == 1):
            bool(a == b)
