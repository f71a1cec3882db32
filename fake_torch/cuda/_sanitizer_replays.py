"""The sanitizer's replay checks: a captured input the program forgot to refresh, and a reference
to a graph's output read after a later replay overwrote it.

1. The forgotten copy. A graph reads its captured inputs at every replay, at the addresses it
   captured; a runner refreshes them with `static_input.copy_(new)`. One that forgets (or
   rebinds the name) replays on the old values, silently. Flagged before a replay:
   a. after an earlier replay: an input the program has written since the capture (weights
      and other constants never are) that nothing wrote since the graph's previous replay,
      while a tensor of the shape and dtype the graph reads it as was written in that time,
      into memory that is none of the graph's;
   b. at the first replay: an input nothing wrote since the capture, while new data of the
      shape and dtype the graph reads it as (a copy from the host, a random draw) was written
      since, into memory that is no graph's, and no kernel has read it yet (the new batch the
      program made and never copied in), and the program refreshed no other input the graph
      reads as that shape (batches made ahead of the loop are for that one). Values computed
      on the device are not new data (an eager reference `expected = model(static_x)` is not
      a new batch), nor is a fill (`torch.zeros`), nor a Parameter, on either side (a second
      model built after the capture is not a batch; parameters made before the sanitizer was
      on are not known).
   An input the graph writes itself (a counter, a cache), or that a graph's replay writes (a
   piecewise graph's previous piece), is not checked.
2. The held output. A replay writes its outputs in place, so a tensor taken from an output (a
   slice, `detach()`, what make_graphed_callables returns) after one replay shows the next
   replay's values once the graph runs again. Each tensor made over a graph's output memory
   after a replay, outside any capture, is stamped with that replay; reading it after a later
   replay is a hazard: a host read raises, an eager kernel passes it on to what it writes (as
   the sanitizer's other hazards, fake_torch/cuda/_sanitizer.py). The graph's outputs
   themselves, and references taken before its first replay, follow the graph: reading them
   after each replay is what a runner does.

Both judge what a program meant, so both keep to what is clearly a mistake; both look only at
captures made while the sanitizer is on. A reference is told apart by its numpy array: each
stamped tensor gets an array object of its own.
"""

from __future__ import annotations

import functools
import sys
import weakref
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from fake_torch import _tensor
from fake_torch._simulated import _dispatch
from fake_torch._simulated._allocator import DEVICE, Storage

if TYPE_CHECKING:
    from fake_torch._tensor import Tensor
    from fake_torch.cuda.graphs import CUDAGraph

ShapeKey = tuple[tuple[int, ...], np.dtype[Any]]  # (shape, dtype) a kernel reads or writes
_KEPT_WRITES = 16  # the latest eager writes kept per shape a watched graph reads
# the eager launches that write new data, not values computed on the device: random draws
# (and host-to-device copies, by their kind "memcpy_h2d")
_DRAWS = frozenset({"rand", "rand_like", "uniform_", "randn", "randn_like", "normal", "normal_",
                    "randint", "randint_like", "random_", "randperm", "bernoulli",
                    "bernoulli_", "cauchy_", "exponential_", "geometric_", "log_normal_"})


@dataclass
class _Watch:
    """What a replay checks of one graph: its captured inputs (each with the shapes the graph
    reads it as), the memory that is its own, and where its last replay fell in the writes."""

    inputs: list[tuple[weakref.ref[Storage], frozenset[ShapeKey]]]
    own: set[int]  # ids of its input and output storages
    self_written: set[int]  # ids of the inputs its own kernels write
    captured_at: int  # the write count when its capture ended
    last_replay: int | None = None  # the write count at its previous replay


@dataclass
class _State:
    writes: int = 0  # eager launches that wrote device memory, so far
    # captured inputs -> the write count when the program last wrote them
    input_writes: weakref.WeakKeyDictionary[Storage, int] = field(
        default_factory=weakref.WeakKeyDictionary)
    # each shape a watched graph reads an input as -> the latest eager writes of that shape
    shape_writes: dict[ShapeKey, deque[tuple[int, weakref.ref[Storage]]]] = field(
        default_factory=dict)
    # memory whose last eager write was new data of a shape a watched graph reads, that no
    # eager kernel has read since -> (the write count, the shape written)
    unread: weakref.WeakKeyDictionary[Storage, tuple[int, ShapeKey]] = field(
        default_factory=weakref.WeakKeyDictionary)
    parameters: weakref.WeakSet[Storage] = field(default_factory=weakref.WeakSet)
    watches: weakref.WeakKeyDictionary[CUDAGraph, _Watch] = field(
        default_factory=weakref.WeakKeyDictionary)
    # a graph's output memory -> the graph
    outputs: weakref.WeakKeyDictionary[Storage, weakref.ref[CUDAGraph]] = field(
        default_factory=weakref.WeakKeyDictionary)
    # id of a stamped reference's array -> (the array, its graph, the replay it followed)
    stamps: dict[int, tuple[weakref.ref[np.ndarray], weakref.ref[CUDAGraph], int]] = field(
        default_factory=dict)


_state: _State | None = None  # while the sanitizer is on


def enable() -> None:
    global _state
    if _state is None:
        _state = _State()
        _tensor.watch_new_tensors(_new_tensor)


def disable() -> None:
    global _state
    if _state is not None:
        _tensor.watch_new_tensors(None)
        _state = None


# --- bookkeeping: captures, replays, eager writes -------------------------------------------------

def capture_ended(graph: CUDAGraph) -> None:
    """Watch a new graph: its inputs and the shapes it reads them as, its outputs."""
    state = _state
    if state is None:
        return
    made = [s for s in (ref() for ref in graph._made) if s is not None]
    written = graph._written
    inputs = [s for s in (i.ref() for i in graph._inputs) if s is not None]
    keys: dict[int, set[ShapeKey]] = {id(s): set() for s in inputs}
    for k in graph._kernels:
        for x in k.inputs:
            if isinstance(x, np.ndarray):
                storage = DEVICE.storage_of(x)
                if storage is not None and id(storage) in keys:
                    keys[id(storage)].add((x.shape, x.dtype))
    state.watches[graph] = _Watch(
        [(weakref.ref(s), frozenset(keys[id(s)])) for s in inputs],
        {id(s) for s in (*inputs, *made)},
        {id(s) for s in inputs if _overlaps(s, written)}, state.writes)
    for s in inputs:
        state.input_writes.setdefault(s, 0)
    live_keys = {key for w in state.watches.values() for _, ks in w.inputs for key in ks}
    for key in list(state.shape_writes):
        if key not in live_keys:
            del state.shape_writes[key]
    for key in live_keys:
        state.shape_writes.setdefault(key, deque(maxlen=_KEPT_WRITES))
    for s in made:
        if _overlaps(s, written):
            state.outputs[s] = weakref.ref(graph)


def _overlaps(storage: Storage, spans: list[tuple[int, int]]) -> bool:
    lo, hi = storage.span()
    return any(start < hi and lo < end for start, end in spans)


def eager_launched(op: str, kind: str, outs: tuple[np.ndarray, ...],
                   inputs: tuple[Any, ...]) -> None:
    """An eager launch read `inputs` and wrote `outs`: note it for the inputs and shapes
    watched."""
    state = _state
    if state is None:
        return
    if state.unread:
        for x in inputs:
            if isinstance(x, np.ndarray) and (storage := DEVICE.storage_of(x)) is not None:
                state.unread.pop(storage, None)
    if not outs:
        return
    state.writes += 1
    new_data = kind == "memcpy_h2d" or op in _DRAWS
    for out in outs:
        storage = DEVICE.storage_of(out)
        if storage is None:
            continue
        if storage in state.input_writes:
            state.input_writes[storage] = state.writes
        key = (out.shape, out.dtype)
        recent = state.shape_writes.get(key)
        if recent is not None:
            recent.append((state.writes, weakref.ref(storage)))
        if new_data and recent is not None:
            state.unread[storage] = (state.writes, key)
        else:
            state.unread.pop(storage, None)


def check_inputs_refreshed(graph: CUDAGraph) -> None:
    """Before a replay: raise if it would replay on an input the program forgot to copy."""
    state = _state
    watch = None if state is None else state.watches.get(graph)
    if state is None or watch is None:
        return
    since = watch.last_replay
    watch.last_replay = state.writes
    if since is None:
        _check_first_replay(graph, watch, state)
        return
    for ref, keys in watch.inputs:
        storage = ref()
        if storage is None or id(storage) in watch.self_written:
            continue
        written = state.input_writes.get(storage, 0)
        if written == 0 or written > since:  # never refreshed (a constant), or refreshed
            continue
        for shape, dtype in keys:
            if any(seq > since and (s := r()) is not None and id(s) not in watch.own
                   for seq, r in state.shape_writes.get((shape, dtype), ())):
                watch.last_replay = since  # (the replay does not happen)
                raise RuntimeError(
                    f"fake_torch sanitizer: {graph!r} would replay on a captured input it reads "
                    f"as a {list(shape)} {_dtype_name(dtype)} tensor, which nothing wrote since "
                    "its previous replay, while another tensor of that shape was written: the "
                    "replay reads the captured tensor's memory, not the new tensor. Copy the new "
                    "values into the captured tensor with static_input.copy_(new) before "
                    "g.replay() (rebinding the name does not change what the graph reads).")


def _check_first_replay(graph: CUDAGraph, watch: _Watch, state: _State) -> None:
    """Before a graph's first replay: raise if an input nothing wrote since the capture meets
    new data of its shape, written since, that nothing read (rule 1b above)."""
    owned = {i for w in state.watches.values() for i in w.own}  # every graph's memory
    # the shapes of the inputs the program did refresh: new data of those shapes may be meant
    # for them (batches made ahead of the loop), not for an input of that shape it keeps
    refreshed = {key for ref, keys in watch.inputs if (s := ref()) is not None
                 and state.input_writes.get(s, 0) > watch.captured_at for key in keys}
    for ref, keys in watch.inputs:
        storage = ref()
        if (storage is None or id(storage) in watch.self_written or storage in state.outputs
                or storage in state.parameters
                or state.input_writes.get(storage, 0) > watch.captured_at):
            continue
        for shape, dtype in keys - refreshed:
            if any(seq > watch.captured_at and key == (shape, dtype) and id(s) not in owned
                   and s not in state.parameters for s, (seq, key) in list(state.unread.items())):
                watch.last_replay = None  # (the replay does not happen)
                raise RuntimeError(
                    f"fake_torch sanitizer: {graph!r} would replay for the first time on a "
                    f"captured input it reads as a {list(shape)} {_dtype_name(dtype)} tensor, "
                    "which nothing wrote since the capture, while a new tensor of that shape "
                    "(copied from the host or drawn at random) was made since and never read: "
                    "the replay reads the captured tensor's memory, not the new tensor. Copy "
                    "the new values into the captured tensor with static_input.copy_(new) "
                    "before g.replay() (rebinding the name does not change what the graph "
                    "reads).")


def _dtype_name(dtype: np.dtype[Any]) -> str:
    from fake_torch._dtype import from_numpy_dtype

    return repr(from_numpy_dtype(dtype)).removeprefix("torch.")


# --- references to a graph's outputs ------------------------------------------------------------

def _new_tensor(t: Tensor) -> None:
    """A new tensor over device memory: note a Parameter's memory (never a batch), and stamp a
    reference to a graph's output."""
    state = _state
    parameter = sys.modules.get("fake_torch.nn.parameter")  # (loaded before any Parameter)
    if (state is not None and t._storage is not None and parameter is not None
            and isinstance(t, parameter.Parameter)):
        state.parameters.add(t._storage)
    _stamp(t)


def _stamp(t: Tensor) -> None:
    """A new tensor over device memory: if it is taken from a graph's output after a replay
    (outside any capture), stamp it with that replay."""
    state = _state
    graph_ref = None if state is None or t._storage is None else state.outputs.get(t._storage)
    if state is None or graph_ref is None:
        return
    graph = graph_ref()
    if graph is None or not graph.num_replays or _dispatch.current_mode().name != "eager":
        return
    t._a = a = t._a.view()  # an array of its own: the door tells references apart by array
    state.stamps[id(a)] = (weakref.ref(a, functools.partial(_unstamp, id(a))), graph_ref,
                           graph.num_replays)


def _unstamp(key: int, _: weakref.ref[np.ndarray]) -> None:
    """A stamped array died (its id is free for another array only after this runs)."""
    if _state is not None:
        _state.stamps.pop(key, None)


def stale_reference(x: np.ndarray) -> str | None:
    """The hazard of reading array `x`, if it is a reference to a graph's output taken after a
    replay that a later replay has overwritten."""
    state = _state
    stamp = None if state is None else state.stamps.get(id(x))
    if stamp is None or stamp[0]() is not x:
        return None
    graph = stamp[1]()
    if graph is None or graph.num_replays <= stamp[2]:
        return None
    return (f"a tensor taken from an output of {graph!r} after its replay #{stamp[2]}, which "
            f"replay #{graph.num_replays} has overwritten since: a graph writes its outputs in "
            "place at every replay. .clone() the output before replaying again if its values "
            "must outlive the next replay, or take it from the graph's output after the replay "
            "whose values you want.")
