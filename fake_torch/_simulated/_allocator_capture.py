"""What the caching allocator asks CUDA about a capture in progress
(cudaStreamGetCaptureInfo): which streams take part in it, and each one's terminal nodes,
the nodes the next work captured on that stream will depend on.

CUDA builds a graph while capturing: every launch on a capturing stream is a node that
depends on the stream's terminals and becomes its only terminal; a stream that waits on an
event recorded on a capturing stream joins the capture (or, already in it, adds the event's
nodes to its terminals). c10 reads this graph for `graph_capture_record_stream_reuse:True`:
a block freed during the capture while other streams used it gets "free markers", the
terminals of every stream that used it at the free; a later allocation on the block's stream
may reuse it once every marker is an ancestor of that stream's terminals (the other streams'
work was joined back). Only the graph's shape is kept here: nodes are numbers.

Fed by the door (an observer hears each captured launch) and by the streams: cuda/graphs.py
begins and ends a capture, cuda/streams.py reports waits and event records.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

_node_ids = itertools.count(1)


@dataclass(eq=False)
class Capture:
    """One capture's graph: each node's dependencies, each joined stream's terminals."""

    pool_id: tuple[int, int]  # the memory pool its streams allocate from
    # the thread that began it in capture_error_mode "global" (None: another mode): every
    # other thread is then refused the potentially unsafe calls (cudaMalloc, host syncs)
    global_thread: int | None = None
    parents: dict[int, frozenset[int]] = field(default_factory=dict)
    terminals: dict[int, frozenset[int]] = field(default_factory=dict)  # by stream handle
    # nodes already seen walking back from each stream's terminals (c10's GraphReuseContext:
    # never walked again)
    visited: dict[int, set[int]] = field(default_factory=dict)


_captures: dict[int, Capture] = {}  # stream handle -> the capture it takes part in
# an event recorded on a capturing stream -> that capture and the stream's terminals then
_events: weakref.WeakKeyDictionary[Any, tuple[Capture, frozenset[int]]] = (
    weakref.WeakKeyDictionary())
_observer: Any = None  # the door registration while any capture is underway


CAPTURE_UNSUPPORTED_ERROR = (
    "CUDA error: operation not permitted when stream is capturing\n"
    "CUDA kernel errors might be asynchronously reported at some other API call, so the "
    "stacktrace below might be incorrect.\nFor debugging consider passing "
    "CUDA_LAUNCH_BLOCKING=1")  # cudaErrorStreamCaptureUnsupported, as C10_CUDA_CHECK words it


def begin(stream: int, pool_id: tuple[int, int], global_thread: int | None = None) -> None:
    """cudaStreamBeginCapture on `stream`, allocating from `pool_id`: a new graph, no
    terminals yet. `global_thread`: the capturing thread, for capture_error_mode "global"."""
    global _observer
    _captures[stream] = Capture(pool_id, terminals={stream: frozenset()},
                                global_thread=global_thread)
    if _observer is None:
        from fake_torch._simulated import _allocator, _dispatch

        _observer = _dispatch.add_observer(
            lambda op, kind: launched(_allocator._current_stream()))


def end(stream: int) -> None:
    """cudaStreamEndCapture: the capture of `stream` is over for every stream in it."""
    global _observer
    capture = _captures.get(stream)
    for handle in [h for h, c in _captures.items() if c is capture]:
        del _captures[handle]
    if not _captures and _observer is not None:
        _observer.remove()
        _observer = None


def launched(stream: int) -> None:
    """Work captured on `stream`: a node after its terminals, now its only terminal."""
    capture = _captures.get(stream)
    if capture is not None:
        node = next(_node_ids)
        capture.parents[node] = capture.terminals[stream]
        capture.terminals[stream] = frozenset((node,))


def record(event: Any, stream: int) -> None:
    """cudaEventRecord: during a capture the event stands for the stream's terminals."""
    capture = _captures.get(stream)
    if capture is None:
        _events.pop(event, None)
    else:
        _events[event] = (capture, capture.terminals[stream])


def wait(stream: int, event: Any) -> None:
    """cudaStreamWaitEvent: a captured event makes `stream` depend on its nodes (joining the
    capture if it was not in it)."""
    found = _events.get(event)
    if found is not None:
        _join(stream, *found)


def wait_stream(stream: int, other: int) -> None:
    """Stream.wait_stream: record an event on `other`, wait on it."""
    capture = _captures.get(other)
    if capture is not None:
        _join(stream, capture, capture.terminals[other])


def _join(stream: int, capture: Capture, nodes: frozenset[int]) -> None:
    if _captures.setdefault(stream, capture) is not capture:
        return  # a stream of another capture: not modelled (CUDA refuses to mix captures)
    capture.terminals[stream] = capture.terminals.get(stream, frozenset()) | nodes


def capture_of(stream: int) -> Capture | None:
    """The capture `stream` takes part in (began on it, or joined by waiting on it), or None."""
    return _captures.get(stream)


def unjoined(origin: int) -> list[int]:
    """The streams of `origin`'s capture whose captured work the origin stream has not waited
    for (cudaStreamEndCapture's cudaErrorStreamCaptureUnjoined): every node of the capture must
    be an ancestor of the origin's terminals when the capture ends. A stream that joined and
    launched nothing since has only joined nodes: it is no fork left open."""
    capture = _captures.get(origin)
    if capture is None:
        return []
    joined = _ancestors(capture, capture.terminals[origin], set())
    return [handle for handle, c in _captures.items()
            if c is capture and handle != origin and not c.terminals[handle] <= joined]


def refuses_unsafe_calls() -> bool:
    """Whether this thread may not make potentially unsafe CUDA calls now: another thread
    captures in capture_error_mode "global" (cudaStreamCaptureModeGlobal: "if any other thread
    has a concurrent capture sequence initiated with cudaStreamCaptureModeGlobal, this thread is
    prohibited from potentially unsafe API calls"). The capturing thread's own calls are the
    capture mode's concern (c10 makes its own cudaMalloc relaxed)."""
    if not _captures:
        return False
    me = threading.get_ident()
    return any(c.global_thread is not None and c.global_thread != me
               for c in list(_captures.values()))


def pool_of(stream: int) -> tuple[int, int]:
    """The pool an allocation on `stream` comes from: its capture's, else the default pool."""
    capture = _captures.get(stream)
    return (0, 0) if capture is None else capture.pool_id


def is_capturing(stream: int) -> bool:
    """cudaStreamIsCapturing."""
    return stream in _captures


def free_markers(streams: Iterable[int]) -> frozenset[int]:
    """c10's record_free_markers: the terminals of every stream that used a block (its own
    first), or none at all if one of them is not capturing (then the block waits for the
    capture's end)."""
    markers: set[int] = set()
    for stream in streams:
        capture = _captures.get(stream)
        if capture is None:
            return frozenset()
        markers |= capture.terminals[stream]
    return frozenset(markers)


def visited(stream: int) -> set[int] | None:
    """c10's update_visited: every node `stream`'s terminals depend on, themselves included
    (None when the stream is not capturing or has no terminal yet)."""
    capture = _captures.get(stream)
    if capture is None or not capture.terminals[stream]:
        return None
    return _ancestors(capture, capture.terminals[stream],
                      capture.visited.setdefault(stream, set()))


def _ancestors(capture: Capture, nodes: Iterable[int], seen: set[int]) -> set[int]:
    """`seen` grown by `nodes` and every node they depend on (a node already in `seen` is not
    walked again: its ancestors are there too)."""
    todo = list(nodes)
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(capture.parents[node])
    return seen


@contextmanager
def fresh() -> Iterator[None]:
    """Inside the block no capture is underway (a fresh simulated device); the captures
    before it come back after."""
    saved = dict(_captures)
    _captures.clear()
    try:
        yield
    finally:
        _captures.clear()
        _captures.update(saved)
