"""Results memoised per decoded Space: computed once, shared, dropped with the Space."""

from __future__ import annotations

import gc
import threading
import time

from tensorboard_plugin_profile.common import memo


class Owner:
    """Stands for a decoded Space (any weak-referenceable object)."""


def test_computed_once_for_concurrent_callers():
    owner, calls, results = Owner(), [], []

    def compute():
        calls.append(1)
        time.sleep(0.1)
        return "value"

    threads = [
        threading.Thread(target=lambda: results.append(memo.memoized([owner], "t", compute)))
        for _ in range(6)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == ["value"] * 6 and len(calls) == 1


def test_entry_leaves_with_any_of_its_owners():
    first, second = Owner(), Owner()
    memo.memoized([first, second], "pair", lambda: "combined")
    key = ("pair", id(first), id(second))
    assert key in memo._ENTRIES
    del second
    gc.collect()
    assert key not in memo._ENTRIES  # a reused id can never find this result


def test_a_failed_computation_is_not_kept():
    owner = Owner()

    def fail():
        raise ValueError("bad")

    try:
        memo.memoized([owner], "f", fail)
    except ValueError:
        pass
    assert memo.memoized([owner], "f", lambda: "ok") == "ok"
