"""Why a graph skips CUDA graphs, in torch's words, and how a skip is reported.

A skip is never silent: it logs torch's "skipping cudagraphs due to ..." warning (logger
`fake_torch._inductor.cudagraph_utils`; with no logging set up Python prints it to stderr) and
bumps `torch._dynamo.utils.counters["inductor"]["cudagraph_skips"]`; the graph then runs
without CUDA graphs, with correct results.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

log = logging.getLogger(__name__)


def format_default_skip_message(reason: str) -> str:
    return f"skipping cudagraphs due to {reason}"


def get_mutation_stack_trace(mutation_indices: Sequence[int],
                             stack_traces: Sequence[str | None]) -> str:
    """torch's text for inputs the graph writes to (a stack trace of the first, if known)."""
    msg = format_default_skip_message(f"mutated inputs ({len(mutation_indices)} instances)")
    trace = next((stack_traces[i] for i in mutation_indices
                  if i < len(stack_traces) and stack_traces[i]), None)
    return f"{msg}. Found from : \n {trace}" if trace else msg


def cpu_device_message(node_name: str, stack_trace: str | None) -> str:
    msg = f"cpu device ({node_name})"
    if stack_trace:
        return format_default_skip_message(f"{msg}. Found from : \n {stack_trace}")
    return format_default_skip_message(msg)


def bump_counter(name: str, amount: int = 1) -> None:
    """counters["inductor"][name] += amount (torch._dynamo.utils.counters)."""
    from fake_torch._dynamo.utils import counters

    counters["inductor"][name] += amount


def log_cudagraph_skip_and_bump_counter(msg: str) -> None:
    log.warning(msg)
    bump_counter("cudagraph_skips")


def maybe_warning_due_to_dynamic_shape(num_cudagraphs: int, limit: int | None) -> bool:
    """torch's warning once a graph has recorded more distinct sizes than `limit`."""
    if limit and num_cudagraphs > limit:
        log.warning(
            "CUDAGraph supports dynamic shapes by recording a new graph for each distinct "
            "input size. Recording too many CUDAGraphs may lead to extra overhead. We have "
            f"observed {num_cudagraphs} distinct sizes. Please consider the following options "
            "for better performance: a) padding inputs to a few fixed number of shapes; or b) "
            "set torch._inductor.config.triton.cudagraph_skip_dynamic_graphs=True. Set "
            "torch._inductor.config.triton.cudagraph_dynamic_shape_warn_limit=None to silence "
            "this warning.")
        return True
    return False
