"""`python -m fake_torch bench`: what one eager op costs on a tiny tensor, side by side.

Each case runs, in one process, as raw numpy, as fake_torch on "cpu" and on the simulated "cuda"
(which also counts the launch), and as real torch on the CPU when it is installed. Tiny tensors
make the time per call the framework's own overhead (argument parsing, dispatch, allocation), not
arithmetic. The targets (issue 29, with the native core): on the simulated cuda device add-64
<= 3x real torch CPU eager, matmul 64x64 <= 2x, softmax-64 <= numpy's own softmax + 3 us, the
4-kernel MLP step <= 4x; on the cpu device add-64 <= 2x.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, TextIO

import numpy as np

IMPLS = ("numpy", "fake cpu", "fake cuda", "torch cpu")

Case = Callable[[Any, Any], Callable[[], object]]  # (framework, device) -> one op to time


def _add(fw: Any, dev: Any) -> Callable[[], object]:  # 64-element add
    a, b = _rand(fw, dev, (64,)), _rand(fw, dev, (64,))
    return lambda: a + b


def _matmul(fw: Any, dev: Any) -> Callable[[], object]:  # 64x64 @ 64x64
    a, b = _rand(fw, dev, (64, 64)), _rand(fw, dev, (64, 64))
    return lambda: a @ b


def _softmax(fw: Any, dev: Any) -> Callable[[], object]:  # softmax over 64 elements
    x = _rand(fw, dev, (64,))
    if fw is np:
        def np_softmax() -> np.ndarray:
            e = np.exp(x - x.max())
            return e / e.sum()  # type: ignore[no-any-return]
        return np_softmax
    return lambda: fw.softmax(x, dim=-1)


def _mul(fw: Any, dev: Any) -> Callable[[], object]:  # 64-element mul
    a, b = _rand(fw, dev, (64,)), _rand(fw, dev, (64,))
    return lambda: a * b


def _silu(fw: Any, dev: Any) -> Callable[[], object]:  # x * sigmoid(x) over 64 elements
    x = _rand(fw, dev, (64,))
    if fw is np:
        return lambda: x / (1.0 + np.exp(-x))
    return lambda: fw.nn.functional.silu(x)


def _mlp(fw: Any, dev: Any) -> Callable[[], object]:  # 4 kernels: mm, silu, mm, residual add
    x, w1, w2 = _rand(fw, dev, (8, 64)), _rand(fw, dev, (64, 128)), _rand(fw, dev, (128, 64))
    if fw is np:
        def np_mlp() -> np.ndarray:
            h = x @ w1
            return (h / (1.0 + np.exp(-h))) @ w2 + x  # type: ignore[no-any-return]
        return np_mlp
    silu = fw.nn.functional.silu
    return lambda: silu(x @ w1) @ w2 + x


CASES: dict[str, Case] = {"add 64": _add, "mul 64": _mul, "silu 64": _silu,
                          "softmax 64": _softmax, "matmul 64x64": _matmul,
                          "MLP step 8x64": _mlp}


@dataclass(frozen=True)
class Target:
    """One verdict: `impl`'s time for `case` against `base`'s, as a ratio (`limit` x) or, with
    `plus_us`, as a margin (base + plus_us microseconds)."""

    case: str
    impl: str
    base: str
    limit: float = 1.0
    plus_us: float | None = None

    def verdict(self, row: Row) -> str | None:
        """The line for `row` (the target's case), or None when a time is missing."""
        a, b = row.seconds.get(self.impl), row.seconds.get(self.base)
        if a is None or b is None:
            return None
        if self.plus_us is not None:
            met = a <= b + self.plus_us * 1e-6
            return (f"target {self.case}: {self.impl} <= {self.base} + {self.plus_us:.0f} us: "
                    f"{a * 1e6:.2f} us vs {(b * 1e6 + self.plus_us):.2f} us, "
                    f"{'meets' if met else 'misses'} it")
        ratio = a / b if b else float("inf")
        return (f"target {self.case}: {self.impl}/{self.base} <= {self.limit:.1f}x: "
                f"{ratio:.2f}x, {'meets' if ratio <= self.limit else 'misses'} it")


# issue 29's targets (with the native core)
TARGETS = (Target("add 64", "fake cuda", "torch cpu", 3.0),
           Target("matmul 64x64", "fake cuda", "torch cpu", 2.0),
           Target("softmax 64", "fake cuda", "numpy", plus_us=3.0),
           Target("MLP step 8x64", "fake cuda", "torch cpu", 4.0),
           Target("add 64", "fake cpu", "torch cpu", 2.0))


def _rand(fw: Any, dev: Any, shape: tuple[int, ...]) -> Any:
    a = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    return a if fw is np else fw.tensor(a, device=dev)


@dataclass
class Row:
    """One case: seconds per call for each implementation (None: not available, see `notes`)."""

    case: str
    seconds: dict[str, float | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)

    def ratio(self, num: str, den: str) -> float | None:
        a, b = self.seconds.get(num), self.seconds.get(den)
        return None if a is None or not b else a / b


def time_per_call(fn: Callable[[], object], *, repeat: int = 5, min_time: float = 0.02) -> float:
    """Best-of-`repeat` seconds per call; each round loops long enough to take `min_time`."""
    fn()  # warm up (first-call caches, lazy imports)
    number = 1
    while True:
        start = time.perf_counter()
        for _ in range(number):
            fn()
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            break
        number *= 2 if elapsed == 0 else max(2, int(min_time / elapsed * 1.2))
    best = elapsed / number
    for _ in range(repeat - 1):
        start = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - start) / number)
    return best


def _frameworks() -> dict[str, tuple[ModuleType | None, Any, str]]:
    """impl -> (module, device, why it is missing)."""
    import fake_torch

    real: ModuleType | None = None
    why = "real torch is not installed"
    if sys.modules.get("torch") is fake_torch:
        why = "torch is fake_torch here (installed); run the bench in a fresh process"
    elif importlib.util.find_spec("torch") is not None:
        real = importlib.import_module("torch")
    return {"numpy": (np, None, ""), "fake cpu": (fake_torch, "cpu", ""),
            "fake cuda": (fake_torch, "cuda", ""), "torch cpu": (real, "cpu", why)}


def measure(*, repeat: int = 5, min_time: float = 0.02) -> list[Row]:
    """Time every case under every implementation."""
    import fake_torch

    frameworks = _frameworks()
    real = frameworks["torch cpu"][0]
    threads = real.get_num_threads() if real is not None else 0
    if real is not None:
        real.set_num_threads(1)  # tiny ops: a thread pool only adds wake-up time (and noise)
    try:
        rows = [_measure_case(case, make, frameworks, repeat, min_time)
                for case, make in CASES.items()]
    finally:
        if real is not None:
            real.set_num_threads(threads)
    fake_torch.LaunchCounter.reset()  # the bench's own cuda launches are not the caller's
    return rows


def _measure_case(case: str, make: Case, frameworks: dict[str, tuple[ModuleType | None, Any, str]],
                  repeat: int, min_time: float) -> Row:
    row = Row(case)
    for impl, (fw, dev, why) in frameworks.items():
        row.seconds[impl] = None
        if fw is None:
            row.notes[impl] = why
            continue
        try:
            row.seconds[impl] = time_per_call(make(fw, dev), repeat=repeat, min_time=min_time)
        except (NotImplementedError, AttributeError, TypeError) as exc:
            row.notes[impl] = f"{type(exc).__name__}: {exc}"
    return row


RATIOS = (("fake cpu", "torch cpu"), ("fake cuda", "torch cpu"), ("fake cpu", "numpy"),
          ("fake cuda", "numpy"))


def report(rows: list[Row], out: TextIO) -> None:
    """The table: microseconds per call, then the ratios."""
    def us(s: float | None) -> str:
        return "n/a" if s is None else f"{s * 1e6:.2f}"

    def x(r: float | None) -> str:
        return "n/a" if r is None else f"{r:.2f}x"

    ratio_names = [f"{a}/{b}" for a, b in RATIOS]
    print("eager time per op on tiny float32 tensors (us per call, best of rounds; torch on "
          "1 thread)", file=out)
    print(f"{'op':<14}" + "".join(f"{n:>11}" for n in IMPLS)
          + "".join(f"{n:>20}" for n in ratio_names), file=out)
    for row in rows:
        print(f"{row.case:<14}" + "".join(f"{us(row.seconds[n]):>11}" for n in IMPLS)
              + "".join(f"{x(row.ratio(a, b)):>20}" for a, b in RATIOS), file=out)
    for row in rows:
        for impl, note in row.notes.items():
            print(f"  {row.case} / {impl}: n/a ({note})", file=out)
    by_case = {row.case: row for row in rows}
    for target in TARGETS:
        case_row = by_case.get(target.case)
        line = target.verdict(case_row) if case_row is not None else None
        if line is not None:
            print(line, file=out)
    # (which core runs the allocator's bookkeeping and the door's eager cuda launches)
    from fake_torch._simulated import _native_core

    print(f"core: {_native_core.CORE} ({_native_core.CORE_WHY}): the allocator's bookkeeping "
          "and the door's eager cuda launch", file=out)


def run_bench(*, repeat: int = 5, min_time: float = 0.02, out: TextIO | None = None
              ) -> list[Row]:
    """Measure and print the table (`python -m fake_torch bench`)."""
    rows = measure(repeat=repeat, min_time=min_time)
    report(rows, out or sys.stdout)
    return rows
