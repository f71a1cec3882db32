"""numpy kernels of the recurrent layers: one cell step (torch's fused `_thnn_fused_lstm_cell` /
`_thnn_fused_gru_cell` CUDA kernels), a whole layer stack (what one cuDNN `_cudnn_rnn` call
computes), and the cuDNN dropout state.

Gate layouts are torch's (and cuDNN's, which `_cudnn_rnn_flatten_weight` maps them to):
  LSTM  (i, f, g, o): c' = f*c + i*g, h' = o*tanh(c') [then h' @ w_hr.T with a projection]
  GRU   (r, z, n):    n = tanh(x_n + r*(h_n + b_hn)), h' = n + z*(h - n)
  RNN   h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)
float16/bfloat16 compute in float32 and round once on store; float64 computes in float64.

The dropout state is a uint8 buffer whose first 16 bytes are (seed, counter) as uint64: a
training call with dropout draws its masks from Philox(key=seed, counter=counter) and then
advances the counter in place, so consecutive calls draw fresh masks (as cuDNN's RNG states
advance) and a CUDA graph replay, which re-reads the buffer, draws what an eager call from the
same state would.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

LSTM, GRU, RNN_TANH, RNN_RELU = "LSTM", "GRU", "RNN_TANH", "RNN_RELU"
GATES = {LSTM: 4, GRU: 3, RNN_TANH: 1, RNN_RELU: 1}


def acc_of(a: np.ndarray) -> type[np.floating[Any]]:
    """The dtype a kernel computes in: float64 stays, everything else is float32."""
    return np.float64 if a.dtype == np.float64 else np.float32


def sigmoid(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 0.5 * (1.0 + np.tanh(0.5 * x))  # no overflow for large |x|
    return out


def _transposed(w: np.ndarray, acc: Any) -> np.ndarray:
    """w.T in `acc`, contiguous: the layout numpy's GEMM reads fastest, made once per call."""
    return np.ascontiguousarray(w.astype(acc, copy=False).T)


def _linear(x: np.ndarray, w_t: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """x @ w_t + b over the last dim: (..., in) x (in, out) -> (..., out), as one 2-D GEMM
    (numpy's batched matmul over leading dims is several times slower)."""
    y: np.ndarray = x.reshape(-1, x.shape[-1]) @ w_t
    if b is not None:
        y += b.astype(w_t.dtype, copy=False)
    return y.reshape(*x.shape[:-1], w_t.shape[1])


# --- one step: the fused cell kernels ---------------------------------------------------------

def lstm_step(gates: np.ndarray, c: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """gates (B, 4H) = x W_ih^T + h W_hh^T + biases -> (h', c', activated gates (B, 4H))."""
    i, f, g, o = np.split(gates, 4, axis=-1)
    i, f, g, o = sigmoid(i), sigmoid(f), np.tanh(g), sigmoid(o)
    c_next = f * c + i * g
    return o * np.tanh(c_next), c_next, np.concatenate([i, f, g, o], axis=-1)


def gru_step(gx: np.ndarray, gh: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """gx, gh (B, 3H) with their biases -> (h', workspace (B, 5H): r, z, n, h, gh_n)."""
    xr, xz, xn = np.split(gx, 3, axis=-1)
    hr, hz, hn = np.split(gh, 3, axis=-1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = np.tanh(xn + r * hn)
    return n + z * (h - n), np.concatenate([r, z, n, h, hn], axis=-1)


def fused_lstm_cell_kernel(hy: np.ndarray, cy: np.ndarray, workspace: np.ndarray,
                           igates: np.ndarray, hgates: np.ndarray, cx: np.ndarray,
                           b_ih: np.ndarray | None, b_hh: np.ndarray | None) -> None:
    """torch's `_thnn_fused_lstm_cell`: the gate sums, nonlinearities and state update of one
    step in one kernel; the GEMMs that made igates and hgates are launches of their own."""
    acc = acc_of(igates)
    gates = igates.astype(acc) + hgates.astype(acc)
    for b in (b_ih, b_hh):
        if b is not None:
            gates += b.astype(acc)
    h, c, work = lstm_step(gates, cx.astype(acc))
    hy[...], cy[...], workspace[...] = h, c, work


def fused_gru_cell_kernel(hy: np.ndarray, workspace: np.ndarray, igates: np.ndarray,
                          hgates: np.ndarray, hx: np.ndarray, b_ih: np.ndarray | None,
                          b_hh: np.ndarray | None) -> None:
    """torch's `_thnn_fused_gru_cell`: one GRU step after its two GEMMs, in one kernel."""
    acc = acc_of(igates)
    gx, gh = igates.astype(acc), hgates.astype(acc)
    if b_ih is not None:
        gx = gx + b_ih.astype(acc)
    if b_hh is not None:
        gh = gh + b_hh.astype(acc)
    h, work = gru_step(gx, gh, hx.astype(acc))
    hy[...], workspace[...] = h, work


# --- a whole stack: the cuDNN kernel ------------------------------------------------------------

@dataclass(frozen=True)
class RNNSpec:
    """What a `_cudnn_rnn` call computes: the descriptor cuDNN is given."""

    mode: str  # LSTM, GRU, RNN_TANH, RNN_RELU
    hidden_size: int
    proj_size: int  # 0: none (LSTM only)
    num_layers: int
    bidirectional: bool
    weight_stride0: int  # parameters per layer and direction: w_ih, w_hh[, b_ih, b_hh][, w_hr]
    has_biases: bool

    @property
    def num_directions(self) -> int:
        return 2 if self.bidirectional else 1


def _layer_weights(spec: RNNSpec, weights: tuple[np.ndarray, ...], index: int
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None, np.ndarray | None,
                              np.ndarray | None]:
    """(w_ih, w_hh, b_ih, b_hh, w_hr) of layer-direction `index` from the flat list."""
    group = weights[index * spec.weight_stride0:(index + 1) * spec.weight_stride0]
    w_ih, w_hh = group[0], group[1]
    b_ih, b_hh = (group[2], group[3]) if spec.has_biases else (None, None)
    w_hr = group[-1] if spec.proj_size else None
    return w_ih, w_hh, b_ih, b_hh, w_hr


def scan_layer(spec: RNNSpec, x: np.ndarray, h0: np.ndarray, c0: np.ndarray | None,
               weights: tuple[np.ndarray | None, ...], *, reverse: bool
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One layer, one direction over x (T, B, I) in the compute dtype: (out (T, B, Hr), h_T,
    c_T). The input projection of every step is one GEMM; the recurrence runs step by step."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    assert w_ih is not None and w_hh is not None
    acc = x.dtype.type
    gx = _linear(x, _transposed(w_ih, acc), b_ih)  # (T, B, G*H) for all steps at once
    w_hh_t = _transposed(w_hh, acc)
    w_hr_t = None if w_hr is None else _transposed(w_hr, acc)
    h, c = h0, c0
    out = np.empty((*x.shape[:2], h0.shape[-1]), acc)
    for t in (range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])):
        if spec.mode == GRU:
            h, _ = gru_step(gx[t], _linear(h, w_hh_t, b_hh), h)
        elif spec.mode == LSTM:
            assert c is not None
            h, c, _ = lstm_step(gx[t] + _linear(h, w_hh_t, b_hh), c)
            if w_hr_t is not None:
                h = _linear(h, w_hr_t, None)
        else:
            pre = gx[t] + _linear(h, w_hh_t, b_hh)
            h = np.tanh(pre) if spec.mode == RNN_TANH else np.maximum(pre, 0)
        out[t] = h
    return out, h, c


def cudnn_rnn_kernel(*arrays: np.ndarray | None, spec: RNNSpec, copy_weights: bool,
                     dropout: float) -> None:
    """One `_cudnn_rnn` call over the whole stack. Arrays, in order: the outputs output
    (T, B, D*Hr), hy (L*D, B, Hr), cy (L*D, B, H) or (0,), reserve (bytes); then, when
    `copy_weights`, the fresh flat weight buffer; then, when `dropout` > 0, the dropout
    state (written: its counter advances); then the inputs x (T, B, I), hx, cx or None, and
    the weights. Dropout applies to each layer's output but the last's."""
    output, hy, cy, _reserve, *rest = arrays
    flat = rest.pop(0) if copy_weights else None
    state = rest.pop(0) if dropout > 0 else None
    x, hx, cx, *weights = rest
    assert output is not None and hy is not None and x is not None and hx is not None
    params = tuple(w for w in weights if w is not None)
    if flat is not None:  # the copy cuDNN makes of weights that are not flat yet
        flat[...] = np.concatenate([w.reshape(-1) for w in params]) if params else 0
    acc = acc_of(x)
    layer_in = x.astype(acc)
    rng = None
    if state is not None:
        seed, counter = _seed_counter(state)
        rng = np.random.Generator(np.random.Philox(key=int(seed), counter=int(counter) << 128))
        _seed_counter(state)[1] = counter + 1
    for layer in range(spec.num_layers):
        outs = []
        for d in range(spec.num_directions):
            i = layer * spec.num_directions + d
            c0 = None if cx is None or spec.mode != LSTM else cx[i].astype(acc)
            out, h, c = scan_layer(spec, layer_in, hx[i].astype(acc), c0,
                                   _layer_weights(spec, params, i), reverse=d == 1)
            hy[i] = h
            if c is not None and cy is not None:
                cy[i] = c
            outs.append(out)
        layer_in = np.concatenate(outs, axis=-1) if len(outs) > 1 else outs[0]
        if rng is not None and layer < spec.num_layers - 1:
            keep = rng.random(layer_in.shape) < 1.0 - dropout
            scale = acc(0.0 if dropout >= 1.0 else 1.0 / (1.0 - dropout))
            layer_in = layer_in * keep * scale
    output[...] = layer_in


def flat_offsets(shapes: list[tuple[int, ...]]) -> list[int]:
    """The element offset of each weight in the flat buffer: the weights in their list order,
    back to back (torch's w_ih, w_hh, b_ih, b_hh[, w_hr] per layer and direction)."""
    offsets, at = [], 0
    for shape in shapes:
        offsets.append(at)
        at += int(np.prod(shape, dtype=np.int64))
    return offsets


def flatten_weight_kernel(flat: np.ndarray, *weights: np.ndarray) -> None:
    """`_cudnn_rnn_flatten_weight`: the flat buffer, zeroed, then each weight copied in."""
    flat[...] = 0
    at = 0
    for w in weights:
        flat[at:at + w.size] = w.reshape(-1)
        at += w.size


def _seed_counter(state: np.ndarray) -> np.ndarray:
    """The (seed, counter) words at the start of a dropout state buffer (a view)."""
    words: np.ndarray = state.reshape(-1).view(np.uint8)[:16].view("<u8")
    return words


def init_dropout_state_kernel(state: np.ndarray, *, seed: int) -> None:
    """`_cudnn_init_dropout_state`: the state for `seed`, its counter at zero."""
    state[...] = 0
    _seed_counter(state)[:] = (seed % (1 << 64), 0)
