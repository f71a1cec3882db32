"""The recurrent layers: RNNBase, RNN, LSTM, GRU (and, from _rnn_cells, the one-step cells).

Parameters as torch names and draws them: per layer and direction weight_ih_l{k}, weight_hh_l{k}
[, bias_ih_l{k}, bias_hh_l{k}][, weight_hr_l{k}] (suffix `_reverse` for the backward direction),
each drawn from U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)) in that order. forward calls
torch.lstm / gru / rnn_tanh / rnn_relu with the flat weight list; on cuda with cuDNN enabled
that is one `_cudnn_rnn` launch (after one `zeros` per missing initial state), otherwise the
native steps (see fake_torch/_kernels/rnn.py). Moving a module to cuda (or
`flatten_parameters()`) copies the weights into one buffer they then view: one
`_cudnn_rnn_flatten_weight` launch. PackedSequence inputs are not emulated.
"""

from __future__ import annotations

import math
import numbers
import warnings
import weakref
from collections.abc import Callable
from typing import Any, Self, overload

from fake_torch._dtype import dtype
from fake_torch._factories import public_entry, zeros
from fake_torch._factories import torch_empty as empty  # torch.empty: through the door
from fake_torch._grad_mode import no_grad
from fake_torch._kernels import rnn as _rnn
from fake_torch._kernels import rnn_cudnn as _cudnn
from fake_torch._kernels.index_ops import index_select
from fake_torch._kernels.rnn_kernels import GATES
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike
from fake_torch.amp._state import is_any_autocast_enabled
from fake_torch.nn import init
from fake_torch.nn.modules._rnn_cells import GRUCell, LSTMCell, RNNCell, RNNCellBase
from fake_torch.nn.modules.module import Module
from fake_torch.nn.parameter import Parameter

# torch.zeros, torch.lstm, ... as Python code calls them: through the door
torch_zeros = public_entry(zeros)
_VF: dict[str, Callable[..., tuple[Any, ...]]] = {
    "LSTM": public_entry(_rnn.lstm), "GRU": public_entry(_rnn.gru),
    "RNN_TANH": public_entry(_rnn.rnn_tanh), "RNN_RELU": public_entry(_rnn.rnn_relu)}
_flatten_weight = public_entry(_cudnn._cudnn_rnn_flatten_weight)
_use_flatten_weight = public_entry(_cudnn._use_cudnn_rnn_flatten_weight)


def _refuse_packed(input: Any) -> None:
    if not isinstance(input, Tensor) and hasattr(input, "batch_sizes"):
        raise NotImplementedError("torch.nn.utils.rnn.PackedSequence inputs to RNN modules are "
                                  "not emulated by fake_torch: pass a padded tensor")


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters, their flat list, the input checks."""

    mode: str
    input_size: int
    hidden_size: int
    num_layers: int
    bias: bool
    batch_first: bool
    dropout: float
    bidirectional: bool
    proj_size: int

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        self._flat_weight_refs: list[weakref.ref[Parameter] | None] = []
        num_directions = 2 if bidirectional else 1
        _check_arguments(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         proj_size)
        if mode not in GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = GATES[mode] * hidden_size
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                shapes: list[tuple[int, ...]] = [(gate_size, layer_input_size),
                                                 (gate_size, real_hidden_size)]
                names = ["weight_ih_l{}{}", "weight_hh_l{}{}"]
                if bias:
                    shapes += [(gate_size,), (gate_size,)]
                    names += ["bias_ih_l{}{}", "bias_hh_l{}{}"]
                if proj_size > 0:
                    shapes.append((proj_size, hidden_size))
                    names.append("weight_hr_l{}{}")
                suffix = "_reverse" if direction == 1 else ""
                names = [n.format(layer, suffix) for n in names]
                for name, shape in zip(names, shapes, strict=True):
                    setattr(self, name, Parameter(empty(shape, device=device, dtype=dtype)))
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self._init_flat_weights()
        self.reset_parameters()

    # --- the flat weight list -----------------------------------------------------------------

    def _init_flat_weights(self) -> None:
        self._flat_weights: list[Parameter | None] = [
            getattr(self, wn) if hasattr(self, wn) else None for wn in self._flat_weights_names]
        self._flat_weight_refs = [weakref.ref(w) if w is not None else None
                                  for w in self._flat_weights]
        self.flatten_parameters()

    def __setattr__(self, attr: str, value: Any) -> None:
        if hasattr(self, "_flat_weights_names") and attr in self._flat_weights_names:
            self._flat_weights[self._flat_weights_names.index(attr)] = value
        super().__setattr__(attr, value)

    def flatten_parameters(self) -> None:
        """On cuda with cuDNN enabled: copy the weights into one buffer and make each a view
        of its place in it (one `_cudnn_rnn_flatten_weight` launch). Else nothing."""
        if len(self._flat_weights) != len(self._flat_weights_names):
            return
        weights = [w for w in self._flat_weights if isinstance(w, Tensor)]
        if len(weights) != len(self._flat_weights):
            return
        first = weights[0]
        if any(w.dtype != first.dtype or not w.is_cuda or not _cudnn.is_acceptable(w)
               for w in weights):
            return
        if len({w.data_ptr() for w in weights}) != len(weights):
            return  # aliasing parameters: torch keeps the copying path
        with no_grad():
            if _use_flatten_weight():
                num_weights = (4 if self.bias else 2) + (1 if self.proj_size > 0 else 0)
                _flatten_weight(weights, num_weights, self.input_size,
                                _cudnn.CUDNN_MODE[self.mode], self.hidden_size,
                                self.proj_size, self.num_layers, self.batch_first,
                                bool(self.bidirectional))

    def _apply(self, fn: Callable[[Tensor], Tensor], recurse: bool = True) -> Self:
        self._flat_weight_refs = []
        ret = super()._apply(fn, recurse)
        self._init_flat_weights()  # moved (to cuda): flatten there
        return ret

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _weights_have_changed(self) -> bool:
        for ref, name in zip(self._flat_weight_refs, self._flat_weights_names, strict=True):
            weight = getattr(self, name) if hasattr(self, name) else None
            if weight is not None and ref is not None and ref() is not weight:
                return True
        return False

    def _update_flat_weights(self) -> None:
        if self._weights_have_changed():
            self._init_flat_weights()

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, weight) for weight in weights] for weights in self._all_weights]

    def __getstate__(self) -> dict[str, Any]:
        self._update_flat_weights()
        state = self.__dict__.copy()
        del state["_flat_weight_refs"]  # weak references do not copy or pickle
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._flat_weight_refs = [weakref.ref(w) if w is not None else None
                                  for w in self._flat_weights]

    # --- input checks -------------------------------------------------------------------------

    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        weight_dtype = self._flat_weights[0].dtype  # type: ignore[union-attr]
        if input.dtype != weight_dtype and not is_any_autocast_enabled():
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({weight_dtype}). Convert input: input.to({weight_dtype}), or "
                             f"convert model: model.to({input.dtype})")
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got "
                               f"{input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None
                                 ) -> tuple[int, int, int]:
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return self.num_layers * num_directions, mini_batch, size

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if hx.size() != expected_hidden_size:
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Tensor | None
                           ) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        return hx if permutation is None else index_select(hx, 1, permutation)

    def _zeros(self, input: Tensor, size: int) -> Tensor:
        """A missing initial state: (num_layers * num_directions, batch, size) of zeros."""
        num_directions = 2 if self.bidirectional else 1
        batch = input.size(0) if self.batch_first else input.size(1)
        out: Tensor = torch_zeros(self.num_layers * num_directions, batch, size,
                                  dtype=input.dtype, device=input.device)
        return out

    def _run(self, input: Tensor, hx: Any) -> tuple[Any, ...]:
        result: tuple[Any, ...] = _VF[self.mode](
            input, hx, self._flat_weights, self.bias, self.num_layers, self.dropout,
            self.training, self.bidirectional, self.batch_first)
        return result

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)


def _check_arguments(input_size: int, hidden_size: int, num_layers: int, bias: bool,
                     batch_first: bool, dropout: float, proj_size: int) -> None:
    """RNNBase's argument checks, torch's texts and order."""
    if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
            or not 0 <= dropout <= 1):
        raise ValueError("dropout should be a number in range [0, 1] representing the "
                         "probability of an element being zeroed")
    if dropout > 0 and num_layers == 1:
        warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                      "non-zero dropout expects num_layers greater than 1, but got "
                      f"dropout={dropout} and num_layers={num_layers}", stacklevel=3)
    for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                              ("input_size", input_size, int)):
        if not isinstance(value, kind):
            raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                            f"{type(value).__name__}")
    if input_size <= 0:
        raise ValueError("input_size must be greater than zero")
    if not isinstance(hidden_size, int):
        raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
    if hidden_size <= 0:
        raise ValueError("hidden_size must be greater than zero")
    if num_layers <= 0:
        raise ValueError("num_layers must be greater than zero")
    if proj_size < 0:
        raise ValueError("proj_size should be a positive integer or zero to disable "
                         "projections")
    if proj_size >= hidden_size:
        raise ValueError("proj_size has to be smaller than hidden_size")


def _batch_input(name: str, module: RNNBase, input: Tensor, hx: Tensor | None
                 ) -> tuple[Tensor, Tensor | None, bool]:
    """RNN / GRU: (input with its batch dim, hx likewise, whether the input had one)."""
    if input.dim() not in (2, 3):
        tensor = " tensor" if name == "RNN" else ""
        raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D{tensor} "
                         "instead")
    is_batched = input.dim() == 3
    if not is_batched:
        input = input.unsqueeze(0 if module.batch_first else 1)
        if hx is not None:
            if hx.dim() != 2:
                raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but got "
                                   f"{hx.dim()}-D tensor")
            hx = hx.unsqueeze(1)
    elif hx is not None and hx.dim() != 3:
        raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D "
                           "tensor")
    return input, hx, is_batched


def _one_hidden_forward(name: str, module: RNNBase, input: Tensor, hx: Tensor | None
                        ) -> tuple[Tensor, Tensor]:
    """RNN.forward and GRU.forward (torch's two copies of one body)."""
    _refuse_packed(input)
    module._update_flat_weights()
    input, hx, is_batched = _batch_input(name, module, input, hx)
    hx = module._zeros(input, module.hidden_size) if hx is None else \
        module.permute_hidden(hx, None)
    module.check_forward_args(input, hx, None)
    output, hidden = module._run(input, hx)
    if not is_batched:
        output = output.squeeze(0 if module.batch_first else 1)
        hidden = hidden.squeeze(1)
    return output, module.permute_hidden(hidden, None)


class RNN(RNNBase):
    """A multi-layer Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or
    relu). RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)."""

    nonlinearity: str

    @overload
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None: ...

    @overload
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            self.nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            self.nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if self.nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif self.nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self.nonlinearity}'. Select from 'tanh' "
                             "or 'relu'.")
        super().__init__(mode, *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return _one_hidden_forward("RNN", self, input, hx)


class GRU(RNNBase):
    """A multi-layer GRU. GRU(input_size, hidden_size, num_layers=1, bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)."""

    @overload
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device: DeviceLike | None = None,
                 dtype: dtype | None = None) -> None: ...

    @overload
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        return _one_hidden_forward("GRU", self, input, hx)


class LSTM(RNNBase):
    """A multi-layer LSTM (with proj_size > 0, projected hidden states). LSTM(input_size,
    hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0, bidirectional=False,
    proj_size=0, device=None, dtype=None). forward(input, (h_0, c_0)) -> (output, (h_n, c_n))."""

    @overload
    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0,
                 device: DeviceLike | None = None, dtype: dtype | None = None) -> None: ...

    @overload
    def __init__(self, *args: Any, **kwargs: Any) -> None: ...

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Tensor | None
                               ) -> tuple[int, int, int]:
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return self.num_layers * num_directions, mini_batch, self.hidden_size

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Tensor | None
                           ) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        return index_select(hx[0], 1, permutation), index_select(hx[1], 1, permutation)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None
                ) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        _refuse_packed(input)
        self._update_flat_weights()
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        real_hidden_size = self.proj_size if self.proj_size > 0 else self.hidden_size
        if hx is None:
            hx = (self._zeros(input, real_hidden_size), self._zeros(input, self.hidden_size))
        else:
            dims = (hx[0].dim(), hx[1].dim())
            if is_batched and dims != (3, 3):
                raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but "
                                   f"got ({dims[0]}-D, {dims[1]}-D) tensors")
            if not is_batched:
                if dims != (2, 2):
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D "
                                       f"but got ({dims[0]}-D, {dims[1]}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx, None)
        hx = self.permute_hidden(hx, None)
        result = self._run(input, hx)
        output, hidden = result[0], (result[1], result[2])
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = (hidden[0].squeeze(1), hidden[1].squeeze(1))
        return output, self.permute_hidden(hidden, None)


__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]
