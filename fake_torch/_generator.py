"""torch.Generator and the default generators: a Philox stream whose whole state is (seed, offset).

A draw is a pure function of (seed, offset): the random kernel reads both from a buffer at run
time and never touches the generator. The host advances `offset` by `INCREMENT` per draw, as
torch's CUDA generator advances its Philox offset, so the next draw is always fresh.

A cuda generator's (seed, offset) lives in a `PhiloxState` (c10's CUDAGeneratorState), which
generators can share: `graphsafe_get_state()` hands out another generator over the SAME state,
`clone_state()` one over a copy, `graphsafe_set_state(g)` switches to g's state.

Graph capture (torch's protocol, driven by torch.cuda.graphs), per state registered with the
graph (the default generator's always, others by `CUDAGraph.register_generator_state`):
  - register: the first graph gives the state two one-element int64 cuda tensors (the
    "extragraph" seed and offset: two 512-byte blocks of the caching allocator, freed when the
    last graph unregisters);
  - capture_begin: `capture_prologue()` fills them (two fill_ launches); each draw in the
    capture reads them plus an intragraph offset baked into its launch; the offset stays put;
  - capture_end: `capture_epilogue()` returns the whole graph's offset increment;
  - replay: `replay_prologue(increment)` fills them with the current (seed, offset) (two fill_
    launches, when the graph draws at all) and advances the offset past the graph's draws, so
    a replay draws what the same draws would have given eagerly, and the next eager draw
    follows on.
"""

from __future__ import annotations

import secrets
from typing import TYPE_CHECKING, Any

import numpy as np

from fake_torch._dtype import uint8
from fake_torch._simulated import _dispatch
from fake_torch._simulated._allocator import DEVICE, Storage
from fake_torch._torch_device import DeviceLike, canonical, device

if TYPE_CHECKING:  # _tensor imports the op modules, which import this module
    from fake_torch._tensor import Tensor

INCREMENT = 4  # offset advance per draw: what torch's CUDA kernels use for small tensors
DEFAULT_SEED = 67280421310721  # torch's default_rng_seed_val: the seed of a new Generator()
_U64 = 1 << 64


def _capturing(dev: device) -> bool:
    """A capture is underway on this thread's current stream (a cuda generator's concern)."""
    return dev.type == "cuda" and _stream_capturing()


def _stream_capturing() -> bool:
    """c10's currentStreamCaptureStatus: this thread captures and its current stream takes part
    (a stream that never waited on the capture stream launches eagerly). The capture mode says
    which streams take part; a stand-in capture mode without streams captures them all."""
    mode = _dispatch.current_mode()
    if mode.name != "capture":
        return False
    joined = getattr(mode, "joined", None)
    return joined is None or bool(joined())


def _assert_not_capturing(dev: device, attempt: str) -> None:
    """c10's at::cuda::assertNotCapturing."""
    if _capturing(dev):
        raise RuntimeError(f"{attempt} during CUDA graph capture. If you need this call to be "
                           "captured, please file an issue. Current cudaStreamCaptureStatus: "
                           "cudaStreamCaptureStatusActive")


def _fill(out: np.ndarray, *, value: int) -> None:
    out[...] = value


class Extragraph:
    """The (seed, offset) a captured draw reads at replay: two one-element int64 cuda tensors
    (each a 512-byte block of the caching allocator, as in torch). Indexing reads them now."""

    def __init__(self) -> None:
        self._storages: tuple[Storage, Storage] = (DEVICE.allocate(8), DEVICE.allocate(8))
        self.seed, self.offset = (np.ndarray((1,), np.uint64, buffer=s.root)
                                  for s in self._storages)

    def __getitem__(self, i: int) -> np.uint64:
        return np.uint64((self.seed, self.offset)[i][0])

    def fill(self, seed: int, offset: int) -> None:
        """Two fill_ launches: the seed, then the offset."""
        for out, value in ((self.seed, seed), (self.offset, offset)):
            _dispatch.launch("fill_", _fill, (out,), (), {"value": value}, on_cuda=True,
                             kind="memset" if value == 0 else "kernel")


class PhiloxState:
    """A cuda generator's state (c10's CUDAGeneratorState): seed and offset, and what a graph
    capture needs of them. Shared by the generators graphsafe_get_state() hands out."""

    def __init__(self, seed: int = DEFAULT_SEED, offset: int = 0) -> None:
        self.seed, self.offset = seed, offset
        self.intragraph = 0  # offset within the graph being captured
        self.capturing = False
        self.graphs: set[int] = set()  # ids of the graphs it is registered with
        self.extragraph: Extragraph | None = None

    def clone(self) -> PhiloxState:
        return PhiloxState(self.seed, self.offset)

    def increase(self, increment: int) -> int:
        """Reserve `increment` offsets (rounded up to a multiple of 4) for one draw; return
        where the draw starts (in the graph, while capturing)."""
        increment = -(-increment // 4) * 4
        if _stream_capturing():
            if not self.capturing:
                raise RuntimeError("Attempt to increase offset for a CUDA generator not in "
                                   "capture mode.")
            start, self.intragraph = self.intragraph, self.intragraph + increment
            return start
        if self.capturing:
            raise RuntimeError("Offset increment outside graph capture encountered "
                               "unexpectedly.")
        start, self.offset = self.offset, self.offset + increment
        return start

    # --- graph capture (called by torch.cuda.graphs) -------------------------------------------

    def register_graph(self, graph_id: int) -> None:
        _assert_not_capturing(canonical("cuda"), "Cannot register the state during capturing "
                              "stage.")
        if not self.graphs:
            self.extragraph = Extragraph()
        self.graphs.add(graph_id)

    def unregister_graph(self, graph_id: int) -> None:
        if graph_id not in self.graphs:
            raise RuntimeError("The graph should be registered to the state")
        self.graphs.discard(graph_id)
        if not self.graphs:
            self.extragraph = None  # its two blocks go back to the allocator

    def capture_prologue(self) -> None:
        assert self.extragraph is not None, "a state captures only once registered"
        self.capturing = True
        self.intragraph = 0
        self.extragraph.fill(self.seed, 0)

    def capture_epilogue(self) -> int:
        """The capture ends: how far the whole graph advances the offset per replay."""
        self.capturing = False
        return self.intragraph

    def replay_prologue(self, wholegraph_increment: int) -> None:
        """Before a replay: give the graph the current (seed, offset), then move past it."""
        if wholegraph_increment:
            assert self.extragraph is not None
            self.extragraph.fill(self.seed, self.offset)
            self.offset += wholegraph_increment


class Generator:
    """torch.Generator(device="cpu"): a counter-based (Philox) random stream.

    Unlike torch's CPU generator (mt19937), both devices here use Philox (seed, offset), so
    `get_state()` is 16 bytes on both (torch's CUDA layout: seed, then offset)."""

    def __init__(self, device: DeviceLike = "cpu") -> None:
        self._device = canonical(device)
        if self._device.type == "meta":
            raise RuntimeError("META device type not an accelerator.")
        _assert_not_capturing(self._device, "Cannot construct a new CUDAGeneratorImpl")
        self._state = PhiloxState()

    def _over(self, state: PhiloxState) -> Generator:
        """Another generator of this device over `state` (c10's constructor from a state)."""
        twin = object.__new__(Generator)
        twin._device, twin._state = self._device, state
        return twin

    @property
    def device(self) -> device:
        return self._device

    # the state's (seed, offset), which tracing saves and restores around a traced region
    @property
    def _seed(self) -> int:
        return self._state.seed

    @_seed.setter
    def _seed(self, seed: int) -> None:
        self._state.seed = seed

    @property
    def _offset(self) -> int:
        return self._state.offset

    @_offset.setter
    def _offset(self, offset: int) -> None:
        self._state.offset = offset

    # --- seeding -------------------------------------------------------------------------------

    def manual_seed(self, seed: int) -> Generator:
        """Set the seed (negative seeds wrap modulo 2**64, as in torch) and rewind the stream."""
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        seed = int(seed)
        if not -(1 << 63) <= seed < _U64:
            raise ValueError("Overflow when unpacking long long")
        if _capturing(self._device):  # the graph bakes the seed: it may not change now
            if seed % _U64 != self._state.seed:
                raise RuntimeError("CUDAGeneratorImpl::set_current_seed can be called during "
                                   "stream capture only if new seed is the same as the original "
                                   "seed.")
            return self
        self._state.seed, self._state.offset = seed % _U64, 0
        return self

    def seed(self) -> int:
        """Seed from a non-deterministic source; return that seed."""
        _assert_not_capturing(self._device, "Cannot call CUDAGeneratorImpl::seed")
        self.manual_seed(secrets.randbits(63))
        return self._state.seed

    def initial_seed(self) -> int:
        return self._state.seed

    # --- state ---------------------------------------------------------------------------------

    def get_state(self) -> Tensor:
        """A cpu uint8 tensor of 16 bytes: seed (uint64) then offset (int64), little-endian."""
        from fake_torch._tensor import Tensor

        _assert_not_capturing(self._device, "Cannot call CUDAGeneratorImpl::philox_offset_per_"
                              "thread")
        raw = np.array([self._state.seed, self._state.offset], dtype="<u8").view(np.uint8)
        return Tensor._make(raw.copy(), canonical("cpu"))

    def set_state(self, new_state: Tensor) -> Generator:
        from fake_torch._tensor import Tensor

        if not isinstance(new_state, Tensor) or new_state.dtype is not uint8 or new_state.is_cuda:
            raise TypeError("RNG state must be a torch.ByteTensor")
        if new_state.numel() != 16:
            raise RuntimeError("RNG state is wrong size")
        seed, offset = np.ascontiguousarray(new_state._a).view("<u8").tolist()
        self.manual_seed(int(seed))
        _assert_not_capturing(self._device, "Cannot call CUDAGeneratorImpl::set_philox_offset_"
                              "per_thread")
        self._state.offset = int(offset)
        return self

    def get_offset(self) -> int:
        self._check_uses_offset()
        _assert_not_capturing(self._device, "Cannot call CUDAGeneratorImpl::get_offset")
        return self._state.offset

    def set_offset(self, offset: int) -> Generator:
        self._check_uses_offset()
        _assert_not_capturing(self._device, "Cannot call CUDAGeneratorImpl::set_offset")
        if int(offset) % 4:
            raise RuntimeError("offset must be a multiple of 4")
        self._state.offset = int(offset)
        return self

    def _check_uses_offset(self) -> None:
        if self._device.type == "cpu":  # torch's cpu generator is mt19937: no offset to show
            raise RuntimeError("CPU Generator does not use offset")

    # --- states shared between generators (graph-safe) -----------------------------------------

    def clone_state(self) -> Generator:
        """A new generator on the same device, over a copy of this one's state."""
        return self._over(self._state.clone())

    def graphsafe_get_state(self) -> Generator:
        """A new generator over this one's very state: draws through either move both."""
        if self._device.type != "cuda":
            raise NotImplementedError("graphsafe_get_state is not supported in this Generator")
        return self._over(self._state)

    def graphsafe_set_state(self, new_state: Generator) -> Generator:
        """Draw from now on from `new_state`'s state (shared, not copied): how code switches
        states inside a capture, which set_state (a host copy) cannot do."""
        if not isinstance(new_state, Generator):
            raise TypeError(f"expected a Generator, but got {type(new_state).__name__}")
        if self._device.type != "cuda":
            raise NotImplementedError("graphsafe_set_state is not supported in this Generator")
        if new_state.device.type != "cuda":
            raise RuntimeError("Expected a CUDA Generator")
        self._state = new_state._state
        return self

    # --- draws ---------------------------------------------------------------------------------

    def philox_args(self, increment: int = INCREMENT) -> tuple[Any, int]:
        """What one draw's kernel reads: a (seed, offset) buffer and an offset to add.

        Eager: a fresh snapshot of (seed, offset), then the offset advances.
        Capturing: the state's extragraph tensors (filled at each replay) and this draw's
        place in the graph; the eager offset stays where it is. As in torch, a cuda generator's
        state must be capturing exactly while a capture is underway: else a graph would bake
        one snapshot and replay the same numbers forever."""
        state = self._state
        if self._device.type == "cuda" and _stream_capturing():
            intra = state.increase(increment)
            assert state.extragraph is not None
            return state.extragraph, intra
        if self._device.type == "cuda":
            seed, offset = state.seed, state.increase(increment)
        else:
            seed, offset = state.seed, state.offset
            state.offset += increment
        return np.array([seed, offset], dtype=np.uint64), 0


def _nondeterministic(dev: str) -> Generator:
    g = Generator(dev)
    g.seed()
    return g


default_generator = _nondeterministic("cpu")  # torch seeds its default generators at start-up
cuda_default_generators: tuple[Generator, ...] = (_nondeterministic("cuda"),)


def generator_for(generator: Generator | None, dev: device) -> Generator:
    """The generator a draw on `dev` uses: `generator`, checked against the device, or the
    device's default."""
    if dev.type == "meta":  # a throwaway (torch's meta kernels read no generator, not even
        return Generator()  # a given one): a meta draw draws nothing, no stream advances
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
