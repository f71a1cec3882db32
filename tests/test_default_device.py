"""The default device (torch.set_default_device, `with torch.device(...)`), Tensor.new_*, and
the default dtype, against real torch (CPU build) differentially.

Real torch here has no CUDA, so its default device is "meta" where fake_torch's is "cuda": a
program's tensor either follows the default (it lands on meta / cuda) or does not (cpu), and
the two libraries must agree case by case, including on what does NOT follow (*_like,
Tensor.new_*, from_numpy, torch.normal, torch.Generator(), an op's output).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from oracles import outcome

import fake_torch as ft

# the `torch` fixture (real torch) and `no_default_device` are conftest.py's
pytestmark = pytest.mark.usefixtures("no_default_device")


def _default(lib: Any) -> str:
    return "cuda" if lib is ft else "meta"


# name -> program(lib, a cpu tensor): what it makes (a tensor, or a device)
PROGRAMS: dict[str, Callable[[Any, Any], Any]] = {
    "tensor": lambda lib, c: lib.tensor([1.0, 2.0]),
    "tensor(t)": lambda lib, c: lib.tensor(c),
    "tensor device=None": lambda lib, c: lib.tensor([1], device=None),
    "as_tensor(list)": lambda lib, c: lib.as_tensor([1, 2]),
    "as_tensor(t)": lambda lib, c: lib.as_tensor(c),
    "as_tensor(np)": lambda lib, c: lib.as_tensor(np.zeros(2)),
    "from_numpy": lambda lib, c: lib.from_numpy(np.zeros(2)),
    "empty": lambda lib, c: lib.empty(2),
    "zeros": lambda lib, c: lib.zeros(2, 3),
    "ones": lambda lib, c: lib.ones(2),
    "full": lambda lib, c: lib.full((2,), 1.5),
    "arange": lambda lib, c: lib.arange(3),
    "linspace": lambda lib, c: lib.linspace(0, 1, 3),
    "eye": lambda lib, c: lib.eye(2),
    "scalar_tensor": lambda lib, c: lib.scalar_tensor(1),
    "rand": lambda lib, c: lib.rand(2),
    "randn": lambda lib, c: lib.randn(2),
    "randint": lambda lib, c: lib.randint(0, 5, (2,)),
    "randperm": lambda lib, c: lib.randperm(4),
    "explicit cpu": lambda lib, c: lib.zeros(1, device="cpu"),
    "normal": lambda lib, c: lib.normal(0.0, 1.0, (2,)),
    "zeros_like": lambda lib, c: lib.zeros_like(c),
    "empty_like": lambda lib, c: lib.empty_like(c),
    "rand_like": lambda lib, c: lib.rand_like(c),
    "new_zeros": lambda lib, c: c.new_zeros(2),
    "new_empty": lambda lib, c: c.new_empty(2),
    "new_tensor": lambda lib, c: c.new_tensor([1.0]),
    "legacy Tensor(2, 3)": lambda lib, c: lib.Tensor(2, 3),
    "legacy Tensor([1, 2])": lambda lib, c: lib.Tensor([1, 2]),
    "an op's output": lambda lib, c: lib.cat([c, c]) + 1,
    "Generator()": lambda lib, c: lib.Generator().device,
    "Linear.weight": lambda lib, c: lib.nn.Linear(2, 3).weight,
    "Linear.bias": lambda lib, c: lib.nn.Linear(2, 3).bias,
    "Embedding.weight": lambda lib, c: lib.nn.Embedding(4, 2).weight,
    "LayerNorm.weight": lambda lib, c: lib.nn.LayerNorm(2).weight,
    "RMSNorm.weight": lambda lib, c: lib.nn.RMSNorm(2).weight,
    "Parameter()": lambda lib, c: lib.nn.Parameter(),
}


def _followed(lib: Any, made: Any) -> bool:
    dev = made if isinstance(made, lib.device) else made.device
    return bool(dev.type == _default(lib))


def _where(lib: Any, enter: Callable[[Any], Any]) -> dict[str, bool]:
    """Which programs' tensors follow the default device, set by `enter(lib)`."""
    c = lib.zeros(2, device="cpu")
    found = {}
    with enter(lib):
        for name, program in PROGRAMS.items():
            made, err = outcome(lambda program=program: program(lib, c))
            assert err is None, f"{name}: {err!r}"
            found[name] = _followed(lib, made)
    return found


class _SetDefault:
    def __init__(self, lib: Any) -> None:
        self.lib = lib

    def __enter__(self) -> None:
        self.lib.set_default_device(_default(self.lib))

    def __exit__(self, *exc: object) -> None:
        self.lib.set_default_device(None)


@pytest.mark.parametrize("how", ["set_default_device", "with device"])
def test_what_follows_the_default_device_is_torchs(torch: Any, how: str) -> None:
    def enter(lib: Any) -> Any:
        return _SetDefault(lib) if how == "set_default_device" else lib.device(_default(lib))

    theirs, ours = _where(torch, enter), _where(ft, enter)
    assert ours == theirs
    assert theirs["zeros"] and theirs["Linear.weight"] and not theirs["zeros_like"]  # both kinds


def test_get_default_device(torch: Any) -> None:
    for lib in (torch, ft):
        assert lib.get_default_device() == lib.device("cpu")
    ft.set_default_device("cuda")
    assert ft.get_default_device() == ft.device("cuda", 0)  # the current device's index
    torch.set_default_device("meta")
    assert torch.get_default_device() == torch.device("meta")
    for lib in (torch, ft):
        with lib.device("cpu") as inner:
            assert inner == lib.device("cpu")  # `as` gives the device
            assert lib.get_default_device() == lib.device("cpu")
            assert lib.zeros(1).device.type == "cpu"
        assert lib.get_default_device().type == _default(lib)
        lib.set_default_device(None)
        assert lib.get_default_device() == lib.device("cpu")
        assert lib.zeros(1).device.type == "cpu"


def test_nested_contexts_over_set_default_device(torch: Any) -> None:
    for lib in (torch, ft):
        dev = _default(lib)
        lib.set_default_device(dev)
        assert lib.zeros(1).device.type == dev
        with lib.device("cpu"):
            assert lib.zeros(1).device.type == "cpu"
            with lib.device(dev):
                assert lib.zeros(1).device.type == dev
            assert lib.zeros(1).device.type == "cpu"
        assert lib.zeros(1).device.type == dev
        lib.set_default_device("cpu")  # replaces the first: one context at the bottom
        assert lib.zeros(1).device.type == "cpu"
        assert len(lib.overrides._get_current_function_mode_stack()) == 1


def test_the_default_device_is_per_thread(torch: Any) -> None:
    for lib in (torch, ft):
        lib.set_default_device(_default(lib))
        seen: list[str] = []
        thread = threading.Thread(target=lambda lib=lib, seen=seen: seen.append(
            lib.zeros(1).device.type))
        thread.start()
        thread.join()
        assert seen == ["cpu"]
        assert lib.zeros(1).device.type == _default(lib)


def test_where_a_mode_sees_the_filled_in_device(torch: Any) -> None:
    """set_default_device's context sits below the modes pushed before it (they see the call
    as written); `with device` pushes on top (a mode below sees device= filled in)."""
    def devices_seen(lib: Any) -> list[str]:
        seen: list[str] = []

        class Log(lib.overrides.TorchFunctionMode):  # type: ignore[misc]
            def __torch_function__(self, func: Any, types: Any, args: Any = (),
                                   kwargs: Any = None) -> Any:
                if func is lib.zeros:
                    seen.append(str((kwargs or {}).get("device")))
                return func(*args, **(kwargs or {}))

        dev = _default(lib)
        with Log():
            lib.set_default_device(dev)
            lib.zeros(1)
            with lib.device("cpu"):
                lib.zeros(1)
        lib.set_default_device(None)
        return [s.replace(dev, "DEFAULT") for s in seen]

    assert devices_seen(ft) == devices_seen(torch) == ["None", "cpu"]


def test_device_decorator(torch: Any) -> None:
    for lib in (torch, ft):
        @lib.utils._device.set_device(_default(lib))
        def make(lib: Any = lib) -> Any:
            return lib.zeros(1)

        assert make().device.type == _default(lib)
        assert lib.zeros(1).device.type == "cpu"


def test_bad_default_device_raises_torchs_error(torch: Any) -> None:
    _, theirs = outcome(lambda: torch.set_default_device("foo"))
    _, ours = outcome(lambda: ft.set_default_device("foo"))
    assert theirs is not None and type(ours) is type(theirs)
    assert str(ours) == str(theirs)
    assert ft.get_default_device() == ft.device("cpu")


# --- launches: what the default device creates launches as an explicit device would --------------

@pytest.mark.usefixtures("fresh_device")
def test_default_device_launches_as_explicit_cuda() -> None:
    ft.set_default_device("cuda")
    with ft.LaunchCounter.expect(2, uniform_=2):  # Linear's kaiming_uniform_ and bias uniform_
        lin = ft.nn.Linear(4, 3)
    assert lin.weight.is_cuda and lin.bias is not None and lin.bias.is_cuda
    with ft.LaunchCounter.expect(1, zeros=1):
        ft.zeros(3)
    with ft.LaunchCounter.expect(1, copy_=1):  # host data: one host-to-device copy
        ft.tensor([1.0, 2.0])
    with ft.LaunchCounter.expect(0):
        ft.empty(3)
    with ft.LaunchCounter.expect(1, arange=1):
        ft.arange(4)


# --- Tensor.new_* -------------------------------------------------------------------------------

NEW: dict[str, Callable[[Any, Any], Any]] = {
    "new_zeros(2, 3)": lambda lib, x: x.new_zeros(2, 3),
    "new_zeros((2,))": lambda lib, x: x.new_zeros((2,)),
    "new_ones float": lambda lib, x: x.new_ones(2, dtype=lib.float32),
    "new_full": lambda lib, x: x.new_full((2, 2), 7),
    "new_empty": lambda lib, x: x.new_empty(3),
    "new_tensor(floats)": lambda lib, x: x.new_tensor([1.5, 2.5]),
    "new_tensor dtype": lambda lib, x: x.new_tensor([1.5], dtype=lib.float64),
}


@pytest.mark.parametrize("name", sorted(NEW))
def test_tensor_new_factories_match_torch(torch: Any, name: str) -> None:
    for dt in ("int64", "float16"):
        theirs = NEW[name](torch, torch.zeros(2, dtype=getattr(torch, dt)))
        ours = NEW[name](ft, ft.zeros(2, dtype=getattr(ft, dt)))
        assert str(ours.dtype) == str(theirs.dtype)
        assert tuple(ours.shape) == tuple(theirs.shape)
        if name != "new_empty":
            assert ours.tolist() == theirs.tolist()


@pytest.mark.usefixtures("fresh_device")
def test_tensor_new_factories_launch_on_selfs_device() -> None:
    x = ft.zeros(2, dtype=ft.int64, device="cuda")
    with ft.LaunchCounter.expect(1, new_zeros=1):
        z = x.new_zeros(3)
    assert z.is_cuda and z.dtype is ft.int64
    with ft.LaunchCounter.expect(1, new_full=1):
        x.new_full((2,), 5)
    with ft.LaunchCounter.expect(0):
        x.new_empty(4)
    with ft.LaunchCounter.expect(1, copy_=1):  # host data: one host-to-device copy
        t = x.new_tensor([1.5])
    assert t.is_cuda and t.tolist() == [1]
    with ft.LaunchCounter.expect(0):
        assert not x.new_zeros(2, device="cpu").is_cuda


# --- the default dtype ----------------------------------------------------------------------------

DTYPED: dict[str, Callable[[Any], Any]] = {
    "tensor([1.])": lambda lib: lib.tensor([1.0]),
    "tensor(1.5)": lambda lib: lib.tensor(1.5),
    "tensor([1])": lambda lib: lib.tensor([1]),
    "tensor([])": lambda lib: lib.tensor([]),
    "tensor(np float32)": lambda lib: lib.tensor(np.zeros(2, np.float32)),
    "as_tensor([1.])": lambda lib: lib.as_tensor([1.0]),
    "Tensor([1, 2])": lambda lib: lib.Tensor([1, 2]),
    "empty": lambda lib: lib.empty(2),
    "zeros": lambda lib: lib.zeros(2),
    "full 1.": lambda lib: lib.full((2,), 1.0),
    "full 1": lambda lib: lib.full((2,), 1),
    "arange(3)": lambda lib: lib.arange(3),
    "arange(0.5)": lambda lib: lib.arange(0.5),
    "linspace": lambda lib: lib.linspace(0, 1, 3),
    "eye": lambda lib: lib.eye(2),
    "rand": lambda lib: lib.rand(2),
    "randint": lambda lib: lib.randint(0, 4, (2,)),
    "normal": lambda lib: lib.normal(0.0, 1.0, (2,)),
    "int / 2": lambda lib: lib.tensor([1, 2]) / 2,
    "int * 1.5": lambda lib: lib.tensor([1, 2]) * 1.5,
    "Linear.weight": lambda lib: lib.nn.Linear(2, 2).weight,
    "Embedding.weight": lambda lib: lib.nn.Embedding(2, 2).weight,
    "LayerNorm.weight": lambda lib: lib.nn.LayerNorm(2).weight,
    "RMSNorm.weight": lambda lib: lib.nn.RMSNorm(2).weight,
}


@pytest.mark.parametrize("default", ["float64", "float16", "bfloat16"])
def test_factories_and_modules_honour_the_default_dtype(torch: Any, default: str) -> None:
    def dtypes(lib: Any) -> dict[str, str]:
        before = lib.get_default_dtype()
        lib.set_default_dtype(getattr(lib, default))
        try:
            return {name: str(make(lib).dtype) for name, make in DTYPED.items()}
        finally:
            lib.set_default_dtype(before)

    assert dtypes(ft) == dtypes(torch)
