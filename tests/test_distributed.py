"""torch.distributed for one process: init with world_size 1, the group queries, and each
collective as the one-rank identity. Values and errors on cpu tensors against real torch's gloo
(CPU build, world_size 1, a file:// rendezvous); on cuda, the launches NCCL's one-rank path and
ProcessGroupNCCL make (see fake_torch/distributed/_collectives.py for where each comes from).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from oracles import NoHostSync, outcome

import fake_torch as ft
from fake_torch._simulated import _dispatch

dist = ft.distributed


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")


@pytest.fixture(autouse=True)
def no_process_group() -> Iterator[None]:
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.fixture
def both(torch: Any, tmp_path: Path) -> Iterator[list[Any]]:
    """Both libraries' default groups on gloo (cpu), world_size 1."""
    for i, lib in enumerate((torch, ft)):
        lib.distributed.init_process_group("gloo", init_method=f"file://{tmp_path}/store{i}",
                                           world_size=1, rank=0)
    yield [torch, ft]
    if torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


def _values(t: Any) -> Any:
    return t.tolist()


def _programs(lib: Any) -> dict[str, Any]:
    d = lib.distributed
    x = lib.tensor([[1.0, 2.0], [3.0, 4.0]])
    out = lib.zeros(2, 2)
    results: dict[str, Any] = {}
    results["all_reduce"] = (d.all_reduce(x), _values(x))
    results["all_reduce max"] = (d.all_reduce(x, op=d.ReduceOp.MAX), _values(x))
    results["broadcast"] = (d.broadcast(x, src=0), _values(x))
    results["reduce"] = (d.reduce(x, dst=0), _values(x))
    results["all_gather_single"] = (d.all_gather_single(out, x), _values(out))
    out.zero_()
    results["reduce_scatter_single"] = (d.reduce_scatter_single(out, x), _values(out))
    out.zero_()
    with pytest.warns(FutureWarning, match=r"all_gather_into_tensor` is deprecated"):
        results["all_gather_into_tensor"] = (d.all_gather_into_tensor(out, x), _values(out))
    out.zero_()
    with pytest.warns(FutureWarning, match=r"reduce_scatter_tensor` is deprecated"):
        results["reduce_scatter_tensor"] = (d.reduce_scatter_tensor(out, x), _values(out))
    parts = [lib.zeros(2, 2)]
    results["all_gather"] = (d.all_gather(parts, x), _values(parts[0]))
    out.zero_()
    results["reduce_scatter"] = (d.reduce_scatter(out, [x]), _values(out))
    parts = [lib.zeros(2, 2)]
    results["gather"] = (d.gather(x, parts, dst=0), _values(parts[0]))
    out.zero_()
    results["scatter"] = (d.scatter(out, [x], src=0), _values(out))
    results["barrier"] = d.barrier()
    work = d.all_reduce(x, async_op=True)
    results["async"] = (work.wait(), work.is_completed(), _values(x))
    objects: list[Any] = [None]
    d.all_gather_object(objects, {"a": [1]})
    listed: list[Any] = [{"b": 2}]
    d.broadcast_object_list(listed, src=0)
    results["objects"] = (objects, listed)
    results["queries"] = (d.is_initialized(), d.get_rank(), d.get_world_size(),
                          str(d.get_backend()), d.group.WORLD.rank(), d.group.WORLD.size(),
                          d.get_process_group_ranks(d.group.WORLD))
    g = d.new_group([0], backend="gloo")
    results["new_group"] = (d.get_rank(g), d.get_world_size(g), str(d.get_backend(g)))
    return results


def test_collectives_on_one_rank_match_torch(both: list[Any]) -> None:
    torch, _ = both
    theirs, ours = _programs(torch), _programs(ft)
    assert ours == theirs


ERRORS: list[Callable[[Any], Any]] = [
    lambda lib: lib.distributed.init_process_group("gloo", init_method="file:///tmp/x",
                                                   world_size=1, rank=0),  # twice
    lambda lib: lib.distributed.all_reduce([1.0]),
    lambda lib: lib.distributed.gather(lib.ones(2), None, dst=0),
    lambda lib: lib.distributed.scatter(lib.ones(2), None, src=0),
    lambda lib: lib.distributed.new_group([1]),
    lambda lib: lib.distributed.new_group([0, 1]),
    lambda lib: lib.distributed.destroy_process_group(object()),
]


def test_errors_match_torch(both: list[Any]) -> None:
    torch, _ = both
    for program in ERRORS:
        _, theirs = outcome(partial(program, torch))
        _, ours = outcome(partial(program, ft))
        assert theirs is not None and type(ours) is type(theirs), (ours, theirs)
        assert str(ours).split("\n")[0] == str(theirs).split("\n")[0]


UNINITIALISED: list[Callable[[Any], Any]] = [
    lambda lib: lib.distributed.get_rank(),
    lambda lib: lib.distributed.get_world_size(),
    lambda lib: lib.distributed.all_reduce(lib.ones(2)),
    lambda lib: lib.distributed.barrier(),
    lambda lib: lib.distributed.destroy_process_group(),
    lambda lib: lib.distributed.init_process_group("gloo"),  # env:// without RANK
    lambda lib: lib.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1:1234"),
    lambda lib: lib.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1:1234",
                                                   rank=0),
    lambda lib: lib.distributed.init_process_group("nope", init_method="file:///tmp/y",
                                                   world_size=1, rank=0),
    lambda lib: lib.distributed.init_process_group("mpi", init_method="file:///tmp/y",
                                                   world_size=1, rank=0),
    lambda lib: lib.distributed.init_process_group("gloo", init_method="foo://x",
                                                   world_size=1, rank=0),
]


def test_uninitialised_and_init_errors_match_torch(torch: Any,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RANK", raising=False)
    for program in UNINITIALISED:
        _, theirs = outcome(partial(program, torch))
        _, ours = outcome(partial(program, ft))
        assert theirs is not None and type(ours) is type(theirs), (ours, theirs)
        assert str(ours).split("\n")[0] == str(theirs).split("\n")[0]
        for lib in (torch, ft):
            assert not lib.distributed.is_initialized()


def test_only_world_size_one() -> None:
    with pytest.raises(NotImplementedError, match=r"world_size=2.*world_size 1"):
        dist.init_process_group("nccl", init_method="tcp://localhost:2333", world_size=2, rank=0)
    assert not dist.is_initialized()
    dist.init_process_group("nccl", init_method="tcp://localhost:2333", world_size=1, rank=0)
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "nccl")


# --- cuda: the launches of NCCL's one-rank path ---------------------------------------------------

@pytest.fixture
def nccl(fresh_device: Any) -> None:
    dist.init_process_group("nccl", init_method="tcp://localhost:2333", world_size=1, rank=0)


@pytest.mark.usefixtures("nccl")
def test_in_place_collectives_launch_nothing() -> None:
    x = ft.ones(4, device="cuda")
    ints = ft.ones(4, dtype=ft.int64, device="cuda")
    with ft.LaunchCounter.expect(0):
        dist.all_reduce(x)
        dist.all_reduce(x, op=dist.ReduceOp.MAX)
        dist.broadcast(x, src=0)
        dist.reduce(x, dst=0)
        dist.all_reduce(ints, op=dist.ReduceOp.AVG)  # an integer AVG divides after: in place
    assert x.tolist() == [1.0] * 4


@pytest.mark.usefixtures("nccl")
def test_avg_of_floats_is_one_premultiplying_kernel() -> None:
    x = ft.tensor([1.0, 3.0], device="cuda")
    with ft.LaunchCounter.expect(1, allreduce_=1):
        dist.all_reduce(x, op=dist.ReduceOp.AVG)
    assert x.tolist() == [1.0, 3.0]
    out = ft.empty(2, device="cuda")
    with ft.LaunchCounter.expect(1, _reduce_scatter_base_=1):
        dist.reduce_scatter_single(out, x, op=dist.ReduceOp.AVG)
    assert ft.LaunchCounter.by_kind["kernel"] >= 2


@pytest.mark.usefixtures("nccl")
def test_out_of_place_collectives_copy() -> None:
    x = ft.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    out = ft.empty(4, device="cuda")
    with ft.LaunchCounter.expect(1, _allgather_base_=1):
        dist.all_gather_single(out, x)
    assert out.tolist() == [1.0, 2.0, 3.0, 4.0]
    with ft.LaunchCounter.expect(0):  # input already in place: the same memory
        dist.all_gather_single(out, out)
    with ft.LaunchCounter.expect(1, _reduce_scatter_base_=1):
        dist.reduce_scatter_single(out, x.reshape(4))
    parts = [ft.empty(2, 2, device="cuda")]
    with ft.LaunchCounter.expect(2, allgather_=1, copy_=1):  # into a flat buffer, then out
        dist.all_gather(parts, x)
    assert parts[0].tolist() == x.tolist()
    with ft.LaunchCounter.expect(2, copy_=1, reduce_scatter_=1):  # into a flat buffer first
        dist.reduce_scatter(parts[0], [x])
    with ft.LaunchCounter.expect(1, copy_=1):  # the root copies its own piece
        dist.gather(x, parts, dst=0)
    with ft.LaunchCounter.expect(1, copy_=1):
        dist.scatter(parts[0], [x], src=0)


@pytest.mark.usefixtures("nccl")
def test_barrier_fills_a_flag_and_waits_on_the_host() -> None:
    with ft.LaunchCounter.expect(1, barrier=1):
        dist.barrier()
    with _dispatch.push_mode(NoHostSync()), pytest.raises(RuntimeError, match="host sync: barrier"):
        dist.barrier()
    with _dispatch.push_mode(NoHostSync()):
        work = dist.barrier(async_op=True)  # the host waits at wait()
    with _dispatch.push_mode(NoHostSync()), pytest.raises(RuntimeError, match="host sync"):
        work.wait()


@pytest.mark.usefixtures("nccl")
def test_what_is_not_emulated_or_not_allowed_raises() -> None:
    x = ft.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="No backend type associated with device type cpu"):
        dist.all_reduce(ft.ones(2))  # nccl has no cpu backend
    with pytest.raises(ValueError, match=r"Cannot use ReduceOp\.BAND with NCCL"):
        dist.all_reduce(x, op=dist.ReduceOp.BAND)
    with pytest.raises(ValueError, match="Tensors must be contiguous"):
        dist.all_reduce(ft.ones(2, 3, device="cuda").t())
    with pytest.raises(NotImplementedError, match="PREMUL_SUM"):
        dist.all_reduce(x, op=dist.ReduceOp.PREMUL_SUM)
    with pytest.raises(NotImplementedError, match="nccl-only group"):
        dist.all_gather_object([None], 1)
    gloo = dist.new_group([0], backend="gloo")
    with pytest.raises(NotImplementedError, match="cuda tensors on a gloo group"):
        dist.all_reduce(x, group=gloo)


@pytest.mark.usefixtures("nccl")
def test_a_collective_inside_torch_compile_is_not_emulated() -> None:
    x = ft.ones(2, device="cuda")

    @ft.compile(backend="eager")
    def reduced(t: Any) -> Any:
        dist.all_reduce(t)
        return t + 1

    with pytest.raises(NotImplementedError, match=r"inside torch\.compile"):
        reduced(x)


def test_default_backend_serves_both_devices(fresh_device: Any) -> None:
    dist.init_process_group(init_method="tcp://localhost:2333", world_size=1, rank=0)
    assert dist.get_backend() == "undefined"  # torch's answer when no backend was given
    out, x = ft.empty(2, device="cuda"), ft.ones(2, device="cuda")
    with ft.LaunchCounter.expect(1, _allgather_base_=1):  # cuda: nccl
        dist.all_gather_single(out, x)
    with ft.LaunchCounter.expect(0):  # cpu: gloo
        dist.all_gather_single(ft.empty(2), ft.ones(2))
    dist.all_gather_object(found := [None], "x")
    assert found == ["x"]
