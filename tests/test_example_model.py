"""The example Llama (examples/llama.py) on real torch and on fake_torch: same numbers, same
launches.

Real torch runs here, on the CPU. fake_torch runs the very same file in a subprocess under
`python -m fake_torch run` (this process has real torch imported, so it cannot install
fake_torch), on its simulated "cuda" device, with the weights real torch initialised (passed
through numpy). Both run prefill, greedy decode steps and one temperature-sampled step.

Launch counts: each fake_torch step's op-name list must equal, in order, the ops real torch
dispatches for the same step that a GPU would launch, as its CUDA build dispatches them
(`oracles.torch_launches(cuda=True)`: each RMSNorm is one `_fused_rms_norm`), under `no_grad`
(under `inference_mode` composite ops would reach the dispatch mode undecomposed). One
documented name difference is normalised: attention is one kernel
whose name depends on the backend torch picks (`_scaled_dot_product_flash_attention_for_cpu` on
the CPU, `_scaled_dot_product_efficient_attention` on CUDA with a mask, ...).
"""

from __future__ import annotations

import difflib
import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from oracles import torch_launches

torch = pytest.importorskip("torch", reason="real torch (CPU build) not installed")

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"
BATCH, PROMPT_LEN, DECODE_STEPS, TEMPERATURE, SEED = 2, 5, 3, 0.8, 0

_SDPA = "<scaled_dot_product_attention>"  # any backend's attention kernel
_SDPA_NAMES = {"_scaled_dot_product_flash_attention_for_cpu", "_scaled_dot_product_flash_attention",
               "_scaled_dot_product_efficient_attention", "_scaled_dot_product_cudnn_attention"}


def _normalise(ops: list[str]) -> list[str]:
    return [_SDPA if op in _SDPA_NAMES else op for op in ops]


def _load_llama() -> ModuleType:
    """examples/llama.py imported against real torch, under a private module name."""
    spec = importlib.util.spec_from_file_location("_example_llama_real", EXAMPLES / "llama.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look the module up while building the config
    spec.loader.exec_module(module)
    return module


# The fake_torch side: run by `python -m fake_torch run`, so `import torch` is fake_torch.
_FAKE_DRIVER = f"""
import json, sys
import numpy as np
import torch
from fake_torch._simulated._dispatch import record_ops

sys.path.insert(0, {str(EXAMPLES)!r})
from llama import Llama, LlamaConfig, decode_step, prefill

work = sys.argv[1]
data = np.load(work + "/inputs.npz")
model = Llama(LlamaConfig()).to("cuda").eval()
model.load_state_dict({{k: torch.from_numpy(data["w." + k]) for k in json.loads(
    open(work + "/names.json").read())}})
model.allocate_kv_cache({BATCH})
prompt = torch.tensor(data["prompt"], device="cuda")
logits, ops = [], []
with torch.no_grad():
    with record_ops() as step_ops:
        lg, tokens, positions = prefill(model, prompt)
    logits.append(lg.cpu().numpy()); ops.append(list(step_ops))
    for _ in range({DECODE_STEPS}):
        with record_ops() as step_ops:
            lg, tokens, positions = decode_step(model, tokens, positions)
        logits.append(lg.cpu().numpy()); ops.append(list(step_ops))
    with record_ops() as step_ops:
        lg, sampled, positions = decode_step(model, tokens, positions, {TEMPERATURE})
    ops.append(list(step_ops))
np.savez(work + "/fake.npz", logits=np.stack(logits), sampled=sampled.cpu().numpy())
open(work + "/ops.json", "w").write(json.dumps(ops))
"""


def _run_real(llama: ModuleType) -> dict[str, Any]:
    torch.manual_seed(SEED)
    model = llama.Llama(llama.LlamaConfig()).eval()
    model.allocate_kv_cache(BATCH)
    prompt = torch.randint(0, model.cfg.vocab_size, (BATCH, PROMPT_LEN))
    weights = {k: v.numpy().copy() for k, v in model.state_dict().items()}
    logits, ops = [], []
    with torch.no_grad():
        with torch_launches(cuda=True) as step_ops:
            lg, tokens, positions = llama.prefill(model, prompt)
        logits.append(lg.numpy().copy())
        ops.append(step_ops)
        for _ in range(DECODE_STEPS):
            with torch_launches(cuda=True) as step_ops:
                lg, tokens, positions = llama.decode_step(model, tokens, positions)
            logits.append(lg.numpy().copy())
            ops.append(step_ops)
        with torch_launches(cuda=True) as step_ops:
            llama.decode_step(model, tokens, positions, TEMPERATURE)
        ops.append(step_ops)
    return {"weights": weights, "prompt": prompt.numpy(), "logits": np.stack(logits), "ops": ops}


def _run_fake(work: Path, real: dict[str, Any]) -> dict[str, Any]:
    np.savez(work / "inputs.npz", prompt=real["prompt"],
             **{"w." + k: v for k, v in real["weights"].items()})
    (work / "names.json").write_text(json.dumps(list(real["weights"])))
    (work / "driver.py").write_text(_FAKE_DRIVER)
    done = subprocess.run([sys.executable, "-m", "fake_torch", "run", str(work / "driver.py"),
                           str(work)], cwd=REPO, capture_output=True, text=True, timeout=300,
                          check=False)
    if done.returncode != 0:
        pytest.fail(f"the example model failed on fake_torch:\n{done.stderr}", pytrace=False)
    out = np.load(work / "fake.npz")
    return {"logits": out["logits"], "sampled": out["sampled"],
            "ops": json.loads((work / "ops.json").read_text())}


@pytest.fixture(scope="module")
def llama() -> ModuleType:
    return _load_llama()


@pytest.fixture(scope="module")
def runs(llama: ModuleType, tmp_path_factory: pytest.TempPathFactory
         ) -> tuple[dict[str, Any], dict[str, Any]]:
    real = _run_real(llama)
    return real, _run_fake(tmp_path_factory.mktemp("example_model"), real)


def _assert_same_ops(step: str, fake: list[str], real: list[str]) -> None:
    fake, real = _normalise(fake), _normalise(real)
    if fake != real:
        diff = "\n".join(difflib.unified_diff(real, fake, "real torch non-view aten ops",
                                              "fake_torch launches", lineterm=""))
        pytest.fail(f"{step}: fake_torch launched {len(fake)} kernels, real torch dispatched "
                    f"{len(real)} non-view ops:\n{diff}", pytrace=False)


def test_kv_cache_decode_equals_full_recompute(llama: ModuleType) -> None:
    """The model itself (real torch): a decode step over the KV cache gives the logits of
    re-running the whole sequence from scratch, and a shorter attended prefix changes nothing."""
    torch.manual_seed(SEED)
    cfg = llama.LlamaConfig()
    model = llama.Llama(cfg).eval()
    model.allocate_kv_cache(BATCH)
    prompt = torch.randint(0, cfg.vocab_size, (BATCH, PROMPT_LEN))
    fresh = llama.Llama(cfg).eval()
    fresh.load_state_dict(model.state_dict())
    with torch.no_grad():
        _, tokens, positions = llama.prefill(model, prompt)
        seq = prompt
        for _ in range(2):
            seq = torch.cat([seq, tokens[:, None]], dim=1)
            logits, tokens, positions = llama.decode_step(model, tokens, positions)
            fresh.allocate_kv_cache(BATCH)
            expected, _, _ = llama.prefill(fresh, seq)
            torch.testing.assert_close(logits, expected, rtol=1e-5, atol=1e-5)
        fresh.allocate_kv_cache(BATCH)
        short = fresh(seq, torch.arange(seq.shape[1]).expand(seq.shape), seq.shape[1])
        torch.testing.assert_close(short, expected, rtol=1e-5, atol=1e-5)
    assert positions.tolist() == [[PROMPT_LEN + 2]] * BATCH


def test_logits_and_greedy_tokens_equal_real_torch(
        runs: tuple[dict[str, Any], dict[str, Any]]) -> None:
    real, fake = runs
    assert fake["logits"].shape == real["logits"].shape == (1 + DECODE_STEPS, BATCH, 256)
    np.testing.assert_allclose(fake["logits"], real["logits"], rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(fake["logits"].argmax(-1), real["logits"].argmax(-1))
    sampled = fake["sampled"]
    assert sampled.shape == (BATCH,) and sampled.dtype == np.int64
    assert ((sampled >= 0) & (sampled < 256)).all()


def test_prefill_launches_equal_real_torch_non_view_ops(
        runs: tuple[dict[str, Any], dict[str, Any]]) -> None:
    real, fake = runs
    _assert_same_ops("prefill", fake["ops"][0], real["ops"][0])


def test_decode_step_launches_equal_real_torch_non_view_ops(
        runs: tuple[dict[str, Any], dict[str, Any]]) -> None:
    real, fake = runs
    for i in range(1, 1 + DECODE_STEPS):
        _assert_same_ops(f"greedy decode step {i}", fake["ops"][i], real["ops"][i])
    _assert_same_ops("temperature decode step", fake["ops"][-1], real["ops"][-1])
    # the spec in numbers. Per layer 25: 2 RMSNorms (one _fused_rms_norm each), 4 mm (qkv, o,
    # gate_up, down), 2 rotaries x 5 (mul, neg, cat, mul, add), 2 index_copy_, 2 KV-head
    # expansions (clone), attention, 2 residual adds, silu, mul. Once per step, 8 before the
    # layers (slots add, mask le, where = 2 scalar_tensor + where, cos/sin index x 2,
    # embedding) and 4 after them (final RMSNorm, lm_head mm, argmax, next-positions add).
    # An H200 (torch 2.11) launched 64: these 62, and 2 more where cuBLAS split gate_up's
    # GEMM in two kernels (split-K), a heuristic of cuBLAS that fake_torch does not model.
    assert len(real["ops"][1]) == 25 * 2 + 8 + 4


def _run_generate(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *cmd, "--new-tokens", "3"], cwd=REPO,
                          capture_output=True, text=True, timeout=300, check=False)


def test_generate_runs_under_fake_torch_run(
        runs: tuple[dict[str, Any], dict[str, Any]]) -> None:
    real, _ = runs
    done = _run_generate("-m", "fake_torch", "run", "examples/generate.py")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("device cuda, batch 2, prompt [[")
    # on fake_torch each decode step reports its launches: real torch's non-view op count
    assert lines[1:3] == [f"decode step {i}: {len(real['ops'][1])} launches" for i in range(2)]
    generated = json.loads(lines[3].removeprefix("generated "))
    assert np.array(generated).shape == (2, 3)


def test_generate_runs_directly_on_real_torch() -> None:
    done = _run_generate("examples/generate.py")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("device cpu, batch 2, prompt [[")
    assert len(lines) == 2 and np.array(json.loads(lines[1].removeprefix("generated "))).shape \
        == (2, 3)

