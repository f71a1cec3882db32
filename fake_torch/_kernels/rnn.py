"""torch.lstm, torch.gru, torch.rnn_tanh, torch.rnn_relu (what nn.LSTM / GRU / RNN call) and the
one-step torch.lstm_cell, gru_cell, rnn_tanh_cell, rnn_relu_cell (nn.LSTMCell / ...).

Dispatch, as torch's CUDA build (aten/src/ATen/native/RNN.cpp): a cuda input of a dtype cuDNN
takes, with torch.backends.cudnn.enabled, runs one `_cudnn_rnn` (fake_torch/_kernels/
rnn_cudnn.py). Anything else runs torch's native implementation, layer by layer and step by
step; on cuda each step launches, in torch's order:
  LSTM      mm (x W_ih^T), mm (h W_hh^T), _thnn_fused_lstm_cell [, mm (h W_hr^T)]
  GRU       mm, mm, _thnn_fused_gru_cell
  RNN       addmm, addmm (mm, mm without biases), add_, tanh | relu
then per layer and direction one `stack` of the step outputs (a `cat` of both directions),
a `native_dropout` between layers while training with dropout > 0, and at the end one
`stack` of the final hidden states (two for an LSTM: h and c). The cells are one step of
the same. torch's CPU build computes the same values another way (oneDNN's
mkldnn_rnn_layer for LSTM; one input GEMM for all steps, then addmm, add_ and in-place
activations per step); fake_torch runs the cuda sequence on cpu too, where nothing is counted.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from fake_torch._kernels import rnn_kernels as K
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels.arith import add_
from fake_torch._kernels.join import cat, stack
from fake_torch._kernels.linalg import addmm, matmul
from fake_torch._kernels.pointwise_math import relu, tanh
from fake_torch._kernels.rnn_cudnn import check_attributes, cudnn_impl, use_cudnn
from fake_torch._kernels.shape import t, transpose
from fake_torch._kernels.split import unbind
from fake_torch._opdef import COMPOSITE, EXTERN, aten_op, def_of, exports, op
from fake_torch._tensor import Tensor

LSTMHidden = tuple[Tensor, Tensor]
Hidden = Tensor | LSTMHidden
# (w_ih, w_hh, b_ih, b_hh, w_hr) of one layer and direction; biases and w_hr may be absent
CellParams = tuple[Tensor, Tensor, Tensor | None, Tensor | None, Tensor | None]
Cell = Callable[[Tensor, Hidden, CellParams], Hidden]

aten_op("_thnn_fused_lstm_cell", EXTERN)  # one fused kernel per LSTM step after its GEMMs
aten_op("_thnn_fused_gru_cell", EXTERN)


def _packed(fn: str) -> NotImplementedError:
    return NotImplementedError(f"torch.{fn} over packed data (data, batch_sizes, ...: a "
                               "torch.nn.utils.rnn.PackedSequence) is not emulated by fake_torch")


# --- the cells: one step, as torch's CUDA branch runs it -------------------------------------

def _linear(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    """at::linear of a 2-D input: addmm with a bias, mm without."""
    return addmm(b, x, t(w)) if b is not None else matmul(x, t(w))


def _lstm_cell(x: Tensor, hidden: Hidden, p: CellParams) -> Hidden:
    assert isinstance(hidden, tuple)
    hx, cx = hidden
    w_ih, w_hh, b_ih, b_hh, w_hr = p
    igates, hgates = matmul(x, t(w_ih)), matmul(hx, t(w_hh))  # (B, 4H) each
    hy = new_tensor(cx.shape, cx.dtype, cx.device)
    cy = new_tensor(cx.shape, cx.dtype, cx.device)
    workspace = new_tensor(igates.shape, igates.dtype, igates.device)
    launch("_thnn_fused_lstm_cell", K.fused_lstm_cell_kernel, (hy, cy, workspace),
           (igates, hgates, cx, b_ih, b_hh))
    if w_hr is not None:
        hy = matmul(hy, t(w_hr))
    return hy, cy


def _gru_cell(x: Tensor, hidden: Hidden, p: CellParams) -> Hidden:
    assert isinstance(hidden, Tensor)
    w_ih, w_hh, b_ih, b_hh, _ = p
    igates, hgates = matmul(x, t(w_ih)), matmul(hidden, t(w_hh))  # (B, 3H) each
    hy = new_tensor(hidden.shape, hidden.dtype, hidden.device)
    workspace = new_tensor((hidden.shape[0], 5 * hidden.shape[1]), hidden.dtype, hidden.device)
    launch("_thnn_fused_gru_cell", K.fused_gru_cell_kernel, (hy, workspace),
           (igates, hgates, hidden, b_ih, b_hh))
    return hy


def _simple_cell(activation: Callable[[Tensor], Tensor]) -> Cell:
    def cell(x: Tensor, hidden: Hidden, p: CellParams) -> Hidden:
        assert isinstance(hidden, Tensor)
        w_ih, w_hh, b_ih, b_hh, _ = p
        return activation(add_(_linear(hidden, w_hh, b_hh), _linear(x, w_ih, b_ih)))

    return cell


_CELLS: dict[str, Cell] = {K.LSTM: _lstm_cell, K.GRU: _gru_cell,
                           K.RNN_TANH: _simple_cell(tanh), K.RNN_RELU: _simple_cell(relu)}


# --- layers and the stack ---------------------------------------------------------------------

def _output_of(hidden: Hidden) -> Tensor:
    return hidden[0] if isinstance(hidden, tuple) else hidden


def _scan(cell: Cell, steps: Sequence[Tensor], hidden: Hidden, p: CellParams
          ) -> tuple[list[Tensor], Hidden]:
    outputs = []
    for x in steps:
        hidden = cell(x, hidden, p)
        outputs.append(_output_of(hidden))
    if not outputs:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    return outputs, hidden


def _layer(cell: Cell, input: Tensor, hiddens: Sequence[Hidden], params: Sequence[CellParams]
           ) -> tuple[Tensor, list[Hidden]]:
    """One layer, both directions when given two: (output (T, B, D*H), final hiddens)."""
    steps = unbind(input, 0)
    outputs, forward = _scan(cell, steps, hiddens[0], params[0])
    output = stack(outputs, 0)
    if len(hiddens) == 1:
        return output, [forward]
    outputs, backward = _scan(cell, steps[::-1], hiddens[1], params[1])
    reverse = stack(outputs[::-1], 0)
    return cat([output, reverse], output.dim() - 1), [forward, backward]


def _dropout(x: Tensor, p: float) -> Tensor:
    """at::dropout(x, p, train=True): torch.nn.functional.dropout's one `native_dropout`."""
    # F.dropout's definition, from the op registry: nn sits above the ops and imports them
    opdef = def_of(exports("torch.nn.functional")["dropout"])
    assert opdef is not None
    out: Tensor = opdef.impl(x, p, True, False)
    return out


def _run_stack(mode: str, input: Tensor, hiddens: Sequence[Hidden],
               params: Sequence[CellParams], num_layers: int, dropout_p: float, train: bool,
               bidirectional: bool) -> tuple[Tensor, list[Hidden]]:
    """torch's apply_layer_stack: the layers in turn, dropout between them while training."""
    per_layer = 2 if bidirectional else 1
    if per_layer == 2 and (len(hiddens) % 2 or len(params) % 2):
        raise RuntimeError("Odd number of params or hiddens given to a bidirectional RNN")
    if num_layers != len(hiddens) // per_layer:
        raise RuntimeError("Expected more hidden states in stacked_rnn")
    if num_layers != len(params) // per_layer:
        raise RuntimeError("Expected more weights in stacked_rnn")
    finals: list[Hidden] = []
    layer_input = input
    for layer in range(num_layers):
        span = slice(layer * per_layer, (layer + 1) * per_layer)
        layer_input, final = _layer(_CELLS[mode], layer_input, hiddens[span], params[span])
        finals.extend(final)
        if dropout_p != 0 and train and layer < num_layers - 1:
            layer_input = _dropout(layer_input, dropout_p)
    return layer_input, finals


def _gather_params(params: Sequence[Tensor], has_biases: bool, has_projections: bool
                   ) -> list[CellParams]:
    """torch's gather_params: the flat list, grouped per layer and direction."""
    stride = (4 if has_biases else 2) + (1 if has_projections else 0)
    if len(params) % stride:
        raise RuntimeError("got an incorrect number of RNN parameters")
    groups = [params[i:i + stride] for i in range(0, len(params), stride)]
    return [(g[0], g[1], g[2] if has_biases else None, g[3] if has_biases else None,
             g[-1] if has_projections else None) for g in groups]


# --- torch.lstm / gru / rnn_tanh / rnn_relu ---------------------------------------------------

@op(COMPOSITE)
def lstm(input: Tensor, hx: Sequence[Tensor], params: Sequence[Tensor], has_biases: bool,
         num_layers: int, dropout: float, train: bool, bidirectional: bool,
         batch_first: bool) -> tuple[Tensor, Tensor, Tensor]:
    """A multi-layer LSTM over input (T, B, I) (batch_first: (B, T, I)) from hx = (h_0, c_0):
    (output, h_n, c_n). One `_cudnn_rnn` on cuda with cuDNN; else the native steps."""
    if isinstance(hx, Tensor):
        raise _packed("lstm")
    if len(hx) != 2:
        raise RuntimeError("lstm expects two hidden states")
    params = list(params)
    if use_cudnn(input):
        output, hy, cy = cudnn_impl(input, hx[0], hx[1], params, has_biases, K.LSTM,
                                    num_layers, dropout, train, bidirectional, batch_first)
        assert cy is not None
        return output, hy, cy
    has_projections = hx[0].size(2) != hx[1].size(2)
    check_attributes(input, params, hx)
    x = transpose(input, 0, 1) if batch_first else input
    hiddens: list[Hidden] = list(zip(unbind(hx[0], 0), unbind(hx[1], 0), strict=False))
    output, finals = _run_stack(K.LSTM, x, hiddens,
                                _gather_params(params, has_biases, has_projections), num_layers,
                                dropout, train, bidirectional)
    hy = stack([h[0] for h in finals if isinstance(h, tuple)], 0)
    cy = stack([h[1] for h in finals if isinstance(h, tuple)], 0)
    if batch_first:
        output = transpose(output, 0, 1)
    return output, hy, cy


def _one_hidden(fn: str, mode: str, input: Tensor, hx: Tensor, params: Sequence[Tensor],
                has_biases: bool, num_layers: int, dropout: float, train: bool,
                bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor]:
    """torch's ONE_HIDDEN_RNN: gru, rnn_tanh, rnn_relu."""
    if isinstance(params, Tensor):
        raise _packed(fn)
    params = list(params)
    if use_cudnn(input):
        output, hy, _ = cudnn_impl(input, hx, None, params, has_biases, mode, num_layers,
                                   dropout, train, bidirectional, batch_first)
        return output, hy
    check_attributes(input, params, [hx])
    x = transpose(input, 0, 1) if batch_first else input
    output, finals = _run_stack(mode, x, list(unbind(hx, 0)),
                                _gather_params(params, has_biases, False), num_layers, dropout,
                                train, bidirectional)
    hy = stack([h for h in finals if isinstance(h, Tensor)], 0)
    if batch_first:
        output = transpose(output, 0, 1)
    return output, hy


@op(COMPOSITE)
def gru(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool, num_layers: int,
        dropout: float, train: bool, bidirectional: bool,
        batch_first: bool) -> tuple[Tensor, Tensor]:
    """A multi-layer GRU: (output, h_n). One `_cudnn_rnn` on cuda with cuDNN."""
    return _one_hidden("gru", K.GRU, input, hx, params, has_biases, num_layers, dropout, train,
                       bidirectional, batch_first)


@op(COMPOSITE)
def rnn_tanh(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]:
    """A multi-layer Elman RNN with tanh: (output, h_n)."""
    return _one_hidden("rnn_tanh", K.RNN_TANH, input, hx, params, has_biases, num_layers,
                       dropout, train, bidirectional, batch_first)


@op(COMPOSITE)
def rnn_relu(input: Tensor, hx: Tensor, params: Sequence[Tensor], has_biases: bool,
             num_layers: int, dropout: float, train: bool, bidirectional: bool,
             batch_first: bool) -> tuple[Tensor, Tensor]:
    """A multi-layer Elman RNN with relu: (output, h_n)."""
    return _one_hidden("rnn_relu", K.RNN_RELU, input, hx, params, has_biases, num_layers,
                       dropout, train, bidirectional, batch_first)


# --- the one-step cells -----------------------------------------------------------------------

def _check_cell_input(input: Tensor, input_size: int) -> None:
    if input.shape[1] != input_size:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} expected "
                           f"{input_size}")


def _check_cell_hidden(input: Tensor, hx: Tensor, hidden_size: int, label: int) -> None:
    if input.shape[0] != hx.shape[0]:
        raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{label} "
                           f"batch size {hx.shape[0]}")
    if hx.shape[1] != hidden_size:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.shape[1]}, "
                           f"expected {hidden_size}")


def _check_cell_weights(gates: int, w_ih: Tensor, w_hh: Tensor, hidden_size: int) -> None:
    for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w.shape[0] != gates * hidden_size:
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = "
                               f"{gates * hidden_size}, but got {w.shape[0]}")


@op(COMPOSITE)
def lstm_cell(input: Tensor, hx: Sequence[Tensor], w_ih: Tensor, w_hh: Tensor,
              b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> tuple[Tensor, Tensor]:
    """One LSTM step for input (B, I) from hx = (h, c): (h', c')."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    hidden_size = w_hh.shape[1]
    _check_cell_input(input, w_ih.shape[1])
    _check_cell_weights(4, w_ih, w_hh, hidden_size)
    _check_cell_hidden(input, hx[0], hidden_size, 0)
    _check_cell_hidden(input, hx[1], hidden_size, 1)
    h, c = _lstm_cell(input, (hx[0], hx[1]), (w_ih, w_hh, b_ih, b_hh, None))
    return h, c


@op(COMPOSITE)
def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None,
             b_hh: Tensor | None = None) -> Tensor:
    """One GRU step for input (B, I) from h: h'."""
    _check_cell_input(input, w_ih.shape[1])
    _check_cell_hidden(input, hx, w_hh.shape[1], 0)
    _check_cell_weights(3, w_ih, w_hh, w_hh.shape[1])
    return _output_of(_gru_cell(input, hx, (w_ih, w_hh, b_ih, b_hh, None)))


def _simple_step(mode: str, input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                 b_ih: Tensor | None, b_hh: Tensor | None) -> Tensor:
    _check_cell_weights(1, w_ih, w_hh, w_hh.shape[1])
    _check_cell_input(input, w_ih.shape[1])
    _check_cell_hidden(input, hx, w_hh.shape[1], 0)
    return _output_of(_CELLS[mode](input, hx, (w_ih, w_hh, b_ih, b_hh, None)))


@op(COMPOSITE)
def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with tanh: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)."""
    return _simple_step(K.RNN_TANH, input, hx, w_ih, w_hh, b_ih, b_hh)


@op(COMPOSITE)
def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor,
                  b_ih: Tensor | None = None, b_hh: Tensor | None = None) -> Tensor:
    """One Elman step with relu."""
    return _simple_step(K.RNN_RELU, input, hx, w_ih, w_hh, b_ih, b_hh)
