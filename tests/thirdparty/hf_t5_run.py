"""Hugging Face transformers (written against transformers 5.25.0, installed with pip):
T5ForConditionalGeneration (an encoder-decoder: the encoder runs once over the prompt, the
decoder generates with self-attention over its own cache and cross-attention over the
encoder's output; relative position buckets instead of positions, RMS-style T5 LayerNorm,
relu MLP), through from_pretrained and generate, unchanged.

The same steps as hf_llama_run.py (save_pretrained of a tiny random model, from_pretrained,
generate(do_sample=False) eagerly with the dynamic cache, and with a static cache compiled by
generate itself: reduce-overhead, or CompileConfig(fullgraph=True, mode="default")). The
first decoder step also projects the encoder's output to the cross-attention keys and values
(the "prefill" here). 7 new tokens: the decoder's self-attention length runs 2..7, never a
multiple of 8, where the eager sdpa path (a float mask: memory-efficient kernel) stops padding
its mask (constant_pad_nd) and a step would launch 2 fewer kernels, as on CUDA torch.
"""

from __future__ import annotations

import common
import hf_llama_run

ARCH = "T5ForConditionalGeneration"
CONFIG = dict(vocab_size=128, d_model=64, d_kv=16, d_ff=128, num_layers=2, num_decoder_layers=2,
              num_heads=4, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    if args.write:
        hf_llama_run.write(torch, args.ckpt, ARCH, CONFIG)
    else:
        hf_llama_run.run(torch, args, ARCH, new_tokens=7)


if __name__ == "__main__":
    main()
