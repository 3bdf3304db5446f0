"""The byte-budget LRU cache and its single-flight computation."""

from __future__ import annotations

import threading
import time

import pytest

from tensorboard_plugin_profile.cache import ByteBudgetCache


def test_concurrent_callers_share_one_computation():
    cache = ByteBudgetCache(1000)
    calls = []
    started = threading.Barrier(8)

    def compute():
        calls.append(1)
        time.sleep(0.2)
        return "value"

    results = []

    def worker():
        started.wait()
        results.append(cache.get_or_compute("k", compute, size_of=len))

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["value"] * 8
    assert len(calls) == 1
    assert cache.misses == 1


def test_errors_reach_every_waiter_and_are_not_cached():
    cache = ByteBudgetCache(1000)

    def fail():
        raise ValueError("bad")

    with pytest.raises(ValueError):
        cache.get_or_compute("k", fail, size_of=len)
    assert cache.get_or_compute("k", lambda: "ok", size_of=len) == "ok"


def test_least_recently_used_entries_leave_first_under_the_budget():
    cache = ByteBudgetCache(10)
    for key in "abc":
        cache.get_or_compute(key, lambda: "xxxx", size_of=len)
    assert len(cache) == 2 and cache.used_bytes == 8
    cache.get_or_compute("b", lambda: "new", size_of=len)  # hit: b becomes recent
    cache.get_or_compute("d", lambda: "yyyy", size_of=len)
    assert cache.get_or_compute("b", lambda: "recomputed", size_of=len) == "xxxx"
    assert cache.get_or_compute("c", lambda: "again", size_of=len) == "again"


def test_values_larger_than_the_budget_are_returned_but_not_kept():
    cache = ByteBudgetCache(3)
    assert cache.get_or_compute("k", lambda: "long value", size_of=len) == "long value"
    assert len(cache) == 0
