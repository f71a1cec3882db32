"""LaunchCounter.expect: the exact launches of a block, in all and per op, as a test reads them;
the counter itself is never reset by it, so blocks nest."""

from __future__ import annotations

import pytest

import fake_torch as torch
from fake_torch import LaunchCounter


def test_expect_passes_on_the_exact_launches_and_nests() -> None:
    x = torch.ones(4, device="cuda")
    before = LaunchCounter.n
    with LaunchCounter.expect(3, add=1, mul=1):
        y = (x + 1) * 2
        with LaunchCounter.expect(1, exp=1):
            y.exp()
    with LaunchCounter.expect(0):
        y.view(2, 2)  # a view launches nothing
    with LaunchCounter.expect(sum=1):  # per op only: the total is not checked
        y.sum()
        y.neg()
    assert LaunchCounter.n == before + 5


def test_expect_says_what_differs() -> None:
    x = torch.ones(4, device="cuda")
    with pytest.raises(AssertionError) as info, LaunchCounter.expect(1, add=2, neg=0):
        (x + 1).neg()
    assert str(info.value) == ("LaunchCounter.expect: expected 1 launches, got 2\n"
                               "  add: expected 2, got 1\n"
                               "  neg: expected 0, got 1\n"
                               "  launched: add 1, neg 1")


def test_expect_refuses_counts_that_are_not_counts() -> None:
    with pytest.raises(TypeError, match=r"n must be an int >= 0, got -1"):
        with LaunchCounter.expect(-1):
            pass
    with pytest.raises(TypeError, match=r"expect\(add=...\): a count must be an int >= 0"):
        with LaunchCounter.expect(add=1.5):  # type: ignore[arg-type]
            pass


def test_an_error_in_the_block_is_the_error_raised() -> None:
    with pytest.raises(ValueError, match="inside"), LaunchCounter.expect(5):
        raise ValueError("inside")
