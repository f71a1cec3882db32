"""What every third-party driver shares (tests/test_thirdparty.py runs the drivers).

A driver runs one unchanged third-party codebase in one interpreter, on one torch:

    python tests/thirdparty/<name>_run.py --torch fake|real --src CHECKOUT --ckpt DIR
        (--write | --mode eager|compile|reduce-overhead --json OUT)

`--write` (real torch only) builds the codebase's model with a tiny config, gives it seeded
random weights and saves them as the codebase's own loader expects. The other form loads that
checkpoint with the codebase's loading code, generates greedily with the codebase's generate
function and writes tokens, logits and the launches of each decode step as JSON.

fake: fake_torch is installed as `torch` before anything imports it; the model runs on "cuda".
real: the real torch runs everything on "cpu" (the oracle), or on the device that
FAKE_TORCH_THIRDPARTY_REAL_DEVICE names (e.g. "cuda" on a machine with a GPU: the launches of
each decode step are then counted by torch.profiler, for comparison with fake_torch's).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import io
import json
import os
import runpy
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

MODES = ("eager", "compile", "reduce-overhead")


def parse_args(doc: str | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--torch", choices=("fake", "real"), required=True)
    parser.add_argument("--src", type=Path, required=True, help="the codebase's checkout")
    parser.add_argument("--ckpt", type=Path, required=True, help="checkpoint folder")
    parser.add_argument("--write", action="store_true", help="write the checkpoint and exit")
    parser.add_argument("--mode", choices=MODES, default="eager")
    parser.add_argument("--json", type=Path, help="where to write the results")
    args = parser.parse_args()
    if args.write and args.torch != "real":
        parser.error("--write needs --torch real (the checkpoint is written by real torch)")
    if not args.write and args.json is None:
        parser.error("--json is required unless --write")
    return args


def load_torch(which: str) -> ModuleType:
    """`import torch` after installing fake_torch as torch when `which` is "fake"."""
    if which == "fake":
        import fake_torch

        fake_torch.install()
    import torch

    if (which == "fake") != ("fake" in torch.__version__):
        sys.exit(f"asked for {which} torch, got torch {torch.__version__}")
    return torch


REAL_DEVICE = os.environ.get("FAKE_TORCH_THIRDPARTY_REAL_DEVICE", "cpu")
# what the CUDA runtime calls a launch, as torch.profiler names the calls
PROFILED_LAUNCHES = {"cudaLaunchKernel": "kernel", "cudaLaunchKernelExC": "kernel",
                     "cuLaunchKernel": "kernel", "cuLaunchKernelEx": "kernel",
                     "cudaGraphLaunch": "graph", "cudaMemcpyAsync": "memcpy",
                     "cudaMemsetAsync": "memset"}


def device_for(which: str) -> str:
    return "cuda" if which == "fake" else REAL_DEVICE


def on_path(src: Path) -> None:
    """Let `import model` (etc.) find the checkout's modules first."""
    sys.path.insert(0, str(src))


def randomize(torch: ModuleType, state: dict[str, Any], seed: int = 0) -> dict[str, Any]:
    """Seeded random weights of the same names, shapes and dtypes. Scaled so that logits are
    spread (greedy tokens do not hinge on rounding): 1-D scales near 1, 1-D shifts near 0,
    matrices ~ N(0, 1/fan_in)."""
    gen = torch.Generator().manual_seed(seed)
    out: dict[str, Any] = {}
    tied: dict[tuple[int, tuple[int, ...]], Any] = {}  # tied weights stay tied
    for name, value in state.items():
        key = (value.data_ptr(), tuple(value.shape))
        if key in tied:
            out[name] = tied[key]
            continue
        if not value.is_floating_point():
            out[name] = value.clone()
            continue
        noise = torch.randn(value.shape, generator=gen, dtype=torch.float32)
        if value.dim() <= 1:
            is_scale = "weight" in name.rsplit(".", 1)[-1] or name.endswith("scale")
            noise = 1.0 + 0.1 * noise if is_scale else 0.1 * noise
        else:
            noise = noise / value.shape[-1] ** 0.5
        out[name] = tied[key] = noise.to(value.dtype).contiguous()
    return out


class Launches:
    """Launches of each call of wrapped callables (fake torch), grouped by label."""

    def __init__(self, torch: ModuleType) -> None:
        self.torch = torch
        self.counter = getattr(torch, "LaunchCounter", None)  # None on real torch
        self.profile = self.counter is None and REAL_DEVICE.startswith("cuda")
        self.calls: dict[str, list[dict[str, Any]]] = {}

    def _profiled(self, fn: Callable[..., Any], label: str, *args: Any, **kwargs: Any) -> Any:
        """Real torch on a GPU: the call's CUDA runtime launches, counted by the profiler."""
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            out = fn(*args, **kwargs)
            self.torch.cuda.synchronize()
        kinds: dict[str, int] = {}
        for event in prof.events():
            kind = PROFILED_LAUNCHES.get(event.name)
            if kind is not None:
                kinds[kind] = kinds.get(kind, 0) + 1
        self.calls.setdefault(label, []).append({"total": sum(kinds.values()), "kinds": kinds})
        return out

    def snapshot(self) -> tuple[int, dict[str, int]]:
        if self.counter is None:
            return 0, {}
        return self.counter.n, dict(self.counter.by_kind)

    def record(self, label: str, before: tuple[int, dict[str, int]]) -> None:
        if self.counter is None:
            return
        n, kinds = self.snapshot()
        delta = {k: v - before[1].get(k, 0) for k, v in kinds.items()
                 if v - before[1].get(k, 0)}
        self.calls.setdefault(label, []).append({"total": n - before[0], "kinds": delta})

    def wrap(self, fn: Callable[..., Any], label: str) -> Callable[..., Any]:
        @functools.wraps(fn)  # the codebase may read its signature (transformers' generate)
        def counted(*args: Any, **kwargs: Any) -> Any:
            if self.profile:
                return self._profiled(fn, label, *args, **kwargs)
            before = self.snapshot()
            out = fn(*args, **kwargs)
            self.record(label, before)
            return out

        return counted

    @contextmanager
    def patched(self, owner: Any, name: str, label: str) -> Iterator[None]:
        """owner.name replaced by a counting wrapper for the block (the codebase looks it up
        at call time), then restored."""
        original = getattr(owner, name)
        setattr(owner, name, self.wrap(original, label))
        try:
            yield
        finally:
            setattr(owner, name, original)


def run_script(src: Path, script: str, argv: list[str]) -> tuple[dict[str, Any], str]:
    """Execute the checkout's script as `python script argv...` from the checkout's folder
    (karpathy's sample.py files exec 'configurator.py' from the working directory);
    its globals when it ended, and what it printed."""
    out = io.StringIO()
    cwd, old_argv = os.getcwd(), sys.argv
    sys.argv = [script, *argv]
    os.chdir(src)
    try:
        with contextlib.redirect_stdout(out):
            ran = runpy.run_path(str(src / script), run_name="__main__")
    finally:
        os.chdir(cwd)
        sys.argv = old_argv
    return ran, out.getvalue()


def as_list(tensor: Any) -> Any:
    """A tensor's values as nested Python lists of float (any device, any float dtype)."""
    return tensor.detach().float().cpu().tolist()


def write_results(path: Path, torch: ModuleType, mode: str, tokens: list[list[int]],
                  logits: Any, launches: Launches, **extra: Any) -> None:
    result = {"torch": torch.__version__, "mode": mode, "tokens": tokens,
              "logits": as_list(logits), "logits_shape": list(logits.shape),
              "logits_dtype": str(logits.dtype).removeprefix("torch."),
              "launches": launches.calls if launches.counter is not None or launches.profile
              else None, "device": device_for("fake" if launches.counter else "real"),
              **extra}
    path.write_text(json.dumps(result))


@contextmanager
def cuda_on_cpu(torch: ModuleType) -> Iterator[None]:
    """Real torch only: run code that hard-codes "cuda" (`.cuda()`, device="cuda") on the CPU,
    for the oracle run of a codebase that cannot be told its device."""
    from torch.overrides import TorchFunctionMode

    def cpu(device: Any) -> Any:
        if device is not None and torch.device(device).type == "cuda":
            return torch.device("cpu")
        return device

    class CudaOnCpu(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (),
                               kwargs: Any = None) -> Any:
            kwargs = dict(kwargs or {})
            if func is torch.Tensor.cuda:
                return args[0]
            if "device" in kwargs:
                kwargs["device"] = cpu(kwargs["device"])
            return func(*args, **kwargs)

    with CudaOnCpu():
        yield
