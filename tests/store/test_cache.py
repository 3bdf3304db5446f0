"""The byte-budget LRU cache and its single-flight computation."""

from __future__ import annotations

import threading
import time

import pytest

from tensorboard_plugin_profile.common.errors import Overloaded
from tensorboard_plugin_profile.store.cache import ByteBudgetCache


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


def test_a_value_larger_than_the_budget_is_kept_alone():
    # Dropping it would make every later request rebuild it (a profile over budget).
    cache = ByteBudgetCache(3)
    cache.get_or_compute("small", lambda: "ab", size_of=len)
    assert cache.get_or_compute("k", lambda: "long value", size_of=len) == "long value"
    assert len(cache) == 1 and cache.get("k") == "long value" and cache.get("small") is None


def test_a_reservation_waits_for_room_then_is_admitted():
    cache = ByteBudgetCache(100, admission_timeout_s=10)
    order = []
    first_in = threading.Event()

    def first():
        with cache.reservation(60):
            first_in.set()
            time.sleep(0.3)
            order.append("first done")

    thread = threading.Thread(target=first)
    thread.start()
    first_in.wait()
    with cache.reservation(60):  # 60 + 60 > 100: waits for the first to finish
        order.append("second in")
        assert cache.reserved_bytes == 60
    thread.join()
    assert order == ["first done", "second in"]
    assert cache.peak_bytes <= 100


def test_a_reservation_that_cannot_fit_in_time_is_refused_with_a_clear_error():
    cache = ByteBudgetCache(100, admission_timeout_s=0.2)
    with cache.reservation(80):
        with pytest.raises(Overloaded) as error:
            with cache.reservation(50):
                pass
    assert error.value.http_status == 503
    assert "memory budget" in error.value.message and "--cache_bytes" in error.value.message
    assert cache.reserved_bytes == 0


def test_a_reservation_larger_than_the_budget_is_admitted_when_alone():
    cache = ByteBudgetCache(100, admission_timeout_s=0.2)
    cache.get_or_compute("old", lambda: "x" * 50, size_of=len)
    with cache.reservation(500):
        assert cache.get("old") is None  # stored entries make room first
    assert cache.reserved_bytes == 0


def test_stored_entries_are_evicted_to_admit_a_reservation():
    cache = ByteBudgetCache(100)
    for key in "abc":
        cache.get_or_compute(key, lambda: "x" * 30, size_of=len)
    with cache.reservation(50):
        assert cache.used_bytes + cache.reserved_bytes <= 100
        assert cache.get("c") is not None and cache.get("a") is None


def test_recharge_updates_the_charge_and_evicts_others():
    cache = ByteBudgetCache(100)
    cache.get_or_compute("a", lambda: "x" * 30, size_of=len)
    cache.get_or_compute("b", lambda: "y" * 30, size_of=len)
    cache.recharge("b", 90)
    assert cache.used_bytes == 90 and cache.get("a") is None and cache.get("b") == "y" * 30


def test_a_caller_waiting_for_memory_does_not_block_the_key_it_needs():
    # A holds a reservation and needs key k; B wants k too but waits for memory first.
    cache = ByteBudgetCache(100, admission_timeout_s=5)
    got = []
    with cache.reservation(90):
        waiter = threading.Thread(
            target=lambda: got.append(
                cache.get_or_compute("k", lambda: "from B", size_of=len, reserve=50)
            )
        )
        waiter.start()
        time.sleep(0.1)
        assert cache.get_or_compute("k", lambda: "from A", size_of=len) == "from A"
    waiter.join()
    assert got == ["from A"]


def test_waiting_callers_are_admitted_in_arrival_order_while_the_queue_moves():
    cache = ByteBudgetCache(100, admission_timeout_s=0.5)
    admitted = []
    holder_release = threading.Event()

    def holder():
        with cache.reservation(100):
            holder_release.wait()

    def waiter(name, delay):
        time.sleep(delay)
        with cache.reservation(60):
            admitted.append(name)
            time.sleep(0.3)  # each holds the budget for a while: the queue still moves

    threads = [threading.Thread(target=holder)]
    threads += [
        threading.Thread(target=waiter, args=(n, 0.05 * (i + 1))) for i, n in enumerate("abc")
    ]
    for t in threads:
        t.start()
    time.sleep(0.3)
    holder_release.set()
    for t in threads:
        t.join()
    # c waited longer than the 0.5 s timeout in total, but never 0.5 s without progress.
    assert admitted == ["a", "b", "c"]


class _Profile:
    """A stored value with derived data that can be dropped (like a Space and its memos)."""

    def __init__(self, own: int, derived: int):
        self.own, self.derived = own, derived

    def size(self) -> int:
        return self.own + self.derived

    def shed(self) -> int:
        self.derived = 0
        return self.own


def _store(cache: ByteBudgetCache, key: str, profile: _Profile) -> None:
    cache.get_or_compute(key, lambda: profile, size_of=_Profile.size, shed=_Profile.shed)


def test_derived_data_goes_before_any_whole_value_least_recently_used_first():
    cache = ByteBudgetCache(100)
    old, recent = _Profile(30, 20), _Profile(30, 20)
    _store(cache, "old", old)
    _store(cache, "recent", recent)
    cache.get_or_compute("result", lambda: "x" * 10, size_of=len)  # 110: 10 over
    assert (old.derived, recent.derived) == (0, 20)  # the oldest's derived data only
    assert len(cache) == 3 and cache.used_bytes == 90 and cache.evictions == 0
    cache.get_or_compute("big", lambda: "x" * 45, size_of=len)  # 135: 35 over
    assert recent.derived == 0 and cache.get("old") is None  # then whole values, oldest first
    assert cache.get("recent") is recent and cache.used_bytes == 85


def test_a_pinned_value_is_neither_shed_nor_evicted_until_its_request_ends():
    cache = ByteBudgetCache(100)
    profile = _Profile(60, 30)
    with cache.pinned(["profile"]):
        _store(cache, "profile", profile)
        cache.get_or_compute("result", lambda: "x" * 40, size_of=len)
        assert cache.get("profile") is profile and profile.derived == 30
        assert cache.used_bytes == 130  # over the budget by what the request reads
    cache.get_or_compute("next", lambda: "x" * 5, size_of=len)
    assert profile.derived == 0 and cache.get("profile") is profile  # derived data first
    assert cache.used_bytes <= 100
