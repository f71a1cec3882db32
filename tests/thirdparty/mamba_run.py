"""johnma2006/mamba-minimal (written against commit 03de542): model.py and the generate()
of its demo.ipynb, unchanged.

--write saves the state dict of a tiny Mamba (2 layers, d_model 32, d_state 16, a 64-token
vocabulary) with torch.save (the repo's own loader, from_pretrained, downloads from the Hugging
Face hub). The run builds Mamba(ModelArgs(...)), loads the state dict and calls the notebook's
generate() (its cell executed as written) with sample=False (greedy: argmax) and top_k=None.
The notebook's tokenizer (a hub download) is replaced by a stand-in that maps characters to
ids and back. Each decode step is one Mamba.forward over the whole sequence: embedding,
depthwise conv1d, the selective scan's per-position loop, einops einsums. mamba-minimal never
compiles; the compile mode compiles Mamba.forward in place (`Mamba.forward =
torch.compile(Mamba.forward)`).

Logits: Mamba.forward over the generated sequence, the rows that predicted generated tokens.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import common

CONFIG = dict(d_model=32, n_layer=2, vocab_size=64)
PROMPT = "Mamba is the"
NEW_TOKENS = 6


class CharTokenizer:
    """What generate() asks of a Hugging Face tokenizer: __call__(...).input_ids, decode."""

    def __init__(self, torch: Any, device: str) -> None:
        self.torch, self.device = torch, device

    def __call__(self, text: str, return_tensors: str) -> Any:
        assert return_tensors == "pt"
        ids = [[ord(c) % CONFIG["vocab_size"] for c in text]]

        class Encoded:
            input_ids = self.torch.tensor(ids, device=self.device)

        return Encoded

    def decode(self, ids: list[int]) -> str:
        return "".join(chr(32 + i) for i in ids)


def _notebook_generate(src: Path) -> Any:
    cells = json.loads((src / "demo.ipynb").read_text())["cells"]
    code = next("".join(c["source"]) for c in cells
                if c["cell_type"] == "code" and "def generate(" in "".join(c["source"]))
    namespace: dict[str, Any] = {}
    exec(compile(code, str(src / "demo.ipynb"), "exec"), namespace)
    return namespace["generate"]


def write(torch: Any, ckpt: Path) -> None:
    from model import Mamba, ModelArgs  # type: ignore[import-not-found]

    state = common.randomize(torch, Mamba(ModelArgs(**CONFIG)).state_dict())
    ckpt.mkdir(parents=True, exist_ok=True)
    torch.save(state, ckpt / "model.pt")


def run(torch: Any, args: Any) -> None:
    from model import Mamba, ModelArgs

    device = common.device_for(args.torch)
    model = Mamba(ModelArgs(**CONFIG))
    model.load_state_dict(torch.load(args.ckpt / "model.pt", map_location=device))
    model.to(device)
    if args.mode != "eager":
        Mamba.forward = torch.compile(Mamba.forward)
    launches = common.Launches(torch)
    generate = _notebook_generate(args.src)
    tokenizer = CharTokenizer(torch, device)
    with launches.patched(Mamba, "forward", "decode_step"):
        text = generate(model, tokenizer, PROMPT, n_tokens_to_gen=NEW_TOKENS, sample=False,
                        top_k=None)
    seq = torch.tensor([[ord(c) - 32 for c in text]], device=device)
    with torch.no_grad():
        logits = model(seq)[0, len(PROMPT) - 1:-1]
    common.write_results(args.json, torch, args.mode, seq.tolist(), logits, launches,
                         printed=text)


def main() -> None:
    args = common.parse_args(__doc__)
    torch = common.load_torch(args.torch)
    common.on_path(args.src)
    write(torch, args.ckpt) if args.write else run(torch, args)


if __name__ == "__main__":
    main()
