"""The modules model-runner code touches at its first lines: torch.__version__ / torch.version,
torch.types, torch.backends, torch.multiprocessing, torch.utils._pytree, and the `torch`
distribution's metadata under install(). Real torch (CPU build) is the oracle where it has the
same thing; the parts that differ by design (a CUDA build's answers) are spelled out.
"""

from __future__ import annotations

import collections
import json
import operator
import subprocess
import sys
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from oracles import outcome

import fake_torch as ft
from fake_torch.utils import _pytree as ft_pytree


@pytest.fixture
def torch() -> Any:
    return pytest.importorskip("torch", reason="real torch (CPU build) is the oracle")


# --- torch.__version__ and torch.version ---------------------------------------------------------

VERSIONS = ["2.13.0+fake", "2.13.0", "2.13", "2.6", "2.14.0.dev20250101", "2.13.0rc1",
            "2.13.0.post1", "2.13.0+cpu", "2.13.0+cu130", "1.10.0a", "not a version", "2!1.0",
            "2.13.0+fake.1", "2.13.0+1"]
OTHERS: list[Any] = [*VERSIONS, (2, 13), (2, 13, 0), (2, 14), (1,), [2, 13, 1], 3]


def test_version_compares_as_torchs_torch_version(torch: Any) -> None:
    from torch.torch_version import TorchVersion

    for mine in VERSIONS:
        for other in OTHERS:
            for op in ("__gt__", "__lt__", "__eq__", "__ge__", "__le__", "__ne__"):
                theirs, t_err = outcome(partial(getattr(TorchVersion(mine), op), other))
                ours, o_err = outcome(partial(getattr(ft.torch_version.TorchVersion(mine), op),
                                              other))
                assert (ours, type(o_err)) == (theirs, type(t_err)), (mine, op, other)


def test_version_values() -> None:
    v = ft.__version__
    assert isinstance(v, str) and v == "2.13.0+fake" and hash(v) == hash("2.13.0+fake")
    assert v >= "2.6" and v >= (2, 13) and v < (2, 14) and v > "2.13.0"  # local label sorts after
    assert ft.version.__version__ == v and ft.version.cuda == "13.0"
    assert ft.version.hip is None and ft.version.debug is False
    assert isinstance(ft.version.git_version, str)


def test_version_module_has_torchs_names(torch: Any) -> None:
    assert sorted(ft.version.__all__) == sorted(torch.version.__all__)


# --- torch.types ---------------------------------------------------------------------------------

def test_types_names(torch: Any) -> None:
    names = [*torch.types.__all__, "_size", "_dtype", "_device", "_int", "_float", "_bool",
             "_TensorOrTensors", "_Number"]
    assert [n for n in names if not hasattr(ft.types, n)] == []
    assert isinstance(1.5, ft.types._Number) and not isinstance("1", ft.types._Number)

    def scale(x: ft.types.Number, dev: ft.types.Device, size: ft.types._size) -> None: ...

    assert ft.types._device is ft.device and ft.types._dtype is ft.dtype


# --- torch.backends ------------------------------------------------------------------------------

@pytest.fixture
def backend_flags(torch: Any) -> Iterator[None]:
    """Both libraries' flags as they were, after the test."""
    saved = {lib: (lib.get_float32_matmul_precision(), lib.backends.cudnn.benchmark,
                   lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction)
             for lib in (torch, ft)}
    yield
    for lib, (precision, benchmark, fp16) in saved.items():
        lib.set_float32_matmul_precision(precision)
        lib.backends.cudnn.benchmark = benchmark
        lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = fp16


FLAG_READS = [
    ("cuda.matmul", "allow_tf32"), ("cuda.matmul", "allow_fp16_reduced_precision_reduction"),
    ("cuda.matmul", "allow_bf16_reduced_precision_reduction"),
    ("cuda.matmul", "allow_fp16_accumulation"), ("cuda.matmul", "fp32_precision"),
    ("cudnn", "enabled"), ("cudnn", "benchmark"), ("cudnn", "deterministic"),
    ("cudnn", "allow_tf32"),
]


def _flags(lib: Any) -> list[Any]:
    return [getattr(operator.attrgetter(where)(lib.backends), name) for where, name in FLAG_READS]


@pytest.mark.usefixtures("backend_flags")
def test_backend_flags_default_set_and_read_back_as_torchs(torch: Any) -> None:
    assert _flags(ft) == _flags(torch)
    for lib in (torch, ft):
        lib.backends.cuda.matmul.allow_tf32 = True
        lib.backends.cudnn.benchmark = True
        lib.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = (False, False)
    assert _flags(ft) == _flags(torch)
    assert ft.get_float32_matmul_precision() == torch.get_float32_matmul_precision() == "high"
    for precision in ("medium", "highest", "high"):
        for lib in (torch, ft):
            lib.set_float32_matmul_precision(precision)
        assert _flags(ft) == _flags(torch)
        assert ft.get_float32_matmul_precision() == torch.get_float32_matmul_precision()
    for lib in (torch, ft):
        with lib.backends.cudnn.flags(enabled=False, benchmark=False):
            assert lib.backends.cudnn.enabled is False
        assert lib.backends.cudnn.enabled is True and lib.backends.cudnn.benchmark is True


@pytest.mark.usefixtures("backend_flags")
def test_backend_flag_errors_are_torchs(torch: Any) -> None:
    programs = [
        lambda lib: setattr(lib.backends.cudnn, "benchmark", "yes"),
        lambda lib: setattr(lib.backends.cudnn, "allow_tf32", 1),
        lambda lib: setattr(lib.backends.cuda.matmul, "allow_tf32", "yes"),
        lambda lib: setattr(lib.backends.cuda.matmul, "allow_fp16_reduced_precision_reduction",
                            (True, 1)),
        lambda lib: setattr(lib.backends.cuda.matmul, "no_such_flag", True),
        lambda lib: lib.backends.cuda.matmul.no_such_flag,
    ]
    for program in programs:
        _, theirs = outcome(partial(program, torch))
        _, ours = outcome(partial(program, ft))
        assert theirs is not None and type(ours) is type(theirs) and str(ours) == str(theirs)


def test_backends_answer_as_a_cuda_build() -> None:
    assert ft.backends.cuda.is_built() is True  # torch's CPU build says False
    assert ft.backends.cudnn.is_available() is True and ft.backends.cudnn.version() == 91300
    assert ft.backends.mps.is_available() is False and ft.backends.mps.is_built() is False
    assert ft.backends.cpu.get_cpu_capability() == "DEFAULT"


# --- torch.multiprocessing -----------------------------------------------------------------------

def test_multiprocessing_names(torch: Any) -> None:
    import multiprocessing

    assert [n for n in torch.multiprocessing.__all__ if not hasattr(ft.multiprocessing, n)] == []
    assert ft.multiprocessing.get_context is multiprocessing.get_context
    assert ft.multiprocessing.set_start_method is multiprocessing.set_start_method
    assert (ft.multiprocessing.get_all_sharing_strategies()
            == torch.multiprocessing.get_all_sharing_strategies())
    assert ft.multiprocessing.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    for name in ("spawn", "start_processes", "ProcessContext", "ProcessRaisedException",
                 "ProcessExitedException"):
        assert hasattr(ft.multiprocessing, name) and hasattr(torch.multiprocessing, name)


def test_spawn_runs_children_and_reports_their_errors() -> None:
    ft.multiprocessing.spawn(operator.add, args=(1,), nprocs=2)  # fn(i, *args) in each child
    with pytest.raises(ft.multiprocessing.ProcessRaisedException,
                       match="Process 0 terminated with the following error") as err:
        ft.multiprocessing.start_processes(operator.truediv, args=(0,), nprocs=1,
                                           start_method="fork")
    assert "ZeroDivisionError" in str(err.value)


# --- torch.utils._pytree -------------------------------------------------------------------------

Point = collections.namedtuple("Point", "x y")

TREES: list[Any] = [
    1, None, [], (), {}, [1, (2, 3)], {"a": [1, (2, 3)], "b": None}, {"b": 1, "a": 2},
    Point(1, [2, 3]), collections.OrderedDict(a=1, b=(2,)),
    collections.defaultdict(list, a=1), collections.deque([1, 2], maxlen=3),
    [{"k": (1, [2, {"z": 3}])}, "s", 4.5],
]


def test_pytree_flatten_unflatten_as_torch(torch: Any) -> None:
    pt = torch.utils._pytree
    for tree in TREES:
        leaves, spec = ft_pytree.tree_flatten(tree)
        t_leaves, t_spec = pt.tree_flatten(tree)
        assert leaves == t_leaves and repr(spec) == repr(t_spec)
        assert (spec.num_nodes, spec.num_leaves, spec.num_children) == (
            t_spec.num_nodes, t_spec.num_leaves, t_spec.num_children)
        assert spec.context == t_spec.context
        back = ft_pytree.tree_unflatten(leaves, spec)
        assert back == tree and type(back) is type(tree)
        assert ft_pytree.tree_leaves(tree) == pt.tree_leaves(tree)
        paths = [(ft_pytree.keystr(p), v) for p, v in ft_pytree.tree_leaves_with_path(tree)]
        assert paths == [(pt.keystr(p), v) for p, v in pt.tree_leaves_with_path(tree)]
        assert spec == ft_pytree.tree_structure(tree) and hash(spec) == hash(
            ft_pytree.tree_structure(tree))


def test_pytree_maps_as_torch(torch: Any) -> None:
    pt = torch.utils._pytree
    tree = {"x": 7, "y": (42, [64, "s"]), "z": None}
    for lib in (pt, ft_pytree):
        assert lib.tree_map(lambda v: v if isinstance(v, str) or v is None else v + 1,
                            tree) == {"x": 8, "y": (43, [65, "s"]), "z": None}
    cases = [
        lambda p: p.tree_map(lambda x, y: [x, *y], [5, 6], [[7, 9], [1, 2]]),
        lambda p: p.tree_map_only(int, lambda v: v * 10, tree),
        lambda p: p.tree_map_only((int, str), lambda v: v * 2, tree),
        lambda p: p.tree_map_only(lambda v: v == 7, lambda v: -v, tree),
        lambda p: p.tree_all(lambda v: v is not None, tree),
        lambda p: p.tree_any_only(str, lambda v: v == "s", tree),
        lambda p: p.tree_all_only(int, lambda v: v > 0, tree),
        lambda p: p.tree_structure((1, [2]), is_leaf=lambda v: isinstance(v, list)).num_leaves,
        lambda p: p.tree_map_with_path(lambda path, v: p.keystr(path), [1, {"a": 2}]),
        lambda p: p.tree_map(lambda x, y: x, [1, 2], [1]),  # ValueError: arity
        lambda p: p.tree_map(lambda x, y: x, [1, 2], (1, 2)),  # ValueError: type
        lambda p: p.tree_map(lambda x, y: x, {"a": 1}, {"b": 1}),  # ValueError: keys
        lambda p: p.tree_unflatten([1, 2], p.tree_structure((1,))),  # ValueError: length
        lambda p: p.tree_unflatten([1], None),  # TypeError
        lambda p: p.register_pytree_node(list, list, list),  # ValueError: registered
    ]
    for case in cases:
        ours, o_err = outcome(partial(case, ft_pytree))
        theirs, t_err = outcome(partial(case, pt))
        assert ours == theirs and type(o_err) is type(t_err), (ours, o_err, theirs, t_err)
        assert str(o_err) == str(t_err)


def test_pytree_mutating_map_returns_the_tree() -> None:
    seen: list[int] = []
    tree = [1, (2, 3)]
    assert ft_pytree.tree_map_(seen.append, tree) is tree and seen == [1, 2, 3]


def test_pytree_return_types_and_registered_nodes(torch: Any) -> None:
    x = [[1.0, 5.0], [3.0, 2.0]]
    leaves, spec = ft_pytree.tree_flatten(ft.tensor(x).max(0))
    t_leaves, t_spec = torch.utils._pytree.tree_flatten(torch.tensor(x).max(0))
    assert repr(spec) == repr(t_spec) and len(leaves) == len(t_leaves) == 2
    assert type(ft_pytree.tree_unflatten(leaves, spec)) is ft.return_types.max

    class Pair:
        def __init__(self, a: Any, b: Any) -> None:
            self.a, self.b = a, b

    ft_pytree.register_pytree_node(Pair, lambda p: ([p.a, p.b], "ctx"),
                                   lambda vs, ctx: Pair(*vs))
    try:
        leaves, spec = ft_pytree.tree_flatten([Pair(1, (2,)), 3])
        assert leaves == [1, 2, 3] and repr(spec).startswith("TreeSpec(list, None, [TreeSpec(Pair,")
        back = ft_pytree.tree_map(lambda v: v * 10, [Pair(1, (2,)), 3])
        assert isinstance(back[0], Pair) and back[0].b == (20,) and back[1] == 30
    finally:
        del ft_pytree.SUPPORTED_NODES[Pair]


def test_pytree_leafspec_and_predicates(torch: Any) -> None:
    pt = torch.utils._pytree
    assert repr(ft_pytree.LeafSpec()) == "*" and ft_pytree.LeafSpec() == ft_pytree.tree_structure(1)
    for obj in (Point(1, 2), Point, (1, 2), ft.tensor([1.0, 2.0]).max(0)):
        for name in ("is_namedtuple", "is_namedtuple_instance"):
            assert getattr(ft_pytree, name)(obj) == getattr(pt, name)(obj)
    assert ft_pytree.is_structseq(ft.return_types.max) is True


# --- the `torch` distribution under install() ----------------------------------------------------

INSTALL_SCRIPT = """
import importlib.metadata, importlib.util, json
import fake_torch

def version():
    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None

before = version()
fake_torch.install()
dist = importlib.metadata.distribution("torch")
seen = {
    "spec": importlib.util.find_spec("torch") is not None,
    "version": importlib.metadata.version("torch"),
    "name": dist.metadata["Name"],
    "top_level": dist.read_text("top_level.txt"),
    "packages": importlib.metadata.packages_distributions().get("torch", []),
}
fake_torch.uninstall()
seen["after_is_before"] = version() == before
print(json.dumps(seen))
"""


def test_install_answers_for_the_torch_distribution() -> None:
    """In a fresh process (this one may hold real torch): while installed, find_spec and the
    metadata say torch is fake_torch at torch.__version__; uninstalled, they no longer do."""
    done = subprocess.run([sys.executable, "-c", INSTALL_SCRIPT], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout)
    assert seen == {"spec": True, "version": ft.__version__, "name": "torch",
                    "top_level": "torch\n", "packages": seen["packages"],
                    "after_is_before": True}
    assert "torch" in seen["packages"]
