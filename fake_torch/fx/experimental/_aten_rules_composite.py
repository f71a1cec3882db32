"""make_fx's rules for torch functions whose CompositeImplicit kernels are made of other aten
ops (outer, isfinite, meshgrid, tensor_split, take_along_dim, diag) and for tensors made from
data (torch.tensor / new_tensor / as_tensor). See _aten_rules for what a rule is."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from fake_torch import _dtype
from fake_torch._memory_format import preserve_format
from fake_torch._tensor import Tensor
from fake_torch._torch_device import device as device_cls
from fake_torch.fx.experimental._aten_rules import reshape_to, rule

if TYPE_CHECKING:
    from fake_torch.fx.experimental.proxy_tensor import _Tracer


@rule("tensor", "new_tensor", "as_tensor")
def _tensor(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A tensor made from Python data: a constant of the graph, copied (lift_fresh_copy; its
    copy detached too when functionalized). Made from a tensor: the tensor detached and copied
    (`_to_copy`) to the dtype and device asked for (new_tensor: x's); as_tensor copies only
    where the dtype or device changes (functionalized, it detaches what it hands back)."""
    made_from_x = tr.current == "new_tensor"
    data = (args[1] if len(args) > 1 else kwargs.get("data")) if made_from_x else \
        (args[0] if args else kwargs.get("data"))
    if isinstance(data, Tensor):
        like: Tensor = args[0] if made_from_x else data
        dtype, device = kwargs.get("dtype") or like.dtype, kwargs.get("device") or like.device
        if tr.current == "as_tensor":
            result = tr.run_public(args, kwargs)
            if result is data:  # functionalized, torch hands back a detached alias
                return data if tr.functional is None else tr.call("detach", "default", data)
            return tr.call("_to_copy", "default", data, dtype=dtype, device=result.device)
        return tr.call("_to_copy", "default", tr.call("detach", "default", data),
                       dtype=dtype, device=device_cls(device))
    lifted = tr.call("lift_fresh_copy", "default", tr.run_public(args, kwargs))
    if tr.functional is not None:
        return tr.call("detach", "default", lifted)
    return lifted


@rule("outer", "ger")
def _outer(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """a (n,) outer b (m,): a viewed (n, 1) times b."""
    a, b = [*args, *kwargs.values()][:2]
    return tr.call("mul", "Tensor", reshape_to(tr, a, [tr.sizes(a)[0], 1]), b)


@rule("isfinite")
def _isfinite(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Floating: (x == x) * (x.abs() != inf); integers and bools: all true."""
    x: Tensor = args[0] if args else kwargs["input"]
    if not (x.dtype.is_floating_point or x.is_complex()):
        return tr.call("ones_like", "default", x, dtype=_dtype.bool_,
                       memory_format=preserve_format)
    finite = tr.call("ne", "Scalar", tr.call("abs", "default", x), float("inf"))
    return tr.call("mul", "Tensor", tr.call("eq", "Tensor", x, x), finite)


@rule("meshgrid")
def _meshgrid(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Each 1-d tensor viewed along its own dim and expanded to the grid ('xy': the first two
    swapped for the grid, and back in the result)."""
    tensors = list(args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args)
    xy = kwargs.get("indexing", "ij") == "xy" and len(tensors) >= 2
    if xy:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    grid = [tr.sizes(t)[0] if t.dim() else 1 for t in tensors]
    out = []
    for i, t in enumerate(tensors):
        shape = [1] * len(tensors)
        shape[i] = -1
        out.append(tr.call("expand", "default", tr.call("view", "default", t, shape), grid))
    if xy:
        out[0], out[1] = out[1], out[0]
    return tuple(out)


@rule("tensor_split")
def _tensor_split(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """Slices along dim: n sections (the first size % n one longer), or between indices."""
    given = dict(zip(("input", "indices_or_sections", "dim"), args, strict=False)) | kwargs
    x: Tensor = given["input"]
    split = given.get("indices_or_sections", given.get("sections", given.get("indices")))
    dim = given.get("dim", 0) % x.dim()
    size = tr.sizes(x)[dim]  # a SymInt where the trace is symbolic
    if isinstance(split, int):
        bounds, start = [], 0
        for i in range(split):
            end = start + size // split + (1 if i < size % split else 0)
            bounds.append((start, end))
            start = end
    else:
        points = [0, *[p if bool(p <= size) else size for p in map(int, split or ())], size]
        bounds = [(a, b if bool(b >= a) else a) for a, b in itertools.pairwise(points)]
    return tuple(tr.call("slice", "Tensor", x, dim, a, b) for a, b in bounds)


@rule("take_along_dim")
def _take_along_dim(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """No dim: both flattened, gather along 0. A dim: each broadcast to the other's sizes
    (that dim kept), the indices wrapped by the size of that dim, one gather."""
    given = dict(zip(("input", "indices", "dim"), args, strict=False)) | kwargs
    x, indices, dim = given["input"], given["indices"], given.get("dim")
    if dim is None:
        return tr.call("gather", "default", tr.call("view", "default", x, [-1]), 0,
                       tr.call("view", "default", indices, [-1]))
    dim %= x.dim()
    sx, si = tr.sizes(x), tr.sizes(indices)
    wide_i = tr.call("expand", "default", indices,
                     _broadcast([*sx[:dim], si[dim], *sx[dim + 1:]], si))
    wide_x = tr.call("expand", "default", x, _broadcast([*si[:dim], sx[dim], *si[dim + 1:]], sx))
    size = sx[dim]
    if not isinstance(size, int):  # read as a number (torch's size(dim)): specialised
        bool(size == x.shape[dim])
    wrapped = tr.call("remainder", "Scalar", wide_i, x.shape[dim])
    return tr.call("gather", "default", wide_x, dim, wrapped)


def _broadcast(a: list[Any], b: list[Any]) -> list[Any]:
    """The broadcast of two size lists of one length (a's size where neither is 1)."""
    return [m if isinstance(n, int) and n == 1 else n for n, m in zip(a, b, strict=True)]


@rule("diag")
def _diag(tr: _Tracer, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A matrix's diagonal copied (diagonal_copy); a vector as a diagonal (diag_embed)."""
    x: Tensor = args[0] if args else kwargs["input"]
    offset = args[1] if len(args) > 1 else kwargs.get("diagonal", 0)
    if x.dim() == 2:
        return tr.call("diagonal_copy", "default", x, *([offset] if offset else []))
    return tr.record_as("diag_embed", "default", (x, *([offset] if offset else [])), {},
                        tr.run_public(args, kwargs))
