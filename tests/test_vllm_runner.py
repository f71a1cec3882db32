"""examples/vllm_runner: modes, padding, dispatcher, graph wrapper and vLLM's piecewise counts.

The package is plain `import torch` code; it is imported here with `torch` meaning fake_torch
(real torch may already be imported in this session)."""

from __future__ import annotations

import gc
import importlib
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import nn
from fake_torch._simulated import _cost as cost
from fake_torch._tools._bench_graphs import _torch_is_fake_torch

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _load(name: str) -> ModuleType:
    with _torch_is_fake_torch():
        if str(EXAMPLES) not in sys.path:
            sys.path.insert(0, str(EXAMPLES))
        return importlib.import_module(f"vllm_runner.{name}")


config_mod = _load("config")
counter_mod = _load("counter")
ctx = _load("forward_context")
cuda_graph = _load("cuda_graph")
dispatcher_mod = _load("dispatcher")
backend_mod = _load("backend")
Mode = config_mod.CUDAGraphMode
BD = ctx.BatchDescriptor
counter = counter_mod.compilation_counter

NUM_ATTENTION_CALLS = 0


@torch.library.custom_op("silly::attention", mutates_args=["out"])
def silly_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                    out: torch.Tensor) -> None:
    global NUM_ATTENTION_CALLS
    NUM_ATTENTION_CALLS += 1
    out.copy_(q + k + v)


@silly_attention.register_fake
def _(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, out: torch.Tensor) -> None:
    return None


def attention(x: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    torch.ops.silly.attention(x, x, x, out)
    return out


class SillyModel(nn.Module):
    """vLLM's test_simple shape: two attention ops, five pieces, three capturable."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + 1
        x = x + 2
        x = attention(x)
        x = x - 2
        x = x - 1
        x = attention(x)
        return x + 1


class OneAttention(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return attention(x * 2) + 1


class ToyLlama(nn.Module):
    """Embedding, then per layer: projection, attention, MLP; dim 0 is the token count."""

    def __init__(self, num_layers: int, hidden: int = 8, vocab: int = 32) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.embed = nn.Embedding(vocab, hidden)
        self.qkv = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(num_layers)])
        self.mlp = nn.ModuleList([nn.Linear(hidden, hidden) for _ in range(num_layers)])

    def forward(self, input_ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        x = self.embed(input_ids) + positions.unsqueeze(-1)
        for qkv, mlp in zip(self.qkv, self.mlp, strict=True):
            x = x + attention(qkv(x))
            x = x + torch.relu(mlp(x))
        return x


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    counter.reset()


def _config(mode: Any = None, sizes: list[int] | None = None,
            splitting_ops: list[str] | None = None) -> Any:
    return config_mod.CompilationConfig(
        cudagraph_mode=Mode.PIECEWISE if mode is None else mode,
        cudagraph_capture_sizes=[1, 2] if sizes is None else sizes, max_num_seqs=8,
        splitting_ops=["silly::attention"] if splitting_ops is None else splitting_ops,
        debug_mode=True)


def _capture(model: Any, mode: Any, sizes: list[int], *inputs: torch.Tensor) -> None:
    """Warm up (compiles), then capture every size largest first."""
    with ctx.set_forward_context(Mode.NONE):
        model(*(t[:max(sizes)] for t in inputs))  # warmup
    with ctx.capture_phase():
        for size in sorted(sizes, reverse=True):
            with ctx.set_forward_context(mode, BD(size)):
                model(*(t[:size] for t in inputs))  # capture


# --- counts, as vLLM's piecewise tests state them ---

def test_two_attention_ops_piecewise_counts() -> None:
    pool = torch.cuda.graph_pool_handle()
    model = backend_mod.CompiledModel(SillyModel(), _config(), pool)
    x = torch.randn(2, device="cuda")
    with counter.expect(num_graphs_seen=1, num_piecewise_graphs_seen=5,
                        num_piecewise_capturable_graphs_seen=3, num_backend_compilations=3,
                        num_cudagraph_captured=6):
        _capture(model, Mode.PIECEWISE, [1, 2], x)
    x.copy_(torch.tensor([1.0, 2.0], device="cuda"))
    eager = SillyModel()(x.clone())
    calls = NUM_ATTENTION_CALLS
    with ctx.set_forward_context(Mode.PIECEWISE, BD(2)):
        out = model(x)  # replay
    assert NUM_ATTENTION_CALLS - calls == 2  # attention runs eagerly, exactly twice
    np.testing.assert_allclose(out.cpu().numpy(), eager.cpu().numpy())


def _toy_llama_run(num_layers: int, mode: Any, splitting_ops: list[str] | None,
                   compile: bool) -> np.ndarray:
    pool = torch.cuda.graph_pool_handle()
    config = _config(mode, splitting_ops=splitting_ops)
    model = backend_mod.CompiledModel(ToyLlama(num_layers).cuda(), config, pool, compile)
    ids = torch.zeros(2, dtype=torch.long, device="cuda")
    pos = torch.zeros(2, dtype=torch.long, device="cuda")
    _capture(model, mode, [1, 2], ids, pos)
    ids.copy_(torch.tensor([3, 7], device="cuda"))
    pos.copy_(torch.tensor([0, 1], device="cuda"))
    with ctx.set_forward_context(mode, BD(2)):
        out: np.ndarray = model(ids, pos).cpu().numpy()  # replay
    return out


@pytest.mark.parametrize("num_layers", [1, 2, 12])
def test_toy_llama_counts(num_layers: int) -> None:
    L = num_layers
    with counter.expect(num_graphs_seen=1, num_piecewise_graphs_seen=2 * L + 1,
                        num_piecewise_capturable_graphs_seen=L + 1,
                        num_backend_compilations=L + 1, num_cudagraph_captured=2 * (L + 1)):
        piecewise = _toy_llama_run(L, Mode.PIECEWISE, None, True)
    with counter.expect(num_graphs_seen=1, num_piecewise_graphs_seen=1,
                        num_piecewise_capturable_graphs_seen=1, num_backend_compilations=1,
                        num_cudagraph_captured=2):
        no_split = _toy_llama_run(L, Mode.FULL, [], True)
    with counter.expect(num_graphs_seen=0, num_piecewise_graphs_seen=0,
                        num_piecewise_capturable_graphs_seen=0, num_backend_compilations=0,
                        num_cudagraph_captured=0):
        eager = _toy_llama_run(L, Mode.NONE, None, False)
    np.testing.assert_allclose(piecewise, eager, rtol=1e-6)
    np.testing.assert_allclose(no_split, eager, rtol=1e-6)


def test_toy_llama_12_layers_is_25_13_26() -> None:
    _toy_llama_run(12, Mode.PIECEWISE, None, True)
    assert (counter.num_piecewise_graphs_seen, counter.num_piecewise_capturable_graphs_seen,
            counter.num_cudagraph_captured) == (25, 13, 26)


def test_two_separately_compiled_modules() -> None:
    pool = torch.cuda.graph_pool_handle()
    a = backend_mod.CompiledModel(OneAttention(), _config(), pool)
    b = backend_mod.CompiledModel(OneAttention(), _config(), pool)
    x = torch.randn(2, device="cuda")
    with counter.expect(num_graphs_seen=2, num_piecewise_graphs_seen=6,
                        num_piecewise_capturable_graphs_seen=4, num_cudagraph_captured=8):
        _capture(a, Mode.PIECEWISE, [1, 2], x)
        _capture(b, Mode.PIECEWISE, [1, 2], x)


def test_expect_rejects_unknown_names() -> None:
    with pytest.raises(ValueError, match="num_cudagraphs_captured"):
        with counter.expect(num_cudagraphs_captured=1):
            pass


# --- the wrapper's own stories ---

def _double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


def test_wrapper_bypasses_none_and_other_modes() -> None:
    wrapper = cuda_graph.CUDAGraphWrapper(_double, Mode.FULL, torch.cuda.graph_pool_handle())
    x = torch.ones(2, device="cuda")
    with ctx.capture_phase(), counter.expect(num_cudagraph_captured=0):
        for mode in (Mode.NONE, Mode.PIECEWISE):
            with ctx.set_forward_context(mode, BD(2)):
                assert wrapper(x).tolist() == [2.0, 2.0]  # ran directly
    assert wrapper.entries == {}


def test_wrapper_capture_then_replay_once() -> None:
    wrapper = cuda_graph.CUDAGraphWrapper(_double, Mode.FULL, torch.cuda.graph_pool_handle(),
                                          debug_mode=True)
    x = torch.ones(2, device="cuda")
    with ctx.set_forward_context(Mode.FULL, BD(2)):
        with ctx.capture_phase(), counter.expect(num_cudagraph_captured=1):
            captured = wrapper(x)
        assert np.isnan(captured.cpu().numpy()).all()  # nothing ran: what capture left
        graph = wrapper.entries[BD(2)].cudagraph
        replays = []
        real_replay = graph.replay
        graph.replay = lambda: (replays.append(1), real_replay())[1]
        x.copy_(torch.tensor([3.0, 4.0], device="cuda"))
        out = wrapper(x)  # replay
    assert len(replays) == 1
    assert out.tolist() == _double(x).tolist() == [6.0, 8.0]


def test_wrapper_capture_outside_phase_raises() -> None:
    wrapper = cuda_graph.CUDAGraphWrapper(_double, Mode.FULL, torch.cuda.graph_pool_handle())
    with ctx.set_forward_context(Mode.FULL, BD(2)):
        with pytest.raises(cuda_graph.CaptureOutsidePhaseError, match="capture phase"):
            wrapper(torch.ones(2, device="cuda"))


def test_full_wrapper_around_piecewise_captures_at_named_level() -> None:
    pool = torch.cuda.graph_pool_handle()
    model = backend_mod.CompiledModel(SillyModel(), _config(Mode.FULL_AND_PIECEWISE), pool)
    x = torch.randn(2, device="cuda")
    with ctx.set_forward_context(Mode.NONE):
        model(x)  # warmup, compiles
    with ctx.capture_phase():
        with counter.expect(num_cudagraph_captured=1), \
                ctx.set_forward_context(Mode.FULL, BD(2, 2, True)):
            model(x)  # only the outer FULL graph
        with counter.expect(num_cudagraph_captured=3), \
                ctx.set_forward_context(Mode.PIECEWISE, BD(2)):
            model(x)  # only the three pieces


# --- capture sizes, padding, dispatcher ---

def test_capture_sizes_and_padding() -> None:
    assert config_mod.default_capture_sizes(8) == [1, 2, 4, 8, 16]
    sizes = config_mod.default_capture_sizes(256)
    assert sizes[:5] == [1, 2, 4, 8, 16] and sizes[-3:] == [480, 496, 512]
    config = _config(sizes=[8, 1, 4, 4])
    assert config.capture_sizes == [1, 4, 8]
    assert [config.padding.pad(n) for n in range(1, 10)] == [1, 4, 4, 4, 8, 8, 8, 8, None]


@pytest.mark.parametrize(("mode", "mixed", "decode"), [
    ("NONE", "NONE", "NONE"),
    ("PIECEWISE", "PIECEWISE", "PIECEWISE"),
    ("FULL", "FULL", "FULL"),
    ("FULL_DECODE_ONLY", "NONE", "FULL"),
    ("FULL_AND_PIECEWISE", "PIECEWISE", "FULL"),
])
def test_dispatcher_table(mode: str, mixed: str, decode: str) -> None:
    d = dispatcher_mod.CudagraphDispatcher(_config(Mode[mode], sizes=[1, 8]))
    got_mixed, key = d.dispatch(BD(7, 3, False))
    assert (got_mixed.name, key.num_tokens) == (mixed, 8 if mixed != "NONE" else 7)
    got_decode, key = d.dispatch(BD(8, 8, True))
    assert got_decode.name == decode
    if mode != "NONE":
        assert key.uniform_decode == Mode[mode].separate_routine()
    assert d.dispatch(BD(15, 4, False))[0] is Mode.NONE
    assert d.dispatch(BD(15, 4, False))[1].num_tokens == 15  # eager, unpadded


def test_fallback_when_attention_cannot_be_captured() -> None:
    support = config_mod.AttentionCGSupport
    assert config_mod.resolve_mode(Mode.FULL, support.NEVER) is Mode.PIECEWISE
    assert config_mod.resolve_mode(Mode.FULL, support.UNIFORM_BATCH) is Mode.FULL_AND_PIECEWISE
    assert config_mod.resolve_mode(Mode.FULL_DECODE_ONLY, support.ALWAYS) is Mode.FULL_DECODE_ONLY


# --- the runner: one token stream served in every mode ---

model_mod = _load("model")
runner_mod = _load("runner")
serve_mod = _load("serve")
scheduler_mod = _load("scheduler")
# examples/llama.py as the runner imported it (fake_torch's); out of sys.modules again, since
# other tests import it against real torch
llama = sys.modules.pop("llama")
LLAMA_CONFIG = llama.LlamaConfig

MAX_NUM_SEQS = 4  # capture sizes [1, 2, 4, 8]: prompts of up to 12 tokens overflow them


@pytest.fixture(scope="module")
def served() -> tuple[Any, list[Any], Any]:
    """(eager reference, the five modes' results, the weights) for one stream of 8 requests."""
    counter.reset()
    torch.manual_seed(0)
    model = model_mod.FlatLlama(LLAMA_CONFIG(num_layers=2)).cuda().eval()
    requests = scheduler_mod.make_requests(8, 256, seed=1)
    eager, results = serve_mod.run_all_modes(model, requests, MAX_NUM_SEQS)
    return eager, results, model


def _by_mode(results: list[Any]) -> dict[str, Any]:
    return {res.label: res for res in results}


def test_every_mode_samples_what_eager_samples(served: tuple[Any, list[Any], Any]) -> None:
    eager, results, _ = served
    assert [res.label for res in results] == [m.name for m in Mode]
    assert sum(len(out) for out in eager.outputs.values()) == sum(
        r.max_new_tokens for r in scheduler_mod.make_requests(8, 256, seed=1))
    steps = [(r.step, r.num_tokens, r.num_reqs) for r in eager.records]
    assert {r.uniform_decode for r in eager.records} == {True, False}  # a mixed stream
    for res in results:
        assert res.outputs == eager.outputs, res.label
        assert [(r.step, r.num_tokens, r.num_reqs) for r in res.records] == steps
        for a, b in zip(res.logits, eager.logits, strict=True):
            np.testing.assert_allclose(a.numpy(), b.numpy(), atol=1e-4, rtol=0)


def test_flat_model_equals_the_example_llama() -> None:
    """The flat layout computes what examples/llama.py computes for one request."""
    torch.manual_seed(0)
    ref = llama.Llama(LLAMA_CONFIG()).cuda().eval()
    ref.allocate_kv_cache(1)
    flat = model_mod.FlatLlama(LLAMA_CONFIG()).cuda().eval()
    flat.load_state_dict(ref.state_dict())
    request = scheduler_mod.Request(0, [5, 17, 200, 3], max_new_tokens=4, arrival_step=0)
    result = serve_mod.serve(flat, [request], config_mod.CompilationConfig(
        cudagraph_mode=Mode.NONE, max_num_seqs=2), compile=False)
    logits, tokens, positions = llama.prefill(ref, torch.tensor([request.prompt], device="cuda"))
    expected, ref_logits = [int(tokens[0])], [logits]
    for _ in range(3):
        logits, tokens, positions = llama.decode_step(ref, tokens, positions)
        expected.append(int(tokens[0]))
        ref_logits.append(logits)
    assert result.outputs == {0: expected}
    for a, b in zip(result.logits, ref_logits, strict=True):
        np.testing.assert_allclose(a.numpy(), b.cpu().numpy(), atol=1e-5, rtol=0)


def test_dispatch_and_padding_per_step(served: tuple[Any, list[Any], Any]) -> None:
    _, results, _ = served
    padding = config_mod.CompilationConfig(max_num_seqs=MAX_NUM_SEQS).padding
    assert padding.max_size == 8
    expected_mode = {  # (mode, uniform decode) -> runtime mode of a step that fits a graph
        "NONE": (Mode.NONE, Mode.NONE), "PIECEWISE": (Mode.PIECEWISE, Mode.PIECEWISE),
        "FULL": (Mode.FULL, Mode.FULL), "FULL_DECODE_ONLY": (Mode.NONE, Mode.FULL),
        "FULL_AND_PIECEWISE": (Mode.PIECEWISE, Mode.FULL)}
    for res in results:
        eager_steps = 0
        for r in res.records:
            fits = padding.pad(r.num_tokens)
            want = Mode.NONE if fits is None else expected_mode[res.label][r.uniform_decode]
            assert r.runtime_mode is want, (res.label, r)
            assert r.padded_tokens == (r.num_tokens if want is Mode.NONE else fits)
            eager_steps += fits is None and res.label != "NONE"
        assert res.num_eager_steps == eager_steps
    steps = _by_mode(results)
    assert steps["PIECEWISE"].num_eager_steps > 0  # prefills above 8 tokens ran eagerly
    waste = [r.padded_tokens - r.num_tokens for r in steps["FULL"].records]
    assert sum(waste) > 0 and all(w >= 0 for w in waste)


def _model_launches(model: Any, num_tokens: int) -> tuple[int, int]:
    """(launches of one eager forward of `num_tokens` padding tokens, of its attention ops)."""
    ids = torch.zeros(num_tokens, dtype=torch.long, device="cuda")
    rows = torch.full_like(ids, MAX_NUM_SEQS)  # the padding row
    q, out = torch.zeros(num_tokens, 4, 16, device="cuda"), torch.zeros(num_tokens, 4, 16,
                                                                         device="cuda")
    kv = torch.zeros(num_tokens, 2, 16, device="cuda")
    model.allocate_kv_cache(MAX_NUM_SEQS + 1)
    torch.LaunchCounter.reset()
    model(ids, ids, ids, rows)
    total = torch.LaunchCounter.n
    torch.LaunchCounter.reset()
    torch.ops.vllm_runner.attention(q, kv, kv, model.layers[0].self_attn.kv_cache, ids, rows,
                                    ids, out)
    return total, torch.LaunchCounter.n * len(model.layers)


def test_launches_per_step_follow_from_eager(served: tuple[Any, list[Any], Any]) -> None:
    """A step pays the runner's own launches (input copies, sampling) plus the model's: all of
    its kernels eagerly, one replay in FULL, and in PIECEWISE a replay per capturable piece
    (L + 1) with attention's kernels eagerly between them."""
    eager, results, model = served
    pieces = len(model.layers) + 1
    for res in results:
        for e, r in zip(eager.records, res.records, strict=True):
            forward, _ = _model_launches(model, r.num_tokens)
            runner_own = e.launches - forward
            if r.runtime_mode is Mode.NONE:
                assert r.launches == e.launches
            elif r.runtime_mode is Mode.FULL:
                assert r.launches == runner_own + 1, (res.label, r)
            else:
                _, attention_launches = _model_launches(model, r.padded_tokens)
                assert r.launches == runner_own + pieces + attention_launches, (res.label, r)


def test_capture_largest_first_into_one_pool() -> None:
    torch.manual_seed(0)
    model = model_mod.FlatLlama(LLAMA_CONFIG(num_layers=1)).cuda().eval()
    config = config_mod.CompilationConfig(cudagraph_mode=Mode.FULL_AND_PIECEWISE,
                                          max_num_seqs=4, splitting_ops=["vllm_runner::attention"])
    runner = runner_mod.ModelRunner(model, config)
    order: list[tuple[str, int]] = []
    real_graph = torch.cuda.graph

    def spy(graph: Any, pool: Any = None, **kwargs: Any) -> Any:
        assert pool == runner.pool  # one shared pool for every graph
        key = ctx.get_forward_context()
        order.append((key.runtime_mode.name, key.batch_descriptor.num_tokens))
        return real_graph(graph, pool=pool, **kwargs)

    cuda_graph.torch.cuda.graph = spy
    try:
        with counter.expect(num_cudagraph_captured=4 * 2 + 3):  # 4 sizes x 2 pieces, 3 decode
            runner.capture_model()
    finally:
        cuda_graph.torch.cuda.graph = real_graph
    mixed = [("PIECEWISE", n) for n in (8, 4, 2, 1) for _ in range(2)]
    assert order == [*mixed, ("FULL", 4), ("FULL", 2), ("FULL", 1)]
    assert runner.num_graphs == 11


@pytest.mark.parametrize("mode", ["PIECEWISE", "FULL"])
def test_weak_ref_outputs_hold_no_pool_memory(mode: str, fresh_device: object) -> None:
    """With weak references the captured graphs' outputs go back to the pool at once (graphs
    of other sizes reuse the memory); held, they stay allocated after capture. On a fresh
    device: a graph an earlier test left alive in a reference cycle (hypothesis keeps them)
    would hold the default generator's graph-side state already, as in torch."""
    held = {}
    for weak in (True, False):
        torch.manual_seed(0)
        model = model_mod.FlatLlama(LLAMA_CONFIG(num_layers=1)).cuda().eval()
        config = config_mod.CompilationConfig(
            cudagraph_mode=Mode[mode], max_num_seqs=4, weak_ref_outputs=weak,
            splitting_ops=["vllm_runner::attention"])
        runner = runner_mod.ModelRunner(model, config)
        before = torch.cuda.memory_allocated()
        runner.capture_model()
        held[weak] = torch.cuda.memory_allocated() - before
    # all that stays allocated with weak references: the default generator's graph-side seed
    # and offset (two 512-byte blocks while any graph lives, as in torch)
    assert held[True] == 1024
    assert held[False] > 1024


def test_attention_that_cannot_be_captured_falls_back(capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    torch.manual_seed(0)
    model = model_mod.FlatLlama(LLAMA_CONFIG(num_layers=1)).cuda().eval()
    requests = scheduler_mod.make_requests(3, 256, seed=2)
    config = config_mod.CompilationConfig(cudagraph_mode=Mode.FULL, max_num_seqs=4,
                                          splitting_ops=["vllm_runner::attention"])
    never = serve_mod.serve(model, requests, config,
                            attention_support=config_mod.AttentionCGSupport.NEVER)
    assert "FULL -> PIECEWISE" in capsys.readouterr().out
    assert never.label == "PIECEWISE"
    assert {r.runtime_mode for r in never.records} <= {Mode.PIECEWISE, Mode.NONE}
    eager = serve_mod.serve(model, requests, config_mod.CompilationConfig(
        cudagraph_mode=Mode.NONE, max_num_seqs=4), compile=False)
    assert never.outputs == eager.outputs


def test_serve_prints_the_table() -> None:
    """As a user runs it: `python -m fake_torch run examples/vllm_serve.py`."""
    done = subprocess.run([sys.executable, "-m", "fake_torch", "run",
                           str(EXAMPLES / "vllm_serve.py"), "--requests", "4",
                           "--max-num-seqs", "2", "--layers", "1"],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    table = out.split("\n\n")[0].splitlines()[2:]
    assert [line.split()[0] for line in table] == ["eager", *[m.name for m in Mode]]
    assert all(line.split()[-1] == "same" for line in table)
    gpu, head, *times = out.split("\n\n")[1].splitlines()
    assert gpu == f"simulated GPU: {torch.cuda.get_device_name()}"
    assert head.split()[:4] == ["mode", "ms/step", "decode", "mixed"]
    assert head.endswith("step times (simulated)")
    assert [line.split()[0] for line in times[:6]] == ["eager", *[m.name for m in Mode]]
    # vLLM's log line, for every mode that captured graphs
    captured = [line.split(":")[0] for line in times[6:]]
    assert captured == [m.name for m in Mode if m is not Mode.NONE]
    assert all(re.fullmatch(r"\w+: Graph capturing finished in \d+\.\d{4} secs \(simulated\), "
                            r"took \d+\.\d\d GiB \(\d+\.\d\d MiB\)", line)
               for line in times[6:])


def test_step_times_follow_from_the_launches(served: tuple[Any, list[Any], Any]) -> None:
    """Simulated time: a step that replays a FULL graph is faster than the same step eagerly
    (this small model's kernels are shorter than their launches: the host bounds an eager
    step, at least its launches' host time); a step that runs eagerly in a graph mode costs
    what it cost eagerly; every mode's capture phase (and eager's warm-up) took time."""
    eager, results, _ = served
    assert cost.MIN_KERNEL_NS < cost.EAGER_LAUNCH_NS
    for res in results:
        assert len(res.step_ms) == len(res.records) == len(eager.step_ms)
        for e_ms, ms, r in zip(eager.step_ms, res.step_ms, res.records, strict=True):
            if r.runtime_mode is Mode.FULL:
                assert ms < e_ms, (res.label, r)
            elif r.runtime_mode is Mode.NONE:
                assert ms == pytest.approx(e_ms, rel=1e-9), (res.label, r)
            if r.runtime_mode is Mode.NONE:
                assert ms >= r.launches * cost.EAGER_LAUNCH_NS * 1e-6, (res.label, r)
        assert res.capture_s > 0  # the warm-up run, and the captures
    assert max(res.capture_s for res in results) > eager.capture_s

@pytest.mark.parametrize("weak", [True, False])
@pytest.mark.parametrize("mode", ["PIECEWISE", "FULL", "FULL_AND_PIECEWISE"])
def test_all_sizes_peak_where_the_largest_alone_does(mode: str, weak: bool) -> None:
    """Capturing every size costs no more memory at once than capturing the largest: with weak
    outputs each capture's memory is free again for the next; with held outputs because the
    captures run largest first (smallest first, the held outputs of the small graphs would sit
    beside the large graph's intermediates and raise the peak). FULL_AND_PIECEWISE with held
    outputs is the exception that shows why vLLM keeps only weak references: its FULL decode
    graphs are captured after all the piecewise ones, beside their held outputs."""
    peaks = {}
    for sizes in ([1, 2, 4, 8], [8]):
        torch.manual_seed(0)
        model = model_mod.FlatLlama(LLAMA_CONFIG(num_layers=2)).cuda().eval()
        config = config_mod.CompilationConfig(
            cudagraph_mode=Mode[mode], cudagraph_capture_sizes=sizes, max_num_seqs=8,
            splitting_ops=["vllm_runner::attention"], weak_ref_outputs=weak)
        runner = runner_mod.ModelRunner(model, config)
        runner.capture_model()
        peaks[len(sizes)] = runner.graph_peak_bytes
    if mode == "FULL_AND_PIECEWISE" and not weak:
        assert peaks[4] > peaks[1] > 0
    else:
        assert peaks[4] == peaks[1] > 0


def test_readme_shows_the_current_table() -> None:
    """README's runner table is what `python -m fake_torch run examples/vllm_serve.py` prints."""
    done = subprocess.run([sys.executable, "-m", "fake_torch", "run",
                           str(EXAMPLES / "vllm_serve.py")],
                          capture_output=True, text=True, timeout=300, check=True)
    table = "\n".join(done.stdout.splitlines()[:8])
    readme = (EXAMPLES.parent / "README.md").read_text()
    assert table in readme, f"README's runner table is stale; it is now:\n{table}"


def test_the_table_does_not_depend_on_the_garbage_collector(
        capsys: pytest.CaptureFixture[str], fresh_device: object) -> None:
    """Run twice in this process, once with the cyclic collector off and once collecting at
    almost every allocation: the same table as a fresh process (README's). A graph pool is
    released when the runner's last reference goes, never when the collector runs. (On a
    fresh device, as a fresh process is: graphs earlier tests left in cycles are not ours.)"""
    serve_mod = _load("serve")
    tables = []
    threshold, enabled = gc.get_threshold(), gc.isenabled()
    for collect_often in (False, True):
        if collect_often:
            gc.enable()
            gc.set_threshold(2)
        else:
            gc.disable()
        try:
            serve_mod.main([])
        finally:
            gc.set_threshold(*threshold)
            (gc.enable if enabled else gc.disable)()
        tables.append(capsys.readouterr().out)
    assert tables[0] == tables[1]  # the launch table, and the simulated times too
    assert "\n".join(tables[0].splitlines()[:8]) in (EXAMPLES.parent / "README.md").read_text()


def test_bad_configs_and_requests_are_refused() -> None:
    with pytest.raises(ValueError, match=r"positive token counts, got \[0, -4\]"):
        config_mod.CompilationConfig(cudagraph_capture_sizes=[1, 0, -4])
    with pytest.raises(ValueError, match="max_num_seqs must be at least 1, got 0"):
        config_mod.CompilationConfig(max_num_seqs=0)
    long_prompt = scheduler_mod.Request(3, list(range(20)), 2, 0)
    with pytest.raises(ValueError, match="request 3: its prompt of 20 tokens exceeds "
                                         "max_num_batched_tokens=16"):
        scheduler_mod.Scheduler([long_prompt], 4, 16)
    with pytest.raises(ValueError, match="request 3: 20 prompt \\+ 2 new tokens need 21 "
                                         "positions, over the model's max_seq_len=20"):
        scheduler_mod.Scheduler([long_prompt], 4, 64, max_seq_len=20)
    scheduler_mod.Scheduler([long_prompt], 4, 64, max_seq_len=21)  # fits exactly
