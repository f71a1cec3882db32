"""Functions traced with symbolic sizes, for tests/test_dynamic_vs_torch.py: each is compiled by
real torch 2.13 and by fake_torch with the same marks, called at three sizes, and what Dynamo
hands the backend is compared (graphs, placeholders, guards, outputs; for the UNBACKED cases,
every node too).

A case is (name, fn, make, marks, sizes): `fn` the function, or a factory `fn(L)` of it for
those that call the library's functions (in FACTORIES); `make(L, n)` builds the arguments at
size `n` from a seeded numpy generator (the same values for both libraries); `marks` lists
(argument, dim) to `mark_dynamic` ((argument, dim, "unbacked") to `mark_unbacked`), or None
for torch's default (automatic dynamic: the first call static, the first size change
recompiles with the changed dims symbolic). CONFIGS holds a case's torch._dynamo.config.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Case = tuple[str, Callable[..., Any], Callable[[Any, int], tuple[Any, ...]],
             "list[tuple[Any, ...]] | None", tuple[int, int, int]]


def _t(L: Any, *shape: int, seed: int = 0) -> Any:
    return L.tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


def _i(L: Any, *shape: int, high: int = 5, seed: int = 1) -> Any:
    return L.tensor(np.random.default_rng(seed).integers(0, high, shape))


def view_chain(x: Any) -> Any:
    n = x.size(0)
    return x.view(n, 2, -1).transpose(1, 2).reshape(n, -1) * 2


def reshape_flat(x: Any) -> Any:
    return x.reshape(-1) + 1


def branch_on_size(x: Any) -> Any:
    if x.size(0) > 8:
        return x * 2
    return x - 1


def size_in_arith(x: Any) -> Any:
    return x * x.shape[0] + x.numel()


def slice_half(x: Any) -> Any:
    return x[: x.size(0) // 2].sum(0)


def flatten_expand(x: Any) -> Any:
    b, t = x.shape
    return x.view(b * t).unsqueeze(0).expand(3, -1)


def broadcast_two(x: Any, y: Any) -> Any:
    return x + y


def matmul_linear(x: Any, w: Any) -> Any:
    return (x @ w.t()).relu()


def softmax_rows(x: Any) -> Any:
    e = (x - x.amax(-1, keepdim=True)).exp()
    return e / e.sum(-1, keepdim=True)


def cat_self(L: Any) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        return L.cat([x, x * 2], 0)
    return fn


def einsum_scan_step(L: Any) -> Callable[[Any, Any, Any], Any]:
    """mamba-minimal's selective scan inputs over a growing length l: an outer product
    (one mul), a three-operand product, a contraction (bmm) over one position."""
    def fn(delta: Any, a: Any, b: Any) -> Any:
        delta_a = L.exp(L.einsum("bld,dn->bldn", delta, a))
        delta_b_u = L.einsum("bld,bln,bld->bldn", delta, b, delta)
        y = L.einsum("bdn,bn->bd", delta_a[:, -1], b[:, -1])
        return (delta_b_u * delta_a)[:, -1].sum(-1) + y  # (b, d)
    return fn


def einsum_views(L: Any) -> Callable[[Any], Any]:
    """One-operand equations: a permuted view of the input, a diagonal, a sum."""
    def fn(x: Any) -> Any:
        n = x.size(0)
        return (L.einsum("ij->ji", x)[:n].sum(1) + L.einsum("ii->i", x[:, :n])
                + L.einsum("ij->j", x)[:n])  # (n,)
    return fn


def new_zeros_sized(x: Any) -> Any:
    return x.new_zeros(x.size(0), 3) + x[:, :1]


def arange_sized(x: Any) -> Any:
    return x.sum(1) + x.new_ones(x.size(0)).cumsum(0)


def split_chunks(x: Any) -> Any:
    a, b = x.chunk(2, dim=1)
    return a * b


def permute_contig(x: Any) -> Any:
    return x.permute(1, 0).contiguous().view(-1)


def narrow_last(x: Any) -> Any:
    return x.narrow(0, 1, x.size(0) - 1) * 3


def select_last(x: Any) -> Any:
    return x[-1] + x[0]


def rms_norm_like(x: Any, w: Any) -> Any:
    var = x.pow(2).mean(-1, keepdim=True)
    return x * (var + 1e-6).rsqrt() * w


def rotary_like(x: Any) -> Any:
    half = x.size(-1) // 2
    x1, x2 = x[..., :half], x[..., half:]
    return (x1 * 0.5 - x2 * 0.25).repeat(1, 2) + x


def mean_over_tokens(x: Any) -> Any:
    return x.mean(0, keepdim=True).expand(x.size(0), -1) - x


def stack_pair(L: Any) -> Callable[[Any], Any]:
    def fn(x: Any) -> Any:
        return L.stack([x, -x], 1).flatten(1)
    return fn


def index_gather(x: Any, idx: Any) -> Any:
    return x.gather(1, idx) * 2


def embedding_lookup(ids: Any, table: Any) -> Any:
    return table[ids].sum(-1)


def where_mask(x: Any) -> Any:
    return x.masked_fill(x > 0, 0.0) + x.abs()


def unsqueeze_mul(x: Any) -> Any:
    return (x.unsqueeze(-1) * x.unsqueeze(-2)).sum(-1)


def topk_values(x: Any) -> Any:
    return x.topk(2, dim=1).values


def sort_rows(x: Any) -> Any:
    return x.sort(dim=0).values[0]


def size_compare_eq(x: Any) -> Any:
    if x.size(0) == x.size(1):
        return x.t()
    return x * 1


def int_of_size(x: Any) -> Any:
    n = int(x.size(0))
    return x.view(n * 4)


def python_loop_over_dim1(x: Any) -> Any:
    out = x[:, 0]
    for j in range(1, x.size(1)):
        out = out + x[:, j]
    return out


def two_dims_dynamic(x: Any) -> Any:
    return x.transpose(0, 1).reshape(x.size(1), -1).sum(1)


def unflatten_heads(x: Any) -> Any:
    return x.unflatten(1, (2, 2)).transpose(0, 1).reshape(2, -1)


# --- unbacked sizes: data-dependent numbers and shapes (u0), as torch's Dynamo makes them ---

def item_sized_zeros(L: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        n = x.sum().item()
        return L.zeros(n) + 1
    return f


def item_arith(L: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        n = x.sum().item()
        m = n * 2 + 1
        return L.full((3,), 1.0) * m
    return f


def float_item_scale(x: Any) -> Any:
    v = x.sum().item()
    return x * (v * 2 + 1)


def nonzero_rows(L: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return L.nonzero(x > 0) * 2
    return f


def masked_select_sum(L: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return L.masked_select(x, x > 0) + 1
    return f


def item_reshape_cat(L: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        n = x.sum().item()
        return L.cat([x.new_zeros(n, 2).reshape(-1), x])
    return f


def masked_mean(L: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return L.masked_select(x, x > 0).mean()
    return f


def bool_mask_rows(x: Any) -> Any:
    return x[x[:, 0] > 0] + 1


def checked_item_size(L: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        n = x.sum().item()
        L._check(n >= 3)
        return L.ones(n, 2)
    return f


def unbacked_input_sum(x: Any) -> Any:
    return (x * 2).sum(0)


def checked_unbacked_slice(L: Any) -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        L._check(x.size(0) >= 3)
        return x[2:] + 1
    return f


_dynamic_size_ops: dict[str, Any] = {}


def fake_impl_dynamic_size(L: Any) -> Callable[[Any], Any]:
    """vLLM's test_simple pattern: a custom op whose fake implementation returns
    torch.library.get_ctx().new_dynamic_size(), used as a size."""
    op = _dynamic_size_ops.get(L.__name__)
    if op is None:
        def three(x: Any) -> int:
            return 3
        three.__annotations__ = {"x": L.Tensor, "return": int}  # (not strings: the schema)
        op = L.library.custom_op("dyncases::three", mutates_args=())(three)

        @op.register_fake  # type: ignore[untyped-decorator]
        def _(x: Any) -> Any:
            return L.library.get_ctx().new_dynamic_size()
        _dynamic_size_ops[L.__name__] = op

    def f(x: Any) -> Any:
        u = op(x)
        return x * (x.new_ones(x.shape[0], u).sum(-1) / 3)
    return f


def fake_impl_nonzero(L: Any) -> Callable[[Any], Any]:
    """torch's documented data-dependent custom op: a fake impl returning a tensor of
    new_dynamic_size() rows."""
    key = f"{L.__name__}:nonzero"
    op = _dynamic_size_ops.get(key)
    if op is None:
        def custom_nonzero(x: Any) -> Any:
            return L.nonzero(x)
        custom_nonzero.__annotations__ = {"x": L.Tensor, "return": L.Tensor}
        op = L.library.custom_op("dyncases::custom_nonzero", mutates_args=())(custom_nonzero)

        @op.register_fake  # type: ignore[untyped-decorator]
        def _(x: Any) -> Any:
            nnz = L.library.get_ctx().new_dynamic_size()
            return x.new_empty(nnz, x.dim(), dtype=L.int64)
        _dynamic_size_ops[key] = op

    def f(x: Any) -> Any:
        return op(x) * 2
    return f


FACTORIES = frozenset({"cat_self", "stack_pair", "item_sized_zeros", "item_arith",
                       "item_reshape_cat", "masked_mean", "nonzero_rows", "masked_select_sum",
                       "checked_item_size", "checked_unbacked_slice", "fake_impl_dynamic_size",
                       "fake_impl_nonzero", "einsum_scan_step", "einsum_views"})
# torch._dynamo.config for a case (default: none changed)
CONFIGS: dict[str, dict[str, bool]] = {
    "item_sized_zeros": {"capture_scalar_outputs": True},
    "item_arith": {"capture_scalar_outputs": True},
    "item_reshape_cat": {"capture_scalar_outputs": True},
    "masked_mean": {"capture_dynamic_output_shape_ops": True},
    "float_item_scale": {"capture_scalar_outputs": True},
    "checked_item_size": {"capture_scalar_outputs": True},
    "nonzero_rows": {"capture_dynamic_output_shape_ops": True},
    "masked_select_sum": {"capture_dynamic_output_shape_ops": True},
    "bool_mask_rows": {"capture_dynamic_output_shape_ops": True},
    "fake_impl_dynamic_size": {"capture_dynamic_output_shape_ops": True},
    "fake_impl_nonzero": {"capture_dynamic_output_shape_ops": True},
}
# the cases whose graphs are compared node by node too (op, target, example value)
UNBACKED = frozenset(CONFIGS) | {"unbacked_input_sum", "checked_unbacked_slice"}

CASES: list[Case] = [
    ("view_chain", view_chain, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("reshape_flat", reshape_flat, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("branch_on_size", branch_on_size, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 12, 3)),
    ("size_in_arith", size_in_arith, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("slice_half", slice_half, lambda L, n: (_t(L, n, 4),), [(0, 0)], (6, 3, 12)),
    ("flatten_expand", flatten_expand, lambda L, n: (_t(L, n, 4),), [(0, 0)], (6, 3, 12)),
    ("broadcast_two", broadcast_two, lambda L, n: (_t(L, n, 4), _t(L, n, 4, seed=2)),
     [(0, 0), (1, 0)], (5, 3, 12)),
    ("matmul_linear", matmul_linear, lambda L, n: (_t(L, n, 4), _t(L, 6, 4, seed=3)),
     [(0, 0)], (5, 3, 12)),
    ("softmax_rows", softmax_rows, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("cat_self", cat_self, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("einsum_scan_step", einsum_scan_step,
     lambda L, n: (_t(L, 1, n, 4), _t(L, 4, 3, seed=2), _t(L, 1, n, 3, seed=3)), None,
     (3, 4, 6)),
    ("einsum_views", einsum_views, lambda L, n: (_t(L, n, n + 2),), [(0, 0)], (5, 3, 12)),
    ("new_zeros_sized", new_zeros_sized, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("arange_sized", arange_sized, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("split_chunks", split_chunks, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("permute_contig", permute_contig, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("narrow_last", narrow_last, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("select_last", select_last, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("rms_norm_like", rms_norm_like, lambda L, n: (_t(L, n, 8), _t(L, 8, seed=4)),
     [(0, 0)], (5, 3, 12)),
    ("rotary_like", rotary_like, lambda L, n: (_t(L, n, 8),), [(0, 0)], (5, 3, 12)),
    ("mean_over_tokens", mean_over_tokens, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("stack_pair", stack_pair, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("index_gather", index_gather, lambda L, n: (_t(L, n, 4), _i(L, n, 2, high=4)),
     [(0, 0), (1, 0)], (5, 3, 12)),
    ("embedding_lookup", embedding_lookup, lambda L, n: (_i(L, n, high=10), _t(L, 10, 4)),
     [(0, 0)], (5, 3, 12)),
    ("where_mask", where_mask, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("unsqueeze_mul", unsqueeze_mul, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("topk_values", topk_values, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("sort_rows", sort_rows, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("size_compare_eq", size_compare_eq, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 4, 12)),
    ("int_of_size", int_of_size, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("python_loop_over_dim1", python_loop_over_dim1, lambda L, n: (_t(L, 3, n),), [(0, 1)],
     (4, 3, 6)),
    ("two_dims_dynamic", two_dims_dynamic, lambda L, n: (_t(L, n, n + 1),), [(0, 0), (0, 1)],
     (5, 3, 12)),
    ("unflatten_heads", unflatten_heads, lambda L, n: (_t(L, n, 4),), [(0, 0)], (5, 3, 12)),
    ("automatic_dynamic", size_in_arith, lambda L, n: (_t(L, n, 4),), None, (3, 4, 5)),
    ("automatic_branch", branch_on_size, lambda L, n: (_t(L, n, 4),), None, (3, 4, 12)),
    # unbacked (a mark (argument, dim, "unbacked") is mark_unbacked)
    ("item_sized_zeros", item_sized_zeros, lambda L, n: (_i(L, n),), [(0, 0)], (5, 3, 12)),
    ("item_arith", item_arith, lambda L, n: (_i(L, n),), None, (5, 3, 12)),
    ("float_item_scale", float_item_scale, lambda L, n: (_t(L, n, 2),), [(0, 0)], (5, 3, 12)),
    ("nonzero_rows", nonzero_rows, lambda L, n: (_t(L, n, 3),), [(0, 0)], (5, 3, 12)),
    ("masked_select_sum", masked_select_sum, lambda L, n: (_t(L, n, 2),), None, (4, 4, 6)),
    ("item_reshape_cat", item_reshape_cat, lambda L, n: (_i(L, n),), [(0, 0)], (5, 3, 12)),
    ("masked_mean", masked_mean, lambda L, n: (_t(L, n, 2),), [(0, 0)], (5, 3, 12)),
    ("bool_mask_rows", bool_mask_rows, lambda L, n: (_t(L, n, 3),), [(0, 0)], (5, 3, 12)),
    ("checked_item_size", checked_item_size, lambda L, n: (_i(L, n) + 1,), None, (5, 3, 12)),
    ("unbacked_input_sum", unbacked_input_sum, lambda L, n: (_t(L, n, 3),),
     [(0, 0, "unbacked")], (5, 3, 12)),
    ("checked_unbacked_slice", checked_unbacked_slice, lambda L, n: (_t(L, n, 3),),
     [(0, 0, "unbacked")], (5, 3, 12)),
    ("fake_impl_dynamic_size", fake_impl_dynamic_size, lambda L, n: (_t(L, n),), [(0, 0)],
     (8, 3, 12)),
    ("fake_impl_nonzero", fake_impl_nonzero, lambda L, n: (_i(L, n, 3, high=2),), None,
     (4, 4, 6)),
]
