"""`python -m fake_torch bench`, capture at scale: vLLM's default capture sizes for a 32-layer toy.

examples/vllm_runner's ModelRunner captures every size vLLM captures by default (51 sizes up to
512 tokens) in PIECEWISE mode: the compiled model is split at its attention op into 33 pieces,
each captured as its own graph for each size, all into one pool; attention runs eagerly between
them, as in vLLM. The figure is the wall time of `capture_model()` after the model is built:
one compile, then for each size one pass over the model (the pieces recorded, attention run).
Target (issue 16): <= 6 s on a 2-core machine.

The runner is plain `import torch` code; it is loaded with `import torch` meaning fake_torch,
and its modules are dropped from `sys.modules` afterwards.
"""

from __future__ import annotations

import importlib
import sys
import time
from dataclasses import dataclass
from typing import TextIO

from fake_torch._tools._bench_graphs import LLAMA, _torch_is_fake_torch

TARGET_SECONDS = 6.0
NUM_LAYERS = 32
EXAMPLES = LLAMA.parent


@dataclass
class CaptureBench:
    """One capture_model() of the toy: what it captured and how long it took."""

    mode: str
    num_layers: int
    num_sizes: int
    num_graphs: int
    seconds: float


def measure_capture(mode: str = "PIECEWISE", num_layers: int = NUM_LAYERS) -> CaptureBench:
    """Build the toy (`num_layers` decoder layers) and time capturing every default size."""
    runner_dir = EXAMPLES / "vllm_runner"
    if not runner_dir.is_dir():
        raise FileNotFoundError(f"the example runner {runner_dir} is not here (a source "
                                "checkout has it; an installed fake_torch does not)")
    before = set(sys.modules)
    sys.path.insert(0, str(EXAMPLES))
    try:
        with _torch_is_fake_torch():
            return _capture(mode, num_layers)
    finally:
        sys.path.remove(str(EXAMPLES))
        for name in set(sys.modules) - before:  # the example's modules, bound to fake_torch
            if name in ("llama", "vllm_runner") or name.startswith("vllm_runner."):
                del sys.modules[name]


def _capture(mode: str, num_layers: int) -> CaptureBench:
    import fake_torch as torch

    # the example's modules, found on the sys.path entry measure_capture added (not ours)
    llama, config_mod, model_mod, runner_mod = (importlib.import_module(name) for name in (
        "llama", "vllm_runner.config", "vllm_runner.model", "vllm_runner.runner"))
    LlamaConfig, FlatLlama, ModelRunner = llama.LlamaConfig, model_mod.FlatLlama, \
        runner_mod.ModelRunner
    CompilationConfig, CUDAGraphMode = config_mod.CompilationConfig, config_mod.CUDAGraphMode

    torch.manual_seed(0)
    with torch.inference_mode():
        model = FlatLlama(LlamaConfig(num_layers=num_layers)).cuda().eval()
        config = CompilationConfig(cudagraph_mode=CUDAGraphMode[mode], max_num_seqs=256,
                                   splitting_ops=["vllm_runner::attention"])
        runner = ModelRunner(model, config, max_num_batched_tokens=512)
        start = time.perf_counter()
        runner.capture_model()
        seconds = time.perf_counter() - start
    torch.LaunchCounter.reset()  # the bench's launches are not the caller's
    return CaptureBench(mode, num_layers, len(config.capture_sizes), int(runner.num_graphs),
                        seconds)


def report_capture(result: CaptureBench, out: TextIO) -> None:
    """One line: sizes, graphs, seconds; the verdict only for the target's 32 layers."""
    line = (f"capture at scale ({result.num_layers}-layer toy, {result.mode}): "
            f"{result.num_sizes} sizes, {result.num_graphs} graphs in {result.seconds:.1f} s")
    if result.num_layers == NUM_LAYERS:
        verdict = "meets" if result.seconds <= TARGET_SECONDS else "misses"
        line += f" (target <= {TARGET_SECONDS:.0f} s, {verdict} it)"
    print(line, file=out)


def run_capture_bench(*, num_layers: int = NUM_LAYERS, out: TextIO | None = None
                      ) -> CaptureBench | None:
    """Measure and print; None, with the reason printed, outside a source checkout."""
    out = out or sys.stdout
    try:
        result = measure_capture(num_layers=num_layers)
    except FileNotFoundError as exc:
        print(f"capture at scale: n/a ({exc})", file=out)
        return None
    report_capture(result, out)
    return result


__all__ = ["CaptureBench", "measure_capture", "report_capture", "run_capture_bench"]
