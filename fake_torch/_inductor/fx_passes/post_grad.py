"""torch._inductor.fx_passes.post_grad: of inductor's post-grad passes, the one other compilers
call on their own graphs: view_to_reshape."""

from __future__ import annotations

from fake_torch._ops import ops
from fake_torch.fx import GraphModule


def view_to_reshape(gm: GraphModule) -> None:
    """Retarget every aten.view.default call in `gm`'s graph to aten.reshape.default, in
    place (reshape copies where a view cannot: later passes may reorder what made the view
    legal). fake_torch graphs hold no subgraphs to recurse into."""
    view, reshape = ops.aten.view.default, ops.aten.reshape.default
    for node in gm.graph.find_nodes(op="call_function", target=view):
        node.target = reshape


__all__ = ["view_to_reshape"]
