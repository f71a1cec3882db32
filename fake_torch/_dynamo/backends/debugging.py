"""torch._dynamo.backends.debugging: the "eager" and "aot_eager" backends (run the captured
graph op by op, exactly as eager would) and ExplainOutput, what torch._dynamo.explain returns."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from fake_torch._dynamo.backends.registry import register_backend

if TYPE_CHECKING:
    from fake_torch._dynamo.graph_breaks import GraphCompileReason
    from fake_torch._tensor import Tensor
    from fake_torch.fx import GraphModule

log = logging.getLogger(__name__)


def eager(gm: GraphModule, fake_tensor_inputs: list[Tensor], **kwargs: Any
          ) -> Callable[..., Any]:
    """Run the captured graph as it is: the same launches as eager, one per op."""
    if kwargs:
        log.warning("eager backend ignoring extra kwargs %s", kwargs)
    return gm.forward


def aot_eager(gm: GraphModule, fake_tensor_inputs: list[Tensor], **kwargs: Any
              ) -> Callable[..., Any]:
    """torch traces the graph again through AOTAutograd; fake_torch has no autograd, so this
    is "eager" under torch's other name."""
    return gm.forward


register_backend(eager, tags=("debug",))
register_backend(aot_eager, tags=("debug",))


@dataclass
class ExplainOutput:
    """What torch._dynamo.explain(fn)(*args) returns."""

    graphs: list[GraphModule]
    graph_count: int
    graph_break_count: int
    break_reasons: list[GraphCompileReason]
    op_count: int
    ops_per_graph: list[list[Any]] | None = None
    out_guards: list[Any] | None = None
    compile_times: str | None = None

    def __str__(self) -> str:
        output = f"Graph Count: {self.graph_count}\n"
        output += f"Graph Break Count: {self.graph_break_count}\n"
        output += f"Op Count: {self.op_count}\n"
        output += "Break Reasons:\n"
        for idx, break_reason in enumerate(self.break_reasons):
            output += f"  Break Reason {idx + 1}:\n"
            output += f"    Reason: {break_reason.reason}\n"
            output += "    User Stack:\n"
            for frame_summary in break_reason.user_stack:
                output += f"      {frame_summary}\n"
        if self.ops_per_graph is not None:
            output += "Ops per Graph:\n"
            for idx, ops in enumerate(self.ops_per_graph):
                output += f"  Ops {idx + 1}:\n"
                for op in ops:
                    output += f"    {op}\n"
        if self.out_guards is not None:
            output += "Out Guards:\n"
            for i, guard in enumerate(self.out_guards):
                output += f"  Guard {i + 1}:\n"
                output += f"    {guard}\n"
        if self.compile_times is not None:
            output += f"Compile Times: {self.compile_times}\n"
        return output


__all__ = ["ExplainOutput", "aot_eager", "eager"]
