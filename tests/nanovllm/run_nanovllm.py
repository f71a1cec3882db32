"""Run a pristine nano-vllm checkout on fake_torch: build `LLM()` and generate, eagerly or
with CUDA graphs, over a tiny random Qwen3 checkpoint this script writes itself.

    NANOVLLM_PATH=/path/to/nano-vllm python tests/nanovllm/run_nanovllm.py --mode graphs [--tp N]

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

With --tp N (tensor_parallel_size N; 1, 2 or 4: the tiny model's vocabulary, heads and MLP split
evenly) nano-vllm spawns ranks 1..N-1 itself (`mp.get_context("spawn")`, a TCPStore on
localhost:2333, SharedMemory "nanovllm": one such run at a time on a machine). The simulated
machine has N GPUs, as the machine nano-vllm expects: the script sets FAKE_TORCH_DEVICES=N for
itself and the ranks it spawns inherit it (rank r does `torch.cuda.set_device(r)`). Every rank
records each `ModelRunner.run` call (wrapped at run time, as above): its launches by kind and
its simulated milliseconds (cuda events around the call); ranks 1.. write theirs to the folder
NANOVLLM_RANK_LOG names when they exit, and the script reads them into the JSON ("ranks").
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent  # tiny_qwen3.py; standins/ holds flash_attn, triton
DEVICE_MEMORY = 128 * 2**20  # simulated device: nano-vllm fills 90% of it with KV-cache blocks;
# the 10% left holds the graphs' captures (the attention stand-in copies K and V per query head)
SEED = 1234
TEMPERATURE = 0.8  # seeded sampling; GREEDY divides the logits so that only the top one is left
GREEDY = 1e-5  # (nano-vllm refuses temperature 0: "greedy sampling is not permitted")
PROMPTS = [  # one token per byte: the first (88) is prefilled as 64, then 24 with the others
    "The quick brown fox jumps over the lazy dog; the dog sleeps while the fox runs far away.",
    "CUDA graphs replay",
    "hello",
]
MAX_TOKENS = [12, 8, 5]  # sequences finish at different steps: decode batch 3, then 2, then 1
ENGINE = dict(max_model_len=128, max_num_batched_tokens=64, max_num_seqs=8)  # graphs 8, 4, 2, 1
RANK_LOG = "NANOVLLM_RANK_LOG"  # the folder ranks 1.. write their ModelRunner.run records to


def _install_fake_torch(tp: int) -> None:
    """`import torch` -> fake_torch, unless `python -m fake_torch run` did it already; a
    machine of `tp` simulated GPUs (the spawned ranks read the same environment)."""
    if "fake_torch" not in sys.modules:  # the device's size is read when fake_torch loads
        os.environ.setdefault("FAKE_TORCH_DEVICE_MEMORY", str(DEVICE_MEMORY))
        os.environ.setdefault("FAKE_TORCH_DEVICES", str(tp))
    elif "FAKE_TORCH_DEVICE_MEMORY" not in os.environ:
        sys.exit("run_nanovllm.py: under `python -m fake_torch run`, set "
                 "FAKE_TORCH_DEVICE_MEMORY (e.g. 134217728): nano-vllm fills 90% of the "
                 "device with KV cache; or run this script with plain python")
    import fake_torch

    fake_torch.install()
    if fake_torch.cuda.device_count() < tp:
        sys.exit(f"run_nanovllm.py: --tp {tp} needs {tp} simulated GPUs (rank r uses cuda:r), "
                 f"the machine has {fake_torch.cuda.device_count()}: set FAKE_TORCH_DEVICES")


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


class RunRecorder:
    """Wraps ModelRunner.run (in one rank's process) to record each call: prefill or decode,
    its sequences, the launches it made (by kind and op) and its simulated milliseconds, from a
    cuda event recorded before it to one recorded after it on the rank's current stream (read
    when the rank exits: no synchronization is added between calls), and how many of its
    launches the @torch.compile'd calls inside it made. nano-vllm's warmup call (sequences
    without a block table) is left out."""

    def __init__(self, compiled: CompileRecorder) -> None:
        self.calls: list[dict[str, Any]] = []
        self._events: list[tuple[Any, Any]] = []
        self._compiled = compiled  # the rank's @torch.compile'd calls: their launches

    def wrap(self) -> None:
        import torch
        from nanovllm.engine.model_runner import ModelRunner

        run = ModelRunner.run

        def recorded(runner: Any, seqs: list[Any], is_prefill: bool) -> Any:
            if not seqs[0].block_table:  # warmup_model's dummy batch
                return run(runner, seqs, is_prefill)
            start, end = (torch.cuda.Event(enable_timing=True) for _ in range(2))
            before, first = _launch_totals(), len(self._compiled.calls)
            start.record()
            token_ids = run(runner, seqs, is_prefill)
            end.record()
            after = _launch_totals()
            kinds = {k: n - before[1].get(k, 0) for k, n in after[1].items()
                     if n != before[1].get(k, 0)}
            ops = {k: n - before[2].get(k, 0) for k, n in after[2].items()
                   if n != before[2].get(k, 0)}
            self.calls.append({"phase": "prefill" if is_prefill else "decode",
                               "seqs": len(seqs), "total": after[0] - before[0],
                               "kinds": kinds, "ops": ops, "compiled_launches": sum(
                                   c["launches"] for c in self._compiled.calls[first:])})
            self._events.append((start, end))
            return token_ids

        ModelRunner.run = recorded

    def timed(self) -> list[dict[str, Any]]:
        """The calls, each with its simulated "ms" (the device finishes its work first)."""
        import torch

        torch.cuda.synchronize()
        for call, (start, end) in zip(self.calls, self._events, strict=True):
            call["ms"] = start.elapsed_time(end)
        return self.calls


def _wrap_compiled(recorder: CompileRecorder) -> None:
    """Record nano-vllm's three @torch.compile'd methods."""
    from nanovllm.layers.layernorm import RMSNorm
    from nanovllm.layers.sampler import Sampler

    for cls, name in ((RMSNorm, "rms_forward"), (RMSNorm, "add_rms_forward"),
                      (Sampler, "forward")):
        recorder.wrap(cls, name)


def _launch_totals() -> tuple[int, dict[str, int], dict[str, int]]:
    """The launches counted so far: in all, by kind, by op."""
    import torch

    return (torch.LaunchCounter.n, dict(torch.LaunchCounter.by_kind),
            dict(torch.LaunchCounter.by_op))


def _record_spawned_rank(folder: Path) -> None:
    """In a rank nano-vllm spawned: record its ModelRunner.run calls; write them to
    folder/rank{r}.json when the rank's ModelRunner exits."""
    import torch
    from nanovllm.engine.model_runner import ModelRunner

    compiled = CompileRecorder()
    _wrap_compiled(compiled)
    recorder = RunRecorder(compiled)
    recorder.wrap()
    exit_ = ModelRunner.exit

    def recorded_exit(runner: Any) -> None:
        calls = recorder.timed()
        (folder / f"rank{runner.rank}.json").write_text(json.dumps(
            {"rank": runner.rank, "device": torch.cuda.current_device(),
             "torch": torch.__file__, "calls": calls}))
        exit_(runner)

    ModelRunner.exit = recorded_exit


def run(mode: str, model: Path, recorder: CompileRecorder, tp: int = 1,
        temperature: float = TEMPERATURE) -> dict[str, Any]:
    """Build LLM(model) (eager or CUDA graphs, `tp` ranks), generate PROMPTS step by step; the
    results."""
    import torch
    from nanovllm import LLM, SamplingParams

    rank0 = RunRecorder(recorder)
    rank0.wrap()
    torch.LaunchCounter.reset()
    llm = LLM(str(model), enforce_eager=mode == "eager", tensor_parallel_size=tp, **ENGINE)
    build = _launches()
    runner = llm.model_runner
    graphs = list(getattr(runner, "graphs", {}))  # capture order: largest batch first
    torch.manual_seed(SEED)
    seqs = []
    for prompt, max_tokens in zip(PROMPTS, MAX_TOKENS, strict=True):
        llm.add_request(prompt, SamplingParams(temperature=temperature, max_tokens=max_tokens,
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
    ranks = [{"rank": 0, "device": torch.cuda.current_device(), "torch": torch.__file__,
              "calls": rank0.timed()}]
    llm.exit()  # ranks 1.. write their records as they exit; exit() joins them
    atexit.unregister(llm.exit)  # nano-vllm registers it; it has run
    if tp > 1:
        folder = Path(os.environ[RANK_LOG])
        ranks += [json.loads((folder / f"rank{r}.json").read_text()) for r in range(1, tp)]
    return {"mode": mode, "tp": tp, "temperature": temperature, "engine": ENGINE,
            "max_tokens": MAX_TOKENS, "build": build, "graphs": graphs, "replays": replays,
            "steps": steps, "ranks": ranks, "tokens": tokens,
            "texts": [llm.tokenizer.decode(t) for t in tokens], "compiled_calls": recorder.calls}


def _print(result: dict[str, Any]) -> None:
    print(f"mode {result['mode']}, tensor_parallel_size {result['tp']}: LLM() built with "
          f"{result['build']['total']} launches; "
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
    for rank in result["ranks"]:
        decodes = [c for c in rank["calls"] if c["phase"] == "decode"]
        by_kind = Counter[str]()
        for call in decodes:
            by_kind.update(call["kinds"])
        per_step = ", ".join(f"{k} {n / len(decodes):.1f}" for k, n in sorted(by_kind.items()))
        ms = sum(c["ms"] for c in decodes) / len(decodes)
        print(f"  rank {rank['rank']} (cuda:{rank['device']}): per decode step "
              f"{sum(c['total'] for c in decodes) / len(decodes):.1f} launches ({per_step}), "
              f"{ms:.4f} simulated ms")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["eager", "graphs"], default="graphs")
    parser.add_argument("--tp", type=int, choices=[1, 2, 4], default=1,
                        help="tensor_parallel_size: ranks, one simulated GPU each")
    parser.add_argument("--greedy", action="store_true", help=f"sample at temperature {GREEDY} "
                        f"(the most likely token) instead of {TEMPERATURE}")
    parser.add_argument("--model", type=Path, help="write the checkpoint here (default: a "
                        "temporary folder)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)
    checkout = os.environ.get("NANOVLLM_PATH")
    if not checkout or not (Path(checkout) / "nanovllm" / "__init__.py").is_file():
        sys.exit("run_nanovllm.py: set NANOVLLM_PATH to a nano-vllm checkout (the folder that "
                 f"holds nanovllm/); got {checkout!r}")
    _install_fake_torch(args.tp)
    sys.path[:0] = [str(HERE / "standins"), checkout]  # flash_attn, triton; nanovllm

    from tiny_qwen3 import write_tiny_qwen3

    recorder = CompileRecorder()
    _wrap_compiled(recorder)
    with tempfile.TemporaryDirectory() as tmp:
        model = write_tiny_qwen3(args.model or Path(tmp) / "tiny-qwen3")
        os.environ[RANK_LOG] = tmp  # the spawned ranks inherit it
        result = run(args.mode, model, recorder, args.tp,
                     GREEDY if args.greedy else TEMPERATURE)
    _print(result)
    if args.json:
        args.json.write_text(json.dumps(result))
    return 0


if __name__ == "__mp_main__" and RANK_LOG in os.environ:  # a rank nano-vllm spawned (it
    _record_spawned_rank(Path(os.environ[RANK_LOG]))  # imports this script before its target)

if __name__ == "__main__":
    sys.exit(main())

