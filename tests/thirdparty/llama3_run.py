"""meta-llama/llama3 (written against commit a0940f9): llama/generation.py and llama/model.py,
unchanged, over fairscale's model-parallel layers (one process, model parallel size 1).

--write saves what Llama.build reads from a checkpoint folder: consolidated.00.pth (the state
dict of a tiny Transformer: 2 layers, 4 query heads over 2 KV heads), params.json, and a
tiktoken BPE file of the 256 single bytes (the tokenizer then has 256 + 256 special tokens,
the model's vocabulary). The run calls Llama.build unchanged: the process group ("nccl" from
RANK/WORLD_SIZE/MASTER_* in the environment) and fairscale's model parallel group,
torch.load(map_location="cpu"), torch.set_default_tensor_type(torch.cuda.BFloat16Tensor), the
Transformer (complex rotary tables from torch.polar, a KV cache made with `.cuda()`),
load_state_dict(strict=False); then Llama.generate with token ids and temperature=0 (greedy
argmax), which stops at the tokenizer's stop tokens (torch.isin). Each decode step is one
Transformer.forward of one token at start_pos against the cache. llama3 never compiles; the
compile mode compiles Transformer.forward in place (`Transformer.forward =
torch.compile(Transformer.forward)`).

Real torch (the oracle, on the CPU) needs the GPU-only calls pointed at the CPU: `.cuda()` and
device="cuda" (a TorchFunctionMode), torch.cuda.set_device, is_bf16_supported (True, as on the
GPUs Llama 3 targets: both runs use bfloat16) and torch.cuda.BFloat16Tensor (the CPU's); and its
process group is gloo. The codebase's files are not touched on either side.

Logits: Transformer.forward over the generated sequence from start_pos 0, eagerly.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import common

PARAMS = dict(dim=64, n_layers=2, n_heads=4, n_kv_heads=2, vocab_size=512, multiple_of=32,
              norm_eps=1e-5, rope_theta=500000.0)
PROMPT = [128, 72, 101, 108, 108, 111, 44, 32, 119]  # ids (the BPE file's single bytes)
NEW_TOKENS = 8
MAX_SEQ_LEN = 32


def _distributed(torch: Any, which: str, tmp: Path) -> None:
    """One-process group: fake_torch's nccl from the environment, as Llama.build would make
    it; real torch (CPU) a gloo group made here, before build looks."""
    os.environ.update(RANK="0", LOCAL_RANK="0", WORLD_SIZE="1", MASTER_ADDR="localhost",
                      MASTER_PORT="29531")
    if which == "real" and not torch.distributed.is_initialized():
        torch.distributed.init_process_group("gloo", init_method=f"file://{tmp}/pg", rank=0,
                                             world_size=1)


@contextlib.contextmanager
def _oracle(torch: Any, which: str) -> Iterator[None]:
    """Real torch on the CPU: the GPU-only calls the codebase makes, pointed at the CPU."""
    if which == "fake":
        yield
        return
    cuda = torch.cuda
    saved = (cuda.set_device, cuda.is_bf16_supported, torch.set_default_tensor_type)
    set_type = torch.set_default_tensor_type
    cuda.set_device = lambda device: None
    cuda.is_bf16_supported = lambda *args, **kwargs: True
    torch.set_default_tensor_type = lambda t: set_type(
        getattr(torch, t.__name__) if getattr(t, "__module__", "") == "torch.cuda" else t)
    try:
        with common.cuda_on_cpu(torch):
            yield
    finally:
        cuda.set_device, cuda.is_bf16_supported, torch.set_default_tensor_type = saved
        torch.set_default_dtype(torch.float32)


def write(torch: Any, ckpt: Path) -> None:
    import fairscale.nn.model_parallel.initialize as fs_init  # type: ignore[import-untyped]
    from llama.model import ModelArgs, Transformer  # type: ignore[import-not-found]

    ckpt.mkdir(parents=True, exist_ok=True)
    _distributed(torch, "real", ckpt)
    fs_init.initialize_model_parallel(1)
    with common.cuda_on_cpu(torch):
        model = Transformer(ModelArgs(max_batch_size=1, max_seq_len=MAX_SEQ_LEN, **PARAMS))
    torch.save(common.randomize(torch, model.state_dict()), ckpt / "consolidated.00.pth")
    (ckpt / "params.json").write_text(json.dumps(PARAMS))
    (ckpt / "tokenizer.model").write_text(
        "".join(f"{base64.b64encode(bytes([i])).decode()} {i}\n" for i in range(256)))


def run(torch: Any, args: Any) -> None:
    from llama.generation import Llama  # type: ignore[import-not-found]
    from llama.model import Transformer

    _distributed(torch, args.torch, args.ckpt)
    if args.mode != "eager":  # llama3 never compiles: compile its forward, as a decorator would
        Transformer.forward = torch.compile(Transformer.forward)
    launches = common.Launches(torch)
    with _oracle(torch, args.torch):
        llama = Llama.build(str(args.ckpt), str(args.ckpt / "tokenizer.model"),
                            max_seq_len=MAX_SEQ_LEN, max_batch_size=1, model_parallel_size=1)
        with launches.patched(Transformer, "forward", "step"):
            out, _ = llama.generate([PROMPT], max_gen_len=NEW_TOKENS, temperature=0.0)
        seq = torch.tensor([PROMPT + out[0]], device=common.device_for(args.torch))
        logits = llama.model.forward(seq, 0)[0, len(PROMPT) - 1:-1]
    steps = launches.calls.pop("step", [])  # the first forward is the prompt's prefill
    launches.calls.update(prefill=steps[:1], decode_step=steps[1:])
    common.write_results(args.json, torch, args.mode, seq.tolist(), logits, launches)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    common.on_path(args.src)
    write(torch, args.ckpt) if args.write else run(torch, args)


if __name__ == "__main__":
    main()
