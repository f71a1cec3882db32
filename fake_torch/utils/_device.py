"""torch.utils._device: the default device, as a TorchFunctionMode.

`torch.set_default_device(d)` and `with torch.device(d):` both work by `DeviceContext`, a mode
that sees every public call of its thread and, for the factories torch lists
(`_device_constructors`), fills in `device=d` when the call gave none (None counts as none).
Everything else keeps its own rule, as in torch: `*_like` and `Tensor.new_*` follow their input,
`from_numpy` is cpu, `torch.normal` and `torch.Generator()` ignore the default, an op's output
follows its inputs. nn.Module constructors create their parameters with `torch.empty`, so they
follow it too.

    torch.set_default_device("cuda")   # this thread, until set again (None: back to cpu)
    with torch.device("cuda"):         # this block
        lin = torch.nn.Linear(8, 8)    # weight and bias on cuda: 2 launches (their uniform_)

`set_default_device` puts its context at the BOTTOM of this thread's mode stack (modes pushed
before stay above it: they see a factory call before its device is filled in) and replaces the
one it put there before; `with torch.device(d):` pushes a context on TOP and pops it on exit,
as torch's C++ `device.__enter__` does. Both are per thread, as torch's mode stack is. While a
default device is set, every public call goes through the mode (torch warns of the same cost).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from fake_torch import _torch_device, _torch_function
from fake_torch._torch_device import DeviceLike, device
from fake_torch.overrides import TorchFunctionMode

# torch's list of the factories that take the default device (torch/utils/_device.py), by
# name; those fake_torch defines are looked up in its namespace. Not on it, as in torch:
# normal (it "doesn't actually take a device argument"), the *_like factories ("the user
# implicitly expects a specific device"), from_numpy and frombuffer (they share memory).
_CONSTRUCTOR_NAMES = (
    "empty", "empty_permuted", "empty_strided", "empty_quantized", "ones", "arange",
    "bartlett_window", "blackman_window", "eye", "full", "hamming_window", "hann_window",
    "kaiser_window", "linspace", "logspace", "rand", "randn", "randint", "randperm", "range",
    "sparse_coo_tensor", "sparse_compressed_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
    "sparse_bsr_tensor", "sparse_bsc_tensor", "tril_indices", "triu_indices", "zeros",
    "asarray", "tensor", "as_tensor", "scalar_tensor",
)


@functools.lru_cache(1)
def _device_constructors() -> frozenset[Callable[..., Any]]:
    """The public entries (what modes are shown) of the listed factories fake_torch has."""
    from fake_torch._opdef import exports

    ops = exports("torch")
    return frozenset(ops[n] for n in _CONSTRUCTOR_NAMES if n in ops)


class DeviceContext(TorchFunctionMode):
    """A mode giving the listed factories `device=self.device` when they were given none."""

    def __init__(self, device: DeviceLike) -> None:
        super().__init__()
        self.device = _as_device(device)
        self.prev_mode: DeviceContext | None = None

    def __enter__(self) -> DeviceContext:
        """Go to the bottom of this thread's stack, taking the place of the DeviceContext
        there (set_default_device's; it comes back at __exit__)."""
        above = [_torch_function.pop_mode() for _ in _torch_function.mode_stack()]
        _torch_function.push_mode(self)
        for mode in reversed(above):
            if isinstance(mode, DeviceContext):
                self.prev_mode = mode
            else:
                _torch_function.push_mode(mode)
        return self

    def __exit__(self, exc_type: object, exc_val: object, exc_tb: object) -> None:
        """Leave the bottom of the stack; the modes above stay, in their order."""
        above = []
        for _ in range(len(_torch_function.mode_stack()) - 1):
            mode = _torch_function.pop_mode()
            if isinstance(mode, DeviceContext):
                raise AssertionError("Found nested DeviceContext on the mode stack where none "
                                     "expected")
            above.append(mode)
        if _torch_function.mode_stack() and not isinstance(_torch_function.pop_mode(),
                                                           DeviceContext):
            raise AssertionError("Expected a DeviceContext at the bottom of the mode stack")
        if self.prev_mode is not None:
            _torch_function.push_mode(self.prev_mode)
        for mode in reversed(above):
            _torch_function.push_mode(mode)

    def __torch_function__(self, func: Callable[..., Any], types: Any, args: Any = (),
                           kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if kwargs.get("device") is None and func in _device_constructors():
            kwargs["device"] = self.device
        return func(*args, **kwargs)


_torch_device.device_context = DeviceContext  # `with torch.device(d):`


def _as_device(d: DeviceLike) -> device:
    """torch.device(d), checked as torch checks it (an unknown type raises here)."""
    return d if isinstance(d, device) else device(d)


class _GlobalContext(threading.local):
    device_context: DeviceContext | None = None  # set_default_device's, on this thread


_GLOBAL_DEVICE_CONTEXT = _GlobalContext()


def set_default_device(device: DeviceLike | None) -> None:
    """Factories called without `device=` on this thread create their tensors on `device`
    (None: back to cpu). Does not affect calls that pass a device; see the module docstring
    for what never follows it."""
    current = _GLOBAL_DEVICE_CONTEXT.device_context
    if current is not None:
        current.__exit__(None, None, None)
    context = None
    if device is not None:
        context = DeviceContext(device)
        context.__enter__()
    _GLOBAL_DEVICE_CONTEXT.device_context = context


def get_default_device() -> device:
    """The device factories use on this thread when given none: the innermost `with
    torch.device(...)`, else set_default_device's, else cpu. A cuda default without an index
    reads as the current device (cuda:0)."""
    for mode in reversed(_torch_function.mode_stack()):
        if isinstance(mode, DeviceContext):
            return _with_index(mode.device)
    context = _GLOBAL_DEVICE_CONTEXT.device_context
    return _with_index(context.device) if context is not None else device("cpu")


# torch.cuda.current_device: fake_torch/cuda/_device_queries.py registers it when imported
# (cuda sits above the tensor core: fake_torch/_tools/_layers.py)
current_device: Callable[[], int] | None = None


def _with_index(d: device) -> device:
    if d.index is not None or d.type == "cpu":
        return d
    assert current_device is not None, "fake_torch/cuda/_device_queries.py registers it"
    return device(d.type, current_device())


def device_decorator(device: device, func: Callable[..., Any]) -> Callable[..., Any]:
    """`func` run inside `with device:` (torch.utils._device.device_decorator)."""

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        with device:
            return func(*args, **kwargs)

    return run


def set_device(device: DeviceLike) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A decorator running the function with `device` as its default device."""
    return lambda func: device_decorator(_as_device(device), func)
