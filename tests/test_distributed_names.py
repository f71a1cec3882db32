"""The torch.distributed names beyond the collectives that vLLM and its dependencies import:
the stores (HashStore, TCPStore, PrefixStore) as in-process key-value stores with c10d's
semantics, the default timeouts, rendezvous for one rank, the placement types' values, and the
APIs fake_torch does not emulate (DeviceMesh, DTensor, FSDP2, symmetric memory, distributed
checkpointing) raising NotImplementedError when called. Real torch (CPU build) is the oracle."""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from distributed_programs import free_port
from oracles import outcome

import fake_torch as ft

dist = ft.distributed


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")


@pytest.fixture(autouse=True)
def no_process_group() -> Iterator[None]:
    yield
    if dist.is_initialized():
        dist.destroy_process_group()


def _store_program(d: Any, store: Any) -> list[Any]:
    """One session with a store; every result and error, in order."""
    steps: list[Callable[[], Any]] = [
        lambda: store.set("a", "x"), lambda: store.set("b", b"y"), lambda: store.get("a"),
        lambda: store.get("b"), lambda: store.add("c", 3), lambda: store.add("c", -1),
        lambda: store.get("c"), lambda: store.compare_set("a", "x", "z"),
        lambda: store.compare_set("a", "q", "w"), lambda: store.compare_set("n", "", "v"),
        lambda: store.compare_set("n2", "e", "v"), lambda: store.check(["a", "n"]),
        lambda: store.check(["nope"]), lambda: store.append("b", "zz"),
        lambda: store.get("b"), lambda: store.multi_get(["a", "c"]),
        lambda: store.multi_set(["m1", "m2"], ["1", b"2"]), lambda: store.get("m2"),
        lambda: store.delete_key("m1"), lambda: store.delete_key("m1"),
        lambda: store.has_extended_api(),
        lambda: store.set_timeout(timedelta(milliseconds=50)), lambda: store.timeout,
        lambda: store.get("missing"), lambda: store.wait(["a"]),
        lambda: store.wait(["missing"], timedelta(milliseconds=20)),
    ]
    if not isinstance(store, d.TCPStore):  # a TCPStore server drops the client instead
        steps.append(lambda: store.add("b", 1))  # c10d parses the value with std::stoll
    return [outcome(step) for step in steps]


def _normalized(results: list[Any]) -> list[Any]:
    """Errors as (class name, text): each library's own DistStoreError compares by name."""
    return [(r[0], type(r[1]).__name__, str(r[1])) if isinstance(r[1], BaseException) else r
            for r in results]


@pytest.mark.parametrize("make", ["HashStore", "TCPStore", "PrefixStore", "FileStore"])
def test_store_semantics_match_torch(torch: Any, make: str, tmp_path: Any) -> None:
    results = []
    for lib in (torch, ft):
        d = lib.distributed
        port = free_port()
        if make == "HashStore":
            store = d.HashStore()
        elif make == "FileStore":
            store = d.FileStore(str(tmp_path / f"{lib.__name__}.store"), 1)
        elif make == "TCPStore":
            store = d.TCPStore("127.0.0.1", port, 1, True, wait_for_workers=False)
        else:
            store = d.PrefixStore("pre", d.HashStore())
        results.append(_normalized(_store_program(d, store)))
    assert results[1] == results[0]


def test_store_error_classes_and_defaults(torch: Any) -> None:
    for name in ("DistError", "DistStoreError", "DistNetworkError"):
        ours, theirs = getattr(dist, name), getattr(torch.distributed, name)
        assert [c.__name__ for c in ours.__mro__[:3]] == [c.__name__ for c in theirs.__mro__[:3]]
    assert dist.HashStore().timeout == torch.distributed.HashStore().timeout
    assert issubclass(dist.TCPStore, dist.Store) and issubclass(dist.PrefixStore, dist.Store)


def test_prefix_store_writes_under_its_prefix(torch: Any) -> None:
    seen = []
    for lib in (torch, ft):
        base = lib.distributed.HashStore()
        p = lib.distributed.PrefixStore("pg", base)
        p.set("k", "v")
        seen.append((base.get("pg/k"), p.num_keys(), p.underlying_store is base))
    assert seen[1] == seen[0]


def test_tcp_store_client_shares_the_master_keys(torch: Any) -> None:
    seen = []
    for lib in (torch, ft):
        port = free_port()
        master = lib.distributed.TCPStore("127.0.0.1", port, 1, True, wait_for_workers=False)
        master.set("a", "1")
        client = lib.distributed.TCPStore("127.0.0.1", port, is_master=False)
        client.add("n", 2)
        seen.append((client.get("a"), master.get("n"), client.host, client.port == port,
                     outcome(lambda d=lib.distributed, p=port: d.TCPStore("127.0.0.1", p, 1,
                                                                         True))))
        del master, client
    assert seen[1][:4] == seen[0][:4]
    assert type(seen[1][4][1]).__name__ == type(seen[0][4][1]).__name__ == "DistNetworkError"
    ours, theirs = (re.sub(r"port: \d+", "port: P", str(s[4][1])) for s in (seen[1], seen[0]))
    assert ours == theirs


def test_tcp_store_port_out_of_range() -> None:
    # (a client with no server: tests/test_distributed_ranks.py)
    with pytest.raises(ValueError, match="port must have value from 0 to 65535"):
        dist.TCPStore("127.0.0.1", 70000, is_master=True)


def test_timeouts_and_availability(torch: Any) -> None:
    c10d, real = dist.distributed_c10d, torch.distributed.distributed_c10d
    constants = importlib.import_module("fake_torch.distributed.constants")
    assert constants.default_pg_timeout == torch.distributed.constants.default_pg_timeout
    assert dist.default_pg_timeout == c10d.default_pg_timeout == real.default_pg_timeout
    assert c10d._get_default_timeout("gloo") == real._get_default_timeout("gloo")
    # a CUDA build (what fake_torch stands in for): ProcessGroupNCCL's 10 minutes; the CPU
    # oracle, built without NCCL, warns and falls back to the 30-minute default
    assert c10d._get_default_timeout(dist.Backend("nccl")) == timedelta(minutes=10)
    assert constants.default_pg_nccl_timeout == timedelta(minutes=10)
    assert dist.is_xccl_available() is torch.distributed.is_xccl_available() is False
    assert str(inspect.signature(c10d._get_default_timeout)).startswith("(backend")


def test_rendezvous_yields_a_store_for_one_rank(torch: Any,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    for lib in (torch, ft):
        port = free_port()
        store, rank, size = next(lib.distributed.rendezvous(f"tcp://127.0.0.1:{port}", 0, 1,
                                                            timeout=timedelta(seconds=5)))
        store.set("k", "v")
        monkeypatch.setenv("MASTER_ADDR", "127.0.0.1")
        monkeypatch.setenv("MASTER_PORT", str(free_port()))
        env_store, env_rank, env_size = next(lib.distributed.rendezvous("env://", 0, 1))
        seen.append((type(store).__name__, rank, size, store.get("k"),
                     type(env_store).__name__, env_rank, env_size))
    assert seen[1] == seen[0]
    for lib in (torch, ft):  # the errors before any store is made
        r = lib.distributed.rendezvous
        errs = [outcome(lambda r=r: next(r("tcp://127.0.0.1", 0, 1))),
                outcome(lambda r=r: next(r("foo://x", 0, 1))),
                outcome(lambda r=r: next(r("tcp://127.0.0.1:1?rank=0", 0, 1))),
                outcome(lambda r=r: r(3))]
        seen.append([(type(e).__name__, str(e)) for e in errs])
    assert seen[3] == seen[2]


def test_stateless_group_flow_as_vllm_runs_it(torch: Any) -> None:
    """vLLM's stateless process group: rendezvous, set_timeout, PrefixStore, register a group
    under a name, unregister it."""
    bindings = importlib.import_module("fake_torch._C._distributed_c10d")
    port = free_port()
    store, _, _ = next(dist.rendezvous(f"tcp://127.0.0.1:{port}", 0, 1))
    store.set_timeout(timedelta(seconds=1))
    prefix = dist.PrefixStore(f"tcp://127.0.0.1:{port}", store)
    prefix.set("x", "1")
    assert store.get(f"tcp://127.0.0.1:{port}/x") == b"1"
    dist.init_process_group("gloo", f"tcp://127.0.0.1:{free_port()}", world_size=1, rank=0)
    pg = dist.new_group([0])
    bindings._register_process_group("vllm_g", pg)
    assert bindings._resolve_process_group("vllm_g") is pg
    dist.distributed_c10d._unregister_process_group("vllm_g")
    with pytest.raises(RuntimeError):
        bindings._resolve_process_group("vllm_g")
    dist.distributed_c10d._unregister_process_group("vllm_g")  # torch: no error either
    torch._C._distributed_c10d._unregister_process_group("never_registered")
    assert bindings._SymmetricMemory.has_multicast_support(None, 0) is False
    assert bindings._DEFAULT_PG_TIMEOUT == torch._C._distributed_c10d._DEFAULT_PG_TIMEOUT


def test_placement_values_match_torch(torch: Any) -> None:
    def program(pt: Any) -> list[Any]:
        s0, r, p = pt.Shard(0), pt.Replicate(), pt.Partial()
        ss = pt._StridedShard(0, split_factor=2)
        return [repr(s0), str(s0), repr(pt.Shard(dim=-1)), repr(r), str(r), repr(p), str(p),
                repr(pt.Partial("max")), str(pt.Partial("avg")), repr(ss), str(ss),
                s0 == pt.Shard(0), s0 == pt.Shard(1), hash(s0) == hash(pt.Shard(0)),
                r == pt.Replicate(), p == pt.Partial("sum"), p == pt.Partial("max"),
                s0 == ss, ss == s0, ss == pt._StridedShard(0, sf=2), ss.split_factor,
                s0.is_shard(), s0.is_shard(0), s0.is_shard(1), ss.is_shard(),
                r.is_replicate(), s0.is_replicate(), p.is_partial(), p.is_partial("max"),
                p.reduce_op, s0.dim, isinstance(ss, pt.Shard), isinstance(s0, pt.Placement),
                outcome(lambda: pt._StridedShard(0, split_factor=2, sf=2)),
                outcome(lambda: pt.Shard("a"))]

    ours = program(importlib.import_module("fake_torch.distributed.tensor.placement_types"))
    theirs = program(importlib.import_module("torch.distributed.tensor.placement_types"))
    def norm(xs: list[Any]) -> list[Any]:
        return [(type(x[1]).__name__, str(x[1]).split("\n")[0]) if isinstance(x, tuple)
                else x for x in xs]

    assert norm(ours) == norm(theirs)


def test_policies_match_torch(torch: Any) -> None:
    ours = importlib.import_module("fake_torch.distributed.fsdp")
    theirs = importlib.import_module("torch.distributed.fsdp")
    for name in ("CPUOffloadPolicy", "MixedPrecisionPolicy", "OffloadPolicy"):
        assert repr(getattr(ours, name)()) == repr(getattr(theirs, name)())
        assert (str(inspect.signature(getattr(ours, name))).replace("fake_torch", "torch")
                .count(",") == str(inspect.signature(getattr(theirs, name))).count(","))
    assert ours.CPUOffloadPolicy(False) == ours.CPUOffloadPolicy(pin_memory=False)
    with pytest.raises(AttributeError):  # frozen, as torch's
        ours.MixedPrecisionPolicy().param_dtype = ft.float16  # type: ignore[misc]
    assert ours.MixedPrecisionPolicy(ft.bfloat16).param_dtype is ft.bfloat16
    fsdp2 = importlib.import_module("fake_torch.distributed._composable.fsdp")
    assert fsdp2.fully_shard is ours.fully_shard
    assert ([p.name for p in inspect.signature(ours.fully_shard).parameters.values()]
            == [p.name for p in inspect.signature(theirs.fully_shard).parameters.values()])


@pytest.mark.parametrize("module, call", [
    ("fake_torch.distributed.fsdp", lambda m: m.fully_shard(ft.nn.Linear(2, 2))),
    ("fake_torch.distributed.device_mesh", lambda m: m.DeviceMesh("cuda", [0])),
    ("fake_torch.distributed.device_mesh", lambda m: m.init_device_mesh("cuda", (1,))),
    ("fake_torch.distributed.tensor", lambda m: m.distribute_tensor(ft.zeros(2))),
    ("fake_torch.distributed.tensor", lambda m: m.DTensor.from_local(ft.zeros(2))),
    ("fake_torch.distributed.tensor", lambda m: m.DTensor()),
    ("fake_torch.distributed.tensor._utils",
     lambda m: m.compute_local_shape_and_global_offset((2,), None, [])),
    ("fake_torch.distributed._symmetric_memory", lambda m: m.empty(4, device="cuda")),
    ("fake_torch.distributed._symmetric_memory", lambda m: m.rendezvous(ft.zeros(2), "0")),
    ("fake_torch.distributed.checkpoint.hf_storage", lambda m: m.HuggingFaceStorageReader("p")),
    ("fake_torch.distributed.checkpoint.hf_storage", lambda m: m.HuggingFaceStorageWriter("p")),
])
def test_unemulated_apis_raise_at_call_naming_torch(module: str, call: Any) -> None:
    with pytest.raises(NotImplementedError, match=r"torch\.distributed\.|torch\._C"):
        call(importlib.import_module(module))


def test_signatures_match_torch(torch: Any) -> None:
    pairs = [("distributed.tensor", "distribute_tensor"),
             ("distributed.tensor._utils", "compute_local_shape_and_global_offset"),
             ("distributed.device_mesh", "DeviceMesh"),
             ("distributed.device_mesh", "init_device_mesh"),
             ("distributed._functional_collectives", "all_to_all_single"),
             ("distributed._functional_collectives", "wait_tensor"),
             ("distributed._symmetric_memory", "empty"),
             ("distributed._symmetric_memory", "rendezvous"),
             ("distributed._symmetric_memory", "is_nvshmem_available"),
             ("distributed.checkpoint.hf_storage", "HuggingFaceStorageReader"),
             ("distributed.checkpoint.hf_storage", "HuggingFaceStorageWriter"),
             ("distributed.tensor.placement_types", "_StridedShard"),
             ("distributed.rendezvous", "register_rendezvous_handler"),
             ("distributed", "rendezvous"), ("distributed", "is_xccl_available")]

    def params(obj: Any) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.kind, p.default if isinstance(p.default, int | str | type(None))
                 else "obj") for p in inspect.signature(obj).parameters.values()]

    for mod, name in pairs:
        ours = getattr(importlib.import_module(f"fake_torch.{mod}"), name)
        if mod == "distributed.rendezvous":
            ours = getattr(importlib.import_module("fake_torch.distributed.rendezvous"), name)
        theirs = getattr(importlib.import_module(f"torch.{mod}"), name)
        assert params(ours) == params(theirs), f"{mod}.{name}"


def test_all_to_all_single_is_one_copy_on_one_rank() -> None:
    funcol = importlib.import_module("fake_torch.distributed._functional_collectives")
    dist.init_process_group("nccl", f"tcp://127.0.0.1:{free_port()}", world_size=1, rank=0)
    with ft.cuda.fresh_simulated_device():
        x = ft.arange(6.0, device="cuda").reshape(3, 2)
        with ft.LaunchCounter.expect(1, alltoall_base_=1):  # NCCL's send-to-self copy
            y = funcol.all_to_all_single(x, [3], [3], dist.group.WORLD)
        assert y.tolist() == x.tolist() and y.data_ptr() != x.data_ptr()
        with ft.LaunchCounter.expect(0):
            assert funcol.wait_tensor(y) is y
        with pytest.raises(RuntimeError, match="Split sizes doesn't match total dim 0 size"):
            funcol.all_to_all_single(x, [2], None, [0])
        with pytest.raises(RuntimeError, match="No backend type associated with device type"):
            funcol.all_to_all_single(ft.ones(2), None, None, [0])  # an nccl group: cuda only


def test_vllm_import_paths_resolve_under_install() -> None:
    """The import lines vLLM's distributed modules run, with `torch` meaning fake_torch (in a
    fresh interpreter: this one may have imported the real torch)."""
    program = "\n".join([
        "import fake_torch; fake_torch.install(); import torch",
        "from torch._C._distributed_c10d import Store, _register_process_group",
        "from torch.distributed import PrefixStore, ProcessGroup, Store as S, TCPStore",
        "from torch.distributed.constants import default_pg_timeout",
        "from torch.distributed.distributed_c10d import (",
        "    PrefixStore, _get_default_timeout, _unregister_process_group)",
        "from torch.distributed.rendezvous import rendezvous",
        "import torch.distributed._functional_collectives as funcol",
        "import torch.distributed._symmetric_memory",
        "from torch.distributed.tensor import DTensor, Replicate, Shard, distribute_tensor",
        "from torch.distributed.tensor.placement_types import _StridedShard",
        "from torch.distributed.tensor._utils import compute_local_shape_and_global_offset",
        "from torch.distributed.device_mesh import DeviceMesh",
        "from torch.distributed.fsdp import CPUOffloadPolicy, MixedPrecisionPolicy",
        "from torch.distributed._composable.fsdp import fully_shard",
        "from torch.distributed.checkpoint.hf_storage import HuggingFaceStorageReader",
        "assert callable(rendezvous) and S is Store and funcol.wait_tensor(1) == 1",
        "assert not torch.distributed.is_xccl_available()",
        "print('ok')",
    ])
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120)
    assert done.stdout.strip() == "ok", done.stderr
