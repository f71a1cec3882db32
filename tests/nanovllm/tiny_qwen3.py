"""Write a tiny random Qwen3 checkpoint that nano-vllm and transformers load as a real one.

The folder holds what `LLM(path)` reads: config.json (Qwen3ForCausalLM, bfloat16, a handful of
layers), model.safetensors (random weights written with safetensors' numpy API, so writing it
needs no torch) and a byte-level tokenizer (tokenizer.json made with the `tokenizers` library,
plus tokenizer_config.json) that transformers' AutoTokenizer loads.

    python tiny_qwen3.py DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import ml_dtypes
import numpy as np

EOS = "<|endoftext|>"
NUM_BYTES = 256  # byte-level vocabulary: one token per byte, then EOS
# then unused special tokens up to a vocabulary that 4 ranks split evenly (nano-vllm's
# vocab-parallel embedding and head need vocab_size % tensor_parallel_size == 0)
PADDING = [f"<|unused{i}|>" for i in range(3)]
CONFIG = {
    "architectures": ["Qwen3ForCausalLM"],
    "model_type": "qwen3",
    "vocab_size": NUM_BYTES + 1 + len(PADDING),
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_hidden_layers": 2,
    "num_attention_heads": 8,
    "num_key_value_heads": 4,  # GQA: 2 query heads per KV head; 4 ranks get one KV head each
    "head_dim": 16,
    "hidden_act": "silu",
    "max_position_embeddings": 512,  # nano-vllm's RoPE cache has one row per position
    "rms_norm_eps": 1e-6,
    "rope_theta": 1000000.0,
    "attention_bias": False,  # Qwen3: q_norm / k_norm instead of a QKV bias
    "tie_word_embeddings": False,
    "bos_token_id": NUM_BYTES,
    "eos_token_id": NUM_BYTES,
    "dtype": "bfloat16",
}


def _weights(seed: int) -> dict[str, np.ndarray]:
    """Every parameter Qwen3ForCausalLM has, by its Hugging Face name, as bfloat16 arrays."""
    rng = np.random.default_rng(seed)
    c = CONFIG
    hidden, inter, head_dim = c["hidden_size"], c["intermediate_size"], c["head_dim"]
    q_size = c["num_attention_heads"] * head_dim
    kv_size = c["num_key_value_heads"] * head_dim

    def linear(out_features: int, in_features: int) -> np.ndarray:
        return rng.normal(0.0, in_features ** -0.5, (out_features, in_features))

    def norm(size: int) -> np.ndarray:
        return 1.0 + rng.normal(0.0, 0.1, size)

    weights = {"model.embed_tokens.weight": rng.normal(0.0, 1.0, (c["vocab_size"], hidden)),
               "model.norm.weight": norm(hidden),
               "lm_head.weight": linear(c["vocab_size"], hidden) * 4.0}  # peaked logits
    for i in range(c["num_hidden_layers"]):
        p = f"model.layers.{i}."
        weights |= {
            p + "input_layernorm.weight": norm(hidden),
            p + "post_attention_layernorm.weight": norm(hidden),
            p + "self_attn.q_proj.weight": linear(q_size, hidden),
            p + "self_attn.k_proj.weight": linear(kv_size, hidden),
            p + "self_attn.v_proj.weight": linear(kv_size, hidden),
            p + "self_attn.o_proj.weight": linear(hidden, q_size),
            p + "self_attn.q_norm.weight": norm(head_dim),
            p + "self_attn.k_norm.weight": norm(head_dim),
            p + "mlp.gate_proj.weight": linear(inter, hidden),
            p + "mlp.up_proj.weight": linear(inter, hidden),
            p + "mlp.down_proj.weight": linear(hidden, inter),
        }
    return {name: w.astype(ml_dtypes.bfloat16) for name, w in weights.items()}


def _write_tokenizer(folder: Path) -> None:
    """A byte-level BPE without merges: every byte is one token; EOS is the last id."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    byte_chars = pre_tokenizers.ByteLevel.alphabet()  # the 256 printable stand-ins for bytes
    vocab = {ch: i for i, ch in enumerate(sorted(byte_chars))}
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([EOS, *PADDING])  # ids NUM_BYTES, NUM_BYTES + 1, ...
    assert tokenizer.token_to_id(EOS) == NUM_BYTES
    assert tokenizer.get_vocab_size() == CONFIG["vocab_size"]
    tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "tokenizer_class": "PreTrainedTokenizerFast", "eos_token": EOS, "bos_token": None,
        "model_max_length": CONFIG["max_position_embeddings"]}, indent=1))


def write_tiny_qwen3(folder: str | Path, seed: int = 0) -> Path:
    """Write the checkpoint into `folder` (created if missing); return its path."""
    from safetensors.numpy import save_file

    path = Path(folder)
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps(CONFIG, indent=1))
    save_file(_weights(seed), str(path / "model.safetensors"))
    _write_tokenizer(path)
    return path


if __name__ == "__main__":
    print(write_tiny_qwen3(sys.argv[1]))
