"""Pristine nano-vllm on fake_torch: LLM() eagerly and with CUDA graphs (issue 13).

Skipped unless NANOVLLM_PATH names a nano-vllm checkout (the folder holding nanovllm/; written
against commit bb823b3). NANOVLLM_PYTHON is the interpreter that runs it: one with fake_torch,
transformers, safetensors, tokenizers, tqdm and xxhash, and WITHOUT real torch (default: this
one). nano-vllm is imported unchanged; only `flash_attn` and `triton` are our plain-torch
stand-ins (tests/nanovllm/standins). tests/nanovllm/run_nanovllm.py writes a tiny random Qwen3
checkpoint, builds `LLM()` once per mode (each in its own process, in parallel), generates
three prompts (12, 8 and 5 tokens: decode batches 3, 2, 1) with seeded temperature sampling
and writes what it saw as JSON. Checked here:
  - LLM() builds both ways and every sequence gets its tokens;
  - eager and CUDA-graph runs sample the SAME tokens;
  - graphs are captured for batch sizes 8, 4, 2, 1 (largest first) and each decode step
    replays the smallest that fits the batch: one launch, plus the host copies around it;
  - nano-vllm's @torch.compile'd RMSNorm.rms_forward / add_rms_forward and Sampler.forward
    compile, call by call, as many graphs as real torch compiles for the same calls
    (tests/nanovllm/replay_compiles.py replays them on real torch, in this interpreter).
The stand-ins themselves are checked on real torch CPU against per-sequence references.

Tensor parallel (issue 28): the same checkpoint with tensor_parallel_size 2 and 4, eager and with
CUDA graphs, sampling greedily (run_nanovllm.py --greedy: temperature 1e-5; at 0.8 the ranks'
bf16 partial sums, rounded before the all_reduce adds them, move TP=4's logits enough to flip
one seeded draw, as real NCCL would). nano-vllm spawns its ranks itself; the runner gives the
simulated machine one GPU per rank (FAKE_TORCH_DEVICES=tp, inherited by the ranks). The TP runs
go one at a time (nano-vllm's TCPStore port 2333 and SharedMemory "nanovllm" are fixed). Checked:
  - every TP run generates the TP=1 tokens, eager and with graphs;
  - each rank's decode step, exactly: eager, the TP=1 step's kernels (the compiled calls'
    kernels set aside: Dynamo's recompile limit sends some of TP=4's RMSNorm calls to eager)
    plus the vocab-parallel embedding's mask (6 kernels) and, on rank 0, the gathered logits'
    cat; one NCCL all_reduce per row-parallel linear and the embedding, one gather (SendRecv)
    for the head; ranks 1.. copy no temperatures and read no tokens back. With graphs: one
    graph launch (its all_reduces inside), the host copies, the head's gather;
  - the simulated ms per decode step, printed per TP (a tiny model: the extra launches and
    collectives make each eager step slower, not faster).
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent / "nanovllm"
REPO = HERE.parents[1]  # the checkout whose fake_torch is under test
CHECKOUT = os.environ.get("NANOVLLM_PATH", "")
PYTHON = os.environ.get("NANOVLLM_PYTHON") or sys.executable
MODES = ("eager", "graphs")
TP_SIZES = (2, 4)
TIMEOUT_S = 300
LAYERS = 2  # tests/nanovllm/tiny_qwen3.py's num_hidden_layers

pytestmark = pytest.mark.skipif(
    not CHECKOUT, reason="set NANOVLLM_PATH to a nano-vllm checkout (and NANOVLLM_PYTHON to an "
    "interpreter with fake_torch and transformers) to run pristine nano-vllm on fake_torch")

# The host copies around one graph decode step (nano-vllm's prepare_decode / prepare_sample /
# run_model), by launch kind; the replay itself is the one "graph" launch.
GRAPH_STEP_KINDS = {
    "memcpy_h2d": 6,  # pinned input_ids, positions, slot_mapping, context_lens, block_tables,
    #                   temperatures -> device
    "memcpy_d2d": 5,  # the same five inputs -> the graph's static buffers
    "memset": 1,  # context_lens.zero_()
    "memcpy_d2h": 1,  # the sampled tokens' .tolist()
    "graph": 1,
}
GRAPH_STEP_KERNELS = 2  # slot_mapping.fill_(-1), lm_head's mm; then the compiled sampler's


def _run_all(commands: dict[str, list[str]], env: dict[str, str]) -> None:
    """Run the commands in parallel; fail with its stderr when one fails. Each runs in its own
    session: at a timeout its whole process group (nano-vllm's spawned ranks too) is killed."""
    procs = {key: subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, start_new_session=True)
             for key, cmd in commands.items()}
    for key, proc in procs.items():
        try:
            out, err = proc.communicate(timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            for p in procs.values():
                if p.poll() is None or p is proc:
                    _kill_group(p)
            out, err = proc.communicate()
            pytest.fail(f"{key}: {' '.join(commands[key])} ran past {TIMEOUT_S} s:\n"
                        f"{out[-3000:]}\n{err[-6000:]}", pytrace=False)
        _kill_group(proc)  # a rank a failed run left behind
        if proc.returncode != 0:
            pytest.fail(f"{key}: {' '.join(commands[key])} exited {proc.returncode}:\n"
                        f"{out[-3000:]}\n{err[-6000:]}", pytrace=False)


def _runner_env() -> dict[str, str]:
    """The runner's environment: this checkout's fake_torch first on the path (the runner's
    and the ranks' it spawns, whatever fake_torch NANOVLLM_PYTHON has installed)."""
    path = [str(REPO), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    return os.environ | {"NANOVLLM_PATH": CHECKOUT, "PYTHONPATH": os.pathsep.join(path)}


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill what is left of the process group `proc` leads (the runner and its ranks)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    """mode -> the runner's JSON for that mode."""
    tmp = tmp_path_factory.mktemp("nanovllm")
    env = _runner_env()
    _run_all({mode: [PYTHON, str(HERE / "run_nanovllm.py"), "--mode", mode,
                     "--json", str(tmp / f"{mode}.json")] for mode in MODES}, env)
    return {mode: json.loads((tmp / f"{mode}.json").read_text()) for mode in MODES}


@pytest.fixture(scope="module")
def real_graphs(runs: dict[str, dict[str, Any]], tmp_path_factory: pytest.TempPathFactory
                ) -> dict[str, list[int]]:
    """mode -> graphs compiled per recorded call, replayed on real torch."""
    pytest.importorskip("torch")
    import torch

    if "fake" in torch.__version__:
        pytest.skip("the compile-count oracle needs the real torch in this interpreter")
    return _replay(runs, tmp_path_factory.mktemp("replay"))


def _replay(runs: dict[Any, dict[str, Any]], tmp: Path) -> dict[Any, list[int]]:
    """key -> graphs compiled per call of runs[key]'s compiled calls, replayed on real torch
    (one process per run, in parallel)."""
    names = {key: "-".join(map(str, key)) if isinstance(key, tuple) else key for key in runs}
    for key, run in runs.items():
        (tmp / f"{names[key]}.json").write_text(json.dumps(run))
    env = os.environ | {"NANOVLLM_PATH": CHECKOUT, "TORCHINDUCTOR_COMPILE_THREADS": "1"}
    _run_all({names[key]: [sys.executable, str(HERE / "replay_compiles.py"),
                           str(tmp / f"{names[key]}.json"), str(tmp / f"{names[key]}.real.json")]
              for key in runs}, env)
    return {key: json.loads((tmp / f"{names[key]}.real.json").read_text())["graphs"]
            for key in runs}


def test_llm_builds_and_generates_both_ways(runs: dict[str, dict[str, Any]]) -> None:
    for mode, run in runs.items():
        assert [len(t) for t in run["tokens"]] == run["max_tokens"], mode
        phases = [s["phase"] for s in run["steps"]]
        assert phases[0] == "prefill" and phases[-1] == "decode", (mode, phases)
        # the prefill samples each sequence's first token; a decode step, one per unfinished one
        steps = range(max(run["max_tokens"]) - 1)
        batches = [sum(n - 1 > k for n in run["max_tokens"]) for k in steps]
        assert [s["tokens"] for s in run["steps"] if s["phase"] == "decode"] == batches, mode


def test_eager_and_cuda_graphs_sample_the_same_tokens(runs: dict[str, dict[str, Any]]
                                                       ) -> None:
    eager, graphs = runs["eager"], runs["graphs"]
    assert graphs["tokens"] == eager["tokens"]
    assert [(s["phase"], s["tokens"]) for s in graphs["steps"]] == \
           [(s["phase"], s["tokens"]) for s in eager["steps"]]


def test_graphs_are_captured_and_each_decode_step_is_one_replay(
        runs: dict[str, dict[str, Any]]) -> None:
    eager, graphs = runs["eager"], runs["graphs"]
    assert eager["graphs"] == [] and graphs["graphs"] == [8, 4, 2, 1]  # max_num_seqs 8
    decodes = [s for s in graphs["steps"] if s["phase"] == "decode"]
    fits = Counter(min(bs for bs in graphs["graphs"] if bs >= s["tokens"]) for s in decodes)
    assert {int(bs): n for bs, n in graphs["replays"].items()} == {8: 0, **fits}
    for step in decodes:
        kernels = GRAPH_STEP_KERNELS + step["sampler_launches"]
        assert step["kinds"] == GRAPH_STEP_KINDS | {"kernel": kernels}, step
        assert step["ops"]["cudaGraphLaunch"] == 1
        assert step["total"] == sum(GRAPH_STEP_KINDS.values()) + kernels
    for step, eager_step in zip(graphs["steps"], eager["steps"], strict=True):
        if step["phase"] == "decode":  # eagerly: the same host copies, the forward kernel by
            kinds = eager_step["kinds"]  # kernel instead of the replay and its staging
            assert kinds.keys() == {"kernel", "memcpy_h2d", "memcpy_d2h"}, kinds
            assert (kinds["memcpy_h2d"], kinds["memcpy_d2h"]) == (6, 1)
            assert eager_step["total"] > step["total"]


@pytest.mark.parametrize("mode", MODES)
def test_compiled_rmsnorm_and_sampler_compile_as_many_graphs_as_real_torch(
        runs: dict[str, dict[str, Any]], real_graphs: dict[str, list[int]], mode: str) -> None:
    _assert_same_compiles(runs[mode]["compiled_calls"], real_graphs[mode])


def _assert_same_compiles(calls: list[dict[str, Any]], real: list[int]) -> None:
    """Each recorded call compiled as many graphs on fake_torch as on real torch."""
    fake = [c["graphs"] for c in calls]
    assert len(fake) == len(real)
    totals: dict[str, list[int]] = {}
    for call, n_fake, n_real in zip(calls, fake, real, strict=True):
        totals.setdefault(call["fn"], [0, 0])
        totals[call["fn"]][0] += n_fake
        totals[call["fn"]][1] += n_real
    differ = [f"  call {i} {c['fn']} (instance {c['instance']}, args "
              f"{[a['shape'] for a in c['args']]}): fake {n_fake}, torch {n_real}"
              for i, (c, n_fake, n_real) in enumerate(zip(calls, fake, real, strict=True))
              if n_fake != n_real]
    assert not differ, (f"graphs compiled (fake, torch) per function: {totals}\n"
                        + "\n".join(differ))


# --- tensor parallel ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def tp_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, str], dict[str, Any]]:
    """(tensor_parallel_size, mode) -> the runner's JSON, greedy, for TP 1, 2 and 4."""
    tmp = tmp_path_factory.mktemp("nanovllm_tp")
    env = _runner_env()
    env.pop("FAKE_TORCH_DEVICES", None)  # the runner gives each TP its machine
    results = {}
    for tp in (1, *TP_SIZES):
        for mode in MODES:  # one at a time: nano-vllm's port and shared memory are fixed
            out = tmp / f"tp{tp}-{mode}.json"
            _run_all({f"tp{tp} {mode}": [PYTHON, str(HERE / "run_nanovllm.py"), "--mode", mode,
                                         "--tp", str(tp), "--greedy", "--json", str(out)]},
                     env)
            results[tp, mode] = json.loads(out.read_text())
    return results


@pytest.fixture(scope="module")
def real_tp_graphs(tp_runs: dict[tuple[int, str], dict[str, Any]],
                   tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, str], list[int]]:
    """(tp, mode) -> graphs compiled per call of rank 0's compiled calls, on real torch."""
    pytest.importorskip("torch")
    import torch

    if "fake" in torch.__version__:
        pytest.skip("the compile-count oracle needs the real torch in this interpreter")
    return _replay({key: run for key, run in tp_runs.items() if key[0] > 1},
                   tmp_path_factory.mktemp("replay_tp"))


def _decode_calls(run: dict[str, Any], rank: int) -> list[dict[str, Any]]:
    return [c for c in run["ranks"][rank]["calls"] if c["phase"] == "decode"]


@pytest.mark.parametrize("tp", TP_SIZES)
@pytest.mark.parametrize("mode", MODES)
def test_tensor_parallel_generates_the_tokens_of_one_gpu(
        tp_runs: dict[tuple[int, str], dict[str, Any]], tp: int, mode: str) -> None:
    one, run = tp_runs[1, "eager"], tp_runs[tp, mode]
    assert [len(t) for t in one["tokens"]] == one["max_tokens"]
    assert run["tokens"] == one["tokens"]
    assert tp_runs[1, "graphs"]["tokens"] == one["tokens"]
    assert [r["device"] for r in run["ranks"]] == list(range(tp))  # rank r on cuda:r
    # every rank's `import torch` is this checkout's fake_torch
    assert {r["torch"] for r in run["ranks"]} == {str(REPO / "fake_torch" / "__init__.py")}
    assert [len(r["calls"]) for r in run["ranks"]] == [len(one["steps"])] * tp


@pytest.mark.parametrize("tp", TP_SIZES)
def test_tensor_parallel_eager_decode_step_is_one_gpus_kernels_plus_the_collectives(
        tp_runs: dict[tuple[int, str], dict[str, Any]], tp: int) -> None:
    one, run = _decode_calls(tp_runs[1, "eager"], 0), tp_runs[tp, "eager"]
    nccl = {"ncclDevKernel_AllReduce_Sum_bf16_RING_LL": 1 + 2 * LAYERS,  # embedding, o_proj,
            "ncclDevKernel_SendRecv": 1}  # down_proj; the head's gather to rank 0
    mask = {"ge": 1, "lt": 1, "bitwise_and": 1, "sub": 1, "mul": 2}  # VocabParallelEmbedding
    for rank in range(tp):
        for ref, call in zip(one, _decode_calls(run, rank), strict=True):
            assert call["seqs"] == ref["seqs"]
            extra = sum(mask.values()) + (rank == 0)  # rank 0: torch.cat of the gathered logits
            # ranks 1..: no temperatures to copy in, no sampler, no tokens to read back
            assert call["kinds"] == {"kernel": call["kinds"]["kernel"], "nccl": 6,
                                     "memcpy_h2d": 6 if rank == 0 else 5,
                                     **({"memcpy_d2h": 1} if rank == 0 else {})}, (rank, call)
            assert (call["kinds"]["kernel"] - call["compiled_launches"]
                    == ref["kinds"]["kernel"] - ref["compiled_launches"] + extra), (rank, call)
            assert {op: call["ops"].get(op) for op in (*nccl, "cat")} == \
                   nccl | {"cat": 1 if rank == 0 else None}
            for op, n in mask.items():  # (mul, sub: also elsewhere in the step)
                assert call["ops"][op] - ref["ops"].get(op, 0) >= n, (rank, op)
            assert call["total"] == sum(call["kinds"].values())


@pytest.mark.parametrize("tp", TP_SIZES)
def test_tensor_parallel_graph_decode_step_is_one_replay_per_rank(
        tp_runs: dict[tuple[int, str], dict[str, Any]], tp: int) -> None:
    run = tp_runs[tp, "graphs"]
    assert run["graphs"] == [8, 4, 2, 1]
    assert run["replays"] == tp_runs[1, "graphs"]["replays"]
    for rank in range(tp):
        for call in _decode_calls(run, rank):
            # outside the graph: slot_mapping.fill_, lm_head's mm, the gather; rank 0 also cats
            # the logits and samples (the compiled sampler's kernels)
            kinds = GRAPH_STEP_KINDS | {"nccl": 1, "kernel": call["compiled_launches"]
                                        + GRAPH_STEP_KERNELS + (rank == 0)}
            if rank > 0:
                kinds = kinds | {"memcpy_h2d": 5}
                del kinds["memcpy_d2h"]
            assert call["kinds"] == kinds, (rank, call)
            assert call["ops"]["cudaGraphLaunch"] == 1
            assert call["ops"]["ncclDevKernel_SendRecv"] == 1
            if rank > 0:  # no sampler; every RMSNorm is inside the replay
                assert call["compiled_launches"] == 0


@pytest.mark.parametrize("tp", TP_SIZES)
@pytest.mark.parametrize("mode", MODES)
def test_tensor_parallel_compiles_as_many_graphs_as_real_torch(
        tp_runs: dict[tuple[int, str], dict[str, Any]],
        real_tp_graphs: dict[tuple[int, str], list[int]], tp: int, mode: str) -> None:
    """A rank's RMSNorm sees its shard's shapes (TP=4: one KV head, k_norm on (1, 16) at
    batch 1), past Dynamo's recompile limit: the calls after it run eagerly, as on torch."""
    _assert_same_compiles(tp_runs[tp, mode]["compiled_calls"], real_tp_graphs[tp, mode])


def test_tensor_parallel_simulated_ms_per_decode_step(
        tp_runs: dict[tuple[int, str], dict[str, Any]], capsys: pytest.CaptureFixture[str]
        ) -> None:
    ms: dict[tuple[int, str], float] = {}
    lines = ["nano-vllm decode step, simulated ms (rank 0; launches per step per rank):"]
    for (tp, mode), run in sorted(tp_runs.items()):
        per_rank = []
        for rank in range(tp):
            calls = _decode_calls(run, rank)
            assert all(c["ms"] > 0 for c in calls)
            per_rank.append(sum(c["total"] for c in calls) / len(calls))
        calls = _decode_calls(run, 0)
        ms[tp, mode] = sum(c["ms"] for c in calls) / len(calls)
        lines.append(f"  TP={tp} {mode:<6} {ms[tp, mode]:.4f} ms  launches "
                     + ", ".join(f"{n:.1f}" for n in per_rank))
    with capsys.disabled():
        print("\n" + "\n".join(lines))
    assert all(ms[tp, "graphs"] < ms[tp, "eager"] for tp in (1, *TP_SIZES)), ms
    # eager on a launch-bound tiny model: each rank launches more (mask, collectives), and
    # every collective waits for the slowest rank
    assert ms[1, "eager"] < ms[2, "eager"] < ms[4, "eager"], ms


# --- the stand-ins, on real torch CPU --------------------------------------------------------

def _standin(name: str) -> ModuleType:
    """tests/nanovllm/standins/NAME, loaded under a private name: `triton` must stay the real
    one (or none) for real torch's inductor."""
    path = HERE / "standins" / name / "__init__.py"
    spec = importlib.util.spec_from_file_location(f"_nanovllm_standin_{name}", path,
                                                  submodule_search_locations=[str(path.parent)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _reference_attention(q: Any, keys: Any, values: Any, visible: Any, scale: float) -> Any:
    """q (Lq, Hq, D), keys / values (S, Hk, D), visible (Lq, S) bool -> (Lq, Hq, D)."""
    import torch

    group = q.shape[1] // keys.shape[1]
    keys, values = keys.repeat_interleave(group, 1), values.repeat_interleave(group, 1)
    scores = torch.einsum("qhd,shd->hqs", q, keys) * scale
    probs = scores.masked_fill(~visible, float("-inf")).softmax(-1)
    return torch.einsum("hqs,shd->qhd", probs, values)


def test_flash_attn_with_kvcache_standin_reads_pages_up_to_cache_seqlens() -> None:
    torch = pytest.importorskip("torch")
    fa = _standin("flash_attn")
    torch.manual_seed(0)
    k_cache, v_cache = torch.randn(6, 4, 2, 8), torch.randn(6, 4, 2, 8)  # 6 pages of 4 tokens
    table = torch.tensor([[2, 5, -1], [0, 1, 3], [4, -1, -1]], dtype=torch.int32)
    lens = torch.tensor([6, 11, 3], dtype=torch.int32)
    q = torch.randn(3, 1, 4, 8)  # GQA: 4 query heads over 2 KV heads
    out = fa.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=lens,
                                     block_table=table, softmax_scale=0.3, causal=True)
    for b in range(3):
        pages = [int(p) for p in table[b] if p >= 0]
        n = int(lens[b])
        keys, values = k_cache[pages].flatten(0, 1)[:n], v_cache[pages].flatten(0, 1)[:n]
        ref = _reference_attention(q[b], keys, values, torch.ones(1, n, dtype=torch.bool), 0.3)
        torch.testing.assert_close(out[b], ref)


def test_flash_attn_varlen_standin_is_causal_per_sequence_and_reads_a_prefix_from_pages(
        ) -> None:
    torch = pytest.importorskip("torch")
    fa = _standin("flash_attn")
    torch.manual_seed(1)
    q, k, v = torch.randn(8, 4, 8), torch.randn(8, 2, 8), torch.randn(8, 2, 8)
    cu = torch.tensor([0, 3, 8], dtype=torch.int32)  # sequences of 3 and 5 tokens
    out = fa.flash_attn_varlen_func(q, k, v, cu, cu, 5, 5, causal=True)
    for a, b in ((0, 3), (3, 8)):
        causal = torch.ones(b - a, b - a, dtype=torch.bool).tril()
        torch.testing.assert_close(out[a:b], _reference_attention(q[a:b], k[a:b], v[a:b],
                                                                  causal, 8 ** -0.5))
    # a prefix-cached sequence: 2 new queries over 6 cached tokens on pages 1, 0
    k_cache, v_cache = torch.randn(2, 4, 2, 8), torch.randn(2, 4, 2, 8)
    table = torch.tensor([[1, 0]], dtype=torch.int32)
    cu_q, cu_k = (torch.tensor(c, dtype=torch.int32) for c in ([0, 2], [0, 6]))
    out = fa.flash_attn_varlen_func(q[:2], k_cache, v_cache, cu_q, cu_k, 2, 6, causal=True,
                                    block_table=table)
    keys, values = k_cache[[1, 0]].flatten(0, 1)[:6], v_cache[[1, 0]].flatten(0, 1)[:6]
    bottom_right = torch.arange(6)[None, :] <= torch.arange(2)[:, None] + 4  # query i: <= i + 4
    torch.testing.assert_close(out, _reference_attention(q[:2], keys, values, bottom_right,
                                                         8 ** -0.5))


def test_triton_standin_stores_kv_rows_by_slot_skipping_minus_one() -> None:
    torch = pytest.importorskip("torch")
    triton = _standin("triton")

    @triton.jit
    def store_kvcache_kernel(key_ptr, key_stride, value_ptr, value_stride, k_cache_ptr,
                             v_cache_ptr, slot_mapping_ptr, D: triton.language.constexpr):
        """Never runs: the stand-in runs its plain-torch body for this name."""

    torch.manual_seed(2)
    qkv = torch.randn(4, 3, 2, 4)  # (N, q|k|v, H, head_dim): k and v are strided views
    key, value = qkv[:, 1], qkv[:, 2]
    for slots in ([5, -1, 0, 7], [-1, -1, -1, -1]):
        k_cache, v_cache = torch.randn(2, 4, 2, 4), torch.randn(2, 4, 2, 4)
        expect_k, expect_v = k_cache.clone().view(-1, 8), v_cache.clone().view(-1, 8)
        for i, slot in enumerate(slots):
            if slot != -1:
                expect_k[slot], expect_v[slot] = key[i].flatten(), value[i].flatten()
        slot_mapping = torch.tensor(slots, dtype=torch.int32)
        store_kvcache_kernel[(4,)](key, key.stride(0), value, value.stride(0), k_cache, v_cache,
                                   slot_mapping, 8)
        assert torch.equal(k_cache.view(-1, 8), expect_k)
        assert torch.equal(v_cache.view(-1, 8), expect_v)


def test_triton_standin_refuses_kernels_it_does_not_know() -> None:
    pytest.importorskip("torch")
    triton = _standin("triton")

    @triton.jit
    def add_kernel(x_ptr, y_ptr, n):
        """Never runs."""

    with pytest.raises(NotImplementedError, match="no plain-torch body for kernel 'add_kernel'"):
        add_kernel[(1,)](None, None, 0)

    @triton.jit
    def store_kvcache_kernel(key_ptr, slot_mapping_ptr):
        """Same name, other parameters: the body's keywords do not bind."""

    with pytest.raises(TypeError):
        store_kvcache_kernel[(1,)](None, None)
