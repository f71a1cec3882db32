"""torch.Generator and the default generators: a Philox stream whose whole state is (seed, offset).

A draw is a pure function of (seed, offset): the random kernel reads both from a 2-element uint64
buffer at run time and never touches the generator. The host advances `offset` by `INCREMENT` per
draw, as torch's CUDA generator advances its Philox offset, so the next draw is always fresh.

Graph capture (torch's CUDAGeneratorImpl protocol, driven by torch.cuda.graphs):
  - capture: `capture_prologue()`; each draw gets the generator's *extragraph* buffer plus an
    intragraph offset baked into the launch, and the eager offset does not move;
  - end:     `capture_epilogue()` returns the whole graph's offset increment;
  - replay:  `replay_prologue(increment)` writes the current (seed, offset) into the extragraph
    buffer, then advances offset by the increment, so a replay draws exactly what the same
    draws would have given eagerly at that point, and the next eager draw follows on.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING

import numpy as np

from fake_torch import _dispatch
from fake_torch._device import DeviceLike, canonical, device
from fake_torch._dtype import uint8

if TYPE_CHECKING:  # _tensor imports the op modules, which import this module
    from fake_torch._tensor import Tensor

INCREMENT = 4  # offset advance per draw: what torch's CUDA kernels use for small tensors
DEFAULT_SEED = 67280421310721  # torch's default_rng_seed_val: the seed of a new Generator()
_U64 = 1 << 64


class Generator:
    """torch.Generator(device="cpu"): a counter-based (Philox) random stream.

    Unlike torch's CPU generator (mt19937), both devices here use Philox (seed, offset), so
    `get_state()` is 16 bytes on both (torch's CUDA layout: seed, then offset)."""

    def __init__(self, device: DeviceLike = "cpu") -> None:
        self._device = canonical(device)
        self._seed = DEFAULT_SEED
        self._offset = 0
        self._extragraph: np.ndarray | None = None  # (seed, offset) a captured graph reads
        self._intragraph: int | None = None  # offset within the graph being captured

    @property
    def device(self) -> device:
        return self._device

    # --- seeding -------------------------------------------------------------------------------

    def manual_seed(self, seed: int) -> Generator:
        """Set the seed (negative seeds wrap modulo 2**64, as in torch) and rewind the stream."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(1 << 63) <= seed < _U64:
            raise ValueError("Overflow when unpacking long long")
        if self._intragraph is not None:  # a capture is underway: the graph baked this seed
            if seed % _U64 != self._seed:
                raise RuntimeError("CUDAGeneratorImpl::set_current_seed can be called during "
                                   "stream capture only if new seed is the same as the original "
                                   "seed.")
            return self
        self._seed, self._offset = seed % _U64, 0
        return self

    def seed(self) -> int:
        """Seed from a non-deterministic source; return that seed."""
        self.manual_seed(secrets.randbits(63))
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    # --- state ---------------------------------------------------------------------------------

    def get_state(self) -> Tensor:
        """A cpu uint8 tensor of 16 bytes: seed (uint64) then offset (int64), little-endian."""
        from fake_torch._tensor import Tensor

        raw = np.array([self._seed, self._offset], dtype="<u8").view(np.uint8)
        return Tensor._make(raw.copy(), canonical("cpu"))

    def set_state(self, new_state: Tensor) -> Generator:
        from fake_torch._tensor import Tensor

        if not isinstance(new_state, Tensor) or new_state.dtype is not uint8 or new_state.is_cuda:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != 16:
            raise RuntimeError("RNG state is wrong size")
        seed, offset = np.ascontiguousarray(new_state._a).view("<u8").tolist()
        self._seed, self._offset = int(seed), int(offset)
        return self

    def get_offset(self) -> int:
        self._check_uses_offset()
        return self._offset

    def set_offset(self, offset: int) -> Generator:
        self._check_uses_offset()
        self._offset = int(offset)
        return self

    def clone_state(self) -> Generator:
        """A new generator on the same device, at the same (seed, offset)."""
        twin = Generator(self._device)
        twin._seed, twin._offset = self._seed, self._offset
        return twin

    def _check_uses_offset(self) -> None:
        if self._device.type == "cpu":  # torch's cpu generator is mt19937: no offset to show
            raise RuntimeError("CPU Generator does not use offset")

    # --- draws ---------------------------------------------------------------------------------

    def philox_args(self, increment: int = INCREMENT) -> tuple[np.ndarray, int]:
        """What one draw's kernel reads: a (seed, offset) uint64 buffer and an offset to add.

        Eager: a fresh snapshot of (seed, offset), then the offset advances.
        Capturing: the extragraph buffer (filled at each replay) and this draw's place in the
        graph; the eager offset stays where it is. As in torch, a cuda generator must be in
        capture mode exactly while a capture is underway: else a graph would bake one snapshot
        and replay the same numbers forever."""
        capturing = self._device.type == "cuda" and _dispatch.current_mode().name == "capture"
        if self._intragraph is not None:
            if not capturing:
                raise RuntimeError("Offset increment outside graph capture encountered "
                                   "unexpectedly.")
            assert self._extragraph is not None
            intra, self._intragraph = self._intragraph, self._intragraph + increment
            return self._extragraph, intra
        if capturing:
            raise RuntimeError("Attempt to increase offset for a CUDA generator not in capture "
                               "mode.")
        snapshot = np.array([self._seed, self._offset], dtype=np.uint64)
        self._offset += increment
        return snapshot, 0

    # --- graph capture (called by torch.cuda.graphs) -------------------------------------------

    def capture_prologue(self) -> None:
        """A capture begins: later draws read their base (seed, offset) from a buffer that each
        replay fills."""
        if self._extragraph is None:
            self._extragraph = np.zeros(2, dtype=np.uint64)
        self._extragraph[...] = (self._seed, 0)
        self._intragraph = 0

    def capture_epilogue(self) -> int:
        """The capture ends: return how far the whole graph advances the offset per replay."""
        if self._intragraph is None:
            raise RuntimeError("capture_epilogue called without capture_prologue")
        increment, self._intragraph = self._intragraph, None
        return increment

    def replay_prologue(self, wholegraph_increment: int) -> None:
        """Before a replay: give the graph the current (seed, offset), then move past it."""
        if self._extragraph is None:
            raise RuntimeError("replay_prologue called on a generator that never captured")
        self._extragraph[...] = (self._seed, self._offset)
        self._offset += wholegraph_increment


def _nondeterministic(dev: str) -> Generator:
    g = Generator(dev)
    g.seed()
    return g


default_generator = _nondeterministic("cpu")  # torch seeds its default generators at start-up
cuda_default_generators: tuple[Generator, ...] = (_nondeterministic("cuda"),)


def generator_for(generator: Generator | None, dev: device) -> Generator:
    """The generator a draw on `dev` uses: `generator`, checked against the device, or the
    device's default."""
    if generator is None:
        return cuda_default_generators[0] if dev.type == "cuda" else default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"expected a torch.Generator, got {type(generator).__name__}")
    if generator.device.type != dev.type:
        raise RuntimeError(f"Expected a '{dev.type}' device type for generator but found "
                           f"'{generator.device.type}'")
    return generator


def manual_seed(seed: int) -> Generator:
    """Seed every device's default generator (cpu and cuda); return the cpu one."""
    seed = int(seed)
    for g in cuda_default_generators:
        g.manual_seed(seed)
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Seed every default generator from a non-deterministic source; return the seed."""
    s = default_generator.seed()
    for g in cuda_default_generators:
        g.manual_seed(s)
    return s


def initial_seed() -> int:
    """The seed of the default cpu generator."""
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    """The default cpu generator's state, a uint8 tensor."""
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)
