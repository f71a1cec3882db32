"""the code inductor generates for examples/llama.py's decode step (bs 1 and 3)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples"))
import torch
from llama import Llama, LlamaConfig, prefill

torch.manual_seed(0)
model = Llama(LlamaConfig()).to("cuda").eval()
model.allocate_kv_cache(8)
compiled = torch.compile(model)
with torch.inference_mode():
    for bs in (1, 3):
        prompt = torch.randint(0, 256, (bs, 5), device="cuda")
        _, tokens, positions = prefill(model, prompt)
        positions = positions[:, 0]
        for _i in range(3):
            logits = compiled(tokens[:, None], positions[:, None])
            tokens = logits.argmax(-1)
            positions = positions + 1
print("ok")
