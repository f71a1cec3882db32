"""torch._inductor.lowering: when a node must fall back to its eager kernel."""

from __future__ import annotations

from fake_torch.fx import Node


def fallback_node_due_to_unsupported_type(node: Node, allow_cpu_inputs: bool = True) -> bool:
    """Whether inductor must run `node` as its eager kernel for a type it cannot generate code
    for. fake_torch's inductor fuses by op kind, for every dtype and device, so never."""
    del node, allow_cpu_inputs
    return False


__all__ = ["fallback_node_due_to_unsupported_type"]
