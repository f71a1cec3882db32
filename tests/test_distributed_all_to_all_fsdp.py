"""torch.distributed.all_to_all_single on one rank (values and errors against real torch's gloo,
CPU build, world_size 1; on cuda, NCCL's send-to-self: one device-to-device memcpy, as an H200
counted), and torch.distributed.fsdp's FSDP1 / FSDP2 names: torch's enums and dataclasses,
classes for isinstance, and NotImplementedError where a module would be sharded. Also every
torch.distributed name HF transformers 5.x imports when its modules load."""

from __future__ import annotations

import dataclasses
import enum
import importlib
import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from oracles import assert_raises_like_torch, assert_same_error, outcome

import fake_torch as ft

dist = ft.distributed
torch = pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")


@pytest.fixture(autouse=True)
def no_process_group() -> Iterator[None]:
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture
def both(tmp_path: Path) -> Iterator[None]:
    for i, lib in enumerate((torch, ft)):
        lib.distributed.init_process_group("gloo", init_method=f"file://{tmp_path}/store{i}",
                                           world_size=1, rank=0)
    yield
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


def _x(lib: Any) -> Any:
    return lib.arange(6.0).reshape(3, 2)


CALLS: list[tuple[str, Callable[[Any, Any], Any]]] = [
    ("plain", lambda lib, o: lib.distributed.all_to_all_single(o, _x(lib))),
    ("splits", lambda lib, o: lib.distributed.all_to_all_single(o, _x(lib), [3], [3])),
    ("one split", lambda lib, o: lib.distributed.all_to_all_single(o, _x(lib), None, [3])),
    ("empty splits", lambda lib, o: lib.distributed.all_to_all_single(o, _x(lib), [], [])),
    ("flat output", lambda lib, o: lib.distributed.all_to_all_single(o.reshape(6), _x(lib))),
    ("bad split", lambda lib, o: lib.distributed.all_to_all_single(o, _x(lib), [2], [3])),
    ("two splits", lambda lib, o: lib.distributed.all_to_all_single(o, _x(lib), [3, 0], [3])),
    ("dtypes", lambda lib, o: lib.distributed.all_to_all_single(o.long(), _x(lib))),
    ("sizes", lambda lib, o: lib.distributed.all_to_all_single(o[:2], _x(lib))),
    ("strided", lambda lib, o: lib.distributed.all_to_all_single(o.reshape(2, 3), _x(lib).t())),
    ("not a tensor", lambda lib, o: lib.distributed.all_to_all_single([1], _x(lib))),
    ("input not a tensor", lambda lib, o: lib.distributed.all_to_all_single(o, [1])),
    ("async", lambda lib, o: lib.distributed.all_to_all_single(o, _x(lib), async_op=True).wait()),
    ("0-dim", lambda lib, o: lib.distributed.all_to_all_single(o[0, 0], lib.tensor(7.0))),
]


@pytest.mark.usefixtures("both")
@pytest.mark.parametrize("call", [c for _, c in CALLS], ids=[n for n, _ in CALLS])
def test_all_to_all_single_like_gloo(call: Callable[[Any, Any], Any]) -> None:
    got = []
    for lib in (torch, ft):
        out = lib.zeros(3, 2)
        result, error = outcome(lambda lib=lib, out=out: call(lib, out))
        got.append((result, error, out.tolist()))
    (theirs, their_error, their_out), (ours, our_error, our_out) = got
    if their_error is not None and "enforce fail" in str(their_error):
        # gloo's own check of the sizes; NCCL has none (it would receive what it sends)
        assert type(our_error) is RuntimeError and "must be equal" in str(our_error)
    else:
        assert_same_error(our_error, their_error)
    assert ours == theirs and our_out == their_out


def test_signature_is_torchs() -> None:
    assert (inspect.signature(dist.all_to_all_single).parameters.keys()
            == inspect.signature(torch.distributed.all_to_all_single).parameters.keys())
    for name in ("output_split_sizes", "input_split_sizes", "group", "async_op"):
        assert (inspect.signature(dist.all_to_all_single).parameters[name].default
                == inspect.signature(torch.distributed.all_to_all_single).parameters[name]
                .default)


@pytest.mark.usefixtures("fresh_device")
def test_on_cuda_nccl_sends_to_itself_with_one_memcpy() -> None:
    dist.init_process_group("nccl", init_method="tcp://localhost:2333", world_size=1, rank=0)
    x = ft.arange(6.0, device="cuda")
    out = ft.empty(6, device="cuda")
    ft.LaunchCounter.reset()
    with ft.LaunchCounter.expect(1, alltoall_base_=1):
        dist.all_to_all_single(out, x)
    assert ft.LaunchCounter.by_kind["memcpy_d2d"] == 1
    assert out.tolist() == x.tolist()
    with ft.LaunchCounter.expect(0):  # nothing to send
        dist.all_to_all_single(ft.empty(0, device="cuda"), ft.empty(0, device="cuda"))
    functional = importlib.import_module("fake_torch.distributed._functional_collectives")
    with ft.LaunchCounter.expect(1, alltoall_base_=1):  # the functional form: into a new tensor
        y = functional.all_to_all_single_autograd(x, None, None, [0])
    assert y.tolist() == x.tolist()
    with pytest.raises(RuntimeError, match="No backend type associated with device type cpu"):
        dist.all_to_all_single(ft.empty(6), ft.arange(6.0))


# --- torch.distributed.fsdp -----------------------------------------------------------------------

def _fsdp(lib: Any) -> Any:
    return importlib.import_module(f"{lib.__name__}.distributed.fsdp")


def test_fsdp_names_are_torchs() -> None:
    ours, theirs = _fsdp(ft), _fsdp(torch)
    assert sorted(ours.__all__) == sorted(theirs.__all__)
    for name in theirs.__all__:
        o, t = getattr(ours, name), getattr(theirs, name)
        if isinstance(t, type) and issubclass(t, enum.Enum):
            assert [(m.name, m.value) for m in o] == [(m.name, m.value) for m in t], name
        elif dataclasses.is_dataclass(t):
            assert [(f.name, repr(f.default)) for f in dataclasses.fields(o)] == [
                (f.name, repr(f.default).replace("torch.", "fake_torch."))
                for f in dataclasses.fields(t)], name
            assert [b.__name__ for b in o.__mro__] == [b.__name__ for b in t.__mro__], name
        else:
            assert callable(o), name
    assert (list(inspect.signature(ours.FullyShardedDataParallel).parameters)
            == list(inspect.signature(theirs.FullyShardedDataParallel).parameters))
    assert repr(ours.MixedPrecision(param_dtype=ft.bfloat16)).replace("fake_torch", "torch") \
        == repr(theirs.MixedPrecision(param_dtype=torch.bfloat16))


def test_fsdp_classes_answer_isinstance_and_refuse_to_shard() -> None:
    fsdp = _fsdp(ft)
    module = ft.nn.Linear(2, 2)
    assert issubclass(fsdp.FullyShardedDataParallel, ft.nn.Module)
    assert not isinstance(module, fsdp.FullyShardedDataParallel)
    assert not isinstance(module, fsdp.FSDPModule)
    with pytest.raises(NotImplementedError, match=r"fsdp\.FullyShardedDataParallel"):
        fsdp.FullyShardedDataParallel(module, sharding_strategy=fsdp.ShardingStrategy.FULL_SHARD)
    with pytest.raises(NotImplementedError, match=r"fsdp\.fully_shard"):
        fsdp.fully_shard(module)
    with pytest.raises(NotImplementedError, match=r"fsdp\.FSDPModule"):
        fsdp.FSDPModule()
    for lib in (torch, ft):  # a plain module: nothing to register, nothing to share
        assert _fsdp(lib).register_fsdp_forward_method(lib.nn.Linear(2, 2), "forward") is None
        assert _fsdp(lib).share_comm_ctx([]) is None
        assert _fsdp(lib).UnshardHandle().wait() is None
    _, ours = outcome(lambda: fsdp.share_comm_ctx([module]))
    _, theirs = outcome(lambda: _fsdp(torch).share_comm_ctx([torch.nn.Linear(2, 2)]))
    assert type(ours) is type(theirs) is ValueError


# --- what HF transformers 5.x imports from torch.distributed as its modules load ------------------

HF_IMPORTS = {  # module -> names (transformers 5.25.0, its module-level imports)
    "distributed": ["all_gather_into_tensor", "all_to_all_single", "get_process_group_ranks"],
    "distributed._composable.fsdp": ["fully_shard"],
    "distributed._functional_collectives": ["all_to_all_single_autograd", "wait_tensor"],
    "distributed.device_mesh": ["DeviceMesh"],
    "distributed.fsdp": ["CPUOffloadPolicy", "FullyShardedDataParallel", "MixedPrecisionPolicy",
                         "FSDPModule"],
    "distributed.tensor": ["DTensor", "Partial", "Replicate", "Shard", "distribute_tensor"],
    "distributed.tensor._utils": ["compute_local_shape_and_global_offset"],
    "distributed.tensor.placement_types": ["Shard", "_StridedShard"],
}


@pytest.mark.parametrize("module", sorted(HF_IMPORTS))
def test_hf_transformers_import_time_names_exist(module: str) -> None:
    ours = importlib.import_module(f"fake_torch.{module}")
    theirs = importlib.import_module(f"torch.{module}")
    for name in HF_IMPORTS[module]:
        assert hasattr(theirs, name) and hasattr(ours, name), name


# --- torch.distributed._functional_collectives.all_reduce ---------------------------------------

FUNCTIONAL = [("sum", "sum"), ("avg", "avg"), ("MAX", "max"), ("product", "product"),
              ("an unknown op", "bogus"), ("premul_sum", "premul_sum")]


@pytest.mark.usefixtures("both")
@pytest.mark.parametrize("op", [o for _, o in FUNCTIONAL], ids=[n for n, _ in FUNCTIONAL])
def test_functional_all_reduce_like_gloo(op: str) -> None:
    got = []
    for lib in (torch, ft):
        functional = importlib.import_module(f"{lib.__name__}.distributed._functional_collectives")
        x = lib.arange(4.0)
        result, error = outcome(lambda functional=functional, x=x, lib=lib: functional.wait_tensor(
            functional.all_reduce(x, op, lib.distributed.group.WORLD)))
        got.append((None if result is None else (result.tolist(), result is x), error,
                    x.tolist()))
    assert got[0][0] == got[1][0] and got[0][2] == got[1][2]
    assert_same_error(got[1][1], got[0][1])


@pytest.mark.usefixtures("fresh_device")
def test_functional_all_reduce_clones_then_reduces_in_place() -> None:
    dist.init_process_group("nccl", init_method="tcp://localhost:2333", world_size=1, rank=0)
    functional = importlib.import_module("fake_torch.distributed._functional_collectives")
    x = ft.arange(4.0, device="cuda")
    with ft.LaunchCounter.expect(1, clone=1):
        y = functional.all_reduce(x, "sum", dist.group.WORLD)
    assert y.tolist() == x.tolist() and y.data_ptr() != x.data_ptr()
    with ft.LaunchCounter.expect(2, clone=1, allreduce_=1):  # AVG of floats pre-multiplies
        functional.all_reduce(x, "avg", [0])
    ints = ft.arange(4, device="cuda")
    with ft.LaunchCounter.expect(1, clone=1):  # an integer AVG divides after: in place
        functional.all_reduce(ints, "avg", [0])


# --- send, recv, isend, irecv: no other process ------------------------------------------------

@pytest.mark.usefixtures("both")
@pytest.mark.parametrize("program", [
    lambda lib: lib.distributed.send(lib.ones(2), 0),
    lambda lib: lib.distributed.send(lib.ones(2), dst=0, group_dst=0),
    lambda lib: lib.distributed.send(lib.ones(2)),
    lambda lib: lib.distributed.send([1], 1),
    lambda lib: lib.distributed.isend(lib.ones(2)),
    lambda lib: lib.distributed.recv([1], 0),
    lambda lib: lib.distributed.irecv([1], 0),
], ids=["send to self", "both ranks", "no rank", "not a tensor", "isend no rank",
        "recv not a tensor", "irecv not a tensor"])
def test_point_to_point_checks_like_torch(program: Callable[[Any], Any]) -> None:
    assert_raises_like_torch(program)


@pytest.mark.usefixtures("both")
def test_point_to_point_has_no_peer() -> None:
    """torch would wait forever (or fail in gloo's transport): there is no second process."""
    x = ft.ones(2)
    for call in (lambda: dist.send(x, 1), lambda: dist.recv(x, 1),
                 lambda: dist.isend(x, 1), lambda: dist.irecv(x, 2)):
        with pytest.raises(ValueError, match=r"Global rank \d is not part of group"):
            call()
    with pytest.raises(NotImplementedError, match="any source"):
        dist.recv(x)
    for call in (lambda: dist.isend(x, 0), lambda: dist.irecv(x, 0), lambda: dist.recv(x, 0)):
        with pytest.raises(NotImplementedError, match="this process itself"):
            call()
