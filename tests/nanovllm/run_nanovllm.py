"""Run a pristine nano-vllm checkout on fake_torch: build `LLM()` and generate, eagerly or
with CUDA graphs, over a tiny random Qwen3 checkpoint this script writes itself.

    NANOVLLM_PATH=/path/to/nano-vllm python tests/nanovllm/run_nanovllm.py --mode graphs

nano-vllm is imported from NANOVLLM_PATH unchanged; only the GPU-kernel packages it imports
(`flash_attn`, `triton`) are our plain-torch stand-ins (standins/). The script installs
fake_torch as `torch` itself (or runs under `python -m fake_torch run`, with
FAKE_TORCH_DEVICE_MEMORY set: nano-vllm sizes its KV cache from the device's free memory).

It drives the engine step by step (`add_request`, `step`: what `LLM.generate` does) with
temperature sampling under a fixed seed and prints, per step, the launches by kind. It prints
the CUDA graphs captured and the tokens sampled, and, with --json FILE, writes all of it plus
every call of nano-vllm's @torch.compile'd functions (RMSNorm.rms_forward / add_rms_forward,
Sampler.forward): the arguments' shapes, strides and dtypes, the global state the call ran
under and the graphs it compiled, for replay on real torch (replay_compiles.py). The calls are
recorded by wrapping those three class attributes at run time; nano-vllm's files stay as they are.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent  # tiny_qwen3.py; standins/ holds flash_attn, triton
DEVICE_MEMORY = 64 * 2**20  # simulated device: nano-vllm fills 90% of it with KV-cache blocks
SEED = 1234
PROMPTS = [  # one token per byte: the first (88) is prefilled as 64, then 24 with the others
    "The quick brown fox jumps over the lazy dog; the dog sleeps while the fox runs far away.",
    "CUDA graphs replay",
    "hello",
]
MAX_TOKENS = [12, 8, 5]  # sequences finish at different steps: decode batch 3, then 2, then 1
ENGINE = dict(max_model_len=128, max_num_batched_tokens=64, max_num_seqs=8)  # graphs 8, 4, 2, 1


def _install_fake_torch() -> None:
    """`import torch` -> fake_torch, unless `python -m fake_torch run` did it already."""
    if "fake_torch" not in sys.modules:  # the device's size is read when fake_torch loads
        os.environ.setdefault("FAKE_TORCH_DEVICE_MEMORY", str(DEVICE_MEMORY))
    elif "FAKE_TORCH_DEVICE_MEMORY" not in os.environ:
        sys.exit("run_nanovllm.py: under `python -m fake_torch run`, set "
                 "FAKE_TORCH_DEVICE_MEMORY (e.g. 67108864): nano-vllm fills 90% of the "
                 "device with KV cache; or run this script with plain python")
    import fake_torch

    fake_torch.install()


def _tensor_meta(t: Any) -> dict[str, Any]:
    """What Dynamo guards on a tensor argument: enough to rebuild a look-alike on real torch."""
    return {"shape": list(t.shape), "stride": list(t.stride()), "offset": t.storage_offset(),
            "dtype": str(t.dtype).removeprefix("torch."), "requires_grad": t.requires_grad,
            "device": t.device.type,
            "inference": None}


class CompileRecorder:
    """Wraps @torch.compile'd methods to record each call: its arguments, the global state,
    the graphs it compiled (Dynamo's unique_graphs counter) and the launches it made."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.instances: dict[int, int] = {}  # id(self) -> index, in order of first call
        self.keep: list[object] = []  # keeps recorded instances alive: ids stay unique

    def wrap(self, cls: type, name: str) -> None:
        import torch
        from torch._dynamo.utils import counters

        compiled = cls.__dict__[name]
        label = f"{cls.__name__}.{name}"

        def recorded(module: Any, *args: Any) -> Any:
            if id(module) not in self.instances:
                self.instances[id(module)] = len(self.instances)
                self.keep.append(module)
            call = {"fn": label, "instance": self.instances[id(module)],
                    "eps": getattr(module, "eps", None),
                    "weight": (_tensor_meta(module.weight) if hasattr(module, "weight")
                               else None),
                    "args": [_tensor_meta(a) for a in args],
                    "grad_enabled": torch.is_grad_enabled(),
                    "inference_mode": torch.is_inference_mode_enabled(),
                    "default_dtype": str(torch.get_default_dtype()).removeprefix("torch."),
                    "default_device": torch.get_default_device().type}
            before, launches = counters["stats"]["unique_graphs"], torch.LaunchCounter.n
            out = compiled.__get__(module, cls)(*args)
            call["graphs"] = counters["stats"]["unique_graphs"] - before
            call["launches"] = torch.LaunchCounter.n - launches
            self.calls.append(call)
            return out

        setattr(cls, name, recorded)


def _launches() -> dict[str, Any]:
    """The launches since the last LaunchCounter.reset(): in all, by kind, by op."""
    import torch

    return {"total": torch.LaunchCounter.n, "kinds": dict(torch.LaunchCounter.by_kind),
            "ops": dict(torch.LaunchCounter.by_op)}


def run(mode: str, model: Path, recorder: CompileRecorder) -> dict[str, Any]:
    """Build LLM(model) (eager or CUDA graphs), generate PROMPTS step by step; the results."""
    import torch
    from nanovllm import LLM, SamplingParams

    torch.LaunchCounter.reset()
    llm = LLM(str(model), enforce_eager=mode == "eager", **ENGINE)
    build = _launches()
    runner = llm.model_runner
    graphs = list(getattr(runner, "graphs", {}))  # capture order: largest batch first
    torch.manual_seed(SEED)
    seqs = []
    for prompt, max_tokens in zip(PROMPTS, MAX_TOKENS, strict=True):
        llm.add_request(prompt, SamplingParams(temperature=0.8, max_tokens=max_tokens,
                                               ignore_eos=True))
        seqs.append(llm.scheduler.waiting[-1])
    steps = []
    while not llm.is_finished():  # LLM.generate's loop
        torch.LaunchCounter.reset()
        first_call = len(recorder.calls)
        _, num_tokens = llm.step()  # > 0: prefill tokens; < 0: minus the decode batch size
        sampler = [c["launches"] for c in recorder.calls[first_call:]
                   if c["fn"] == "Sampler.forward"]
        steps.append({"phase": "prefill" if num_tokens > 0 else "decode",
                      "tokens": abs(num_tokens), "sampler_launches": sum(sampler),
                      **_launches()})
    replays = {bs: g.num_replays for bs, g in getattr(runner, "graphs", {}).items()}
    tokens = [seq.completion_token_ids for seq in seqs]
    llm.exit()
    atexit.unregister(llm.exit)  # nano-vllm registers it; it has run
    return {"mode": mode, "engine": ENGINE, "max_tokens": MAX_TOKENS, "build": build,
            "graphs": graphs, "replays": replays, "steps": steps, "tokens": tokens,
            "texts": [llm.tokenizer.decode(t) for t in tokens], "compiled_calls": recorder.calls}


def _print(result: dict[str, Any]) -> None:
    print(f"mode {result['mode']}: LLM() built with {result['build']['total']} launches; "
          f"CUDA graphs captured for batch sizes {result['graphs']}, replayed "
          f"{result['replays']} times")
    for i, step in enumerate(result["steps"]):
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(step["kinds"].items()))
        print(f"  step {i:2d} {step['phase']:<7} {step['tokens']:3d} tokens: "
              f"{step['total']:4d} launches ({kinds}; sampler {step['sampler_launches']})")
    for tokens, text in zip(result["tokens"], result["texts"], strict=True):
        print(f"  tokens {tokens} {text!r}")
    graphs: dict[str, list[int]] = {}
    for call in result["compiled_calls"]:
        graphs.setdefault(call["fn"], []).append(call["graphs"])
    for fn, per_call in graphs.items():
        print(f"  {fn}: {len(per_call)} calls compiled {sum(per_call)} graphs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["eager", "graphs"], default="graphs")
    parser.add_argument("--model", type=Path, help="write the checkpoint here (default: a "
                        "temporary folder)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    checkout = os.environ.get("NANOVLLM_PATH")
    if not checkout or not (Path(checkout) / "nanovllm" / "__init__.py").is_file():
        sys.exit("run_nanovllm.py: set NANOVLLM_PATH to a nano-vllm checkout (the folder that "
                 f"holds nanovllm/); got {checkout!r}")
    _install_fake_torch()
    sys.path[:0] = [str(HERE / "standins"), checkout]  # flash_attn, triton; nanovllm

    from nanovllm.layers.layernorm import RMSNorm
    from nanovllm.layers.sampler import Sampler
    from tiny_qwen3 import write_tiny_qwen3

    recorder = CompileRecorder()
    for cls, name in ((RMSNorm, "rms_forward"), (RMSNorm, "add_rms_forward"),
                      (Sampler, "forward")):
        recorder.wrap(cls, name)
    with tempfile.TemporaryDirectory() as tmp:
        model = write_tiny_qwen3(args.model or Path(tmp) / "tiny-qwen3")
        result = run(args.mode, model, recorder)
    _print(result)
    if args.json:
        args.json.write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

