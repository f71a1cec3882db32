"""gpt-fast's mixtral-moe (pytorch-labs/gpt-fast at commit 32971d3, folder mixtral-moe/):
its model.py and generate.py, unchanged.

The same steps as gptfast_run.py (meta-device build, torch.load(mmap=True, weights_only=True),
load_state_dict(assign=True), static KV cache, decode_one_token compiled with
mode="reduce-overhead", greedy top_k=1) in bfloat16 (main()'s precision: mixtral-moe's
KV cache is always bfloat16), over a tiny mixture of experts: 4 experts, 2 active
per token, each expert's weights gathered by the router's topk indices and applied by einsum.
"""

from __future__ import annotations

import common
import gptfast_run

CONFIG = dict(block_size=64, vocab_size=96, n_layer=2, n_head=4, n_local_heads=2, dim=64,
              intermediate_size=64, num_experts=4, num_activated_experts=2)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    common.on_path(args.src / "mixtral-moe")
    if args.write:
        gptfast_run.write(torch, args.ckpt, CONFIG)
    else:
        gptfast_run.run(torch, args, CONFIG, batch={}, precision="bfloat16")


if __name__ == "__main__":
    main()
