"""The one-step recurrent cells (torch.nn.modules.rnn's RNNCellBase, RNNCell, LSTMCell,
GRUCell): weight_ih (G*hidden, input), weight_hh (G*hidden, hidden)[, bias_ih, bias_hh (G*hidden)]
drawn from U(-1/sqrt(hidden), 1/sqrt(hidden)) in that order. forward calls torch.lstm_cell /
gru_cell / rnn_tanh_cell / rnn_relu_cell: on cuda mm, mm, then one fused cell kernel (LSTM,
GRU), or addmm, addmm, add_, tanh | relu (RNN); see fake_torch/_kernels/rnn.py."""

from __future__ import annotations

import math

from fake_torch._dtype import dtype
from fake_torch._factories import public_entry, zeros
from fake_torch._factories import torch_empty as empty  # torch.empty: through the door
from fake_torch._kernels import rnn as _rnn
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike
from fake_torch.nn import init
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter

# the torch functions as Python code calls them: through the door
torch_zeros = public_entry(zeros)
lstm_cell = public_entry(_rnn.lstm_cell)
gru_cell = public_entry(_rnn.gru_cell)
rnn_tanh_cell = public_entry(_rnn.rnn_tanh_cell)
rnn_relu_cell = public_entry(_rnn.rnn_relu_cell)


class RNNCellBase(Module):
    """What the cells share: weight_ih, weight_hh and the optional biases of `num_chunks`
    gates."""

    input_size: int
    hidden_size: int
    bias: bool
    weight_ih: Tensor
    weight_hh: Tensor

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(empty((gates, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(empty((gates, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(empty(gates, device=device, dtype=dtype))
            self.bias_hh = Parameter(empty(gates, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.__dict__["nonlinearity"] != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input: Tensor) -> tuple[Tensor, bool]:
        """(input with a batch dim, whether it had one)."""
        return (input, True) if input.dim() == 2 else (input.unsqueeze(0), False)

    def _zeros(self, input: Tensor) -> Tensor:
        out: Tensor = torch_zeros(input.size(0), self.hidden_size, dtype=input.dtype,
                                  device=input.device)
        return out


def _check_input(name: str, input: Tensor) -> None:
    if input.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")


def _check_hidden(name: str, hx: Tensor | None) -> None:
    if hx is not None and hx.dim() not in (1, 2):
        raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")


class RNNCell(RNNCellBase):
    """One Elman step: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    nonlinearity: str

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        _check_input("RNNCell", input)
        _check_hidden("RNNCell", hx)
        input, is_batched = self._batched(input)
        hx = self._zeros(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        if self.nonlinearity == "tanh":
            ret: Tensor = rnn_tanh_cell(input, hx, self.weight_ih, self.weight_hh,
                                        self.bias_ih, self.bias_hh)
        elif self.nonlinearity == "relu":
            ret = rnn_relu_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                                self.bias_hh)
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step: forward(input, (h, c)) -> (h', c')."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, Tensor]:
        _check_input("LSTMCell", input)
        if hx is not None:
            for idx, value in enumerate(hx):
                if value.dim() not in (1, 2):
                    raise ValueError(f"LSTMCell: Expected hx[{idx}] to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        input, is_batched = self._batched(input)
        if hx is None:
            zero = self._zeros(input)
            hx = (zero, zero)
        elif not is_batched:
            hx = (hx[0].unsqueeze(0), hx[1].unsqueeze(0))
        h, c = lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step: forward(input, h) -> h'."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        _check_input("GRUCell", input)
        _check_hidden("GRUCell", hx)
        input, is_batched = self._batched(input)
        hx = self._zeros(input) if hx is None else (hx if is_batched else hx.unsqueeze(0))
        ret: Tensor = gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih,
                               self.bias_hh)
        return ret if is_batched else ret.squeeze(0)
