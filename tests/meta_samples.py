"""Sample calls for every op definition, for the meta device's tests (tests/test_meta_ops.py).

`Pool(L, dev)` holds the same small tensors (shapes, dtypes, strides, offsets) in a library `L`
(fake_torch or real torch) on a device; values come from a seeded generator on the cpu and are
moved, so the cpu pool and the meta pool differ only by device. A call is `(args, kwargs)` made
from a pool. Most ops take one of the GENERIC calls (the first that runs on the cpu is the op's
sample); the ops whose signatures need more have their own in SAMPLES.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Call = tuple[tuple[Any, ...], dict[str, Any]]
Sample = Callable[["Pool"], Call]


# Each sample tensor of a pool: name -> its recipe, called with the library, the device and a
# draw of standard normal values from the pool's generator (in this order: a tensor's values are
# the generator's next draws after the tensors listed before it).
_Draw = Callable[..., Any]
_RECIPES: dict[str, Callable[[Any, str, _Draw], Any]] = {
    "A": lambda L, dev, r: r(2, 3), "B": lambda L, dev, r: r(2, 3),  # float32, row-major
    "S": lambda L, dev, r: r(3, 3),
    "V": lambda L, dev, r: r(3), "W": lambda L, dev, r: r(3),
    "At": lambda L, dev, r: r(3, 2).t(),  # (2, 3) with strides (1, 2)
    "Ao": lambda L, dev, r: r(3, 3)[1:],  # (2, 3) at storage offset 3
    "P": lambda L, dev, r: (r(2, 3, to=None).abs() + 0.1).to(dev),  # positive (probabilities)
    "I": lambda L, dev, r: L.tensor([[0, 1, 1], [1, 0, 1]]).to(dev),  # int64, valid indices
    "idx": lambda L, dev, r: L.tensor([0, 1]).to(dev),  # of dims 2, 3
    "M": lambda L, dev, r: L.tensor([[True, False, True], [False, True, True]]).to(dev),
    "X4": lambda L, dev, r: r(1, 2, 4, 4), "W4": lambda L, dev, r: r(3, 2, 3, 3),  # conv, pool
    "X3": lambda L, dev, r: r(1, 2, 5),
    "Bm": lambda L, dev, r: r(2, 3, 3),  # a batch of matrices
    "s0": lambda L, dev, r: r(), "i0": lambda L, dev, r: L.tensor(1).to(dev),  # 0-dim
    "Z": lambda L, dev, r: L.view_as_complex(r(2, 3, 2)),  # complex64
    "Z0": lambda L, dev, r: L.view_as_complex(r(2)),
    "C2": lambda L, dev, r: r(2),  # per-channel
    "C2p": lambda L, dev, r: (r(2, to=None).abs() + 0.5).to(dev),
    # an RNN: input 3, hidden 4, sequence 5, batch 2
    "seq": lambda L, dev, r: r(5, 2, 3), "h0": lambda L, dev, r: r(1, 2, 4),
    "c0": lambda L, dev, r: r(1, 2, 4), "x2": lambda L, dev, r: r(2, 3),
    "h2": lambda L, dev, r: r(2, 4),
    "rnn": lambda L, dev, r: {gates: [r(gates * 4, 3), r(gates * 4, 4), r(gates * 4),
                                      r(gates * 4)] for gates in (1, 3, 4)},
    # 3-d and transposed convolutions (weights (in, out, *k) for transposed ones)
    "X5": lambda L, dev, r: r(1, 2, 3, 4, 4), "W5": lambda L, dev, r: r(3, 2, 2, 2, 2),
    "Wt1": lambda L, dev, r: r(2, 3, 3), "Wt2": lambda L, dev, r: r(2, 3, 3, 3),
    "Wt3": lambda L, dev, r: r(2, 3, 2, 2, 2),
    # attention over 3 tokens of width 4 with 2 heads: (L, N, E) and batch first (N, L, E)
    "q": lambda L, dev, r: r(3, 1, 4), "qb": lambda L, dev, r: r(1, 3, 4),
    "in_w": lambda L, dev, r: r(12, 4), "in_b": lambda L, dev, r: r(12),
    "out_w": lambda L, dev, r: r(4, 4), "out_b": lambda L, dev, r: r(4),
}


# id(L) -> (L, name -> the generator's state before that tensor is drawn): see Pool
_STARTS: dict[int, tuple[Any, dict[str, Any]]] = {}


class Pool:
    """The sample tensors of one library on one device, each made when first read: a sample
    call reads two or three of them, and making all (50 tensors, each drawn and moved) cost
    most of the meta and make_fx tests' time. A tensor's values are what one generator seeded
    with 0 would draw making all of them in _RECIPES' order: its generator starts from that
    generator's state, recorded once per library (`_starts`)."""

    def __init__(self, L: Any, dev: str) -> None:
        self.L, self.dev = L, dev

    def _starts(self) -> dict[str, Any]:
        """name -> the generator's state before the tensor of that name is drawn."""
        known = _STARTS.get(id(self.L))
        if known is None:
            g = self.L.Generator().manual_seed(0)
            starts = {}
            for name, recipe in _RECIPES.items():
                starts[name] = g.get_state()
                recipe(self.L, "cpu", self._draw(g, "cpu"))
            known = _STARTS[id(self.L)] = (self.L, starts)  # (L kept: its id stays its)
        return known[1]

    def _draw(self, g: Any, dev: str) -> _Draw:
        def r(*shape: int, to: str | None = dev) -> Any:
            t = self.L.randn(shape, generator=g)
            return t if to is None else t.to(to)
        return r

    def __getattr__(self, name: str) -> Any:
        recipe = _RECIPES.get(name)
        if recipe is None or name.startswith("_"):
            raise AttributeError(f"a sample pool has no tensor {name!r}")
        g = self.L.Generator()
        g.set_state(self._starts()[name])
        value = recipe(self.L, self.dev, self._draw(g, self.dev))
        setattr(self, name, value)
        return value


GENERIC: list[Sample] = [
    lambda p: ((p.A,), {}), lambda p: ((p.A, p.B), {}), lambda p: ((p.A, 2), {}),
    lambda p: ((p.A, 0), {}), lambda p: ((p.A, -1), {}), lambda p: ((p.S,), {}),
    lambda p: ((p.S, p.S), {}), lambda p: ((p.V,), {}), lambda p: ((p.V, p.W), {}),
    lambda p: ((p.A, p.M), {}), lambda p: ((p.A, p.M, 0.5), {}),
    lambda p: ((p.A, 0, p.idx), {}), lambda p: ((p.A, 1, p.I), {}),
    lambda p: ((p.A, 1, p.I, p.B), {}), lambda p: ((p.A, p.B, p.B), {}),
    lambda p: ((p.A, p.B, 0.5), {}), lambda p: ((p.M, p.A, p.B), {}), lambda p: ((p.I,), {}),
    lambda p: ((p.I, p.I), {}),
    lambda p: ((p.M,), {}), lambda p: ((p.X4, p.W4), {}), lambda p: ((p.X4, 2), {}),
    lambda p: ((p.X4,), {}), lambda p: ((p.Bm, p.Bm), {}), lambda p: ((p.A, (3, 2)), {}),
    lambda p: ((p.A, 1, 0), {}), lambda p: (([p.A, p.B],), {}), lambda p: ((p.A, [3]), {}),
    lambda p: ((p.A, p.L.float16), {}), lambda p: (((2, 3),), {}), lambda p: ((2, 3), {}),
    lambda p: ((5,), {}), lambda p: ((p.A, 0.0, 1.0), {}), lambda p: ((p.A, p.S), {}),
    lambda p: ((p.A, p.V), {}), lambda p: ((p.S, p.V), {}),
]

_RNN_FLAGS = (True, 1, 0.0, False, False, False)  # has_biases, layers, dropout, train, bidir, bf

SAMPLES: dict[str, Sample] = {
    "torch.empty_strided": lambda p: (((2, 3), (1, 2)), {}),  # a column-major 2x3
    "Tensor.__format__": lambda p: ((p.A, ""), {}),  # format(t, ""): str(t), as torch's
    "torch.nn.functional.batch_norm": lambda p: ((p.X4, p.C2, p.C2p), {}),
    "Tensor.bitwise_and_": lambda p: ((p.I, p.I), {}),
    "Tensor.bitwise_or_": lambda p: ((p.I, p.I), {}),
    "Tensor.bitwise_xor_": lambda p: ((p.I, p.I), {}),
    "Tensor.expand": lambda p: ((p.V, 2, 3), {}),
    "torch.broadcast_to": lambda p: ((p.V, (2, 3)), {}),
    "torch.as_strided": lambda p: ((p.A, (2, 2), (1, 2), 1), {}),
    "Tensor.as_strided_": lambda p: ((p.A, (2, 2), (1, 2), 1), {}),
    "torch.unflatten": lambda p: ((p.A, 1, (3, 1)), {}),
    "Tensor.index_copy_": lambda p: ((p.A, 0, p.idx, p.B), {}),
    "Tensor.index_add_": lambda p: ((p.A, 0, p.idx, p.B), {"alpha": 2}),
    "torch.index_add": lambda p: ((p.A, 1, p.idx, p.B[:, :2]), {}),
    "Tensor.unfold": lambda p: ((p.At, 1, 2, 1), {}),
    "torch.nn.functional.one_hot": lambda p: ((p.I, 3), {}),
    "torch.index_copy": lambda p: ((p.A, 0, p.idx, p.B), {}),
    "Tensor.index_fill_": lambda p: ((p.A, 1, p.idx, 0.5), {}),
    "torch.index_fill": lambda p: ((p.A, 1, p.idx, 0.5), {}),
    "torch.take_along_dim": lambda p: ((p.A, p.I, 1), {}),
    "torch.take": lambda p: ((p.A, p.idx), {}),
    "Tensor.item": lambda p: ((p.s0,), {}),
    "Tensor.__bool__": lambda p: ((p.s0,), {}),
    "Tensor.__float__": lambda p: ((p.s0,), {}),
    "Tensor.__complex__": lambda p: ((p.Z0,), {}),
    "torch.view_as_real": lambda p: ((p.Z,), {}),
    "torch.view_as_complex": lambda p: ((p.L.view_as_real(p.Z),), {}),
    "torch.imag": lambda p: ((p.Z,), {}),
    "Tensor.imag": lambda p: ((p.Z,), {}),
    "Tensor.__int__": lambda p: ((p.s0,), {}),
    "Tensor.__index__": lambda p: ((p.i0,), {}),
    "torch.index_put_": lambda p: ((p.A, (p.idx,), p.V), {}),
    "torch.index_put": lambda p: ((p.A, (p.idx,), p.V), {}),
    "torch.narrow": lambda p: ((p.A, 1, 1, 2), {}),
    "torch.split_with_sizes": lambda p: ((p.A, [1, 2], 1), {}),
    "torch.addmm": lambda p: ((p.A, p.A, p.S), {}),
    "Tensor.addmm_": lambda p: ((p.A, p.B, p.S), {}),  # (self apart from mat1: one alias)
    "torch.baddbmm": lambda p: ((p.Bm, p.Bm, p.Bm), {}),
    "Tensor.baddbmm_": lambda p: ((p.Bm, p.Bm.clone(), p.Bm.clone()), {}),
    "torch.einsum": lambda p: (("ij,jk->ik", p.A, p.S), {}),
    "torch.dstack": lambda p: (([p.Bm, p.Bm[:, :, :2]],), {}),  # 3-D: no atleast_3d view
    "torch.full": lambda p: (((2, 3), 1.5), {}),
    "torch.linspace": lambda p: ((0.0, 1.0, 5), {}),
    "Tensor.geometric_": lambda p: ((p.P, 0.5), {}),
    "torch.poisson": lambda p: ((p.P,), {}),
    "torch.multinomial": lambda p: ((p.P, 2), {}),
    "torch.lstm": lambda p: ((p.seq, (p.h0, p.c0), p.rnn[4], *_RNN_FLAGS), {}),
    "torch.gru": lambda p: ((p.seq, p.h0, p.rnn[3], *_RNN_FLAGS), {}),
    "torch.rnn_tanh": lambda p: ((p.seq, p.h0, p.rnn[1], *_RNN_FLAGS), {}),
    "torch.rnn_relu": lambda p: ((p.seq, p.h0, p.rnn[1], *_RNN_FLAGS), {}),
    "torch.lstm_cell": lambda p: ((p.x2, (p.h2, p.h2), *p.rnn[4]), {}),
    "torch.gru_cell": lambda p: ((p.x2, p.h2, *p.rnn[3]), {}),
    "torch.rnn_tanh_cell": lambda p: ((p.x2, p.h2, *p.rnn[1]), {}),
    "torch.rnn_relu_cell": lambda p: ((p.x2, p.h2, *p.rnn[1]), {}),
    "torch.nn.functional.nll_loss": lambda p: ((p.A, p.idx), {}),
    "torch.nn.functional.embedding": lambda p: ((p.I, p.S), {}),
    "Tensor.new_full": lambda p: ((p.A, (2,), 1.0), {}),
    "Tensor.put_": lambda p: ((p.A, p.idx, p.C2), {}),
    "torch.put": lambda p: ((p.A, p.idx, p.C2), {}),
    "Tensor.masked_scatter_": lambda p: ((p.A, p.M, p.S.reshape(-1)), {}),
    "torch.masked_scatter": lambda p: ((p.A, p.M, p.S.reshape(-1)), {}),
    "torch.linalg.cholesky": lambda p: ((p.S @ p.S.mT + p.L.eye(3, device=p.dev) * 3,), {}),
    "torch.cholesky_inverse": lambda p: ((p.S @ p.S.mT + p.L.eye(3, device=p.dev) * 3,), {}),
    "torch.conv3d": lambda p: ((p.X5, p.W5), {}),
    "torch.conv_transpose1d": lambda p: ((p.X3, p.Wt1), {}),
    "torch.conv_transpose2d": lambda p: ((p.X4, p.Wt2), {}),
    "torch.conv_transpose3d": lambda p: ((p.X5, p.Wt3), {}),
    "torch.instance_norm": lambda p: ((p.X4, None, None, None, None, True, 0.1, 1e-5, False),
                                      {}),
    "torch.pixel_shuffle": lambda p: ((p.X4.reshape(1, 8, 2, 2), 2), {}),
    "torch.nn.functional.multi_head_attention_forward": lambda p: (
        (p.q, p.q, p.q, 4, 2, p.in_w, p.in_b, None, None, False, 0.0, p.out_w, p.out_b),
        {"training": False}),
    "torch._native_multi_head_attention": lambda p: (
        (p.qb, p.qb, p.qb, 4, 2, p.in_w, p.in_b, p.out_w, p.out_b), {}),
    # the generic sample of these would ask something else of them
    "torch.where": lambda p: ((p.M, p.A, p.B), {}),  # (not the one-argument nonzero form)
    "torch.tensor": lambda p: (([[1.0, 2.0], [3.0, 4.0]],), {}),
    "Tensor.new_tensor": lambda p: ((p.A, [1, 2]), {}),
    # a non-contiguous input: the output's layout follows it
    "torch.add": lambda p: ((p.At, p.B), {}),
    "torch.exp": lambda p: ((p.At,), {}),
    "Tensor.contiguous": lambda p: ((p.At,), {}),
    "torch.clone": lambda p: ((p.Ao,), {}),
    "torch.empty_like": lambda p: ((p.At,), {}),
    "torch.t": lambda p: ((p.Ao,), {}),
}

# ops that cannot run on a meta tensor at all (no sample), and why
NO_SAMPLE: dict[str, str] = {
    "Tensor.chalf": "complex32 is not emulated: it raises on every device",
    "torch.from_numpy": "shares a numpy array's memory: always a cpu tensor",
    "torch.frombuffer": "shares a Python buffer's memory: always a cpu tensor",
    "Tensor.record_stream": "marks a cuda tensor's block in use by a cuda stream",
    "torch._cudnn_rnn": "cuDNN's RNN: a cuda-only entry point",
    "torch._cudnn_rnn_flatten_weight": "cuDNN's RNN: a cuda-only entry point",
    "torch._cudnn_init_dropout_state": "cuDNN's RNN: a cuda-only entry point",
    "torch._use_cudnn_rnn_flatten_weight": "a question about cuDNN, no tensor",
    "Tensor.to_sparse": "sparse layouts are not emulated: refused on every device",
    "Tensor.indices": "a sparse tensor's accessor: a dense tensor raises on every device",
    "Tensor.values": "a sparse tensor's accessor: a dense tensor raises on every device",
}

# ops whose meta call refuses, as torch's does: the exception class and why
REFUSES: dict[str, tuple[type[Exception], str]] = {
    "Tensor.cpu": (NotImplementedError, "copies the data out to the host"),
    "Tensor.cuda": (NotImplementedError, "copies the data out to the device"),
    "Tensor.pin_memory": (RuntimeError, "only dense cpu tensors can be pinned"),
    "torch.allclose": (RuntimeError, "reads its answer on the host (item)"),
    "torch.equal": (NotImplementedError, "reads its answer on the host"),
    "Tensor.tolist": (NotImplementedError, "copies the values to the host"),
    "Tensor.numpy": (TypeError, "hands out host memory"),
    "Tensor.__array__": (TypeError, "hands out host memory"),
    "Tensor.item": (RuntimeError, "reads a value on the host"),
    "Tensor.__bool__": (RuntimeError, "reads a value on the host (item)"),
    "Tensor.__float__": (RuntimeError, "reads a value on the host (item)"),
    "Tensor.__complex__": (RuntimeError, "reads a value on the host (item)"),
    "Tensor.__int__": (RuntimeError, "reads a value on the host (item)"),
    "Tensor.__index__": (RuntimeError, "reads a value on the host (item)"),
    "torch.masked_select": (NotImplementedError, "output size is the mask's count of Trues"),
    "torch.nonzero": (NotImplementedError, "output size is the count of non-zeros"),
    "torch.argwhere": (NotImplementedError, "output size is the count of non-zeros"),
}
