"""torch.library.custom_op: a Python function registered as torch.ops.<namespace>.<name>.

Eager it launches what its body launches; in a graph it is ONE node a backend can split at,
which is how vLLM registers attention and wraps the pieces around it in CUDA graphs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import fake_torch as torch
from fake_torch import LaunchCounter, fx, library
from fake_torch._ops import OpOverload, OpOverloadPacket, ops
from fake_torch._simulated._dispatch import record_ops
from fake_torch.fx.passes.split_module import split_module


@library.custom_op("test_custom_op::scaled_sum", mutates_args=())
def scaled_sum(x: torch.Tensor, y: torch.Tensor, alpha: float = 2.0) -> torch.Tensor:
    return x + y * alpha  # two launches: mul, add


@scaled_sum.register_fake
def _(x: torch.Tensor, y: torch.Tensor, alpha: float = 2.0) -> torch.Tensor:
    return torch.empty_like(x)


@library.custom_op("test_custom_op::accumulate", mutates_args={"total"})
def accumulate(total: torch.Tensor, x: torch.Tensor) -> None:
    total.add_(x)


def test_the_op_is_registered_under_torch_ops() -> None:
    packet = ops.test_custom_op.scaled_sum
    assert isinstance(packet, OpOverloadPacket) and isinstance(packet.default, OpOverload)
    assert repr(scaled_sum) == "<CustomOpDef(test_custom_op::scaled_sum)>"
    assert repr(packet) == "<OpOverloadPacket(op='test_custom_op.scaled_sum')>"
    assert repr(packet.default) == ("<OpOverload(op='test_custom_op.scaled_sum', "
                                    "overload='default')>")
    assert str(packet.default) == "test_custom_op.scaled_sum.default"
    assert packet.default.name() == "test_custom_op::scaled_sum"
    assert packet._schema == ("test_custom_op::scaled_sum(Tensor x, Tensor y, float alpha=2.0) "
                              "-> Tensor")
    assert ops.test_custom_op.accumulate._schema == (
        "test_custom_op::accumulate(Tensor(a0!) total, Tensor x) -> ()")
    with pytest.raises(AttributeError, match="'_OpNamespace' 'test_custom_op' object has no "
                                             "attribute 'missing'"):
        ops.test_custom_op.missing  # noqa: B018


@pytest.mark.parametrize("call", [
    lambda x, y: scaled_sum(x, y),
    lambda x, y: ops.test_custom_op.scaled_sum(x, y),
    lambda x, y: ops.test_custom_op.scaled_sum.default(x, y, alpha=2.0),
])
def test_eager_it_launches_what_its_body_launches(call: Any) -> None:
    x, y = torch.ones(3, device="cuda"), torch.full((3,), 2.0, device="cuda")
    LaunchCounter.reset()
    with record_ops() as names:
        out = call(x, y)
    assert (LaunchCounter.n, names) == (2, ["mul", "add"])
    assert out.tolist() == [5.0] * 3


def test_a_mutating_op_writes_its_argument() -> None:
    total = torch.zeros(2, device="cuda")
    for _ in range(3):
        assert accumulate(total, torch.ones(2, device="cuda")) is None
    assert total.tolist() == [3.0, 3.0]
    assert library.mutated_arg_names(ops.test_custom_op.accumulate.default) == ("total",)


def test_the_fake_impl_gives_shapes_without_running_the_body() -> None:
    x = torch.ones(4, device="cuda")
    LaunchCounter.reset()
    out = library.run_fake(ops.test_custom_op.scaled_sum.default, (x, x), {})
    assert (LaunchCounter.n, out.shape, out.device.type) == (0, (4,), "cuda")

    @library.custom_op("test_custom_op::no_fake", mutates_args=())
    def no_fake(x: torch.Tensor) -> torch.Tensor:
        return x.clone()

    with pytest.raises(RuntimeError, match=r"^There was no fake impl registered for "
                                           r"<CustomOpDef\(test_custom_op::no_fake\)>\. This is "
                                           r"necessary for torch.compile/export/fx tracing to "
                                           r"work\. Please use `no_fake.register_fake` to add an "
                                           r"fake impl\.$"):
        library.run_fake(ops.test_custom_op.no_fake.default, (x,), {})
    library.register_fake("test_custom_op::no_fake", lambda x: torch.empty_like(x))
    assert library.run_fake(ops.test_custom_op.no_fake, (x,), {}).shape == (4,)
    with pytest.raises(RuntimeError, match=r"^operator test_custom_op::nope does not exist$"):
        library.register_fake("test_custom_op::nope", lambda x: x)


def test_bad_definitions_raise_torchs_errors() -> None:
    def f(x: torch.Tensor, y: float) -> None: ...

    with pytest.raises(ValueError, match=r"^infer_schema\(func\): \{'z'\} in mutates_args were "
                                         r"not found in the custom op's signature"):
        library.custom_op("test_custom_op::f", f, mutates_args={"z"})
    with pytest.raises(ValueError, match=r"Parameter x must have a type annotation"):
        library.custom_op("test_custom_op::g", lambda x: x, mutates_args=())
    with pytest.raises(ValueError, match="not enough values to unpack"):
        library.custom_op("no_namespace", f, mutates_args=())
    with pytest.raises(TypeError, match="missing 1 required keyword-only argument: "
                                        "'mutates_args'"):
        library.custom_op("test_custom_op::h", f)  # type: ignore[call-arg]


def test_outputs_must_not_alias_inputs() -> None:
    @library.custom_op("test_custom_op::identity", mutates_args=())
    def identity(x: torch.Tensor) -> torch.Tensor:
        return x

    with pytest.raises(RuntimeError, match=r"The output of this custom operator \(1\) must not "
                                           r"also be an input to this custom operator"):
        identity(torch.ones(2))


def test_device_types_limit_where_the_op_runs() -> None:
    @library.custom_op("test_custom_op::cuda_only", mutates_args=(), device_types="cuda")
    def cuda_only(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    assert cuda_only(torch.ones(1, device="cuda")).tolist() == [2.0]
    with pytest.raises(NotImplementedError, match="Could not run 'test_custom_op::cuda_only' "
                                                  "with arguments from the 'CPU' backend"):
        cuda_only(torch.ones(1))


def test_in_a_graph_a_mutating_op_writes_its_declared_input() -> None:
    from fake_torch._inductor.compile_fx import analyze

    g = fx.Graph()
    total, x = g.placeholder("total"), g.placeholder("x")
    g.call_function(ops.test_custom_op.accumulate.default, (total, x))
    g.output((g.call_function(torch.mul, (x, 2.0)),))
    gm = fx.GraphModule(torch.nn.Module(), g)
    args = [torch.zeros(2, device="cuda"), torch.ones(2, device="cuda")]
    assert analyze(gm, args).mutated_input_idxs == (0,)
    assert args[0].tolist() == [0.0, 0.0]  # compile time runs no body


# --- a vLLM-style backend: split at the custom op, graph the pieces -------------------------


class Block(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.w1 = torch.nn.Parameter(torch.randn(8, 8, device="cuda"))
        self.w2 = torch.nn.Parameter(torch.randn(8, 8, device="cuda"))


def block_graph() -> fx.GraphModule:
    """relu(x @ w1) -> scaled_sum(h, x) (the "attention" op) -> tanh(@ w2) + 1."""
    g = fx.Graph()
    x = g.placeholder("x")
    h = g.call_function(torch.relu, (g.call_function(torch.mm, (x, g.get_attr("w1"))),))
    a = g.call_function(ops.test_custom_op.scaled_sum.default, (h, x))
    o = g.call_function(torch.add, (g.call_function(torch.tanh, (g.call_function(
        torch.mm, (a, g.get_attr("w2"))),)), 1.0))
    g.output((o,))
    return fx.GraphModule(Block(), g)


class GraphedPiece(torch.nn.Module):
    """vLLM's CUDAGraphWrapper in small: run once (warmup), capture on the next call into the
    shared pool, replay after; a new input tensor is copied into the captured one."""

    def __init__(self, piece: torch.nn.Module, pool: Any) -> None:
        super().__init__()
        self.piece, self.pool = piece, pool
        self.calls = 0
        self.graph: Any = None
        self.static_inputs: list[torch.Tensor] = []
        self.static_outputs: Any = None

    def forward(self, *args: torch.Tensor) -> Any:
        self.calls += 1
        if self.calls == 1:  # warmup
            return self.piece(*args)
        if self.graph is None:  # capture
            self.static_inputs = list(args)
            self.graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(self.graph, pool=self.pool):
                self.static_outputs = self.piece(*args)
        for static, new in zip(self.static_inputs, args, strict=True):
            if new.data_ptr() != static.data_ptr():
                static.copy_(new)
        self.graph.replay()  # replay
        return self.static_outputs


def piecewise_backend(gm: fx.GraphModule, example_inputs: list[Any]) -> Any:
    """Split before and after every custom op; wrap the other pieces in CUDA graphs."""
    part, parts = 0, {}
    for node in gm.graph.nodes:
        if node.op in ("placeholder", "output", "get_attr"):
            continue
        if library.custom_op_def(node.target) is not None:
            part += 1
            parts[node] = part
            part += 1
        else:
            parts[node] = part
    split = split_module(gm, gm, lambda n: parts[n])
    pool = torch.cuda.graph_pool_handle()
    for name, piece in list(split.named_children()):
        is_custom = any(library.custom_op_def(n.target) is not None for n in piece.graph.nodes)
        if not is_custom:
            setattr(split, name, GraphedPiece(piece, pool))
    return split.forward


@pytest.fixture
def device(fresh_device: Any) -> Iterator[None]:
    yield


def test_a_backend_splits_at_the_custom_op_and_replays_the_pieces(device: None) -> None:
    gm = block_graph()
    x = torch.randn(4, 8, device="cuda")
    run = piecewise_backend(gm, [x])
    split_targets = [n.target for n in run.__self__.graph.nodes if n.op == "call_module"]
    assert split_targets == ["submod_0", "submod_1", "submod_2"]
    for _ in range(2):  # warmup, capture
        run(x)
    for _ in range(3):
        x = torch.randn(4, 8, device="cuda")
        LaunchCounter.reset()
        with record_ops() as names:
            (out,) = run(x)
        # piece 0: x copied in, replayed; the op: its own launches, eagerly; piece 2: the op's
        # fresh output copied in (vLLM hands attention a preallocated output instead), replayed
        assert names == ["copy_", "cudaGraphLaunch", "mul", "add", "copy_", "cudaGraphLaunch"]
        np.testing.assert_allclose(out.cpu().numpy(), gm(x)[0].cpu().numpy(), rtol=1e-5)


def test_torch_compile_traces_the_op_as_one_node_and_splits_there(device: None) -> None:
    from fake_torch._compile import compile

    block = Block()
    seen: list[fx.GraphModule] = []

    def backend(gm: fx.GraphModule, example_inputs: list[Any]) -> Any:
        seen.append(gm)
        return piecewise_backend(gm, example_inputs)

    def f(x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(x @ block.w1)
        return torch.tanh(scaled_sum(h, x) @ block.w2) + 1

    compiled = compile(f, backend=backend)
    x = torch.randn(4, 8, device="cuda")
    for _ in range(3):  # warmup, capture, replay
        out = compiled(x)
    targets = [n.target for n in seen[0].graph.nodes if n.op == "call_function"]
    assert targets.count(ops.test_custom_op.scaled_sum.default) == 1
    assert "torch.ops.test_custom_op.scaled_sum.default(" in seen[0].code
    x = torch.randn(4, 8, device="cuda")
    LaunchCounter.reset()
    with record_ops() as names:
        out = compiled(x)
    assert names == ["copy_", "cudaGraphLaunch", "mul", "add", "copy_", "cudaGraphLaunch"]
    np.testing.assert_allclose(out.cpu().numpy(), f(x).cpu().numpy(), rtol=1e-5)
