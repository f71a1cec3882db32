"""Hugging Face transformers (written against transformers 5.25.0, installed with pip):
GPTNeoXForCausalLM (the Pythia models: fused query_key_value, partial rotary
(rotary_pct=0.25), parallel attention and MLP residuals, LayerNorm, gelu),
through from_pretrained and generate, unchanged.

The same steps as hf_llama_run.py (save_pretrained of a tiny random model, from_pretrained,
generate(do_sample=False) eagerly with the dynamic cache, and with a static cache compiled by
generate itself: reduce-overhead, or CompileConfig(fullgraph=True, mode="default")) over
another model family's own modeling code.
"""

from __future__ import annotations

import common
import hf_llama_run

ARCH = "GPTNeoXForCausalLM"
CONFIG = dict(vocab_size=128, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
              num_attention_heads=4, max_position_embeddings=64, rotary_pct=0.25)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    if args.write:
        hf_llama_run.write(torch, args.ckpt, ARCH, CONFIG)
    else:
        hf_llama_run.run(torch, args, ARCH)


if __name__ == "__main__":
    main()
