"""torch.nn.utils.rnn.PackedSequence: a batch of variable-length sequences packed time step
by time step, as torch defines the tuple. (pack_padded_sequence and the others are not
emulated; fake_torch's RNN modules take padded batches.)"""

from __future__ import annotations

from typing import Any, NamedTuple

from fake_torch._tensor import Tensor

__all__ = ["PackedSequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _invert_permutation(permutation: Tensor | None) -> Tensor | None:
    if permutation is None:
        return None
    from fake_torch._factories import arange

    output = permutation.new_empty(permutation.shape)
    output.scatter_(0, permutation, arange(permutation.numel(), device=permutation.device))
    return output


class PackedSequence(PackedSequence_):
    """PackedSequence(data, batch_sizes, sorted_indices=None, unsorted_indices=None); or
    PackedSequence((data, batch_sizes)). batch_sizes stays on the CPU."""

    def __new__(cls, data: Any, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = _invert_permutation(sorted_indices)
        if batch_sizes is None:  # (data, batch_sizes) in one tuple
            if not (isinstance(data, (list, tuple)) and len(data) == 2):  # torch asserts
                raise AssertionError("Expected data to be a list or tuple of length 2")
            data, batch_sizes = data
        if batch_sizes.device.type != "cpu":
            raise ValueError("batch_sizes should always be on CPU. Instances of PackedSequence "
                             "should never be created manually. They should be instantiated "
                             "by functions like pack_sequence and pack_padded_sequences in "
                             "nn.utils.rnn. https://pytorch.org/docs/stable/nn.html#torch.nn."
                             "utils.rnn.pack_sequence")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
