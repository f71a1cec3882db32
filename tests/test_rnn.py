"""nn.LSTM / GRU / RNN and the cells: parameters, values, errors and launches.

Oracles: real torch (CPU build) for values (the same weights loaded into both through numpy),
parameter names, reprs, warnings and error texts; torch_launches() for the cells whose CPU
dispatch is the CUDA build's (RNNCell). The other launch lists are those torch's CUDA build
dispatches, read from aten/src/ATen/native/RNN.cpp and cudnn/RNN.cpp (see the docstrings of
fake_torch/_kernels/rnn.py and rnn_cudnn.py): a layer stack on cuda with cuDNN enabled is one
`_cudnn_rnn`; with cuDNN disabled, per step mm, mm and one fused cell kernel (LSTM, GRU) or
addmm, addmm, add_, tanh (RNN); torch's CPU build computes the same values another way (oneDNN,
a precomputed input projection), which is why its op list is not the oracle there.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from oracles import NoHostSync, assert_raises_like_torch, launches, torch_launches

import fake_torch as ft
from fake_torch import nn
from fake_torch._simulated import _dispatch

torch = pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")
pytestmark = pytest.mark.filterwarnings("ignore:LSTM with projections is not supported")

_rng = np.random.default_rng(0)
TOL = {"rtol": 1e-5, "atol": 1e-5}


# --- helpers ----------------------------------------------------------------------------------

def pair(cls: str, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
    """The same module in both libraries, fake_torch's holding torch's weights."""
    theirs = getattr(torch.nn, cls)(*args, **kwargs)
    ours = getattr(nn, cls)(*args, **kwargs)
    ours.load_state_dict({k: ft.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def arrays(*shape: int) -> tuple[ft.Tensor, Any, np.ndarray]:
    a = _rng.standard_normal(shape).astype(np.float32)
    return ft.tensor(a), torch.from_numpy(a.copy()), a


def flat(result: Any) -> list[np.ndarray]:
    """Every tensor of a (possibly nested) module result, as float64 numpy arrays."""
    if isinstance(result, (tuple, list)):
        return [a for r in result for a in flat(r)]
    if isinstance(result, ft.Tensor):
        return [np.asarray(result.numpy(force=True), np.float64)]
    return [result.detach().double().numpy()]


def assert_close(ours: Any, theirs: Any) -> None:
    got, want = flat(ours), flat(theirs)
    assert [a.shape for a in got] == [a.shape for a in want]
    for a, b in zip(got, want, strict=True):
        np.testing.assert_allclose(a, b, **TOL)


@contextmanager
def cudnn(enabled: bool) -> Iterator[None]:
    with ft.backends.cudnn.flags(enabled=enabled):
        yield


def on(device: str, module: Any, x: ft.Tensor, hx: Any = None) -> tuple[Any, ft.Tensor, Any]:
    """(module, input, hx) moved to `device` ("cpu", "cuda" with cuDNN, "native": cuda
    without)."""
    dev = "cpu" if device == "cpu" else "cuda"
    module = module.to(dev)
    if isinstance(hx, tuple):
        hx = tuple(h.to(dev) for h in hx)
    elif hx is not None:
        hx = hx.to(dev)
    return module, x.to(dev), hx


DEVICES = ["cpu", "cuda", "native"]

CONFIGS = [
    ("LSTM", {}),
    ("LSTM", {"num_layers": 2, "bidirectional": True}),
    ("LSTM", {"num_layers": 2, "proj_size": 3, "batch_first": True}),
    ("LSTM", {"bias": False, "bidirectional": True, "proj_size": 2}),
    ("GRU", {"num_layers": 2}),
    ("GRU", {"bidirectional": True, "batch_first": True, "bias": False}),
    ("RNN", {"num_layers": 2, "nonlinearity": "relu"}),
    ("RNN", {"bidirectional": True, "nonlinearity": "tanh"}),
]


# --- values against torch ---------------------------------------------------------------------

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("cls", "kwargs"), CONFIGS)
def test_layer_values_match_torch(cls: str, kwargs: dict[str, Any], device: str) -> None:
    ours, theirs = pair(cls, 5, 4, **kwargs)
    ours.eval(), theirs.eval()
    x, tx, _ = arrays(3, 6, 5) if kwargs.get("batch_first") else arrays(6, 3, 5)
    module, x, _ = on(device, ours, x)
    with cudnn(device != "native"):
        assert_close(module(x), theirs(tx))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("cls", ["LSTM", "GRU", "RNN"])
def test_given_states_and_unbatched_input_match_torch(cls: str, device: str) -> None:
    ours, theirs = pair(cls, 5, 4, 2, dropout=0.3)  # dropout: training only
    ours.eval(), theirs.eval()
    x, tx, _ = arrays(6, 3, 5)
    h, th, _ = arrays(2, 3, 4)
    c, tc, _ = arrays(2, 3, 4)
    state, tstate = ((h, c), (th, tc)) if cls == "LSTM" else (h, th)
    module, x, state = on(device, ours, x, state)
    with cudnn(device != "native"):
        assert_close(module(x, state), theirs(tx, tstate))
        # contiguous: cuDNN refuses a strided hx ("rnn: hx is not contiguous", as torch)
        unbatched = tuple(s[:, 0].contiguous() for s in state) if cls == "LSTM" else \
            state[:, 0].contiguous()
        tunbatched = tuple(s[:, 0] for s in tstate) if cls == "LSTM" else tstate[:, 0]
        assert_close(module(x[:, 0], unbatched), theirs(tx[:, 0], tunbatched))
        assert_close(module(x[:, 0]), theirs(tx[:, 0]))


@pytest.mark.parametrize("device", DEVICES)
def test_training_without_dropout_computes_what_eval_does(device: str) -> None:
    ours, theirs = pair("LSTM", 5, 4, 2)
    x, tx, _ = arrays(6, 3, 5)
    module, x, _ = on(device, ours, x)
    with cudnn(device != "native"):
        assert_close(module(x), theirs.eval()(tx))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(("cls", "kwargs"), [("LSTMCell", {}), ("GRUCell", {"bias": False}),
                                             ("RNNCell", {}),
                                             ("RNNCell", {"nonlinearity": "relu"})])
def test_cell_values_match_torch(cls: str, kwargs: dict[str, Any], device: str) -> None:
    ours, theirs = pair(cls, 5, 4, **kwargs)
    x, tx, _ = arrays(3, 5)
    h, th, _ = arrays(3, 4)
    c, tc, _ = arrays(3, 4)
    state, tstate = ((h, c), (th, tc)) if cls == "LSTMCell" else (h, th)
    module, x, state = on(device, ours, x, state)
    with cudnn(device != "native"):
        assert_close(module(x, state), theirs(tx, tstate))
        assert_close(module(x), theirs(tx))
        unbatched = tuple(s[0] for s in state) if cls == "LSTMCell" else state[0]
        tunbatched = tuple(s[0] for s in tstate) if cls == "LSTMCell" else tstate[0]
        assert_close(module(x[0], unbatched), theirs(tx[0], tunbatched))


def test_torch_functions_match_torch() -> None:
    params = [_rng.standard_normal(s).astype(np.float32) for s in [(16, 3), (16, 4), (16,),
                                                                    (16,)]]
    x, tx, _ = arrays(5, 2, 3)
    h, th, _ = arrays(1, 2, 4)
    c, tc, _ = arrays(1, 2, 4)
    ours = ft.lstm(x, (h, c), [ft.tensor(p) for p in params], True, 1, 0.0, False, False, False)
    theirs = torch.lstm(tx, (th, tc), [torch.from_numpy(p) for p in params], True, 1, 0.0,
                        False, False, False)
    assert_close(ours, theirs)
    w = [ft.tensor(p) for p in params]
    tw = [torch.from_numpy(p) for p in params]
    assert_close(ft.lstm_cell(x[0], (h[0], c[0]), *w), torch.lstm_cell(tx[0], (th[0], tc[0]), *tw))
    g = [_rng.standard_normal(s).astype(np.float32) for s in [(12, 3), (12, 4)]]
    assert_close(ft.gru_cell(x[0], h[0], *[ft.tensor(a) for a in g]),
                 torch.gru_cell(tx[0], th[0], *[torch.from_numpy(a) for a in g]))


def test_float64_and_float16_on_cuda() -> None:
    ours, theirs = pair("GRU", 5, 4, 2)
    x, tx, _ = arrays(6, 3, 5)
    assert_close(ours.double().cuda()(x.double().cuda()), theirs.double()(tx.double()))
    half = ours.half()(x.half().cuda())  # cuDNN computes in float32, stores float16
    assert half[0].dtype == ft.float16
    np.testing.assert_allclose(flat(half)[0], flat(theirs.float()(tx))[0], atol=5e-3)


# --- parameters, construction, repr -----------------------------------------------------------

@pytest.mark.parametrize(("cls", "kwargs"), [*CONFIGS, ("LSTMCell", {}), ("GRUCell", {}),
                                             ("RNNCell", {"bias": False})])
def test_parameters_are_torch_names_and_shapes(cls: str, kwargs: dict[str, Any]) -> None:
    n = {} if cls.endswith("Cell") else {"num_layers": kwargs.pop("num_layers", 1)}
    ours = getattr(nn, cls)(5, 4, **n, **kwargs)
    theirs = getattr(torch.nn, cls)(5, 4, **n, **kwargs)
    assert [(k, tuple(v.shape)) for k, v in ours.named_parameters()] == \
        [(k, tuple(v.shape)) for k, v in theirs.named_parameters()]
    assert repr(ours) == repr(theirs)


def test_weights_draw_uniform_in_torch_order() -> None:
    ft.manual_seed(3)
    m = nn.LSTM(5, 4, 2, bidirectional=True, proj_size=2)
    ft.manual_seed(3)
    bound = 1 / np.sqrt(4)
    for name, p in m.named_parameters():
        expected = ft.empty(p.shape).uniform_(-bound, bound)
        np.testing.assert_array_equal(p.numpy(), expected.numpy(), err_msg=name)
    assert all(float(p.abs().max()) <= bound for p in m.parameters())


def test_constructor_signatures_and_flat_weights() -> None:
    m = nn.RNN(5, 4, 2, "relu", False, True, 0.0, True)  # torch's positional nonlinearity
    assert (m.mode, m.bias, m.batch_first, m.bidirectional) == ("RNN_RELU", False, True, True)
    assert m._flat_weights_names == [n for n, _ in m.named_parameters()]
    assert [[tuple(w.shape) for w in ws] for ws in m.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in torch.nn.RNN(5, 4, 2, "relu", False, True, 0.0,
                                                              True).all_weights]
    twin = copy.deepcopy(m)
    assert twin(ft.ones(2, 3, 5))[0].shape == (2, 3, 8)


def test_dropout_with_one_layer_warns_as_torch() -> None:
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        torch.nn.LSTM(3, 4, dropout=0.2)
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        nn.LSTM(3, 4, dropout=0.2)
    assert [str(w.message) for w in ours] == [str(w.message) for w in theirs]
    assert [w.category for w in ours] == [w.category for w in theirs] == [UserWarning]


@pytest.mark.parametrize("program", [
    lambda L: L.nn.LSTM(3, 4, dropout=1.5),
    lambda L: L.nn.LSTM(3, 4, dropout=True),
    lambda L: L.nn.LSTM(3, 0),
    lambda L: L.nn.LSTM(0, 3),
    lambda L: L.nn.LSTM(3, 4, 0),
    lambda L: L.nn.LSTM(3.0, 4),
    lambda L: L.nn.LSTM(3, 4, bias=1),
    lambda L: L.nn.LSTM(3, 4, batch_first=1),
    lambda L: L.nn.LSTM(3, 4, proj_size=4),
    lambda L: L.nn.LSTM(3, 4, proj_size=-1),
    lambda L: L.nn.GRU(3, 4, proj_size=2),
    lambda L: L.nn.RNN(3, 4, nonlinearity="sigmoid"),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5)),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 2, 3, 1)),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 2, 7)),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 2, 3).double()),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 2, 3), (L.zeros(1, 2, 4), L.zeros(2, 4))),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 2, 3), (L.zeros(1, 3, 4), L.zeros(1, 2, 4))),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 2, 3), (L.zeros(1, 2, 4), L.zeros(1, 3, 4))),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(5, 3), (L.zeros(1, 2, 4), L.zeros(1, 2, 4))),
    lambda L: L.nn.LSTM(3, 4)(L.zeros(0, 2, 3)),
    lambda L: L.nn.GRU(3, 4)(L.zeros(5)),
    lambda L: L.nn.GRU(3, 4)(L.zeros(5, 2, 3), L.zeros(2, 4)),
    lambda L: L.nn.GRU(3, 4)(L.zeros(5, 3), L.zeros(1, 2, 4)),
    lambda L: L.nn.GRU(3, 4)(L.zeros(5, 2, 3), L.zeros(1, 3, 4)),
    lambda L: L.nn.RNN(3, 4)(L.zeros(5)),
    lambda L: L.nn.LSTMCell(3, 4)(L.zeros(2, 2, 3)),
    lambda L: L.nn.LSTMCell(3, 4)(L.zeros(2, 3), (L.zeros(2, 2, 4), L.zeros(2, 4))),
    lambda L: L.nn.LSTMCell(3, 4)(L.zeros(2, 5)),
    lambda L: L.nn.LSTMCell(3, 4)(L.zeros(2, 3), (L.zeros(3, 4), L.zeros(2, 4))),
    lambda L: L.nn.LSTMCell(3, 4)(L.zeros(2, 3), (L.zeros(2, 4), L.zeros(2, 5))),
    lambda L: L.nn.GRUCell(3, 4)(L.zeros(2, 2, 3)),
    lambda L: L.nn.GRUCell(3, 4)(L.zeros(2, 3), L.zeros(2, 2, 4)),
    lambda L: L.nn.GRUCell(3, 4)(L.zeros(2, 3), L.zeros(3, 4)),
    lambda L: L.nn.RNNCell(3, 4, nonlinearity="x")(L.zeros(2, 3)),
    lambda L: L.gru_cell(L.zeros(2, 3), L.zeros(2, 4), L.zeros(8, 3), L.zeros(12, 4)),
    lambda L: L.lstm_cell(L.zeros(2, 3), [L.zeros(2, 4)], L.zeros(16, 3), L.zeros(16, 4)),
    lambda L: L.lstm(L.zeros(5, 2, 3), [L.zeros(1, 2, 4)], [], True, 1, 0.0, False, False,
                     False),
])
def test_bad_arguments_raise_torchs_errors(program: Any) -> None:
    assert_raises_like_torch(program)


def test_cudnn_refuses_a_strided_hx() -> None:
    m = nn.GRU(5, 4, 2).cuda()
    hx = ft.zeros(3, 2, 4, device="cuda").transpose(0, 1)
    with pytest.raises(RuntimeError, match=r"^rnn: hx is not contiguous$"):
        m(ft.ones(6, 3, 5, device="cuda"), hx)
    with cudnn(False):
        assert m(ft.ones(6, 3, 5, device="cuda"), hx)[1].shape == (2, 3, 4)


def test_packed_sequences_are_refused_by_name() -> None:
    class Packed:  # what a torch.nn.utils.rnn.PackedSequence looks like to the module
        batch_sizes = None

    with pytest.raises(NotImplementedError, match="PackedSequence"):
        nn.LSTM(3, 4)(Packed())  # type: ignore[arg-type]
    with pytest.raises(NotImplementedError, match="PackedSequence"):
        ft.gru(ft.zeros(4, 3), ft.tensor([2, 2]), ft.zeros(1, 2, 4), [], True, 1, 0.0, False,
               False)


# --- dropout ----------------------------------------------------------------------------------

def _pass_through(device: str) -> Any:
    """A 2-layer relu RNN whose layers copy their input: its output is the dropout mask
    between them, scaled (h = relu(x I^T), no recurrence, no bias)."""
    m = nn.RNN(64, 64, 2, nonlinearity="relu", bias=False, dropout=0.25)
    with ft.no_grad():
        for name, p in m.named_parameters():
            p.copy_(ft.eye(64) if "ih" in name else ft.zeros(64, 64))
    return m.to("cpu" if device == "cpu" else "cuda")


@pytest.mark.parametrize("device", DEVICES)
def test_dropout_between_layers_while_training(device: str) -> None:
    m = _pass_through(device)
    x = ft.ones(20, 16, 64, device="cpu" if device == "cpu" else "cuda")
    with cudnn(device != "native"):
        out = m(x)[0].numpy(force=True)
        again = m(x)[0].numpy(force=True)
        m.eval()
        assert np.array_equal(m(x)[0].numpy(force=True), np.ones((20, 16, 64), np.float32))
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((out == 0).mean() - 0.25) < 0.02  # 20480 draws: 5 sigma is 0.015
    assert not np.array_equal(out, again)  # each call draws fresh masks


def test_torch_drops_the_same_way() -> None:
    m = torch.nn.RNN(64, 64, 2, nonlinearity="relu", bias=False, dropout=0.25)
    with torch.no_grad():
        for name, p in m.named_parameters():
            p.copy_(torch.eye(64) if "ih" in name else torch.zeros(64, 64))
    out = m(torch.ones(20, 16, 64))[0].detach().numpy()
    assert set(np.unique(out)) <= {0.0, np.float32(1 / 0.75)}
    assert abs((out == 0).mean() - 0.25) < 0.02


# --- launches ---------------------------------------------------------------------------------

def lstm_native(steps: int, layers: int, dropout: bool = False) -> list[str]:
    per_layer = ["mm", "mm", "_thnn_fused_lstm_cell"] * steps + ["stack"]
    body = (per_layer + (["native_dropout"] if dropout else [])) * (layers - 1) + per_layer
    return [*body, "stack", "stack"]


def test_moving_to_cuda_flattens_the_weights_once() -> None:
    m = nn.LSTM(5, 4, 2)
    with launches() as names:
        m.cuda()
    assert names == ["_to_copy"] * 8 + ["_cudnn_rnn_flatten_weight"]
    weights = list(m.parameters())
    base = weights[0].data_ptr()
    offsets = np.cumsum([0] + [w.numel() * 4 for w in weights[:-1]])
    assert [w.data_ptr() - base for w in weights] == offsets.tolist()
    with launches() as names:
        m.flatten_parameters()
    assert names == ["_cudnn_rnn_flatten_weight"]
    with cudnn(False), launches() as names:
        m.flatten_parameters()
    assert names == []
    with launches() as names:
        nn.GRU(5, 4, device="cuda")  # flattened before reset_parameters draws into it
    assert names == ["_cudnn_rnn_flatten_weight"] + ["uniform_"] * 4


def test_cudnn_forward_is_one_launch_after_the_missing_states() -> None:
    lstm, gru = nn.LSTM(5, 4, 2).cuda().eval(), nn.GRU(5, 4, 3, batch_first=True).cuda()
    x = ft.ones(6, 3, 5, device="cuda")
    with launches() as names:
        out, (h, c) = lstm(x)
    assert names == ["zeros", "zeros", "_cudnn_rnn"]
    with launches() as names:
        lstm(x, (h, c))
    assert names == ["_cudnn_rnn"]
    with launches() as names:
        out, h = gru(x)
    assert names == ["zeros", "_cudnn_rnn"]
    assert out.shape == (6, 3, 4) and not out.is_contiguous()  # torch's transposed buffer


def test_dropout_state_is_made_once_and_again_after_reseeding() -> None:
    m = nn.LSTM(5, 4, 2, dropout=0.5).cuda()
    x = ft.ones(6, 3, 5, device="cuda")
    make_state = ["random_", "_local_scalar_dense", "_cudnn_init_dropout_state"]
    ft.manual_seed(0)
    with launches() as first:
        m(x)
    with launches() as second:
        m(x)
    ft.manual_seed(0)
    with launches() as reseeded:
        m(x)
    assert first == reseeded == ["zeros", "zeros", *make_state, "_cudnn_rnn"]
    assert second == ["zeros", "zeros", "_cudnn_rnn"]
    with _dispatch.push_mode(NoHostSync()):
        m(x)  # the state exists: no host sync, capturable
    ft.manual_seed(1)
    with _dispatch.push_mode(NoHostSync()), pytest.raises(RuntimeError, match="host sync"):
        m(x)  # reseeded: the seed is read back on the host, as torch's get_dropout_state


def test_weights_that_are_not_flat_warn_and_still_compute() -> None:
    ours, theirs = pair("GRU", 5, 4)
    ours = ours.cuda()
    ours.weight_hh_l0.data = ours.weight_hh_l0.data.clone()  # the same Parameter, moved
    x, tx, _ = arrays(6, 3, 5)
    x = x.cuda()
    with warnings.catch_warnings(record=True) as caught, launches() as names:
        warnings.simplefilter("always")
        out = ours(x)
    assert names == ["zeros", "_cudnn_rnn"]
    assert [str(w.message) for w in caught] == [ft._kernels.rnn_cudnn.WEIGHT_FORMAT_WARN]
    assert_close(out, theirs(tx))


@pytest.mark.parametrize("dropout", [False, True])
def test_native_lstm_launches_per_step(dropout: bool) -> None:
    m = nn.LSTM(5, 4, 2, dropout=0.5 if dropout else 0.0).cuda().train()
    x = ft.ones(3, 2, 5, device="cuda")
    with cudnn(False), launches() as names:
        m(x)
    assert names == ["zeros", "zeros", *lstm_native(3, 2, dropout)]


def test_native_launches_of_the_other_layers() -> None:
    x = ft.ones(2, 2, 5, device="cuda")
    gru_module = nn.GRU(5, 4, bidirectional=True).cuda()
    rnn_module = nn.RNN(5, 4, nonlinearity="relu").cuda()
    proj_module = nn.LSTM(5, 4, proj_size=2).cuda()
    with cudnn(False):
        with launches() as gru:
            gru_module(x)
        with launches() as rnn:
            rnn_module(x)
        with launches() as proj:
            proj_module(x)
    step = ["mm", "mm", "_thnn_fused_gru_cell"]
    assert gru == ["zeros", *step, *step, "stack", *step, *step, "stack", "cat", "stack"]
    assert rnn == ["zeros", *["addmm", "addmm", "add_", "relu"] * 2, "stack", "stack"]
    assert proj == ["zeros", "zeros", *["mm", "mm", "_thnn_fused_lstm_cell", "mm"] * 2,
                    "stack", "stack", "stack"]


@pytest.mark.parametrize(("nonlinearity", "bias"), [("tanh", True), ("relu", False)])
def test_rnn_cell_launches_match_torch(nonlinearity: str, bias: bool) -> None:
    ours, theirs = pair("RNNCell", 5, 4, bias=bias, nonlinearity=nonlinearity)
    x, tx, _ = arrays(3, 5)
    ours = ours.cuda()
    x = x.cuda()
    with torch_launches() as expected:
        theirs(tx)
    with launches() as names:
        ours(x)
    assert names == expected  # zeros, addmm|mm, addmm|mm, add_, tanh|relu


def test_lstm_and_gru_cell_launches() -> None:
    x, h = ft.ones(3, 5, device="cuda"), ft.zeros(3, 4, device="cuda")
    lstm_cell, gru_cell = nn.LSTMCell(5, 4).cuda(), nn.GRUCell(5, 4).cuda()
    with launches() as lstm:
        lstm_cell(x)
    with launches() as gru:
        gru_cell(x, h)
    assert lstm == ["zeros", "mm", "mm", "_thnn_fused_lstm_cell"]
    assert gru == ["mm", "mm", "_thnn_fused_gru_cell"]


def test_bfloat16_runs_cudnn_without_flat_weights() -> None:
    m = nn.LSTM(5, 4, dtype=ft.bfloat16)
    with launches() as moved:
        m.cuda()
    assert moved == ["_to_copy"] * 4  # is_acceptable takes no bfloat16: nothing flattened
    x = ft.ones(6, 3, 5, device="cuda", dtype=ft.bfloat16)
    with warnings.catch_warnings(record=True) as caught, launches() as names:
        warnings.simplefilter("always")
        out = m(x)[0]
    assert names == ["zeros", "zeros", "_cudnn_rnn"] and out.dtype == ft.bfloat16
    assert len(caught) == 1 and "not part of single contiguous chunk" in str(caught[0].message)


# --- CUDA graphs ------------------------------------------------------------------------------

@pytest.mark.usefixtures("fresh_device")
def test_capture_replays_what_eager_draws_from_the_same_state() -> None:
    m = nn.LSTM(5, 4, 3, dropout=0.5).cuda()
    x = ft.ones(6, 3, 5, device="cuda")
    ft.manual_seed(0)
    first = m(x)[0].numpy(force=True)
    second = m(x)[0].numpy(force=True)
    ft.manual_seed(0)
    assert np.array_equal(m(x)[0].numpy(force=True), first)  # state made again, same seed
    g = ft.cuda.CUDAGraph()
    s = ft.cuda.Stream()
    s.wait_stream(ft.cuda.current_stream())
    with ft.cuda.stream(s):
        g.capture_begin()
        out = m(x)[0]
        g.capture_end()
    ft.cuda.current_stream().wait_stream(s)
    with launches() as names:
        g.replay()
    assert names == ["cudaGraphLaunch"]
    assert np.array_equal(out.numpy(force=True), second)  # the state advanced as eagerly
    after = m(x)[0].numpy(force=True)
    assert not np.array_equal(after, second)  # ...and the replay advanced it again


@pytest.mark.usefixtures("fresh_device")
def test_eval_capture_replays_the_eager_output() -> None:
    m = nn.GRU(5, 4, 2).cuda().eval()
    static = ft.ones(6, 3, 5, device="cuda")
    eager = m(static)[0].numpy(force=True)
    g = ft.cuda.CUDAGraph()
    with ft.cuda.graph(g):
        out = m(static)[0]
    static.copy_(ft.zeros(6, 3, 5, device="cuda"))
    g.replay()
    assert np.array_equal(out.numpy(force=True), m(static)[0].numpy(force=True))
    static.fill_(1.0)
    g.replay()
    assert np.array_equal(out.numpy(force=True), eager)
