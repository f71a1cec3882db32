"""The "inductor" and "cudagraphs" backends of torch.compile (torch keeps them in
torch/_dynamo/backends/inductor.py and cudagraphs.py), and what `mode=` means for inductor.

    inductor     fuse pointwise/reduction ops into kernels (compile_fx); mode="reduce-overhead"
                 also runs the result through CUDA graph trees;
    cudagraphs   no fusion: the graph's ops, each its own kernel, run through CUDA graph trees
                 (torch's "cudagraphs" backend is aot_eager + cudagraph trees).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fake_torch._inductor import config
from fake_torch._inductor.compile_fx import CUDAGraphed, GraphInfo, analyze, compile_fx
from fake_torch._inductor.cudagraph_utils import (
    cpu_device_message,
    format_default_skip_message,
    get_mutation_stack_trace,
    log_cudagraph_skip_and_bump_counter,
)
from fake_torch.fx import GraphModule


def list_mode_options(mode: str | None = None, dynamic: bool | None = None) -> dict[str, Any]:
    """The config each `torch.compile(mode=...)` sets (all modes when mode is None)."""
    mode_options: dict[str, dict[str, Any]] = {
        "default": {},
        "reduce-overhead": {"triton.cudagraphs": True},
        "max-autotune-no-cudagraphs": {"max_autotune": True, "coordinate_descent_tuning": True},
        "max-autotune": {"max_autotune": True, "triton.cudagraphs": True,
                         "coordinate_descent_tuning": True},
    }
    try:
        return mode_options[mode] if mode else mode_options
    except KeyError as e:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(mode_options.keys())}") from e


def config_patches_for(mode: str | None, options: dict[str, Any] | None) -> dict[str, Any]:
    """The inductor config of torch.compile(mode=..., options=...), with torch's errors for an
    unknown mode, option or option type (torch raises them inside torch.compile)."""
    patches: dict[str, Any] = {}
    if mode and mode != "default":
        patches.update(list_mode_options(mode))
    current = config.get_config_copy()
    for key, val in (options or {}).items():
        name = key.replace("-", "_")
        if name not in current:
            raise RuntimeError(f"Unexpected optimization option {key}, known options are "
                               f"{list(current.keys())}")
        expected = current[name]
        if expected is not None and not isinstance(val, type(expected)):
            raise RuntimeError(f"Unexpected type of attr {key}, got {type(val).__name__} "
                               f"should be {type(expected).__name__}")
        patches[name] = val
    return patches


def inductor(gm: GraphModule, example_inputs: list[Any], *, mode: str | None = None,
             options: dict[str, Any] | None = None) -> Callable[..., Any]:
    """torch.compile's default backend."""
    compiled: Callable[..., Any] = compile_fx(gm, example_inputs,
                                              config_patches=config_patches_for(mode, options))
    return compiled


def cudagraphs(gm: GraphModule, example_inputs: list[Any]) -> Callable[..., Any]:
    """The graph as it is (one launch per op), run through CUDA graph trees."""
    info = analyze(gm, example_inputs)
    skip = _check_for_skip(info)
    if skip is not None:
        log_cudagraph_skip_and_bump_counter(format_default_skip_message(skip))
        return gm.forward
    # torch's cudagraphs backend keeps only aot-lifted parameters static: Dynamo's static
    # marks do not reach it
    return CUDAGraphed(lambda inputs: gm(*inputs), info, [], static=False)


def _check_for_skip(info: GraphInfo) -> str | None:
    """torch's cudagraphs-backend checks, in its order: written inputs, cpu tensors,
    data-dependent ops."""
    if info.mutated_input_idxs:
        return get_mutation_stack_trace(info.mutated_input_idxs, info.input_stack_traces)
    if "cpu" in info.device_nodes:
        node = info.device_nodes["cpu"]
        trace = next((u.stack_trace for u in node.users if u.stack_trace), None)
        return cpu_device_message(node.name, trace)
    if info.incompatible is not None:
        return format_default_skip_message(f"incompatible op ({info.incompatible[0].name})")
    return None
