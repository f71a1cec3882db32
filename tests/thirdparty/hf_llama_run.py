"""Hugging Face transformers (written against transformers 5.25.0, installed with pip):
LlamaForCausalLM through from_pretrained and generate, unchanged.

--write saves a tiny random Llama (2 layers, 4 query heads over 2 KV heads, 128 tokens) with
save_pretrained (config.json + model.safetensors). The run loads it with
from_pretrained(dtype=float32) onto the device and calls generate(do_sample=False) with token
ids, asking for the logits of each step (output_logits=True, return_dict_in_generate=True):
  eager: the default dynamic KV cache, model.forward per step;
  reduce-overhead: a static cache (cache_implementation="static"), with which generate
  compiles the decode steps itself on a GPU (torch.compile(model.__call__) under its default
  CompileConfig: mode="reduce-overhead");
  compile: the same with compile_config=CompileConfig(fullgraph=True, mode="default").
Compiled, generate runs twice (the first compiles and records); the decode steps counted are
the calls of that compiled __call__ (model._compiled_call).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import common

ARCH = "LlamaForCausalLM"
CONFIG = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
              num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
PROMPT = [1, 5, 9, 23, 7, 64, 3, 99]
NEW_TOKENS = 8


def _classes(arch: str) -> tuple[Any, Any]:
    import transformers

    model_cls = getattr(transformers, arch)
    return model_cls.config_class, model_cls


def write(torch: Any, ckpt: Path, arch: str = ARCH, config: dict[str, Any] = CONFIG) -> None:
    config_cls, model_cls = _classes(arch)
    model = model_cls(config_cls(**config))
    model.load_state_dict(common.randomize(torch, model.state_dict()))
    model.save_pretrained(ckpt)


def run(torch: Any, args: Any, arch: str = ARCH, new_tokens: int = NEW_TOKENS) -> None:
    _, model_cls = _classes(arch)
    device = common.device_for(args.torch)
    model = model_cls.from_pretrained(args.ckpt, dtype=torch.float32).to(device).eval()
    from transformers import CompileConfig

    options: dict[str, Any] = {}
    if args.mode != "eager":
        options["cache_implementation"] = "static"
    if args.mode == "compile":
        options["compile_config"] = CompileConfig(fullgraph=True, mode="default")
    launches = common.Launches(torch)
    prompt = torch.tensor([PROMPT], device=device)
    if args.mode == "eager":
        model.forward = launches.wrap(model.forward, "step")
    else:
        model.generate(prompt, max_new_tokens=new_tokens, do_sample=False, **options)
        if args.torch == "fake":  # generate compiled on "cuda" (the CPU oracle never does)
            model._compiled_call = launches.wrap(model._compiled_call, "decode_step")
    out = model.generate(prompt, max_new_tokens=new_tokens, do_sample=False,
                         output_logits=True, return_dict_in_generate=True, **options)
    if args.mode == "eager":
        steps = launches.calls.pop("step", [])  # the first forward is the prefill
        launches.calls.update(prefill=steps[:1], decode_step=steps[1:])
    logits = torch.cat(out.logits)  # [new_tokens, vocab]: the logits each token came from
    common.write_results(args.json, torch, args.mode, out.sequences.tolist(), logits, launches)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    write(torch, args.ckpt) if args.write else run(torch, args)


if __name__ == "__main__":
    main()
