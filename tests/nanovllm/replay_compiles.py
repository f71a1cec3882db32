"""Replay, on REAL torch, the calls a fake_torch run of nano-vllm made to its @torch.compile'd
functions, and count the graphs each call compiled: the oracle for fake_torch's Dynamo.

    NANOVLLM_PATH=/path/to/nano-vllm python replay_compiles.py RUN.json [OUT.json]

RUN.json is what run_nanovllm.py --json wrote: every call of RMSNorm.rms_forward /
add_rms_forward and Sampler.forward in order, with its module instance (its eps, its weight's
shape and dtype), its arguments' shapes, strides, storage offsets and dtypes, and the global
state it ran under (grad mode, inference mode, default dtype, default device). nano-vllm's
layernorm.py and sampler.py are loaded by file path (their only import is torch), so neither
nanovllm/__init__ nor transformers is imported. Each call is repeated on CPU tensors of random
values built to that description, under that state, on one instance per recorded instance, and
`torch._dynamo.utils.counters["stats"]["unique_graphs"]` gives the graphs it compiled. The
default device is replayed as recorded ("cuda" too: the calls create no tensor from it).
An argument is an inference tensor when the recording says so; when the fake did not know,
it is built under the inference mode its call ran in.

Prints, and writes to OUT.json, {"graphs": [per call], "total": {function: graphs}}.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from contextlib import nullcontext
from pathlib import Path
from types import ModuleType
from typing import Any

import torch
from torch._dynamo.utils import counters


def _load(checkout: Path, name: str) -> ModuleType:
    path = checkout / "nanovllm" / "layers" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"nanovllm_layers_{name}", path)
    assert spec is not None and spec.loader is not None, path
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _dtype(name: str) -> torch.dtype:
    dt = getattr(torch, name)
    assert isinstance(dt, torch.dtype), name
    return dt


def _tensor(meta: dict[str, Any]) -> torch.Tensor:
    """Random values laid out as recorded: shape, strides and offset into a larger storage."""
    extent = sum((n - 1) * s for n, s in zip(meta["shape"], meta["stride"], strict=True)) + 1
    made_in = meta.get("inference")  # None: the fake could not tell; the call's own mode
    with torch.inference_mode(made_in) if made_in is not None else nullcontext():
        base = torch.randn(meta["offset"] + extent, device="cpu").to(_dtype(meta["dtype"]))
    t = base.as_strided(meta["shape"], meta["stride"], meta["offset"])
    return t.requires_grad_(meta["requires_grad"]) if meta["requires_grad"] else t


def _instance(call: dict[str, Any], classes: dict[str, type]) -> Any:
    cls_name = call["fn"].split(".")[0]
    if call["weight"] is None:
        return classes[cls_name]()
    previous = torch.get_default_dtype()
    torch.set_default_dtype(_dtype(call["weight"]["dtype"]))  # as nano-vllm builds its model
    try:
        with torch.device("cpu"):
            return classes[cls_name](call["weight"]["shape"][0], eps=call["eps"])
    finally:
        torch.set_default_dtype(previous)


def replay(calls: list[dict[str, Any]], checkout: Path) -> list[int]:
    """The graphs each call compiled, replayed in order on real torch."""
    classes = {"RMSNorm": _load(checkout, "layernorm").RMSNorm,
               "Sampler": _load(checkout, "sampler").Sampler}
    instances: dict[int, Any] = {}
    graphs = []
    for call in calls:
        if call["instance"] not in instances:
            instances[call["instance"]] = _instance(call, classes)
        module = instances[call["instance"]]
        torch.set_default_dtype(_dtype(call["default_dtype"]))
        torch.set_default_device(call["default_device"])
        mode = torch.inference_mode() if call["inference_mode"] else nullcontext()
        with torch.set_grad_enabled(call["grad_enabled"]), mode:
            args = [_tensor(a) for a in call["args"]]
            before = counters["stats"]["unique_graphs"]
            getattr(module, call["fn"].split(".")[1])(*args)
            graphs.append(counters["stats"]["unique_graphs"] - before)
    torch.set_default_device(None)
    torch.set_default_dtype(torch.float32)
    return graphs


def main(argv: list[str]) -> int:
    checkout = os.environ.get("NANOVLLM_PATH")
    if not checkout or len(argv) not in (1, 2):
        sys.exit("usage: NANOVLLM_PATH=CHECKOUT python replay_compiles.py RUN.json [OUT.json]")
    calls = json.loads(Path(argv[0]).read_text())["compiled_calls"]
    graphs = replay(calls, Path(checkout))
    total: dict[str, int] = {}
    for call, n in zip(calls, graphs, strict=True):
        total[call["fn"]] = total.get(call["fn"], 0) + n
    result = {"torch": torch.__version__, "graphs": graphs, "total": total}
    print(json.dumps(result))
    if len(argv) == 2:
        Path(argv[1]).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
