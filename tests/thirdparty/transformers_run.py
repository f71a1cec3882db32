"""Run HuggingFace transformers 5.x unchanged on one torch: fake_torch or the real one.

    python tests/thirdparty/transformers_run.py write CKPT_DIR      (real torch: the checkpoints)
    python tests/thirdparty/transformers_run.py run --torch fake CKPT_DIR OUT.json [MODEL...]
    python tests/thirdparty/transformers_run.py run --torch real --write CKPT_DIR OUT.json
                                                  (`write`, then `run`: one start-up of torch)

`write` builds each tiny model of MODELS from its config with real torch under a fixed seed
and saves it with `save_pretrained` (safetensors) into CKPT_DIR/<name>. `run` installs
fake_torch as `torch` (--torch fake) or keeps the real one (--torch real), loads each
checkpoint with `AutoModelForCausalLM.from_pretrained` (transformers' own loader) and writes,
per model:

  - "logits": model(PROMPT).logits, the whole (1, T, vocab) block as nested lists;
  - per generate mode, for each prompt: the greedy tokens and each step's scores (the logits
    generate picked from); on fake_torch also the launches each decode step made;
    modes:
      eager    generate(), transformers' default DynamicCache;
      static   generate(cache_implementation="static", disable_compile=True): StaticCache;
      auto     generate(cache_implementation="static"): on a cuda device transformers
               compiles the forward itself (torch.compile(mode="reduce-overhead"),
               CompileConfig's default) for the decode steps;
      compile  model.forward = torch.compile(model.forward), then generate() with a
               DynamicCache (the forward's shapes grow each step).
    Real torch runs on the CPU; it computes "auto" and "compile" eagerly (the same numbers
    they must give: compiling changes no value), so the test compares fake_torch's compiled
    runs against real torch's eager ones.

fake_torch runs on device "cuda" (every launch counted): the launches of one decode step are
what the counter moved between two consecutive calls of a LogitsProcessor that only reads it
(generate calls its processors once per new token, after that step's forward).
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

SEED = 0
PROMPTS = [[1, 17, 42, 99, 7, 3], [88, 2, 31, 45, 9, 60, 77, 21, 14]]  # two lengths: the
# compiled forward's second prefill recompiles it for a dynamic length, as in torch
MAX_NEW_TOKENS = 8
SMALL = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, vocab_size=128, max_position_embeddings=64,
             initializer_range=0.2)  # wide weights: greedy decoding that does not repeat one token
MODELS: dict[str, tuple[str, dict[str, Any]]] = {
    "llama": ("LlamaConfig", {}),
    "qwen2": ("Qwen2Config", {}),
    "mistral": ("MistralConfig", {}),
    "qwen3": ("Qwen3Config", {"head_dim": 16}),
    "mixtral": ("MixtralConfig", {"num_local_experts": 4, "num_experts_per_tok": 2}),
}
MODES = ("eager", "static", "auto", "compile")
COMPILE_ORACLE = ("llama",)  # real torch compiles these too (Dynamo only): graphs to compare
GPU_MODES = {"qwen2": MODES[:3], "mistral": MODES[:3], "qwen3": MODES[:3]}  # inductor's
# compiles take a GPU run's minutes: torch.compile(model.forward) on Llama and Mixtral only


WRITTEN = "written"  # the file `write` leaves in CKPT_DIR last


def write(ckpt: Path) -> None:
    """Each model of MODELS, randomly initialised by real torch under SEED, saved."""
    import torch
    import transformers

    for name, (config_cls, extra) in MODELS.items():
        config = getattr(transformers, config_cls)(**SMALL, **extra)
        torch.manual_seed(SEED)
        auto: Any = transformers.AutoModelForCausalLM
        model = auto.from_config(config)
        model.save_pretrained(ckpt / name)
    (ckpt / WRITTEN).touch()  # the checkpoints are complete: another process may load them


class LaunchProbe:
    """A LogitsProcessor that changes nothing and notes, at each call, how many launches the
    run made so far and which ops they were: `read()` gives (total, Counter by op)."""

    def __init__(self, read: Callable[[], tuple[int, Counter[str]]] | None) -> None:
        self.read = read
        self.seen: list[tuple[int, Counter[str]]] = []

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.read is not None:
            self.seen.append(self.read())
        return scores

    def per_step(self) -> list[int]:
        return [b[0] - a[0] for a, b in itertools.pairwise(self.seen)]

    def last_step_ops(self) -> dict[str, int]:
        if len(self.seen) < 2:
            return {}
        return dict(sorted((self.seen[-1][1] - self.seen[-2][1]).items()))


def _fake_reader(torch: Any) -> Callable[[], tuple[int, Counter[str]]]:
    counter = torch.LaunchCounter
    return lambda: (counter.n, Counter(counter.by_op))


@contextmanager
def _real_reader() -> Iterator[Callable[[], tuple[int, Counter[str]]]]:
    """The aten ops real torch dispatches that a GPU would launch (tests/oracles.py's
    torch_launches, as torch's CUDA build dispatches them)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from oracles import torch_launches

    with torch_launches(cuda=True) as names:
        yield lambda: (len(names), Counter(names))


LAUNCH_API = ("cudaLaunchKernel", "cudaLaunchKernelExC", "cuLaunchKernel", "cuLaunchKernelEx",
              "cudaGraphLaunch", "cudaMemcpyAsync", "cudaMemsetAsync")


class GpuLaunches:
    """Real torch on a GPU: the launch API calls torch.profiler saw before each of the probe's
    calls (each call leaves a marker), read once the run is over."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch
        self.prof = torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU])

    def __enter__(self) -> Callable[[], tuple[int, Counter[str]]]:
        self.prof.__enter__()
        return self.mark

    def __exit__(self, *exc: object) -> None:
        self.torch.cuda.synchronize()
        self.prof.__exit__(*exc)

    def mark(self) -> tuple[int, Counter[str]]:
        with self.torch.profiler.record_function("hf_probe"):
            return 0, Counter()

    def seen(self) -> list[tuple[int, Counter[str]]]:
        events = list(self.prof.events())
        marks = sorted(e.time_range.start for e in events if e.name == "hf_probe")
        calls = sorted((e.time_range.start, e.name) for e in events if e.name in LAUNCH_API)
        return [(len(before), Counter(before)) for before in
                ([name for t, name in calls if t < m] for m in marks)]


def _generate(model: Any, torch: Any, device: str, mode: str, fake: bool
              ) -> list[dict[str, Any]]:
    from transformers import LogitsProcessorList

    gpu = device == "cuda" and not fake
    kwargs: dict[str, Any] = {}
    if mode == "static" or (mode == "auto" and device == "cpu"):
        kwargs = {"cache_implementation": "static", "disable_compile": True}
    elif mode == "auto":
        kwargs = {"cache_implementation": "static"}
    count_real = device == "cpu" and mode in ("eager", "static")
    results = []
    for prompt in PROMPTS:
        ids = torch.tensor([prompt], device=device)
        gpu_launches = GpuLaunches(torch) if gpu else None
        with gpu_launches or (_real_reader() if count_real else nullcontext(None)) as read:
            probe = LaunchProbe(_fake_reader(torch) if fake else read)
            out = model.generate(ids, attention_mask=torch.ones_like(ids), do_sample=False,
                                 max_new_tokens=MAX_NEW_TOKENS, pad_token_id=0,
                                 return_dict_in_generate=True, output_scores=True,
                                 logits_processor=LogitsProcessorList([probe]), **kwargs)
        if gpu_launches is not None:
            probe.seen = gpu_launches.seen()
        results.append({
            "tokens": out.sequences[0, len(prompt):].tolist(),
            "scores": [s[0].float().cpu().tolist() for s in out.scores],
            "launches_per_step": probe.per_step(),
            "last_step_ops": probe.last_step_ops(),
        })
    return results


def run(which: str, ckpt: Path, names: list[str], out: Path | None = None) -> dict[str, Any]:
    if which == "fake":
        import fake_torch

        fake_torch.install()
    import torch
    import transformers

    fake = which == "fake"
    device = "cpu" if which == "real" else "cuda"  # "gpu": real torch on a real GPU
    report: dict[str, Any] = {"torch": torch.__version__, "transformers": transformers.__version__,
                              "models": {}}
    for name in names:
        start = time.perf_counter()
        auto: Any = transformers.AutoModelForCausalLM  # (its loader, as a user calls it)
        model = auto.from_pretrained(ckpt / name).to(device).eval()
        entry: dict[str, Any] = {}
        try:
            with torch.no_grad():
                logits = model(torch.tensor([PROMPTS[0]], device=device)).logits
            entry["logits"] = logits.float().cpu().tolist()
        except Exception as exc:  # reported: the test shows it
            entry["logits"] = {"error": _error(exc)}
        for mode in MODES:
            if which == "gpu" and mode not in GPU_MODES.get(name, MODES):
                continue
            compiled = mode == "compile" and (which != "real" or name in COMPILE_ORACLE)
            if compiled:
                from torch._dynamo.utils import counters

                graphs_before = counters["stats"]["unique_graphs"]
                # real torch: Dynamo's graphs only (backend "eager"), to count them
                options: dict[str, Any] = {"backend": "eager"} if which == "real" else {}
                model.forward = torch.compile(model.forward, **options)
            try:
                entry[mode] = _generate(model, torch, device, mode, fake)
            except Exception as exc:  # reported: the test shows it
                entry[mode] = {"error": _error(exc)}
            if compiled:
                entry["compile_graphs"] = counters["stats"]["unique_graphs"] - graphs_before
        entry["seconds"] = round(time.perf_counter() - start, 2)
        report["models"][name] = entry
        if out is not None:  # each model's results as soon as they are known
            out.write_text(json.dumps(report))
    return report


def _error(exc: BaseException) -> str:
    traceback.print_exc()
    return f"{type(exc).__name__}: {exc}"[:2000]


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("ckpt", type=Path)
    r = sub.add_parser("run")
    r.add_argument("--torch", choices=("fake", "real", "gpu"), required=True)
    r.add_argument("--write", action="store_true", help="write the checkpoints first")
    r.add_argument("ckpt", type=Path)
    r.add_argument("out", type=Path)
    r.add_argument("models", nargs="*", default=list(MODELS))
    args = parser.parse_args()
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    if args.cmd == "write":
        write(args.ckpt)
    else:
        if args.write:
            write(args.ckpt)
        run(args.torch, args.ckpt, args.models, args.out)
    sys.exit(0)


if __name__ == "__main__":
    main()
