"""`python -m fake_torch demo`: the table's numbers against independent measurements and the cost
model's constants, the plot, and the command line's answers to bad input."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from python_server import PythonServer

from fake_torch._simulated import _cost, _gpus
from fake_torch._tools._bench_graphs import load_example_llama
from fake_torch._tools._demo import BATCH_SIZES, MODES, PROMPT_LEN, time_plot_path
from fake_torch._tools._demo_time import (
    CURVE_GPU,
    GRAPH_MODES,
    MAX_BATCH,
    SLACK,
    TimeCurve,
    curve_batches,
    curve_gpu,
    gpu_bound_batch,
    time_curve,
    why_gpu,
)

REPO_ROOT = Path(__file__).resolve().parents[1]


_SERVER: list[PythonServer] = []


@pytest.fixture(scope="module", autouse=True)
def fake_torch_python() -> Iterator[None]:
    """A server that imported fake_torch, whose children run this module's `python -m
    fake_torch` commands (tests/python_server.py: as a new python would, but ~0.5 s of CPU
    less each), in the environment without FAKE_TORCH_GPU (the demo's default GPU)."""
    env = {k: v for k, v in os.environ.items() if k != "FAKE_TORCH_GPU"}
    _SERVER.append(PythonServer("fake_torch", cwd=REPO_ROOT, env=env))
    yield
    _SERVER.pop().close()


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m fake_torch ARGS` from the repository's root."""
    return _SERVER[-1].run(["-m", "fake_torch", *args], cwd=REPO_ROOT)


HAVE_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


@pytest.fixture(scope="module")
def plotted(tmp_path_factory: pytest.TempPathFactory) -> tuple[
        subprocess.CompletedProcess[str], Path]:
    """`demo --plot DIR/demo.png` (one run for the table's tests and the plot's): its output,
    and the path it was given."""
    if not HAVE_MATPLOTLIB:
        pytest.skip("matplotlib is not installed; pip install -e '.[test]'")
    path = tmp_path_factory.mktemp("demo") / "demo.png"
    return _cli("demo", "--plot", str(path)), path


@pytest.fixture(scope="module")
def demo(request: pytest.FixtureRequest) -> tuple[subprocess.CompletedProcess[str],
                                                  dict[tuple[str, int], list[str]]]:
    """The demo's output, and its table: (mode, bs) -> the row's other cells. With matplotlib,
    the --plot run's output up to its plot (what a plain run prints: asserted below), else a
    plain run's."""
    if HAVE_MATPLOTLIB:
        with_plot, path = request.getfixturevalue("plotted")
        stdout = with_plot.stdout.partition(f"plot written to {path}\n")[0]
        done = subprocess.CompletedProcess(with_plot.args, with_plot.returncode, stdout,
                                           with_plot.stderr)
    else:
        done = _cli("demo")
    table = {}
    for line in done.stdout.splitlines()[1:]:
        mode = next((m for m in MODES if line.startswith(m + " ")), None)
        if mode is not None:
            bs, *cells = line[len(mode):].split()
            table[mode, int(bs)] = cells
    return done, table


EAGER_SCRIPT = f"""
import torch
from llama import Llama, LlamaConfig, prefill

for bs in {BATCH_SIZES!r}:
    torch.manual_seed(0)
    model = Llama(LlamaConfig()).to("cuda").eval()
    model.allocate_kv_cache(bs)
    prompt = torch.randint(0, 256, (bs, {PROMPT_LEN}), device="cuda")
    with torch.inference_mode():
        _, tokens, positions = prefill(model, prompt)
        torch.LaunchCounter.reset()
        model(tokens[:, None], positions)
    print(bs, torch.LaunchCounter.n)
"""


@pytest.fixture(scope="module")
def eager_launches(tmp_path_factory: pytest.TempPathFactory) -> dict[int, int]:
    """One eager decode step of the example Llama per batch size, counted outside the demo
    (in a subprocess: this one may have real torch imported)."""
    script = REPO_ROOT / "examples" / "_count_eager_step.py"
    script.write_text(EAGER_SCRIPT)
    try:
        done = _cli("run", str(script))
    finally:
        script.unlink()
    assert done.returncode == 0, done.stderr
    return {int(bs): int(n) for bs, n in (line.split() for line in done.stdout.splitlines())}


def test_demo_prints_one_row_per_mode_and_batch_and_progress(demo: tuple[
        subprocess.CompletedProcess[str], dict[tuple[str, int], list[str]]]) -> None:
    done, table = demo
    assert done.returncode == 0, done.stderr
    assert sorted(table) == sorted((m, bs) for m in MODES for bs in BATCH_SIZES)
    assert "demo: capturing cuda graphs of sizes [1, 2, 4, 8]" in done.stderr


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_demo_numbers(bs: int, eager_launches: dict[int, int], demo: tuple[
        subprocess.CompletedProcess[str], dict[tuple[str, int], list[str]]]) -> None:
    _, table = demo
    launches = {m: int(table[m, bs][0]) for m in MODES}
    graphs, pool, padded_cell = 3, 4, 5  # cells after launches: ms/step, GPU busy, ...
    assert launches["eager"] == eager_launches[bs]
    padded = bs in (1, 2, 4, 8)
    # replay: copy ids, copy positions, (padded rows' positions zeroed), one graph launch
    assert launches["cuda graph"] == 1 + 2 + (0 if padded else 1)
    assert launches["reduce-overhead"] == 2  # one _foreach_copy_ of the inputs, one replay
    assert 1 < launches["compile"] < launches["eager"]  # fusion cuts launches, no graph
    # what an H200 launched for this compiled step (recorded: tests/test_inductor.py)
    assert launches["compile"] == 37
    assert launches["piecewise"] < launches["compile"]
    assert table["cuda graph", bs][graphs] == "4"  # sizes 1, 2, 4, 8, captured up front
    assert float(table["cuda graph", bs][pool]) > 0 and float(table["eager", bs][pool]) == 0
    for mode in MODES:
        assert table[mode, bs][-1] == "yes", mode  # logits allclose, same greedy tokens
        if mode != "cuda graph":
            assert table[mode, bs][padded_cell] == f"{bs}/{bs}"


@pytest.mark.parametrize("bs", BATCH_SIZES)
def test_demo_step_times_follow_from_the_cost_model(bs: int, demo: tuple[
        subprocess.CompletedProcess[str], dict[tuple[str, int], list[str]]]) -> None:
    """At these batches every kernel of the small model is shorter than an eager launch, so an
    eager step is its launches one after another plus the last kernel, and the device idles
    between kernels; every way that replays a graph is faster, reduce-overhead the fastest."""
    _, table = demo
    launches = int(table["eager", bs][0])
    ms = {m: float(table[m, bs][1]) for m in MODES}
    busy = {m: float(table[m, bs][2].rstrip("%")) for m in MODES}
    assert _cost.MIN_KERNEL_NS < _cost.EAGER_LAUNCH_NS
    eager_ns = launches * _cost.EAGER_LAUNCH_NS + _cost.MIN_KERNEL_NS
    assert ms["eager"] == pytest.approx(eager_ns * 1e-6, abs=5e-5)  # printed to 0.1 us
    assert busy["eager"] == pytest.approx(100 * launches * _cost.MIN_KERNEL_NS / eager_ns, abs=0.5)
    for mode in ("cuda graph", "piecewise", "compile", "reduce-overhead"):
        assert ms[mode] < ms["eager"], mode
    assert min(ms, key=ms.__getitem__) == "reduce-overhead"
    for mode in ("cuda graph", "piecewise", "reduce-overhead"):
        assert busy[mode] > busy["eager"], mode  # a replay runs its kernels back to back


def test_demo_names_the_simulated_gpu_and_prints_the_same_table_every_run(demo: tuple[
        subprocess.CompletedProcess[str], dict[tuple[str, int], list[str]]]) -> None:
    done, _ = demo
    # the one default every command simulates (run's torch.cuda.get_device_name too)
    assert f"simulated GPU: {_gpus.GPUS[_gpus.DEFAULT].name} " in done.stdout
    again = _cli("demo")
    assert again.returncode == 0, again.stderr
    assert again.stdout == done.stdout  # simulated time is deterministic


def test_padding_waste_of_batch_3_is_one_token(demo: tuple[
        subprocess.CompletedProcess[str], dict[tuple[str, int], list[str]]]) -> None:
    _, table = demo
    assert table["cuda graph", 3][5] == "4/3"
    assert table["cuda graph", 8][5] == "8/8"


def test_footnotes_explain_the_padding_launch_and_the_unpadded_pieces(demo: tuple[
        subprocess.CompletedProcess[str], dict[tuple[str, int], list[str]]]) -> None:
    """Batch 3 has no graph of its own: the runner replays the graph of 4 and zeroes the padding
    row's position first, one launch more than the batches that fill a graph exactly."""
    done, table = demo
    notes = " ".join(line.removeprefix("note: ").strip() for line in done.stdout.splitlines()
                     if line.startswith(("note: ", "      ")))
    graph = {bs: int(table["cuda graph", bs][0]) for bs in BATCH_SIZES}
    assert graph[3] == graph[1] + 1 == graph[8] + 1
    assert (f"cuda graph at batch 3: {graph[3]} launches where batches 1 and 8 take {graph[1]}. "
            "No graph holds 3 rows, so the step replays the graph of 4") in notes
    assert "zeroes the position of the 1 padding row (zero_, one memset)" in notes
    assert table["piecewise", 3][5] == "3/3"
    assert "piecewise pads nothing: torch.compile captures its pieces for each batch size" in notes


def test_plot_writes_a_png(plotted: tuple[subprocess.CompletedProcess[str], Path]) -> None:
    """--plot FILE draws launches to FILE and step time vs batch to FILE_time, and prints the
    second figure's numbers: the batch it names is where eager/graph first falls under SLACK."""
    done, path = plotted
    assert done.returncode == 0, done.stderr
    assert f"\nplot written to {path}\n" in done.stdout
    for png in (path, path.parent / "demo_time.png"):
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 1000
    lines = done.stdout.splitlines()
    head = lines.index(next(line for line in lines if line.startswith("decode step time vs")))
    assert f"simulated {_gpus.GPUS[CURVE_GPU].name} " in lines[head]  # the demo's H200 is not
    why = lines[head + 1]  # ... and the table says why, where the reader looks
    bound = int(why.split("GPU-bound only at batch ")[1].split(",")[0])
    assert bound > MAX_BATCH and why == (
        f"why the {_gpus.GPUS[CURVE_GPU].name}: not the demo's {_gpus.DEFAULT}: there the step "
        f"turns GPU-bound only at batch {bound}, too large to simulate in numpy (over "
        f"{MAX_BATCH}); the {CURVE_GPU}'s low bandwidth reaches it sooner")
    rows = [line.split() for line in lines[head + 2:] if line.split()[0].isdigit()]
    speedups = {mode: [(int(r[0]), float(r[col].rstrip("x"))) for r in rows]
                for mode, col in (("cuda graph", 4), ("reduce-overhead", 5))}
    stops = [f"{mode} from batch {next(bs for bs, s in pairs if s < SLACK)}"
             for mode, pairs in speedups.items()]
    assert f"graphs stop paying off (eager/graph under {SLACK}): {', '.join(stops)}" in lines


def test_time_plot_goes_next_to_the_launch_plot() -> None:
    assert time_plot_path("docs/demo.png") == Path("docs/demo_time.png")
    assert time_plot_path("out") == Path("out_time.png")


def test_curve_batches_run_from_1_to_past_the_gpu_bound_batch() -> None:
    assert curve_batches(2198) == [1, 4, 16, 64, 256, 1024, 2198, 4396]
    assert curve_batches(64) == [1, 4, 16, 64, 128]
    assert curve_batches(1) == [1, 2]


def test_step_time_curve_on_a_few_batches() -> None:
    """Each mode has one time per batch; at batch 1 both graph modes beat eager; the
    crossover is the first batch whose eager/graph ratio is under SLACK; the GPU-bound batch
    is the shared helper's; the GPU simulated before comes back."""
    llama = load_example_llama()
    before = _gpus.current().key
    sizes = (1, 16, 1024)
    curve = time_curve(llama, sizes, gpu=CURVE_GPU)
    assert _gpus.current().key == before
    assert curve.gpu == _gpus.GPUS[CURVE_GPU].name and curve.batch_sizes == list(sizes)
    for mode in ("eager", *GRAPH_MODES):
        assert len(curve.ms[mode]) == len(curve.busy[mode]) == len(sizes), mode
        assert all(0 < b <= 1 for b in curve.busy[mode]), mode
    for mode in GRAPH_MODES:
        assert curve.ms["eager"][0] > curve.ms[mode][0], mode
        ratios = curve.speedup(mode)
        assert ratios == sorted(ratios, reverse=True), mode  # the gain shrinks with the batch
        below = [bs for bs, r in zip(sizes, ratios, strict=True) if r < SLACK]
        assert curve.crossover(mode) == (below[0] if below else None), mode
    # launch-bound at batch 1: eager is its launches one after another
    assert curve.ms["eager"][0] >= curve.launches * _cost.EAGER_LAUNCH_NS * 1e-6
    assert curve.gpu_bound == gpu_bound_batch(llama.LlamaConfig(), curve.launches,
                                              _gpus.GPUS[CURVE_GPU]) > max(sizes)


def test_crossover_is_the_first_batch_under_slack() -> None:
    ms = {"eager": [2.0, 2.0, 2.0, 2.0], "cuda graph": [1.0, 1.7, 1.9, 1.0],
          "reduce-overhead": [1.0, 1.0, 1.0, 1.0]}
    curve = TimeCurve("NVIDIA L4", 60, 8, [1, 2, 4, 8], ms, ms)
    assert curve.speedup("cuda graph") == pytest.approx([2.0, 2.0 / 1.7, 2.0 / 1.9, 2.0])
    assert curve.crossover("cuda graph") == 4  # 1.05: the first under 1.15, not 2 (1.18)
    assert curve.crossover("reduce-overhead") is None  # 2x at every batch


@pytest.mark.parametrize(("chosen", "expected"), [(None, CURVE_GPU), ("L4", "L4"),
                                                  ("H200", CURVE_GPU)])
def test_curve_gpu_is_the_chosen_one_only_where_it_is_quick(
        chosen: str | None, expected: str, monkeypatch: pytest.MonkeyPatch) -> None:
    llama = load_example_llama()
    if chosen is None:
        monkeypatch.delenv("FAKE_TORCH_GPU", raising=False)
    else:
        monkeypatch.setenv("FAKE_TORCH_GPU", chosen)
    assert curve_gpu(llama, 60) == expected
    why = why_gpu(llama, 60, expected)
    assert (why == "") == (expected == (chosen or _gpus.DEFAULT)), why
    assert gpu_bound_batch(llama.LlamaConfig(), 60, _gpus.GPUS["H200"]) > MAX_BATCH


def test_unknown_subcommand_is_one_line_and_exit_2() -> None:
    done = _cli("frobnicate")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "invalid choice: 'frobnicate'" in done.stderr


def test_run_missing_script_is_one_line_and_exit_2() -> None:
    done = _cli("run", "no_such_script.py")
    assert done.returncode == 2
    assert done.stderr == "fake_torch run: can't open file 'no_such_script.py': no such file\n"


def test_run_script_that_raises_shows_its_own_traceback(tmp_path: Path) -> None:
    script = tmp_path / "boom.py"
    script.write_text("def f():\n    raise ValueError('boom')\n\nf()\n")
    done = _cli("run", str(script))
    assert done.returncode == 1
    assert done.stderr.startswith("Traceback (most recent call last):\n")
    assert "__main__" not in done.stderr and "runpy" not in done.stderr
    assert done.stderr.rstrip().endswith("ValueError: boom")


def test_run_report_prints_the_launches(tmp_path: Path) -> None:
    script = tmp_path / "two_adds.py"
    script.write_text("import torch\nx = torch.ones(4, device='cuda')\ny = x + x + x\n")
    done = _cli("run", "--report", str(script))
    assert done.returncode == 0, done.stderr
    # ones: one fill kernel; then two adds
    gpu = _gpus.GPUS[_gpus.DEFAULT].name  # the report names the simulated GPU
    assert f"fake_torch launch report (simulated {gpu}): 3 launches" in done.stdout
    assert "  add " in done.stdout


def test_each_subcommand_has_help() -> None:
    for command in ("demo", "run", "bench"):
        done = _cli(command, "--help")
        assert done.returncode == 0 and done.stdout.startswith("usage:"), command
