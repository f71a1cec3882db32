"""The sanitizer: each silent CUDA-graph hazard is an error that names the fix when it is on
(`torch.cuda._sanitizer.enable_cuda_sanitizer()` or TORCH_CUDA_SANITIZER=1), and off by default
the same code is silent — and wrong exactly where a GPU would be wrong. Stream races are
reported as torch's CSAN reports them (CUDASanitizerErrors, its message layout).

Also `check_input_liveness=True`, torch's own check for a freed captured input, which works
without the sanitizer and raises torch's text.
"""

from __future__ import annotations

import operator
import os
import re
import subprocess
import sys
import textwrap
import traceback
from collections.abc import Callable

import numpy as np
import pytest

import fake_torch as torch
from fake_torch.cuda import CUDAGraph, _sanitizer

pytestmark = pytest.mark.usefixtures("fresh_device")

NEVER_REPLAYED = "Call g.replay() before reading the graph's outputs."
DEAD_INPUT = "CUDA graph replay detected 1 dead tensor(s)."
COPY_IN_PLACE = "copy new values into it with static_input.copy_(new) instead of rebinding it."
CLOBBERED = "replay them in the order they were captured, or .clone() the output"


def _np(t: torch.Tensor) -> np.ndarray:
    return t.numpy(force=True)


# --- 1. reading a capture's output before any replay ------------------------------------------

def _capture_double(x: torch.Tensor) -> tuple[CUDAGraph, torch.Tensor]:
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
    return g, y


def test_reading_before_replay_raises_with_the_fix(sanitizer: None) -> None:
    x = torch.ones(3, device="cuda")  # kept alive: the graph reads it at every replay
    g, y = _capture_double(x)
    with pytest.raises(RuntimeError, match=r"^fake_torch sanitizer: .*never replayed") as info:
        y.tolist()
    assert NEVER_REPLAYED in str(info.value)
    with pytest.raises(RuntimeError, match="never replayed"):  # through an eager kernel too
        (y + 1).sum().item()
    g.replay()
    assert y.tolist() == [2.0, 2.0, 2.0]
    assert (y + 1).sum().item() == 9.0


def test_reading_before_replay_is_silent_garbage_by_default(no_sanitizer: None) -> None:
    _, y = _capture_double(torch.ones(3, device="cuda"))
    assert np.isnan(_np(y)).all()  # what a GPU gives: whatever the memory held
    assert np.isnan((y + 1).sum().item())


def test_turning_the_sanitizer_on_after_capture_still_catches_the_read() -> None:
    was_on = _sanitizer.is_enabled()
    _sanitizer.disable_cuda_sanitizer()
    _, y = _capture_double(torch.ones(3, device="cuda"))
    _sanitizer.enable_cuda_sanitizer()
    try:
        with pytest.raises(RuntimeError, match="never replayed"):
            _np(y)
    finally:
        if not was_on:
            _sanitizer.disable_cuda_sanitizer()


# every way host code reads a tensor's values: each is a device-to-host copy (or reads a count
# or a verdict computed from the values), so each must see the hazard `.item()` sees
HOST_READS: dict[str, Callable[[torch.Tensor], object]] = {
    "print": lambda y: print(y),
    "repr": repr,
    "str": str,
    "f-string": lambda y: f"{y}",
    "format": lambda y: format(y, ""),
    "format a 0-d": lambda y: format(y[0], ".3f"),
    "Parameter repr": lambda y: repr(torch.nn.Parameter(y)),
    "print a derived tensor": lambda y: print(y + 1),
    "iteration": lambda y: [float(v) for v in y],
    "print each element": lambda y: print(*y),
    "tolist": lambda y: y.tolist(),
    "item": lambda y: y[0].item(),
    "cpu": lambda y: y.cpu(),
    "numpy(force=True)": lambda y: y.numpy(force=True),
    "np.asarray of cpu()": lambda y: np.asarray(y.cpu()),
    "bool": lambda y: bool(y[0]),
    "float": lambda y: float(y[0]),
    "int": lambda y: int(y[0]),
    "index": lambda y: operator.index(y.long()[0]),
    "a comparison as a bool": lambda y: bool(y[0] > 0),
    "all() as a bool": lambda y: bool((y == 2).all()),
    "in": lambda y: 2.0 in y,  # type: ignore[operator]
    "nonzero": lambda y: y.nonzero(),
    "a mask index": lambda y: y[y > 0],
    "masked_select": lambda y: y.masked_select(y > 0),
    "torch.equal": lambda y: torch.equal(y, y),
    "torch.allclose": lambda y: torch.allclose(y, y),
    "repeat_interleave": lambda y: torch.repeat_interleave(y.long()),
    "multinomial": lambda y: torch.multinomial(y.abs() + 1, 2),
    "storage tolist": lambda y: y.untyped_storage().tolist(),
    "storage element": lambda y: y.untyped_storage()[4],
}


def _same(a: object, b: object) -> bool:
    """Equal reads: tensors by value (on the host), anything else by ==."""
    if isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        return a.shape == b.shape and a.tolist() == b.tolist()
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(u, v) for u, v in zip(a, b, strict=True))
    return a == b


@pytest.mark.parametrize("read", HOST_READS.values(), ids=HOST_READS.keys())
def test_every_host_read_before_replay_raises_item_s_error(
        sanitizer: None, read: Callable[[torch.Tensor], object],
        capsys: pytest.CaptureFixture[str]) -> None:
    x = torch.tensor([1.0, 2.0, 3.0], device="cuda")  # kept alive: the graph reads it
    g, y = _capture_double(x)
    with pytest.raises(RuntimeError) as item_error:
        y[0].item()
    hazard = str(item_error.value).partition(" copies to the host ")[2]
    assert NEVER_REPLAYED in hazard
    with pytest.raises(RuntimeError, match=r"^fake_torch sanitizer: ") as info:
        read(y)
    assert str(info.value).partition(" copies to the host ")[2] == hazard
    assert capsys.readouterr().out == ""  # nothing printed: no NaNs shown
    g.replay()  # the oracle: after the replay each read gives what eager code gives
    torch.manual_seed(0)
    replayed = read(y)
    torch.manual_seed(0)
    eager = read(x * 2)
    assert _same(replayed, eager)


@pytest.mark.parametrize("read", HOST_READS.values(), ids=HOST_READS.keys())
def test_every_host_read_before_replay_is_silent_by_default(
        no_sanitizer: None, read: Callable[[torch.Tensor], object]) -> None:
    _, y = _capture_double(torch.tensor([1.0, 2.0, 3.0], device="cuda"))
    try:
        read(y)
    except (RuntimeError, ValueError, TypeError) as error:  # what NaNs give some reads
        assert "sanitizer" not in str(error)


def test_a_printed_output_after_replay_prints_what_eager_prints(sanitizer: None) -> None:
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device="cuda")
    g, y = _capture_double(x)
    g.replay()
    assert repr(y) == repr(x * 2) == "tensor([[2., 4.],\n        [6., 8.]], device='cuda:0')"


# --- 2. a captured input freed since capture --------------------------------------------------

def _capture_on_a_temporary() -> tuple[CUDAGraph, torch.Tensor, int]:
    tmp = torch.full((4,), 1.0, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g):
        y = tmp * 2
    address = tmp.data_ptr()
    del tmp  # the graph still reads this address at every replay
    return g, y, address


def test_a_freed_captured_input_raises_with_the_fix(sanitizer: None) -> None:
    g, _, _ = _capture_on_a_temporary()
    with pytest.raises(RuntimeError, match="^" + re.escape(DEAD_INPUT)) as info:
        g.replay()
    assert COPY_IN_PLACE in str(info.value)


def test_a_freed_captured_input_silently_reads_its_successor_by_default(
        no_sanitizer: None) -> None:
    g, y, address = _capture_on_a_temporary()
    other = torch.full((4,), 7.0, device="cuda")  # the cache hands out the freed block again
    assert other.data_ptr() == address
    g.replay()
    np.testing.assert_array_equal(_np(y), [14.0] * 4)  # computed on someone else's tensor


def test_check_input_liveness_raises_torchs_error_without_the_sanitizer(
        no_sanitizer: None) -> None:
    tmp = torch.full((4,), 1.0, device="cuda")
    kept = torch.full((4,), 2.0, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g, check_input_liveness=True):
        y = tmp * kept
    g.replay()  # both inputs alive: fine
    np.testing.assert_array_equal(_np(y), [2.0] * 4)
    del tmp
    with pytest.raises(RuntimeError, match=r"^CUDA graph replay detected 1 dead tensor\(s\)\."):
        g.replay()
    raw = CUDAGraph()  # the raw call takes the flag too
    side = torch.cuda.Stream()
    tmp2 = torch.ones(2, device="cuda")
    with torch.cuda.stream(side):
        raw.capture_begin(check_input_liveness=True)
        z = tmp2 + 1
        raw.capture_end()
    del tmp2
    with pytest.raises(RuntimeError, match=r"^CUDA graph replay detected 1 dead tensor\(s\)\."):
        raw.replay()
    del z


def test_inputs_made_by_the_capture_itself_are_not_inputs(sanitizer: None) -> None:
    x = torch.ones(2, device="cuda")
    g = CUDAGraph()
    with torch.cuda.graph(g, check_input_liveness=True):
        t = x * 3
        y = t + 1
        del t  # a temporary of the graph, not a captured input
    g.replay()
    np.testing.assert_array_equal(_np(y), [4.0, 4.0])


# --- 3. a replay order that clobbers a live buffer of a graph sharing the pool -----------------

def _three_graphs_sharing_a_pool(x: torch.Tensor
                                 ) -> tuple[list[CUDAGraph], list[torch.Tensor]]:
    """g3's output lands in the block g2's intermediate freed (see test_cuda_memory.py)."""
    pool = torch.cuda.graph_pool_handle()
    g1, g2, g3 = CUDAGraph(), CUDAGraph(), CUDAGraph()
    with torch.cuda.graph(g1, pool=pool):
        o1 = x + 1
    with torch.cuda.graph(g2, pool=pool):
        o2 = (o1 * 2) + 1
    with torch.cuda.graph(g3, pool=pool):
        o3 = x * 10
    return [g1, g2, g3], [o1, o2, o3]


def test_a_replay_that_clobbers_another_graphs_output_makes_reading_it_raise(
        sanitizer: None) -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], device="cuda")
    (g1, g2, g3), (o1, o2, o3) = _three_graphs_sharing_a_pool(x)
    for g in (g1, g2, g3):  # capture order: every output readable
        g.replay()
    assert [o.tolist() for o in (o1, o2, o3)] == [
        [2.0, 3.0, 4.0, 5.0], [5.0, 7.0, 9.0, 11.0], [10.0, 20.0, 30.0, 40.0]]
    for g in (g1, g3, g2):  # g2's intermediate overwrites o3
        g.replay()
    assert o2.tolist() == [5.0, 7.0, 9.0, 11.0]
    with pytest.raises(RuntimeError, match=r"^fake_torch sanitizer: .*overwrote") as info:
        o3.tolist()
    assert CLOBBERED in str(info.value)
    g3.replay()  # replaying its own graph makes o3 valid again
    assert o3.tolist() == [10.0, 20.0, 30.0, 40.0]


def test_the_same_clobber_is_silent_and_wrong_by_default(no_sanitizer: None) -> None:
    x = torch.tensor([1.0, 2.0, 3.0, 4.0], device="cuda")
    (g1, g2, g3), (_, _, o3) = _three_graphs_sharing_a_pool(x)
    for g in (g1, g3, g2):
        g.replay()
    assert o3.tolist() == [4.0, 6.0, 8.0, 10.0]  # g2's (x + 1) * 2, not x * 10


def test_a_correct_runner_raises_nothing(sanitizer: None) -> None:
    """The intended pattern — capture largest first into one pool, copy inputs in, replay, read
    the output before the next replay — never trips the sanitizer."""
    static_x = torch.zeros(8, 4, device="cuda")
    pool = torch.cuda.graph_pool_handle()
    graphs: dict[int, tuple[CUDAGraph, torch.Tensor]] = {}
    for bs in (8, 4, 2, 1):
        g = CUDAGraph()
        with torch.cuda.graph(g, pool=pool):
            out = (static_x[:bs] * 2 - 1).relu() + 1
        graphs[bs] = (g, out)
    rng = np.random.default_rng(0)
    for bs in (3, 1, 8, 2, 5, 4):
        padded = min(s for s in graphs if s >= bs)
        g, out = graphs[padded]
        x = rng.standard_normal((bs, 4)).astype(np.float32)
        static_x[:bs].copy_(torch.tensor(x, device="cuda"))
        g.replay()
        np.testing.assert_allclose(_np(out[:bs]), np.maximum(x * 2 - 1, 0) + 1, rtol=1e-6)


# --- switching it on: the environment variable -------------------------------------------------

SCRIPT = textwrap.dedent("""
    import fake_torch as torch
    x = torch.ones(2, device="cuda")
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        y = x * 2
    print("enabled" if torch.cuda._sanitizer.is_enabled() else "disabled")
    try:
        print(y.tolist())
    except RuntimeError as e:
        print("raised:", str(e)[:len("fake_torch sanitizer:")])
""")


@pytest.mark.parametrize(("value", "expected"), [
    ("1", ["enabled", "raised: fake_torch sanitizer:"]),
    ("0", ["disabled", "[nan, nan]"]),
    (None, ["disabled", "[nan, nan]"]),
])
def test_the_environment_variable_turns_it_on(value: str | None, expected: list[str]) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TORCH_CUDA_SANITIZER"}
    if value is not None:
        env["TORCH_CUDA_SANITIZER"] = value
    done = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                          text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected


# --- 4. stream races, as torch's CSAN reports them ---------------------------------------------

CSAN_HEAD = ("============================\n"
             "CSAN detected a possible data race on tensor with data pointer ")


def _racy_side_read() -> tuple[torch.Tensor, torch.cuda.Stream]:
    """PyTorch's CUDA semantics hazard: the default stream is busy writing `a` when a side
    stream that never waited reads it."""
    a = torch.zeros(1000, device="cuda")
    side = torch.cuda.Stream()
    torch.cuda._sleep(1_000_000)
    a.fill_(1.0)
    return a, side


def test_a_side_stream_reading_without_a_wait_is_reported_naming_streams_and_kernels(
        sanitizer: None, capsys: pytest.CaptureFixture[str]) -> None:
    a, side = _racy_side_read()
    with torch.cuda.stream(side), pytest.raises(_sanitizer.CUDASanitizerErrors) as info:
        a.sum()
    assert str(info.value) == "detected 1 errors"
    (error,) = info.value.errors
    assert isinstance(error, _sanitizer.UnsynchronizedAccessError)
    now, before = error.current_access, error.previous_access
    assert (error.data_ptr, now.stream, before.stream) == (a.data_ptr(), side.cuda_stream, 0)
    assert (now.operator, now.type, before.operator, before.type) == (
        "aten::sum", _sanitizer.AccessType.READ, "aten::fill_", _sanitizer.AccessType.WRITE)
    text = str(error)
    assert text.startswith(f"{CSAN_HEAD}{a.data_ptr()}\nAccess by stream {side.cuda_stream} "
                           "during kernel:\naten::sum\nreading from\nWith stack trace:\n")
    assert "Previous access by stream 0 during kernel:\naten::fill_\nwriting to the output\n" \
        in text
    assert "a.sum()" in text and "a.fill_(1.0)" in text  # the two launching lines
    assert text.endswith("Trace for tensor allocation not found.")
    assert text in capsys.readouterr().err  # printed before the raise, as torch does
    torch.cuda.synchronize()  # the kernel was refused: the side stream ran nothing


def _wait_stream(side: torch.cuda.Stream) -> None:
    side.wait_stream(torch.cuda.current_stream())


def _event_record_and_wait(side: torch.cuda.Stream) -> None:
    done = torch.cuda.Event()
    done.record()
    side.wait_event(done)


def _event_record_and_event_wait(side: torch.cuda.Stream) -> None:
    torch.cuda.current_stream().record_event().wait(side)


@pytest.mark.parametrize("order", [
    _wait_stream,
    _event_record_and_wait,
    _event_record_and_event_wait,
    lambda side: torch.cuda.synchronize(),
    lambda side: torch.cuda.current_stream().synchronize(),
    lambda side: torch.cuda.current_stream().record_event().synchronize(),
    lambda side: torch.ones(1, device="cuda").item(),  # a blocking copy syncs the stream
], ids=["wait_stream", "event_record_wait_event", "event_wait", "device_synchronize",
        "stream_synchronize", "event_synchronize", "item"])
def test_an_ordered_side_stream_read_is_not_a_race(
        sanitizer: None, order: Callable[[torch.cuda.Stream], None]) -> None:
    a, side = _racy_side_read()
    order(side)
    with torch.cuda.stream(side):
        total = a.sum()
    torch.cuda.synchronize()
    assert total.item() == 1000.0


def test_an_event_recorded_before_the_write_does_not_order_it(sanitizer: None) -> None:
    a = torch.zeros(4, device="cuda")
    side = torch.cuda.Stream()
    early = torch.cuda.Event()
    early.record()  # marks the zeros only
    a.fill_(1.0)
    side.wait_event(early)
    with torch.cuda.stream(side), pytest.raises(_sanitizer.CUDASanitizerErrors):
        a.sum()
    torch.cuda.synchronize()


def test_reads_on_two_streams_are_no_race_but_a_write_after_them_is(sanitizer: None) -> None:
    a = torch.ones(8, device="cuda")
    side = torch.cuda.Stream()
    torch.cuda.synchronize()
    with torch.cuda.stream(side):
        s1 = a.sum()
    s0 = a.sum()  # the default stream reads too: reads never conflict
    with pytest.raises(_sanitizer.CUDASanitizerErrors) as info:
        a.add_(1.0)  # but this write may run before the side stream's read
    (error,) = info.value.errors
    assert isinstance(error, _sanitizer.UnsynchronizedAccessError)
    assert (error.current_access.type, error.current_access.stream) == (
        _sanitizer.AccessType.WRITE, 0)
    assert (error.previous_access.type, error.previous_access.stream,
            error.previous_access.operator) == (_sanitizer.AccessType.READ, side.cuda_stream,
                                                "aten::sum")
    torch.cuda.current_stream().wait_stream(side)
    a.add_(1.0)  # ordered after the side read now
    torch.cuda.synchronize()
    assert (s0.item(), s1.item(), a.sum().item()) == (8.0, 8.0, 16.0)


def test_freed_memory_handed_out_again_starts_clean(sanitizer: None) -> None:
    """CSAN forgets a tensor's accesses when its memory is freed: the next tensor in the same
    block has no history, even though the block's last write was on another stream."""
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        t = torch.ones(4, device="cuda")  # written on the side stream
        address = t.data_ptr()
        del t
        u = torch.empty(4, device="cuda")  # the same block: a new tensor, nothing launched
    assert u.data_ptr() == address
    u.fill_(2.0)  # on the default stream: no earlier access to this tensor
    torch.cuda.synchronize()
    assert u.tolist() == [2.0] * 4


def test_the_same_race_is_silent_and_stale_by_default(no_sanitizer: None) -> None:
    from fake_torch import _torch_stream

    assert _torch_stream.sync_observer is None  # nothing listens: no cost beyond a None check
    a, side = _racy_side_read()
    with torch.cuda.stream(side):
        racy = a.sum()
    torch.cuda.synchronize()
    assert racy.item() == 0.0  # the zeros a GPU may well read


def test_csan_classes_and_message_layout_are_torchs() -> None:
    """The same accesses, formatted by torch's CSAN classes and by fake_torch's: equal texts
    (CSAN itself cannot run on torch's CPU build, its classes can)."""
    csan = pytest.importorskip("torch.cuda._sanitizer")
    for ours, theirs in ((_sanitizer.CUDASanitizerErrors, csan.CUDASanitizerErrors),
                         (_sanitizer.SynchronizationError, csan.SynchronizationError),
                         (_sanitizer.UnsynchronizedAccessError, csan.UnsynchronizedAccessError)):
        assert ours.__name__ == theirs.__name__
        assert [c.__name__ for c in ours.__mro__] == [c.__name__ for c in theirs.__mro__]
    stack = traceback.StackSummary.from_list([("model.py", 7, "forward", "y = x.sum()")])
    for aliases, is_output, allocated in (([], False, None), (["self"], True, stack),
                                          (["self", "other"], False, None), ([], True, stack)):
        texts = []
        for lib in (_sanitizer, csan):
            now = lib.Access(lib.AccessType.READ, 5, 8323073, "aten::sum", aliases, is_output,
                             stack)
            before = lib.Access(lib.AccessType.WRITE, 3, 0, "aten::fill_", [], True, stack)
            error = lib.UnsynchronizedAccessError(1234, allocated, now, before)
            texts.append((str(error), str(lib.CUDASanitizerErrors([error]))))
        assert texts[0] == texts[1]
        assert texts[0][0].startswith(CSAN_HEAD + "1234\nAccess by stream 8323073 during kernel:")
