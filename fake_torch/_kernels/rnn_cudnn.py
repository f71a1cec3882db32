"""torch's cuDNN RNN ops, as torch's CUDA build runs them (aten/src/ATen/native/cudnn/RNN.cpp):
`_cudnn_rnn` (a whole LSTM / GRU / RNN stack in one call), `_cudnn_rnn_flatten_weight` (the
weights copied into one buffer they then view), `_cudnn_init_dropout_state`, and the dispatch
torch.lstm / gru / rnn_tanh / rnn_relu take on a cuda input while cuDNN is enabled.

Launches, one per aten op, as fake_torch counts every library call (a cuBLAS GEMM is one
launch): a forward is one `_cudnn_rnn`, however many kernels cuDNN runs inside it. The first
forward in training mode with dropout > 0 first makes the dropout state, as torch's
get_dropout_state does: a seed drawn from the cuda generator (`random_`, then `item`: a host
sync, so that first call cannot be captured), then `_cudnn_init_dropout_state`. The state is
cached per device and made again only when the generator was re-seeded since (torch's
reset_rnn_state); a fresh simulated device starts without one, as a new process does.

bfloat16 runs cuDNN too, but flatten_parameters (torch.backends.cudnn.is_acceptable) keeps
its weights apart, so each bfloat16 call copies them and warns, as torch's does.

Not emulated: the DropoutState's event syncs between streams (fake_torch runs kernels in
program order) and cuDNN's workspace (a transient allocation inside the call). The flat
weight buffer holds the weights back to back in torch's list order; the reserve a training call
returns is sized as the activations a backward would read (cuDNN's own sizes are its own).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from fake_torch._dtype import (
    SCALAR_NAME,
    bfloat16,
    dtype,
    float16,
    float32,
    float64,
    get_default_dtype,
    int64,
    uint8,
)
from fake_torch._generator import generator_for
from fake_torch._kernels import rnn_kernels as K
from fake_torch._kernels._common import launch, new_tensor
from fake_torch._kernels.host import item
from fake_torch._kernels.sampling import random_
from fake_torch._kernels.shape import transpose
from fake_torch._meta_registrations import TensorMeta, register_meta
from fake_torch._opdef import COMPOSITE, EXTERN, RANDOM, op
from fake_torch._simulated._allocator import DEVICE
from fake_torch._tensor import Tensor
from fake_torch._torch_device import DeviceLike, canonical, device
from fake_torch.backends import cudnn

# cudnnRNNMode_t, as torch.backends.cudnn.rnn.get_cudnn_mode numbers the modes
CUDNN_MODE = {K.RNN_RELU: 0, K.RNN_TANH: 1, K.LSTM: 2, K.GRU: 3}
_MODE_NAME = {number: name for name, number in CUDNN_MODE.items()}
# cudnnDropoutGetStatesSize: "slightly over 2MB" in torch's words; its exact size is the GPU's
DROPOUT_STATE_BYTES = 2 * 1024 * 1024
# torch.backends.cudnn.CUDNN_TENSOR_DTYPES: what flatten_parameters flattens
CUDNN_TENSOR_DTYPES = (float16, float32, float64)
WEIGHT_FORMAT_WARN = ("RNN module weights are not part of single contiguous chunk of memory. "
                      "This means they need to be compacted at every call, possibly greatly "
                      "increasing memory usage. To compact weights again call "
                      "flatten_parameters().")


def _cudnn_enabled() -> bool:
    return bool(cudnn.enabled)  # torch.backends.cudnn.enabled, read at each call


def use_cudnn(t: Tensor) -> bool:
    """torch's use_cudnn for RNNs (at::cudnn_is_acceptable and a dtype check): cuDNN enabled,
    a non-empty cuda tensor of float16, float32, float64, or bfloat16 (which torch's CUDA hooks
    allow from cuDNN 9.13 on sm_80+: the simulated GPU's cuDNN is 9.13)."""
    return (_cudnn_enabled() and t.is_cuda and t.numel() != 0
            and t.dtype in (*CUDNN_TENSOR_DTYPES, bfloat16))


def is_acceptable(t: Tensor) -> bool:
    """torch.backends.cudnn.is_acceptable, which flatten_parameters asks: cuDNN enabled and a
    cuda tensor of CUDNN_TENSOR_DTYPES (no bfloat16: its weights are copied at every call)."""
    return _cudnn_enabled() and t.is_cuda and t.dtype in CUDNN_TENSOR_DTYPES


def check_attributes(input: Tensor, params: Sequence[Tensor], hiddens: Sequence[Tensor | None],
                     *, check_dtype: bool = False) -> None:
    """torch's check_attributes: every hidden and parameter on input's device (and dtype)."""
    for name, group in (("hidden", hiddens), ("parameter", params)):
        for t in group:
            if t is None:
                continue
            if t.device != input.device:
                raise RuntimeError(f"Input and {name} tensors are not at the same device, found "
                                   f"input tensor at {input.device} and {name} tensor at "
                                   f"{t.device}")
            if check_dtype and t.dtype != input.dtype:
                raise RuntimeError(f"Input and {name} tensors are not the same dtype, found "
                                   f"input tensor with {SCALAR_NAME[input.dtype]} and {name} "
                                   f"tensor with {SCALAR_NAME[t.dtype]}")


def _cuda_only(op_name: str, t: Tensor | None, dev: device | None = None) -> None:
    where = dev if dev is not None else (t.device if t is not None else canonical("cpu"))
    if where.type != "cuda":
        raise NotImplementedError(f"Could not run 'aten::{op_name}' with arguments from the "
                                  "'CPU' backend: torch's CUDA build runs it on cuda tensors "
                                  "only")


# --- the flat weight buffer -------------------------------------------------------------------

@op(EXTERN)
def _cudnn_rnn_flatten_weight(weight_arr: Sequence[Tensor], weight_stride0: int,
                              input_size: int, mode: int, hidden_size: int, proj_size: int,
                              num_layers: int, batch_first: bool, bidirectional: bool) -> Tensor:
    """Copy the weights into one new buffer and make each weight a view of its place in it
    (in place on `weight_arr`, as torch's set_); return the buffer. One launch."""
    from fake_torch._storage import set_  # a cycle at import time: _storage needs the ops

    if not weight_arr:
        raise RuntimeError("_cudnn_rnn_flatten_weight: cannot flatten empty weight list")
    weights = list(weight_arr)
    _cuda_only("_cudnn_rnn_flatten_weight", weights[0])
    _spec(mode, hidden_size, proj_size, num_layers, bidirectional, weight_stride0)  # checks
    shapes = [tuple(w.shape) for w in weights]
    offsets = K.flat_offsets(shapes)
    flat = new_tensor((sum(w.numel() for w in weights),), weights[0].dtype, weights[0].device)
    launch("_cudnn_rnn_flatten_weight", K.flatten_weight_kernel, flat, weights)
    for w, at, shape in zip(weights, offsets, shapes, strict=True):
        set_(w, flat, at, shape)
    return flat


@op(COMPOSITE)
def _use_cudnn_rnn_flatten_weight() -> bool:
    """True: the simulated CUDA build has cuDNN (nn.RNNBase.flatten_parameters asks)."""
    return True


def _spec(mode: int, hidden_size: int, proj_size: int, num_layers: int, bidirectional: bool,
          weight_stride0: int) -> K.RNNSpec:
    if mode not in _MODE_NAME:
        raise RuntimeError(f"unrecognized cuDNN RNN mode {mode}")
    has_biases = weight_stride0 in (4, 5)
    return K.RNNSpec(_MODE_NAME[mode], hidden_size, proj_size, num_layers, bidirectional,
                     weight_stride0, has_biases)


def try_get_weight_buf(params: Sequence[Tensor]) -> Tensor | None:
    """The flat buffer the weights view, when they are laid out in one storage as
    `_cudnn_rnn_flatten_weight` left them; else None (each call then copies them)."""
    first = params[0]
    if first._storage is None or first.storage_offset() != 0:
        return None
    root = first._storage.root
    itemsize = first.element_size()
    count = sum(p.numel() for p in params)
    base = int(root.__array_interface__["data"][0])
    if root.nbytes < count * itemsize:
        return None
    at = 0
    for p in params:
        if p._storage is not first._storage or p.data_ptr() != base + at * itemsize \
                or p.dtype is not first.dtype:
            return None
        at += p.numel()
    if not params[-1].is_contiguous():
        return None
    flat = np.ndarray((count,), first._a.dtype, buffer=root.reshape(-1).view(np.uint8))
    return Tensor._make(flat, first.device, first._storage, first.dtype)


# --- the dropout state --------------------------------------------------------------------------

@op(RANDOM)
def _cudnn_init_dropout_state(dropout: float, train: bool, dropout_seed: int, *,
                              dtype: dtype | None = None, layout: Any = None,
                              device: DeviceLike | None = None, pin_memory: bool | None = False,
                              requires_grad: bool | None = False) -> Tensor:
    """The RNG state cuDNN's dropout draws from, seeded with `dropout_seed` (one launch)."""
    dev = canonical(device)
    _cuda_only("_cudnn_init_dropout_state", None, dev)
    dt = dtype if dtype is not None else get_default_dtype()
    state = new_tensor((DROPOUT_STATE_BYTES // dt.itemsize,), dt, dev)
    launch("_cudnn_init_dropout_state", K.init_dropout_state_kernel, state, (),
           {"seed": int(dropout_seed)})
    return state


@register_meta("torch._cudnn_init_dropout_state")
def _cudnn_init_dropout_state_rule(dropout: float, train: bool, dropout_seed: int, *,
                                   dtype: dtype | None = None, device: DeviceLike | None = None,
                                   **kwargs: Any) -> TensorMeta:
    """A row-major buffer of DROPOUT_STATE_BYTES in `dtype` (cuda only)."""
    _cuda_only("_cudnn_init_dropout_state", None, canonical(device))
    dt = dtype if dtype is not None else get_default_dtype()
    return TensorMeta((DROPOUT_STATE_BYTES // dt.itemsize,), dt, (1,))


@dataclass
class _DropoutState:
    """One device's cached state (torch's DropoutState) and what made it."""

    buffer: Tensor | None = None
    device_stats: Any = None  # the simulated device it lives on (a fresh device has none)
    seeded: tuple[int, int] = (0, 0)  # the cuda generator's (seed, offset) after its draw


_dropout_states: dict[int, _DropoutState] = {}


def get_dropout_state(dropout_p: float, train: bool, dev: device) -> Tensor | None:
    """torch's get_dropout_state: the device's cached state, made (or made again, after the
    generator was re-seeded) when a training call with dropout needs it."""
    state = _dropout_states.setdefault(dev.index or 0, _DropoutState())
    if state.device_stats is not DEVICE.stats:  # a fresh simulated device: a new process
        state.buffer, state.device_stats = None, DEVICE.stats
    if train and dropout_p > 0:
        gen = generator_for(None, dev)
        # torch's reset_rnn_state: set by manual_seed. fake_torch's generator keeps no flag, so
        # a seed that changed or an offset that went back stands for it
        reseeded = gen._seed != state.seeded[0] or gen._offset < state.seeded[1]
        if state.buffer is None or reseeded:
            seed = item(random_(new_tensor((), int64, dev), generator=gen))
            state.buffer = _cudnn_init_dropout_state(dropout_p, train, seed, dtype=uint8,
                                                     device=dev)
            state.seeded = (gen._seed, gen._offset)
    return state.buffer


# --- the RNN call -------------------------------------------------------------------------------

@op(EXTERN, random=True)
def _cudnn_rnn(input: Tensor, weight: Sequence[Tensor], weight_stride0: int,
               weight_buf: Tensor | None, hx: Tensor, cx: Tensor | None, mode: int,
               hidden_size: int, proj_size: int, num_layers: int, batch_first: bool,
               dropout: float, train: bool, bidirectional: bool, batch_sizes: Sequence[int],
               dropout_state: Tensor | None) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    """The whole stack in one launch: (output, hy, cy, reserve, weight_buf). Weights that
    are not one flat buffer are copied into a new one inside the call (torch warns)."""
    weights = list(weight)
    check_attributes(input, weights, [hx, cx], check_dtype=True)
    _cuda_only("_cudnn_rnn", input)
    if batch_sizes:
        raise NotImplementedError("torch._cudnn_rnn over packed sequences (batch_sizes; "
                                  "torch.nn.utils.rnn.PackedSequence) is not emulated by "
                                  "fake_torch")
    if weight_buf is None:
        warnings.warn(WEIGHT_FORMAT_WARN, UserWarning, stacklevel=3)
    spec = _spec(mode, hidden_size, proj_size, num_layers, bidirectional, weight_stride0)
    if spec.mode != K.LSTM and cx is not None:
        raise RuntimeError("rnn: illegal defined cx for non-LSTM RNN")
    x = transpose(input, 0, 1) if batch_first else input  # (T, B, I)
    seq_length, mini_batch = x.shape[0], x.shape[1]
    if seq_length == 0:
        raise RuntimeError("cuDNN error: CUDNN_STATUS_BAD_PARAM")
    if not hx.is_contiguous():
        raise RuntimeError("rnn: hx is not contiguous")
    if cx is not None and not cx.is_contiguous():
        raise RuntimeError("rnn: cx is not contiguous")
    num_dir_layers = num_layers * spec.num_directions
    out_size = proj_size or hidden_size
    cell_size = (num_dir_layers, mini_batch, hidden_size)
    if cx is not None and tuple(cx.shape) != cell_size:
        raise RuntimeError(f"Expected cell size {list(cell_size)}, got {list(cx.shape)}")
    dev, dt = input.device, input.dtype
    output = new_tensor((seq_length, mini_batch, out_size * spec.num_directions), dt, dev)
    hy = new_tensor((num_dir_layers, mini_batch, out_size), hx.dtype, dev)
    cy = new_tensor(cell_size if cx is not None else (0,), hx.dtype, dev)
    # the activations a backward reads: each step's gates and states, per layer and direction
    per_step = (K.GATES[spec.mode] + 2) * hidden_size * mini_batch * num_dir_layers
    reserve = new_tensor((seq_length * per_step * dt.itemsize if train else 0,), uint8, dev)
    p = dropout if train else 0.0
    extra: list[Tensor] = []
    copy_weights = weight_buf is None
    if copy_weights:
        weight_buf = new_tensor((sum(w.numel() for w in weights),), dt, dev)
        extra.append(weight_buf)
    if p > 0:
        if dropout_state is None:
            raise RuntimeError("_cudnn_rnn: dropout in training mode needs a dropout_state "
                               "(torch._cudnn_init_dropout_state)")
        extra.append(dropout_state)
    assert weight_buf is not None
    launch("_cudnn_rnn", K.cudnn_rnn_kernel, (output, hy, cy, reserve, *extra),
           (x, hx, cx, *weights), {"spec": spec, "copy_weights": copy_weights,
                                   "dropout": float(p)})
    if batch_first:  # torch returns the (T, B, ...) buffer transposed: not contiguous
        output = transpose(output, 0, 1)
    return output, hy, cy, reserve, weight_buf


def cudnn_impl(input: Tensor, hx: Tensor, cx: Tensor | None, params: Sequence[Tensor],
               has_biases: bool, mode: str, num_layers: int, dropout_p: float, train: bool,
               bidirectional: bool, batch_first: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """torch's _cudnn_impl: (output, hy, cy or None) of torch.lstm / gru / rnn_* on cuda."""
    hidden_size, proj_size = hx.size(2), 0
    if cx is not None and cx.size(2) != hx.size(2):  # an LSTM with projections
        hidden_size, proj_size = cx.size(2), hx.size(2)
    weight_buf = try_get_weight_buf(params)
    state = get_dropout_state(dropout_p, train, input.device)
    num_params = (4 if has_biases else 2) + (1 if proj_size else 0)
    output, hy, cy, _, _ = _cudnn_rnn(input, params, num_params, weight_buf, hx, cx,
                                      CUDNN_MODE[mode], hidden_size, proj_size, num_layers,
                                      batch_first, dropout_p, train, bidirectional, [], state)
    return output, hy, (cy if cx is not None else None)
