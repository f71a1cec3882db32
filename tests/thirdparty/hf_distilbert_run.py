"""Hugging Face transformers (written against transformers 5.25.0, installed with pip):
DistilBertForMaskedLM (no token types, separate q_lin/k_lin/v_lin/out_lin projections, a
vocab projector over a LayerNorm'd transform), through from_pretrained and its forward,
unchanged: the same steps as hf_bert_run.py.
"""

from __future__ import annotations

import common
import hf_bert_run
import hf_llama_run

ARCH = "DistilBertForMaskedLM"
CONFIG = dict(vocab_size=128, dim=64, hidden_dim=128, n_layers=2, n_heads=4,
              max_position_embeddings=64)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    if args.write:
        hf_llama_run.write(torch, args.ckpt, ARCH, CONFIG)
    else:
        hf_bert_run.run(torch, args, ARCH)


if __name__ == "__main__":
    main()
