"""Run vLLM 0.33's own CUDA-graph files on fake_torch and write what happened as JSON.

    python tests/vllm/run_vllm_files.py VLLM_TREE OUT.json

VLLM_TREE is an unpacked vLLM 0.33.0 wheel (the folder holding vllm/); the interpreter needs
fake_torch and vLLM's Python dependencies, and no real torch. vLLM's files are imported
unchanged; only the three stand-ins of tests/vllm/standins replace vLLM-internal pieces that
need a real GPU stack. Each step is recorded as ok or as the error that stopped it:

  1. import: vllm.config, vllm.forward_context, vllm.v1.cudagraph_dispatcher,
     vllm.compilation.cuda_graph, vllm.compilation.counter; CompilationConfig's capture sizes;
  2. the dispatcher's keys and dispatch decisions per CUDA-graph mode, and CUDAGraphWrapper over
     a small module: capture once per batch descriptor, replay as one graph launch, bypass for
     another runtime mode, with its debug address check on;
  3. piecewise compilation as vLLM's tests/compile/fullgraph/test_simple.py does it (backend
     "eager"): a model of two "silly" attention ops under @support_torch_compile, split by
     VllmBackend into pieces captured per size; vLLM's compilation counters are recorded.
"""


import json
import logging
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


def _step(results: dict[str, Any], name: str, fn: Callable[[], Any]) -> bool:
    try:
        results[name] = {"ok": True, "value": fn()}
        return True
    except BaseException as e:  # recorded, not raised: the test reports it
        results[name] = {"ok": False, "error": f"{type(e).__name__}: {e}",
                         "trace": traceback.format_exc()[-8000:]}
        return False


def step_import() -> dict[str, Any]:
    import vllm.compilation.counter
    import vllm.compilation.cuda_graph
    import vllm.config
    import vllm.forward_context
    import vllm.v1.cudagraph_dispatcher
    from vllm.config import CompilationConfig, CUDAGraphMode

    config = CompilationConfig(cudagraph_mode="FULL_AND_PIECEWISE",
                               cudagraph_capture_sizes=[1, 2, 4, 8])
    counter = vllm.compilation.counter.compilation_counter
    return {"modes": [m.name for m in CUDAGraphMode],
            "capture_sizes": list(config.cudagraph_capture_sizes or []),
            "max_capture_size": config.max_cudagraph_capture_size,
            "counter_fields": sorted(vars(counter))}


def _vllm_config(mode: str, sizes: list[int]) -> Any:
    from unittest.mock import MagicMock

    from vllm.config import (
        CompilationConfig,
        CompilationMode,
        ParallelConfig,
        SchedulerConfig,
        VllmConfig,
    )

    level = CompilationMode.VLLM_COMPILE if "PIECEWISE" in mode else CompilationMode.NONE
    comp = CompilationConfig(cudagraph_mode=mode, mode=level, cudagraph_capture_sizes=sizes)
    config = MagicMock(spec=VllmConfig)  # as vLLM's own dispatcher test builds it
    config.compilation_config = comp
    config.scheduler_config = SchedulerConfig.default_factory(max_num_seqs=8)
    config.parallel_config = ParallelConfig()
    config.lora_config = None
    config.speculative_config = None
    config.num_speculative_tokens = 0
    config.use_cumem_cudagraph_pool = False  # (sleep mode's cuMem pool: off by default)
    # what VllmConfig.__post_init__ does with explicit capture sizes (_set_cudagraph_sizes)
    comp.max_cudagraph_capture_size = max(sizes)
    comp.post_init_cudagraph_sizes()
    if level == CompilationMode.VLLM_COMPILE:
        comp.set_splitting_ops_for_v1(all2all_backend="naive")
    return config


def step_dispatcher() -> dict[str, Any]:
    from vllm.config import CUDAGraphMode
    from vllm.v1.cudagraph_dispatcher import CudagraphDispatcher

    out: dict[str, Any] = {}
    for mode in ("FULL", "FULL_AND_PIECEWISE", "FULL_DECODE_ONLY", "PIECEWISE"):
        config = _vllm_config(mode, [1, 8])
        dispatcher = CudagraphDispatcher(config)
        dispatcher.initialize_cudagraph_keys(config.compilation_config.cudagraph_mode, 1)
        keys = {m.name: len(dispatcher.cudagraph_keys[m])
                for m in (CUDAGraphMode.FULL, CUDAGraphMode.PIECEWISE)}
        decisions = {}
        for tokens, uniform in ((8, False), (8, True), (15, False), (3, False)):
            rt_mode, desc = dispatcher.dispatch(tokens, uniform_decode=uniform)
            decisions[f"{tokens}{'u' if uniform else ''}"] = [
                rt_mode.name, None if desc is None else desc.num_tokens,
                None if desc is None else desc.uniform]
        out[mode] = {"keys": keys, "dispatch": decisions}
    return out


def step_wrapper() -> dict[str, Any]:
    import torch
    from torch import nn
    from vllm.compilation.cuda_graph import CUDAGraphWrapper
    from vllm.config import CUDAGraphMode
    from vllm.forward_context import BatchDescriptor, set_forward_context

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc1 = nn.Linear(10, 10)
            self.fc2 = nn.Linear(10, 10)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.fc2(self.fc1(x))

    # debug logging turns on the wrapper's check that replay inputs sit at captured addresses
    logging.getLogger("vllm").setLevel(logging.DEBUG)
    config = _vllm_config("FULL", [1, 10])
    model = MLP().to("cuda")
    x = torch.randn(1, 10, device="cuda")
    wrapper = CUDAGraphWrapper(model, config, runtime_mode=CUDAGraphMode.FULL)
    desc = BatchDescriptor(num_tokens=1)

    def call(mode: CUDAGraphMode, d: BatchDescriptor | None) -> tuple[Any, int, dict[str, int]]:
        with set_forward_context(None, config, cudagraph_runtime_mode=mode, batch_descriptor=d):
            with _count() as seen:
                out = wrapper(x)
        return out, seen["n"], seen["by_kind"]

    _, warm_n, _ = call(CUDAGraphMode.NONE, None)  # global warmup: eager
    captured, cap_n, _ = call(CUDAGraphMode.FULL, desc)
    # replay: with VLLM_LOGGING_LEVEL=DEBUG the wrapper asserts the input addresses match
    replayed, rep_n, rep_kinds = call(CUDAGraphMode.FULL, desc)
    eager = model(x)
    _, bypass_n, _ = call(CUDAGraphMode.PIECEWISE, desc)
    return {"warmup_launches": warm_n, "capture_launches": cap_n, "replay_launches": rep_n,
            "replay_kinds": rep_kinds, "bypass_launches": bypass_n,
            "entries": len(wrapper.concrete_cudagraph_entries),
            "debug_address_check": bool(wrapper.is_debugging_mode),
            "replay_equals_eager": bool(torch.allclose(replayed, eager)),
            "captured_equals_eager": bool(torch.allclose(captured, eager))}


def step_piecewise() -> dict[str, Any]:
    import torch
    from torch import nn
    from vllm.compilation.counter import compilation_counter
    from vllm.compilation.decorators import support_torch_compile
    from vllm.config import (
        CompilationConfig,
        CompilationMode,
        CUDAGraphMode,
        VllmConfig,
        set_current_vllm_config,
    )
    from vllm.forward_context import BatchDescriptor, set_forward_context
    from vllm.utils.torch_utils import direct_register_custom_op

    calls = [0]

    def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor) -> None:
        calls[0] += 1
        out.copy_(q + k + v)

    def attention_fake(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                       out: torch.Tensor) -> None:
        return None

    lib = torch.library.Library("silly", "FRAGMENT")
    direct_register_custom_op("attention", attention, mutates_args=["out"],
                              fake_impl=attention_fake, target_lib=lib)

    @support_torch_compile
    class Silly(nn.Module):  # x -> 3x + 19 through two attention calls
        def __init__(self, *, vllm_config: VllmConfig, prefix: str = "", **kwargs: Any) -> None:
            super().__init__()

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = x + 3
            out = torch.empty_like(x)
            torch.ops.silly.attention(x, x, x, out)
            x = out - 3
            out = torch.empty_like(x)
            torch.ops.silly.attention(x, x, x, out)
            return out + 1

    config = VllmConfig(compilation_config=CompilationConfig(
        mode=CompilationMode.VLLM_COMPILE, backend="eager", splitting_ops=["silly::attention"],
        cudagraph_copy_inputs=True, cudagraph_capture_sizes=[1, 2]))
    with set_current_vllm_config(config):
        model = Silly(vllm_config=config, prefix="")
    before = {k: v for k, v in vars(compilation_counter).items() if isinstance(v, int)}
    with set_forward_context(None, vllm_config=config):
        model(torch.randn(100, device="cuda"))
        for size in (2, 1):
            with set_forward_context(None, vllm_config=config,
                                     cudagraph_runtime_mode=CUDAGraphMode.PIECEWISE,
                                     batch_descriptor=BatchDescriptor(num_tokens=size)):
                model(torch.randn(size, device="cuda"))
        calls[0] = 0
        with set_forward_context(None, vllm_config=config,
                                 cudagraph_runtime_mode=CUDAGraphMode.PIECEWISE,
                                 batch_descriptor=BatchDescriptor(num_tokens=2)):
            output = model(torch.zeros(2, device="cuda"))
    after = {k: v for k, v in vars(compilation_counter).items() if isinstance(v, int)}
    return {"counters": {k: after[k] - before.get(k, 0) for k in after},
            "calls": calls[0], "output": output.cpu().tolist()}


class _count:
    """Launches inside the block (fake_torch's LaunchCounter)."""

    def __enter__(self) -> dict[str, Any]:
        import torch

        torch.LaunchCounter.reset()
        self.seen: dict[str, Any] = {}
        return self.seen

    def __exit__(self, *exc: object) -> None:
        import torch

        self.seen["n"] = torch.LaunchCounter.n
        self.seen["by_kind"] = dict(torch.LaunchCounter.by_kind)


def main(argv: list[str]) -> int:
    tree, out = argv[0], Path(argv[1])
    import fake_torch

    fake_torch.install()
    sys.path.insert(0, tree)
    sys.path.insert(0, str(HERE))
    import standins

    standins.install()
    results: dict[str, Any] = {}
    # the platform first: vLLM's modules bind current_platform when they are imported
    _step(results, "platform", lambda: type(standins.use_cuda_platform()).__name__)
    if _step(results, "import", step_import):
        _step(results, "dispatcher", step_dispatcher)
        _step(results, "wrapper", step_wrapper)
        _step(results, "piecewise", step_piecewise)
    results["graph_pool_ids"] = [list(p) if isinstance(p, tuple) else repr(p)
                                 for p in standins.GRAPH_POOL_IDS]
    out.write_text(json.dumps(results, indent=1, default=repr))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
