"""torch._inductor.config: the knobs fake_torch's inductor reads, with torch 2.13's defaults
unless noted. `patch(...)` changes some for a block, as torch's config.patch does."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

# torch 2.13 defaults graph_partition=True: cudagraphs then wrap the cuda partitions around cpu
# ops and data-dependent ops. fake_torch models graph_partition=False (torch's behaviour before
# it, and in fbcode): such a graph skips cudagraphs as a whole, with torch's message.
graph_partition = False
max_fusion_size = 64  # nodes one fused kernel may hold
realize_reads_threshold = 4  # a value read several times is stored past this many reads
realize_opcount_threshold = 30  # ... or past this many ops
kernel_name_max_ops = 10  # op names a kernel's name lists
max_autotune = False  # accepted; autotuning picks kernels, it does not change launch counts
coordinate_descent_tuning = False  # accepted, as max_autotune
# read and saved/restored by libraries (vLLM); fake_torch has no code cache and no freezing
force_disable_caches = False
fx_graph_cache = True
fx_graph_remote_cache: bool | None = None
freezing = False
size_asserts = True
enable_auto_functionalized_v2 = True
custom_should_partition_ops: list[str] = []  # read with graph_partition, which is off here
# graph passes (fx_passes/): a custom pass is a CustomGraphPass or a callable taking the graph
# (or a list of them). The pre-grad pass runs on Dynamo's graph; setting a post-grad pass makes
# compile_fx trace the graph to aten ops and run the post-grad passes on that graph
post_grad_custom_pre_pass: Any = None
post_grad_custom_post_pass: Any = None
pre_grad_custom_pass: Any = None
use_pre_grad_passes = True
use_joint_graph_passes = True  # (fx_passes/joint_graph.py) on the aten graph, before post-grad
joint_custom_pre_pass: Any = None
joint_custom_post_pass: Any = None
pattern_matcher = True  # torch's own pattern passes; here: remove_noop_ops in post_grad_passes
dce = False  # dead-code elimination first thing in post_grad_passes
reorder_for_locality = True  # post-grad: producers moved next to their last reader
assume_32bit_indexing = False  # index arithmetic width in generated code: no launch changes
# horizontal fusion of independent kernels into one launch. Only with benchmark_combo_kernel
# (vLLM's setting), where torch keeps a combo kernel only when its benchmark beats the separate
# kernels: fake_torch has no timings and keeps them separate. Without the benchmark it is not
# emulated (compile_fx raises)
combo_kernels = False
benchmark_combo_kernel = False
# accepted: picks deterministic kernels and skips autotuning, no launch changes
deterministic = os.getenv("TORCHINDUCTOR_DETERMINISTIC") == "1"
# the options a compile-cache key leaves out (torch's list; read and extended by vLLM)
_cache_config_ignore_prefix = [
    "trace", "cuda.cutlass_dir", "cutlass.cutlass_dir", "xpu.cutlass_dir", "worker_start_method",
    "compile_threads", "post_grad_custom_post_pass", "post_grad_custom_pre_pass",
    "joint_custom_pre_pass", "joint_custom_post_pass", "pre_grad_custom_pass",
    "_fuse_ddp_communication_passes", "_pre_fusion_custom_pass", "cudagraph_policy",
    "force_disable_cudagraph_TESTING_ONLY", "pre_grad_pass_timing", "fx_graph_cache",
    "fx_graph_remote_cache", "autotune_local_cache", "autotune_remote_cache"]


class triton:  # torch's name
    cudagraphs = False  # mode="reduce-overhead" turns it on
    cudagraph_trees = True  # False (torch's older, tree-less cudagraphify) is not emulated
    cudagraph_support_input_mutation = True
    cudagraph_dynamic_shape_warn_limit: int | None = 8
    persistent_reductions = True  # reductions over <= 1024 elements: triton_per_ kernels
    # kernels named for what they fuse (gpt-fast and litgpt set it); False (every kernel
    # `triton_` in the profiler, for caching) is refused at compile time, not emulated
    unique_kernel_names = os.environ.get("TORCHINDUCTOR_UNIQUE_KERNEL_NAMES", "1") == "1"


_NOT_OPTIONS = {"annotations", "Any", "Iterator", "contextmanager", "os", "triton"}
# the options, named once here: an option holding a pass (a function, an object) is one too
_OPTIONS = tuple(k for k in list(globals()) if not k.startswith("_") and k not in _NOT_OPTIONS)


def _split(key: str) -> tuple[Any, str]:
    owner: Any = triton if key.startswith("triton.") else globals()
    return owner, key.removeprefix("triton.")


def get_config_copy() -> dict[str, Any]:
    """Every option by its dotted name, with its current value."""
    out = {k: globals()[k] for k in _OPTIONS}
    out.update({f"triton.{k}": v for k, v in vars(triton).items() if not k.startswith("_")})
    return out


def save_config_portable(*, ignore_private_configs: bool = True,
                         readonly_values: bool = False) -> dict[str, Any]:
    """The options as a plain dict (a cache key's part), as torch's config modules give it."""
    return get_config_copy()


def get(key: str) -> Any:
    owner, name = _split(key)
    return owner[name] if isinstance(owner, dict) else getattr(owner, name)


def _set(key: str, value: Any) -> None:
    owner, name = _split(key)
    if isinstance(owner, dict):
        owner[name] = value
    else:
        setattr(owner, name, value)


@contextmanager
def patch(changes: dict[str, Any] | None = None, **kwargs: Any) -> Iterator[None]:
    """Set options (by dotted name) inside the block, then put them back."""
    changes = {**(changes or {}), **{k.replace("__", "."): v for k, v in kwargs.items()}}
    known = get_config_copy()
    for key in changes:
        if key not in known:
            raise AttributeError(f"{__name__}.{key} does not exist")
    saved = {key: get(key) for key in changes}
    try:
        for key, value in changes.items():
            _set(key, value)
        yield
    finally:
        for key, value in saved.items():
            _set(key, value)
