"""`python -m fake_torch run --report`: the whole run's launches, whatever the script resets.

A script may call `LaunchCounter.reset()` as often as it likes (before each decode step, to read
that step's launches). While `whole_run()` is open, each reset first adds the tally it clears to
the run's, so the report covers every launch from the script's start to its end. Only resets are
watched: a launch costs nothing more. The report names the simulated GPU the run used (the one
simulated when it started, and the one at its end if the script chose another), so that its
figures are never read as another GPU's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fake_torch._simulated import _gpus
from fake_torch._simulated._counter import LaunchCounter

TOP_OPS = 10  # ops listed by name, most launched first


@dataclass
class RunTally:
    """What the script's resets cleared, plus (in `totals`) what the counter holds now."""

    n: int = 0
    by_op: Counter[str] = field(default_factory=Counter)
    by_kind: Counter[str] = field(default_factory=Counter)
    resets: int = 0
    gpu: str = field(default_factory=lambda: _gpus.current().name)  # simulated at the start

    def gpus(self) -> str:
        """The simulated GPU's name; both where the script chose another since the start."""
        now = _gpus.current().name
        return self.gpu if now == self.gpu else f"{self.gpu}, then {now}"

    def totals(self) -> tuple[int, Counter[str], Counter[str]]:
        """(launches, by op, by kind) over the whole run so far."""
        with LaunchCounter._lock:
            return (self.n + LaunchCounter.n, self.by_op + LaunchCounter.by_op,
                    self.by_kind + LaunchCounter.by_kind)


@contextmanager
def whole_run() -> Iterator[RunTally]:
    """Keep the launches LaunchCounter.reset() clears inside the block in the yielded tally."""
    tally = RunTally()
    reset = LaunchCounter.__dict__["reset"]

    def carrying_reset(cls: type[LaunchCounter]) -> None:
        # LaunchCounter.reset's work under its lock, after carrying what it clears: a launch on
        # another thread lands before or after, never lost between the two
        with cls._lock:
            tally.n += cls.n
            tally.by_op.update(cls.by_op)
            tally.by_kind.update(cls.by_kind)
            tally.resets += 1
            cls.n = 0
            cls.by_op.clear()
            cls.by_kind.clear()

    carrying: Any = classmethod(carrying_reset)
    carrying.__func__.__doc__ = reset.__func__.__doc__
    LaunchCounter.reset = carrying  # type: ignore[method-assign]
    try:
        yield tally
    finally:
        LaunchCounter.reset = reset  # type: ignore[method-assign]


def format_report(tally: RunTally) -> str:
    """The run's launches: total, by kind, the top ops; and the resets it saw through."""
    n, by_op, by_kind = tally.totals()
    kinds = ", ".join(f"{kind} {k}" for kind, k in by_kind.most_common()) or "none"
    across = (f", across the script's {tally.resets} LaunchCounter.reset() "
              f"call{'s' if tally.resets != 1 else ''}" if tally.resets else "")
    lines = [f"fake_torch launch report (simulated {tally.gpus()}): {n} launches over the whole "
             f"run ({kinds}){across}"]
    lines += [f"  {op:<40}{k:>8}" for op, k in by_op.most_common(TOP_OPS)]
    return "\n".join(lines)
