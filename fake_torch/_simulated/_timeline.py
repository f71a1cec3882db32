"""Simulated time: the host clock, each stream's queue, events, and when kernels really run.

Two clocks, as a GPU has them. The host clock advances by each launch's CPU cost (_cost.py).
A stream is a queue: a kernel starts at max(the end of its launch call, the end of the work
queued before it on that stream and of the events the stream waits on) and runs for its
modelled duration. Host syncs move the host clock to the stream's (or the device's) end.
An event records the time its stream reaches it.

A kernel's numpy work runs when the simulated device finishes it: the timeline keeps the
launched-but-unfinished kernels in end-time order and runs each once the host clock has passed
its end (nothing launched later can end earlier), or at once when the device is idle and
nothing is queued (the common case: it changes nothing). So work on two streams that the
program did not order interleaves as it would on a GPU: a kernel that races another reads what
is there when it ends (an unsynchronized reader sees stale data; two graphs that share a pool
and replay concurrently corrupt each other), and the host reads a non-blocking copy's target
before the copy lands unless it synchronizes. Nothing sleeps; `time.perf_counter` stays real.

Spans (a launch call on the host, a kernel on a stream) go to listeners: the profiler.
"""

from __future__ import annotations

import heapq
import itertools
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from fake_torch._simulated._native_core import new_rlock

BoundCall = tuple[Callable[..., None], tuple[Any, ...], dict[str, Any]]  # kernel, args, params


@dataclass(eq=False)
class Work:
    """One unit of device work: a kernel, a fused kernel or a graph node (several calls when
    fused), or an event a graph records (`event`, no calls)."""

    op: str
    kind: str
    calls: list[BoundCall]
    ns: float  # modelled duration on the device
    event: Any = None


class GraphNodes(list[Work]):
    """An instantiated graph's nodes (`Work`s, in order), with what every replay reads of them
    worked out once, at the first (the list is never changed after it is made): whether it is
    plain (no event node, no collective), every node's calls in one list, each node's duration
    after a gap (for `submit_graph`'s running sum) and the durations' sum."""

    _plan: tuple[bool, list[BoundCall], list[float], float, float] | None = None

    def plan(self, gap_ns: float) -> tuple[bool, list[BoundCall], list[float], float]:
        """(plain, calls, steps, busy): `steps` is [ns0, gap, ns1, gap, ns2, ...], whose
        running sum from a start time gives each node's end, as the node-by-node loop adds
        them; `busy` is 0.0 + ns0 + ns1 + ..., in that order."""
        plan = self._plan
        if plan is None or plan[4] != gap_ns:
            plain = all(n.event is None and n.kind != "nccl" for n in self)
            calls = [c for n in self for c in n.calls]
            steps: list[float] = []
            busy = 0.0
            for n in self:
                if steps:
                    steps.append(gap_ns)
                steps.append(n.ns)
                busy += n.ns
            plan = self._plan = (plain, calls, steps, busy, gap_ns)
        return plan[0], plan[1], plan[2], plan[3]


@dataclass(frozen=True)
class Span:
    """What a profiler sees: a host launch call (track "cpu") or device work (track "gpu",
    on `stream`); `correlation` ties a kernel to the call that launched it."""

    track: str
    name: str
    kind: str
    start_ns: float
    end_ns: float
    stream: int
    correlation: int


Listener = Callable[[Span], None]


@dataclass
class Timeline:
    host_ns: float = 0.0
    ready: dict[int, float] = field(default_factory=dict)  # stream -> when it is next free
    busy_ns: float = 0.0  # device time some kernel ran (sum of kernel durations)
    _heap: list[tuple[float, int, Any]] = field(default_factory=list)  # (end, seq, Work/_Run)
    _events: weakref.WeakKeyDictionary[Any, float] = field(
        default_factory=weakref.WeakKeyDictionary)
    _seq: itertools.count[int] = field(default_factory=lambda: itertools.count(1))  # 0: none
    listeners: list[Listener] = field(default_factory=list)
    lock: Any = field(default_factory=new_rlock)  # an RLock (the native core's, when built)

    # --- the host ---------------------------------------------------------------------------

    def host_call(self, name: str, kind: str, cost_ns: float) -> int:
        """The host spends `cost_ns` launching `name`; returns the call's correlation id.
        (Once per eager launch: the lock by acquire/release, which costs half a `with`.)"""
        lock = self.lock
        lock.acquire()
        try:
            correlation = next(self._seq)
            start = self.host_ns
            self.host_ns = start + cost_ns
            if self.listeners:
                self._emit(Span("cpu", name, kind, start, self.host_ns, -1, correlation))
            if self._heap:
                self._drain()
            return correlation
        finally:
            lock.release()

    def synchronize(self, stream: int | None = None, cost_ns: float = 0.0,
                    among: Callable[[int], bool] | None = None) -> None:
        """The host waits until `stream` (None: every stream `among` accepts, all unless
        given) has finished its queued work."""
        with self.lock:
            ends = ([self.ready.get(stream, 0.0)] if stream is not None else self.ready.values()
                    if among is None else [t for s, t in self.ready.items() if among(s)])
            self.host_ns = max([self.host_ns, *ends]) + cost_ns
            self._drain()

    def wait_until(self, t_ns: float) -> None:
        """The host waits until the device's time `t_ns` (cudaEventSynchronize on an event
        reached then)."""
        with self.lock:
            if t_ns > self.host_ns:
                self.host_ns = t_ns
                self._drain()

    def stream_end(self, stream: int) -> float:
        """When the work queued on `stream` so far will be done (an event recorded now)."""
        return max(self.ready.get(stream, 0.0), self.host_ns)

    def wait_event_on_host(self, event: Any, cost_ns: float) -> None:
        with self.lock:
            self.host_ns = max(self.host_ns, self._events.get(event, 0.0)) + cost_ns
            self._drain()

    # --- streams and events ---------------------------------------------------------------------

    def record_event(self, event: Any, stream: int) -> None:
        """The event marks the work queued on `stream` so far."""
        with self.lock:
            self._events[event] = max(self.ready.get(stream, 0.0), self.host_ns)

    def event_time(self, event: Any) -> float | None:
        return self._events.get(event)

    def event_done(self, event: Any) -> bool:
        t = self._events.get(event)
        return t is None or t <= self.host_ns

    def wait_event(self, stream: int, event: Any) -> None:
        """Later work on `stream` starts after the event (a wait on an unrecorded event: none)."""
        with self.lock:
            t = self._events.get(event)
            if t is not None and t > self.ready.get(stream, 0.0):
                self.ready[stream] = t

    def wait_stream(self, stream: int, other: int) -> None:
        with self.lock:
            t = self.ready.get(other, 0.0)
            if t > self.ready.get(stream, 0.0):
                self.ready[stream] = t

    def stream_idle(self, stream: int) -> bool:
        return self.ready.get(stream, 0.0) <= self.host_ns

    # --- the device -----------------------------------------------------------------------------

    def submit(self, work: Work, stream: int, correlation: int, gap_ns: float = 0.0) -> None:
        """Queue `work` on `stream`, launched just now (its host call has been paid); work
        queued behind earlier work starts `gap_ns` after it ends."""
        with self.lock:
            if self._place(work.op, work.kind, work.ns, stream, correlation, gap_ns):
                _run(work)  # idle device, nothing queued: running it now changes nothing
            else:
                heapq.heappush(self._heap, (self.ready[stream], next(self._seq), work))
                self._drain()

    def submit_call(self, op: str, kind: str, kernel: Callable[..., None],
                    args: tuple[Any, ...], params: dict[str, Any], ns: float, stream: int,
                    correlation: int, gap_ns: float) -> None:
        """`submit` of one kernel call, without building its Work when it can run at once
        (the eager hot path)."""
        lock = self.lock
        lock.acquire()  # (by acquire/release: this runs once per eager launch)
        try:
            self._queue_call(op, kind, kernel, args, params, ns, stream, correlation, gap_ns)
        finally:
            lock.release()

    def _queue_call(self, op: str, kind: str, kernel: Callable[..., None],
                    args: tuple[Any, ...], params: dict[str, Any], ns: float, stream: int,
                    correlation: int, gap_ns: float) -> None:
        """`submit_call`'s work, the lock held: a Work is built only when the call must wait."""
        if self._place(op, kind, ns, stream, correlation, gap_ns):
            kernel(*args, **params)  # idle device, nothing queued: running it now changes nothing
        else:
            self._wait_call(op, kind, kernel, args, params, ns, stream)

    def _wait_call(self, op: str, kind: str, kernel: Callable[..., None], args: tuple[Any, ...],
                   params: dict[str, Any], ns: float, stream: int) -> None:
        """A call placed on `stream` that the device is not idle for: queued until it ends
        (the lock held; the native door, _native_door.c, calls this too)."""
        work = Work(op, kind, [(kernel, args, params)], ns)
        heapq.heappush(self._heap, (self.ready[stream], next(self._seq), work))
        self._drain()

    def launch_kernel(self, op: str, host_cost_ns: float, kernel: Callable[..., None],
                      args: tuple[Any, ...], params: dict[str, Any], ns: float, stream: int,
                      gap_ns: float) -> int:
        """`host_call` then `submit_call` of one kernel, under one lock: the door's eager hot
        path. Returns the correlation id."""
        lock = self.lock
        lock.acquire()
        try:
            if self.listeners:  # (a profiler: the call's span too)
                correlation = self.host_call(op, "kernel", host_cost_ns)
            else:
                correlation = next(self._seq)
                self.host_ns += host_cost_ns
                if self._heap:
                    self._drain()
            self._queue_call(op, "kernel", kernel, args, params, ns, stream, correlation,
                             gap_ns)
            return correlation
        finally:
            lock.release()

    def _place(self, op: str, kind: str, ns: float, stream: int, correlation: int,
               gap_ns: float) -> bool:
        """Put `ns` of work on `stream`'s clock; whether it may run now (the device is idle
        for it and nothing is queued)."""
        host = self.host_ns
        ready = self.ready.get(stream)
        start = host if ready is None or ready + gap_ns <= host else ready + gap_ns
        self.ready[stream] = start + ns
        self.busy_ns += ns
        if self.listeners:
            self._emit(Span("gpu", op, kind, start, start + ns, stream, correlation))
        return not self._heap and start <= host

    def submit_graph(self, nodes: list[Work], stream: int, correlation: int,
                     gap_ns: float) -> None:
        """Queue a graph's nodes back to back on `stream` (`gap_ns` between kernels). They
        are queued as one run that the device works through node by node (see _drain). A
        graph with a collective among its nodes (kind "nccl") runs at once instead: another
        rank's device waits for it, and this process's host may never come back to drain it
        (it may itself be waiting for that rank), as a GPU runs its queue regardless."""
        with self.lock:
            t = max(self.host_ns, self.ready.get(stream, 0.0))
            if isinstance(nodes, GraphNodes) and nodes and not self.listeners:
                plain, calls, steps, busy_ns = nodes.plan(gap_ns)
                if plain:  # the loop below, its sums done by accumulate (the same additions)
                    ends = list(itertools.accumulate(steps, initial=t))[1::2]
                    self.busy_ns += busy_ns
                    self.ready[stream] = ends[-1]
                    heapq.heappush(self._heap, (ends[0], next(self._seq),
                                                _Run(list(zip(ends, nodes, strict=True)), calls)))
                    self._drain()
                    return
            first = True
            run: list[tuple[float, Work]] = []  # (end, node)
            append, listeners, busy = run.append, self.listeners, 0.0
            meets = False  # a node meets other ranks
            for node in nodes:
                if node.event is not None:
                    self._events[node.event] = t
                    continue
                if node.kind == "nccl":
                    meets = True
                start = t if first else t + gap_ns
                first = False
                t = start + node.ns
                busy += node.ns
                if listeners:
                    self._emit(Span("gpu", node.op, node.kind, start, t, stream, correlation))
                append((t, node))
            self.busy_ns += busy
            self.ready[stream] = t
            if run:
                heapq.heappush(self._heap, (run[0][0], next(self._seq), _Run(run)))
            if meets:
                self.flush()
            else:
                self._drain()

    def _drain(self) -> None:
        """Run every queued kernel the device has finished by now, in the order they end. A
        graph's run gives up its place after each node whose successor ends later than some
        other queued work, so concurrent streams interleave node by node."""
        heap = self._heap
        while heap and heap[0][0] <= self.host_ns:
            item = heapq.heappop(heap)[2]
            if not isinstance(item, _Run):
                _run(item)
                continue
            nodes, i = item.nodes, item.next
            if not heap and nodes[-1][0] <= self.host_ns:  # nothing else queued, all done by
                if i == 0 and item.calls is not None:  # now: the rest in order, without the
                    for kernel, args, params in item.calls:  # checks (the whole graph: its
                        kernel(*args, **params)  # calls in one list)
                    continue
                for _, node in nodes[i:]:
                    for kernel, args, params in node.calls:
                        kernel(*args, **params)
                continue
            while i < len(nodes) and nodes[i][0] <= self.host_ns \
                    and (not heap or nodes[i][0] <= heap[0][0]):
                _run(nodes[i][1])
                i += 1
            if i < len(nodes):
                item.next = i
                heapq.heappush(heap, (nodes[i][0], next(self._seq), item))

    def flush(self) -> None:
        """Run every queued kernel now, in the order they end, leaving the clocks alone: what
        a graph being deleted does with its queued replay (its buffers, and the generator
        states its kernels hold, are released now, as torch releases them at once)."""
        with self.lock:
            saved, self.host_ns = self.host_ns, float("inf")
            try:
                self._drain()
            finally:
                self.host_ns = saved

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        """Call `listener(span)` for every host launch call and device kernel from now on;
        returns the function that removes it."""
        with self.lock:
            self.listeners.append(listener)

        def remove() -> None:
            with self.lock:
                if listener in self.listeners:
                    self.listeners.remove(listener)
        return remove

    def _emit(self, span: Span) -> None:
        for listener in list(self.listeners):
            listener(span)


class _Run:
    """A graph replay's nodes in the queue: (end, node) in order, and the next to run."""

    __slots__ = ("calls", "next", "nodes")

    def __init__(self, nodes: list[tuple[float, Work]],
                 calls: list[BoundCall] | None = None) -> None:
        self.nodes = nodes
        self.next = 0
        self.calls = calls  # every node's calls in order, when known (GraphNodes.plan)


def _run(work: Work) -> None:
    for kernel, args, params in work.calls:
        kernel(*args, **params)

