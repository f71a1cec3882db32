"""examples/decode_runner.py: the nano-vllm / SGLang decode pattern, run on fake_torch.

The runner runs in a subprocess under `python -m fake_torch run` (this process may have the real
torch imported), once capturing into one shared pool and once into a private pool per graph. We
parse its printout and check it against the pattern's specification:
  - graphs captured largest first, one per capture size <= max_bs, none added at run time;
  - each graph holds the N kernels of one eager decode step; eager step = N launches,
    graph step = 1 replay + 2 input copies (+ 1 memset of the padded positions when padded),
    above the largest graph the step runs eagerly (N again);
  - logits and greedy tokens equal eager at every batch size 1..max_bs;
  - the shared pool costs well below the sum of private pools.
"""

from __future__ import annotations

import ast
import os
import re
import runpy
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
RUNNER = REPO / "examples" / "decode_runner.py"
MAX_BS, STEPS = 36, 2  # 36: graphs up to 32 (whose blocks alone fill most of a segment), then
# 33..36 run eagerly
CAPTURE_ORDER = [32, 16, 8, 4, 2, 1]  # [1, 2, 4, 8] + range(16, 37, 16), reversed
NUM_LAYERS = 2  # LlamaConfig's default
MIB = 2**20


def eager_decode_kernels(num_layers: int) -> int:
    """Kernels of one eager decode step of the example Llama, counted from its forward:
    header: slots add, mask le, 2 scalar_tensor + where (attn_bias), 2 index (cos, sin),
    embedding = 8; per layer: 2 RMSNorms (one _fused_rms_norm each, as on a GPU) = 2, qkv mm,
    rotary of q and of k (mul, neg, cat, mul, add) = 10, 2 index_copy_ (KV cache),
    2 clone (repeat_interleave of k, v), attention, o_proj mm, residual add, gate_up mm, silu,
    mul, down mm, residual add = 25; tail: final RMSNorm + lm_head mm = 2."""
    return 8 + 25 * num_layers + 2


N = eager_decode_kernels(NUM_LAYERS)


@dataclass
class Row:
    bs: int
    path: str
    eager: int
    graph: int
    graphs: int
    diff: float
    tokens: str
    equal: str


@dataclass
class Printout:
    capture_order: list[int]
    kernels: list[int]
    shared: bool
    reserved: int
    allocated: int
    rows: list[Row]
    replays: dict[int, int]
    eager_steps: int


def run_runner(*args: str) -> Printout:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")  # tiny GEMMs
    done = subprocess.run([sys.executable, "-m", "fake_torch", "run", str(RUNNER), *args],
                          cwd=REPO, capture_output=True, text=True, timeout=120, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr
    return parse(done.stdout)


def parse(text: str) -> Printout:
    lines = text.splitlines()
    m = re.fullmatch(r"captured (\d+) graphs (\[.*\]) \(capture order\) into (one shared pool|"
                     r"a private pool each), kernels inside (\[.*\])", lines[0])
    assert m, lines[0]
    order, kernels = ast.literal_eval(m[2]), ast.literal_eval(m[4])
    assert int(m[1]) == len(order)
    mem = re.match(r"pool memory: reserved (\d+) bytes .*, allocated (\d+) bytes", lines[1])
    assert mem, lines[1]
    assert lines[2].split() == ["bs", "path", "eager", "graph", "graphs", "max|dlogits|",
                                "tokens", "equal"]
    rows = []
    for line in lines[3:-1]:
        bs, path, eager, graph, graphs, diff, tokens, equal = line.split()
        rows.append(Row(int(bs), path, int(eager), int(graph), int(graphs), float(diff), tokens,
                        equal))
    steps = re.fullmatch(r"steps: \d+ replayed (\{.*\}), (\d+) eager \(.*\)", lines[-1])
    assert steps, lines[-1]
    return Printout(order, kernels, m[3] == "one shared pool", int(mem[1]), int(mem[2]), rows,
                    ast.literal_eval(steps[1]), int(steps[2]))


@pytest.fixture(scope="module")
def shared() -> Printout:
    return run_runner("--max-bs", str(MAX_BS), "--steps", str(STEPS))


@pytest.fixture(scope="module")
def private() -> Printout:
    return run_runner("--max-bs", str(MAX_BS), "--steps", "1", "--pool", "private")


def graph_for(bs: int) -> int | None:
    """The smallest captured size that holds `bs` rows (None: above the largest)."""
    return next((size for size in sorted(CAPTURE_ORDER) if size >= bs), None)


def test_graphs_are_captured_largest_first_one_per_size(shared: Printout) -> None:
    assert shared.shared
    assert shared.capture_order == CAPTURE_ORDER
    assert all(size <= MAX_BS for size in shared.capture_order)
    assert shared.kernels == [N] * len(CAPTURE_ORDER)  # a graph holds one eager step's kernels
    # padded sizes reuse the captured graphs: none is captured while decoding
    assert [r.graphs for r in shared.rows] == [len(CAPTURE_ORDER)] * MAX_BS


def test_launches_per_decode_step(shared: Printout) -> None:
    assert [r.bs for r in shared.rows] == list(range(1, MAX_BS + 1))
    for r in shared.rows:
        assert r.eager == N, r
        size = graph_for(r.bs)
        if size is None:  # above the largest graph: eager, and the table says so
            assert (r.path, r.graph) == ("eager", N), r
        else:  # 1 replay + copies of ids and positions (+ zeroing the padded positions)
            assert (r.path, r.graph) == (f"cg{size}", 1 + 2 + (size != r.bs)), r
    expected = {size: STEPS * sum(graph_for(bs) == size for bs in range(1, MAX_BS + 1))
                for size in CAPTURE_ORDER}
    assert shared.replays == expected
    assert shared.eager_steps == STEPS * (MAX_BS - max(CAPTURE_ORDER))


def test_outputs_equal_eager_at_every_batch_size(shared: Printout) -> None:
    for r in shared.rows:
        assert (r.tokens, r.equal) == ("same", "yes"), r
        assert r.diff <= 1e-4, r
        if r.bs in CAPTURE_ORDER or graph_for(r.bs) is None:
            assert r.diff == 0.0, r  # same shapes, same numpy kernels: bit for bit


def test_shared_pool_costs_well_below_private_pools(shared: Printout,
                                                    private: Printout) -> None:
    assert not private.shared and private.capture_order == CAPTURE_ORDER
    assert all(r.equal == "yes" for r in private.rows)
    # each private pool holds at least one 2 MiB segment; the shared one reuses freed blocks
    assert private.reserved >= len(CAPTURE_ORDER) * 2 * MIB
    assert shared.reserved * 3 <= private.reserved, (shared.reserved, private.reserved)
    # what stays allocated is the same either way: each graph's static logits
    assert shared.allocated == private.allocated > 0


def test_runs_unchanged_on_real_torch(capsys: pytest.CaptureFixture[str]) -> None:
    """On real torch (a CPU build here) the runner has no graphs and says every step ran
    eagerly; its outputs still equal eager."""
    fake = sys.modules.get("fake_torch")
    if fake is not None and sys.modules.get("torch") is fake:
        pytest.skip("torch is fake_torch in this process")
    real = pytest.importorskip("torch", reason="real torch not installed")
    if real.cuda.is_available():
        pytest.skip("real CUDA present: the fake_torch printout checks cover graphs")
    saved_argv, saved_path, saved_rng = sys.argv, list(sys.path), real.get_rng_state()
    sys.argv = [str(RUNNER), "--max-bs", "3", "--steps", "1"]
    sys.path.insert(0, str(RUNNER.parent))
    try:
        runpy.run_path(str(RUNNER), run_name="__main__")
    finally:
        sys.argv, sys.path[:] = saved_argv, saved_path
        real.set_rng_state(saved_rng)  # the script seeds torch's global generator
        for name in ("llama", "cuda_graph_runner"):
            sys.modules.pop(name, None)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "device cpu: no CUDA graphs, every step runs eagerly"
    rows = [line.split() for line in lines[2:-1]]
    assert [(r[0], r[1], r[2], r[3], r[6], r[7]) for r in rows] == [
        (str(bs), "eager", "-", "-", "same", "yes") for bs in (1, 2, 3)]
    assert lines[-1] == "steps: 0 replayed {}, 3 eager (no captured graph holds the batch)"


def test_the_runner_module_run_by_itself_prints_an_eager_step_and_its_replay() -> None:
    """examples/cuda_graph_runner.py, which decode_runner imports, is runnable too: one step
    of 3 rows eagerly (N launches) and as the graph of 4's replay (2 copies, the padding's
    memset, one cudaGraphLaunch)."""
    done = subprocess.run([sys.executable, "-m", "fake_torch", "run",
                           str(REPO / "examples" / "cuda_graph_runner.py")],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "captured 4 graphs, sizes [1, 2, 4, 8], into one shared pool",
        f" eager: one decode step of 3 rows, {N} launches, logits [3, 256]",
        "replay: one decode step of 3 rows, 4 launches, logits [3, 256]",
        "the replay ran the graph of 4 (4 rows computed for 3), launching "
        "{'copy_': 2, 'zero_': 1, 'cudaGraphLaunch': 1}"]
