"""Small gaps that third-party codebases hit (tests/test_thirdparty.py), each against real torch."""

from __future__ import annotations

import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from distributed_programs import free_port

ROOT = Path(__file__).resolve().parents[1]


def _fresh(code: str, fake: bool) -> str:
    """Run code in a fresh interpreter (import side effects), fake_torch installed or not."""
    prelude = "import fake_torch; fake_torch.install()\n" if fake else ""
    proc = subprocess.run([sys.executable, "-c", prelude + code], capture_output=True,
                          text=True, timeout=120, cwd=ROOT, check=True)
    return proc.stdout.strip()


def test_importing_dynamo_makes_functorch_config_an_attribute() -> None:
    # gpt-fast imports torch._dynamo.config and torch._inductor.config, then sets
    # torch._functorch.config.enable_autograd_cache: it is there because torch._dynamo loads it
    pytest.importorskip("torch")
    code = ("import torch\n"
            "import torch._dynamo.config\n"
            "print(torch._functorch.config.enable_autograd_cache)")
    assert _fresh(code, fake=True) == _fresh(code, fake=False) == "True"


def test_tensor_split_method_names_its_size_split_size() -> None:
    # mamba-minimal: x.split(split_size=[d, d], dim=-1); torch.split's keyword differs
    torch = pytest.importorskip("torch")
    import fake_torch

    for lib in (torch, fake_torch):
        x = lib.arange(6.0)
        assert [p.tolist() for p in x.split(split_size=[2, 4], dim=-1)] == [[0, 1], [2, 3, 4, 5]]
        assert [p.tolist() for p in x.split(split_size=4)] == [[0, 1, 2, 3], [4, 5]]
        assert [p.tolist() for p in lib.split(x, split_size_or_sections=[5, 1])] == \
               [[0, 1, 2, 3, 4], [5]]
        with pytest.raises(TypeError, match="unexpected keyword argument 'split_size'"):
            lib.split(x, split_size=[2, 4])
        with pytest.raises(TypeError, match="keyword argument 'split_size_or_sections'"):
            x.split(split_size_or_sections=[2, 4])


def test_utils_data_dataset_bases_subclass_as_in_torch() -> None:
    # llama2.c's tinystories.py subclasses torch.utils.data.IterableDataset at import
    torch = pytest.importorskip("torch")
    import fake_torch

    for lib in (torch, fake_torch):
        class Stream(lib.utils.data.IterableDataset):  # type: ignore[misc,name-defined]
            def __iter__(self):  # type: ignore[no-untyped-def]
                yield from range(3)

        class NoIter(lib.utils.data.IterableDataset):  # type: ignore[misc,name-defined]
            pass

        class Table(lib.utils.data.Dataset):  # type: ignore[misc,name-defined]
            pass

        assert list(Stream()) == [0, 1, 2]
        with pytest.raises(TypeError, match="Can't instantiate abstract class NoIter"):
            NoIter()
        with pytest.raises(NotImplementedError,
                           match="Subclasses of Dataset should implement __getitem__"):
            Table()[0]
        assert lib.utils.data.get_worker_info() is None
    with pytest.raises(NotImplementedError, match=r"torch\.utils\.data\.DataLoader"):
        fake_torch.utils.data.DataLoader(Stream())


# --- the names fairscale imports (meta-llama's reference model builds on its layers) ---------

def test_autograd_variable_is_a_tensor_over_the_same_data() -> None:
    torch = pytest.importorskip("torch")
    import fake_torch

    for lib in (torch, fake_torch):
        t = lib.ones(2, requires_grad=True)
        v = lib.autograd.Variable(t)
        assert type(v) is lib.Tensor and v is not t and v.data_ptr() == t.data_ptr()
        assert not v.requires_grad and lib.autograd.Variable(t, requires_grad=True).requires_grad
        assert isinstance(lib.ones(1), lib.autograd.Variable)
        empty = lib.autograd.Variable()
        assert (tuple(empty.shape), empty.dtype) == ((0,), lib.float32)
        with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
            lib.autograd.Variable(3)
        with pytest.warns(UserWarning, match="volatile was removed and now has no effect"):
            lib.autograd.Variable(t, volatile=True)


def test_checkpoint_detach_variable() -> None:
    torch = pytest.importorskip("torch")
    import fake_torch
    import fake_torch.utils.checkpoint

    for lib in (torch, fake_torch):
        a, b = lib.ones(2, requires_grad=True), lib.zeros(1)
        out = lib.utils.checkpoint.detach_variable((a, 3, b))
        assert out[1] == 3 and out[0].requires_grad and not out[2].requires_grad
        assert out[0] is not a and out[0].data_ptr() == a.data_ptr()
        with pytest.raises(RuntimeError, match=r"Only tuple of tensors is supported\. Got "
                                               r"Unsupported input type: list"):
            lib.utils.checkpoint.detach_variable([a])


def test_get_global_rank_deprecated_spelling() -> None:
    torch = pytest.importorskip("torch")
    import fake_torch

    for lib in (torch, fake_torch):
        c10d = lib.distributed.distributed_c10d
        assert callable(c10d._get_global_rank)
    dist = fake_torch.distributed
    started = not dist.is_initialized()
    if started:
        dist.init_process_group("gloo", f"tcp://localhost:{free_port()}", world_size=1, rank=0)
    try:
        with pytest.warns(FutureWarning, match=r"`torch\.distributed\.distributed_c10d\."
                                               r"_get_global_rank` is deprecated"):
            world = dist.group.WORLD
            assert world is not None and dist.distributed_c10d._get_global_rank(world, 0) == 0
    finally:
        if started:
            dist.destroy_process_group()


def test_packed_sequence_fields_as_torch() -> None:
    torch = pytest.importorskip("torch")
    import fake_torch
    from fake_torch.nn.utils.rnn import PackedSequence as FakePacked

    for lib in (torch, fake_torch):
        packed_sequence: Any = lib.nn.utils.rnn.PackedSequence
        packed = packed_sequence(lib.ones(3), lib.tensor([2, 1]), lib.tensor([1, 0]))
        assert packed._fields == ("data", "batch_sizes", "sorted_indices", "unsorted_indices")
        assert packed.unsorted_indices.tolist() == [1, 0]
        pair = packed_sequence((lib.ones(3), lib.tensor([2, 1])))
        assert pair.batch_sizes.tolist() == [2, 1] and pair.sorted_indices is None
        with pytest.raises(AssertionError):
            packed_sequence(lib.ones(3))
    with pytest.raises(ValueError, match="batch_sizes should always be on CPU"):
        ft: Any = fake_torch  # (mypy sees its ops through the module's __getattr__)
        FakePacked(ft.ones(3), ft.tensor([2, 1], device="cuda"))


def test_cuda_lazy_call_comm_and_rpc_modules() -> None:
    import fake_torch
    from fake_torch.cuda import comm
    from fake_torch.distributed import rpc

    calls: list[int] = []
    fake_torch.cuda._lazy_call(lambda: calls.append(1))
    assert calls == [1]  # the simulated device is always there: it runs now
    with pytest.raises(NotImplementedError, match=r"torch\.cuda\.comm\.broadcast"):
        comm.broadcast(devices=[0])
    assert rpc.is_available() is False


def test_set_default_tensor_type() -> None:
    # meta-llama's Llama.build: torch.set_default_tensor_type(torch.cuda.BFloat16Tensor)
    torch = pytest.importorskip("torch")
    import fake_torch
    from fake_torch import _default_tensor_type

    ft: Any = fake_torch
    _default_tensor_type._warned = False  # as in a fresh process: the first call warns
    try:
        for lib in (torch, ft):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                lib.set_default_tensor_type(lib.DoubleTensor)
            deprecated = [w for w in caught if str(w.message).startswith(
                "torch.set_default_tensor_type() is deprecated as of PyTorch 2.1")]
            # fake_torch's, once a process; torch's (TORCH_WARN_ONCE) may have gone earlier
            assert len(deprecated) == len(caught) and (lib is torch or len(deprecated) == 1)
            assert lib.get_default_dtype() is lib.float64 and lib.zeros(1).dtype is lib.float64
            lib.set_default_tensor_type("torch.FloatTensor")
            assert lib.get_default_dtype() is lib.float32
            with pytest.raises(TypeError, match=r"^only floating-point types are supported as "
                                                r"the default type$"):
                lib.set_default_tensor_type(lib.LongTensor)
            with pytest.raises(TypeError, match=r"^invalid type object: only floating-point"):
                lib.set_default_tensor_type(lib.Tensor)
            with pytest.raises(AttributeError, match="module 'torch' has no attribute 'Foo'"):
                lib.set_default_tensor_type("torch.Foo")
        # a cuda type: the default device too (real torch CPU cannot: the fake alone)
        ft.set_default_tensor_type(ft.cuda.BFloat16Tensor)
        x = ft.zeros(2)
        assert (x.dtype, x.device.type) == (ft.bfloat16, "cuda")
        assert ft.ones(1, device="cpu").device.type == "cpu"
        # the legacy constructor too (fairscale: Parameter(torch.Tensor(rows, cols)))
        assert (ft.Tensor(2, 3).device.type, ft.Tensor([1.0]).device.type) == ("cuda", "cuda")
        assert ft.Tensor(2).dtype is ft.bfloat16
        ft.set_default_tensor_type(ft.FloatTensor)
        x = ft.zeros(2)
        assert (x.dtype, x.device.type) == (ft.float32, "cpu")
        assert ft.Tensor(2).device.type == "cpu"
        ft.set_default_device("cuda")  # which the legacy constructor does not follow, as torch
        assert ft.Tensor(2).device.type == "cpu" and ft.zeros(1).device.type == "cuda"
        torch.set_default_device("meta")
        assert torch.Tensor(2).device.type == "cpu" and torch.zeros(1).device.type == "meta"
    finally:
        torch.set_default_dtype(torch.float32)
        torch.set_default_device(None)
        ft.set_default_dtype(ft.float32)
        ft.set_default_device(None)


def test_legacy_constructors_take_any_sequence() -> None:
    # fairscale's initialize_model_parallel: torch.LongTensor(range(world_size))
    torch = pytest.importorskip("torch")
    import numpy as np

    import fake_torch

    ft: Any = fake_torch
    for lib in (torch, ft):
        assert lib.LongTensor(range(3)).tolist() == [0, 1, 2]
        assert lib.FloatTensor((1, 2)).dtype is lib.float32
        assert lib.LongTensor(np.arange(2)).tolist() == [0, 1]
        with pytest.raises(TypeError, match=r"^new\(\): invalid data type 'str'$"):
            lib.LongTensor("ab")
        with pytest.raises(TypeError, match=r"^new\(\): data must be a sequence \(got dict\)$"):
            lib.LongTensor({1: 2})


def test_extra_state_key_suffix() -> None:
    # transformers' checkpoint loader compares every key's last part with it
    real = pytest.importorskip("torch.nn.modules.module")
    from fake_torch.nn.modules import module

    assert module._EXTRA_STATE_KEY_SUFFIX == real._EXTRA_STATE_KEY_SUFFIX == "_extra_state"
