"""torch.cuda.random: seeding and state of the cuda default generator (one device, cuda:0)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from fake_torch._generator import Generator, cuda_default_generators
from fake_torch._torch_device import DeviceLike
from fake_torch._torch_device import device as torch_device
from fake_torch.cuda._device_queries import current_device, device_count, init

if TYPE_CHECKING:
    from fake_torch._tensor import Tensor


def _generator(device: DeviceLike) -> Generator:
    if isinstance(device, str):
        device = torch_device(device)
    elif isinstance(device, int):
        device = torch_device("cuda", device)
    idx = current_device() if device.index is None else device.index
    return cuda_default_generators[idx]


def get_rng_state(device: DeviceLike = "cuda") -> Tensor:
    """The cuda generator's state: 16 bytes (seed, offset), a cpu uint8 tensor."""
    init()
    return _generator(device).get_state()


def get_rng_state_all() -> list[Tensor]:
    return [get_rng_state(i) for i in range(device_count())]


def set_rng_state(new_state: Tensor, device: DeviceLike = "cuda") -> None:
    _generator(device).set_state(new_state)


def set_rng_state_all(new_states: Iterable[Tensor]) -> None:
    for i, state in enumerate(new_states):
        set_rng_state(state, i)


def manual_seed(seed: int) -> None:
    """Seed the current device's generator."""
    cuda_default_generators[current_device()].manual_seed(int(seed))


def manual_seed_all(seed: int) -> None:
    """Seed every device's generator."""
    for g in cuda_default_generators:
        g.manual_seed(int(seed))


def seed() -> None:
    """Seed the current device's generator from a non-deterministic source."""
    cuda_default_generators[current_device()].seed()


def seed_all() -> None:
    """Seed every device's generator with one non-deterministic seed."""
    s = cuda_default_generators[0].seed()
    for g in cuda_default_generators[1:]:
        g.manual_seed(s)


def initial_seed() -> int:
    init()
    return cuda_default_generators[current_device()].initial_seed()


__all__ = ["get_rng_state", "get_rng_state_all", "initial_seed", "manual_seed",
           "manual_seed_all", "seed", "seed_all", "set_rng_state", "set_rng_state_all"]
