"""The allocator's statistics fold their queued block events exactly as applying each event at
once would (fake_torch/_simulated/_allocator_stats.py): current, peak, allocated and freed per pool
type, and the peak of `all`, whatever the events and wherever the reads fall between them.

The oracle is the plain rule, one event at a time: a rise adds to current and allocated and may
raise the peaks; a fall takes from current and adds to freed."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fake_torch as torch
from fake_torch._simulated._allocator import DEVICE
from fake_torch._simulated._allocator_stats import EVENT_STATS, DeviceStats, Event


def apply_one_by_one(v: list[int], row: Event) -> None:
    k = row[0]
    for stat, change in zip(EVENT_STATS, row[1:], strict=True):
        i = stat + k
        if change > 0:
            v[i] += change
            v[i + 2] += change
            v[i + 1] = max(v[i + 1], v[i])
            v[stat + 8] = max(v[stat + 8], v[stat] + v[stat + 4])
        elif change < 0:
            v[i] += change
            v[i + 3] -= change


change = st.integers(-(2**40), 2**40)
row = st.tuples(st.sampled_from([0, 4]), change, change, change, change, change, change, change)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(row, max_size=100), min_size=1, max_size=6))
def test_folding_equals_applying_each_event(batches: list[list[Event]]) -> None:
    stats = DeviceStats()
    expected = [0] * len(stats.v)
    for batch in batches:  # a read (stats.v) after each batch folds what is queued
        for r in batch:
            stats.events.append(r)
            apply_one_by_one(expected, r)
        assert stats.v == expected
        assert stats.events == []


@pytest.mark.parametrize("n", [1, 47, 48, 1000])  # row by row below 48 rows, numpy from 48
def test_both_ways_of_folding_equal_applying_each_event(n: int) -> None:
    rng = random.Random(n)
    def change() -> int:
        return rng.randint(-(2**33), 2**33)

    rows: list[Event] = [(rng.choice([0, 4]), change(), change(), change(), change(), change(),
                          change(), change()) for _ in range(n)]
    stats = DeviceStats()
    expected = [0] * len(stats.v)
    for r in rows:
        apply_one_by_one(expected, r)
    stats.events.extend(rows)
    assert stats.v == expected


def test_a_peak_between_two_reads_is_kept() -> None:
    stats = DeviceStats()
    stats.events.extend([(0, 1, 1, 512, 512, 100, 0, 0), (0, 1, 1, 512, 512, 100, 0, 0),
                         (0, -1, -1, -512, -512, -100, 0, 0)])
    v = stats.v
    assert (v[0], v[1], v[2], v[3]) == (1, 2, 2, 1)  # allocation: current, peak, +, -
    assert v[8] == 2  # all pools' peak


def test_more_events_than_one_fold_holds_are_folded_in_on_the_way() -> None:
    torch.cuda.reset_peak_memory_stats()
    torch.cuda.reset_accumulated_memory_stats()
    a = torch.randn(64, device="cuda")
    before = torch.cuda.memory_allocated()
    for _ in range(5000):  # 10000 block events: folded at 4096 rows, then at the read
        a.add(1)  # (the sum dies at once)
    assert len(DEVICE.stats.events) < 4096
    stats = torch.cuda.memory_stats()
    assert torch.cuda.memory_allocated() == before
    assert stats["allocation.all.allocated"] == 1 + 5000  # a, then each sum
    assert stats["allocation.all.freed"] == 5000
    assert stats["allocated_bytes.all.peak"] == before + 512
