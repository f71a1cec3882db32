"""torch.Tag: the tags an operator carries (custom ops declare them: `tags=(torch.Tag.
needs_fixed_stride_order,)`). Members and values are torch 2.13's; fake_torch reads none of
them, so a tag changes nothing about how an op runs."""

from __future__ import annotations

import enum


class Tag(enum.Enum):
    """An operator tag, as in torch's native_functions.yaml (`torch.Tag.pt2_compliant_tag`)."""

    core = 0
    cudagraph_unsafe = 1
    data_dependent_output = 2
    dynamic_output_shape = 3
    flexible_layout = 4
    generated = 5
    inplace = 6
    inplace_view = 7
    maybe_aliasing_or_mutating = 8
    needs_contiguous_strides = 9
    needs_exact_strides = 10
    needs_fixed_stride_order = 11
    nondeterministic_bitwise = 12
    nondeterministic_seeded = 13
    out = 14
    out_variant = 15
    pointwise = 16
    pt2_compliant_tag = 17
    reduction = 18
    view_copy = 19
