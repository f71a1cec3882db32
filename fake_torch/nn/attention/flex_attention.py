"""torch.nn.attention.flex_attention: attention with a user score_mod / block-sparse mask,
which torch runs as a Triton kernel that torch.compile generates. fake_torch compiles no Triton:
the names exist (so code that imports them imports), and everything that builds a block mask or
runs the kernel raises NotImplementedError naming the API when called."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn

from fake_torch._tensor import Tensor

__all__ = ["AuxRequest", "BlockMask", "create_block_mask", "flex_attention", "noop_mask"]

_DEFAULT_SPARSE_BLOCK_SIZE = 128  # torch's default block size (tokens) of a BlockMask


def _not_emulated(api: str) -> NoReturn:
    raise NotImplementedError(f"torch.nn.attention.flex_attention.{api} is not emulated by "
                              "fake_torch: flex attention runs a Triton kernel that "
                              "torch.compile generates, and fake_torch compiles no Triton")


@dataclass(frozen=True)
class AuxRequest:
    """Which auxiliary outputs flex_attention should return (log-sum-exp, max scores)."""

    lse: bool = False
    max_scores: bool = False


def noop_mask(batch: Tensor, head: Tensor, token_q: Tensor, token_kv: Tensor) -> Tensor:
    """The mask_mod that masks nothing."""
    _not_emulated("noop_mask")


class BlockMask:
    """The block-sparse layout of a mask: which KV blocks each query block attends to."""

    def __init__(self, seq_lengths: tuple[int, int], kv_num_blocks: Tensor, kv_indices: Tensor,
                 full_kv_num_blocks: Tensor | None, full_kv_indices: Tensor | None,
                 q_num_blocks: Tensor | None, q_indices: Tensor | None,
                 full_q_num_blocks: Tensor | None, full_q_indices: Tensor | None,
                 BLOCK_SIZE: tuple[int, int] = (128, 128),
                 mask_mod: Callable[..., Any] = noop_mask, *,
                 dq_write_order: Tensor | None = None,
                 dq_write_order_full: Tensor | None = None, dq_kv_order: Tensor | None = None,
                 dq_kv_order_spt: bool | None = None) -> None:
        _not_emulated("BlockMask")

    @classmethod
    def from_kv_blocks(cls, kv_num_blocks: Tensor, kv_indices: Tensor,
                       full_kv_num_blocks: Tensor | None = None,
                       full_kv_indices: Tensor | None = None,
                       BLOCK_SIZE: int | tuple[int, int] = 128,
                       mask_mod: Callable[..., Any] | None = None,
                       seq_lengths: tuple[int, int] | None = None,
                       compute_q_blocks: bool = True, *, dq_write_order: Tensor | None = None,
                       dq_write_order_full: Tensor | None = None,
                       dq_kv_order: Tensor | bool | None = None) -> BlockMask:
        """A BlockMask from its KV block counts and indices."""
        _not_emulated("BlockMask.from_kv_blocks")


def create_block_mask(mask_mod: Callable[..., Any], B: int | None, H: int | None, Q_LEN: int,
                      KV_LEN: int, device: Any = None,
                      BLOCK_SIZE: int | tuple[int, int] = _DEFAULT_SPARSE_BLOCK_SIZE,
                      _compile: bool = False, separate_full_blocks: bool = True,
                      compute_dq_write_order: bool = False,
                      dq_kv_order: bool = True) -> BlockMask:
    """The BlockMask of `mask_mod` over a (B, H, Q_LEN, KV_LEN) score matrix."""
    _not_emulated("create_block_mask")


def flex_attention(query: Tensor, key: Tensor, value: Tensor,
                   score_mod: Callable[..., Any] | None = None,
                   block_mask: BlockMask | None = None, scale: float | None = None,
                   enable_gqa: bool = False, return_lse: bool = False,
                   kernel_options: Any = None, *,
                   return_aux: AuxRequest | None = None) -> Any:
    """Attention with `score_mod` applied to the scores and `block_mask`'s sparsity."""
    _not_emulated("flex_attention")
