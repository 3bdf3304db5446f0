"""The block pool: numpy buffers reused inside a conversion, same results, no growth."""

from __future__ import annotations

import ctypes
import mmap
import threading

import numpy as np
import pytest
from conftest import FIXTURES
from hypothesis import given, settings
from hypothesis import strategies as st

from tensorboard_plugin_profile.common import memsize
from tensorboard_plugin_profile.kernels import blockpool
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.cache_config import CacheConfig

pytestmark = pytest.mark.skipif(
    not blockpool.available(), reason="the pool is off: not Linux, not built or switched off"
)

try:
    from numpy._core.multiarray import get_handler_name
except ImportError:  # numpy 1.x
    from numpy.core.multiarray import get_handler_name

MIB = 1 << 20


def _resident_bytes(array: np.ndarray) -> int:
    """Resident bytes of the whole pages inside the array's buffer (mincore)."""
    start = array.__array_interface__["data"][0]
    first = -(-start // mmap.PAGESIZE) * mmap.PAGESIZE
    pages = (start + array.nbytes - first) // mmap.PAGESIZE
    inner = np.frombuffer((ctypes.c_char * (pages * mmap.PAGESIZE)).from_address(first), np.uint8)
    return memsize._resident_bytes(inner)


@pytest.fixture
def small_blocks():
    """Pools buffers from one page up, so fixture-sized arrays go through the pool."""
    blockpool.configure(min_block=4096)
    yield
    blockpool.configure()


def test_the_handler_is_ours_only_inside_and_arrays_outlive_the_block():
    before = get_handler_name()
    with blockpool.reusing():
        assert get_handler_name() == "tbprof_blockpool"
        kept = np.arange(4 * MIB // 8)
        assert get_handler_name(kept) == "tbprof_blockpool"
    assert get_handler_name() == before
    assert get_handler_name(np.empty(4 * MIB)) == before
    assert kept[-1] == 4 * MIB // 8 - 1 and blockpool.stats()["kept"] == 0
    del kept  # freed outside: unmapped, not kept


def test_a_freed_buffer_is_reused_and_the_pool_is_empty_after():
    with blockpool.reusing():
        first = np.full(2 * MIB, 7, dtype=np.int64)
        address = first.__array_interface__["data"][0]
        del first
        start = blockpool.stats()
        second = np.empty(2 * MIB, dtype=np.int64)
        assert blockpool.stats()["reused"] == start["reused"] + 1
        assert second.__array_interface__["data"][0] == address
        second[:] = 3
        assert int(second.sum()) == 3 * 2 * MIB
    assert blockpool.stats()["kept_bytes"] == 0


def test_kept_blocks_are_stitched_into_one_larger_buffer():
    with blockpool.reusing():
        parts = [np.full(MIB, i, dtype=np.int64) for i in range(3)]
        del parts
        start = blockpool.stats()
        whole = np.empty(3 * MIB, dtype=np.int64)
        assert blockpool.stats()["reused_bytes"] - start["reused_bytes"] >= 3 * 8 * MIB
        assert blockpool.stats()["fresh_bytes"] - start["fresh_bytes"] < 8 * MIB
        whole[:] = np.arange(3 * MIB)
        assert int(whole[-1]) == 3 * MIB - 1 and int(whole[MIB]) == MIB


def test_zeroed_buffers_are_zero_and_their_untouched_pages_stay_unmapped():
    with blockpool.reusing():
        junk = np.full(8 * MIB, 0xFF, dtype=np.uint8)
        del junk
        zeros = np.zeros(8 * MIB, dtype=np.uint8)
        zeros[123] = 1
        resident = _resident_bytes(zeros)  # before reading (reads may map pages)
        assert int(zeros.sum()) == 1
    assert resident < MIB  # one written page, not 8 MiB of reused memory


def test_resizing_keeps_the_data_across_small_and_large_buffers(small_blocks):
    with blockpool.reusing():
        values = np.arange(100, dtype=np.int64)
        values.resize(2 * MIB, refcheck=False)  # small -> pooled
        assert int(values[99]) == 99 and int(values[-1]) == 0
        values.resize(3 * MIB, refcheck=False)  # pooled -> larger pooled
        assert int(values[99]) == 99 and values.shape == (3 * MIB,)
        values.resize(10, refcheck=False)  # pooled -> small
        assert values.tolist() == list(range(10))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3 * MIB), st.booleans(), st.booleans()), max_size=30))
def test_any_allocation_pattern_keeps_every_live_buffer_intact(steps):
    """Allocations and frees in any order: each live array still holds what was written."""
    blockpool.configure(keep_limit=16 * MIB, min_block=4096)
    try:
        with blockpool.reusing():
            live: list[tuple[np.ndarray, int]] = []
            for i, (size, zeroed, free_one) in enumerate(steps):
                array = np.zeros(size, np.uint8) if zeroed else np.empty(size, np.uint8)
                if zeroed:
                    assert not array.any()
                array[:] = i % 251
                live.append((array, i % 251))
                if free_one and len(live) > 1:
                    live.pop(len(live) // 2)
                for kept, value in live:
                    assert kept[0] == value and kept[-1] == value
            assert all(bool((a == v).all()) for a, v in live)
    finally:
        blockpool.configure()


def test_threads_share_the_pool_safely():
    errors: list[str] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        with blockpool.reusing():
            live = []
            for _ in range(60):
                n = int(rng.integers(MIB // 8, 3 * MIB // 8))
                array = np.empty(n, dtype=np.int64)
                array[:] = seed
                live.append(array)
                if len(live) > 3:
                    gone = live.pop(0)
                    if not (gone == seed).all():
                        errors.append(f"thread {seed}: a live buffer changed")

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert blockpool.stats()["kept_bytes"] == 0


@pytest.mark.parametrize("tool", ["overview_page", "input_pipeline_analyzer", "trace_viewer@"])
def test_conversions_give_the_same_bytes_with_and_without_the_pool(tool, small_blocks, monkeypatch):
    def answer() -> bytes:
        service = ProfileService(str(FIXTURES / "jax_cpu_train"), config=CacheConfig(disk_dir=None))
        result = service.tool_data(service.runs()[0], tool, params={"format": "columnar"})
        return b"".join(result.chunks())

    reused = blockpool.stats()["reused"]
    pooled = answer()
    assert blockpool.stats()["reused"] > reused  # the pool was really used
    monkeypatch.setenv("TBPROF_NO_BLOCKPOOL", "1")
    assert not blockpool.available()
    assert answer() == pooled


def test_a_kept_block_that_allocations_pass_by_is_unmapped(small_blocks):
    """A large freed block that later allocations do not take (smaller blocks serve them)
    is unmapped after ``max_age`` of them, so it does not sit beside the peak."""
    page = mmap.PAGESIZE
    for max_age, big_stays in ((4, False), (0, True)):
        blockpool.configure(min_block=4096, max_age=max_age)
        with blockpool.reusing():
            big = np.empty(100 * page, np.uint8)
            del big  # kept
            for _ in range(8):  # each served by the small block freed just before
                small = np.empty(2 * page, np.uint8)
                small[:] = 1
                del small
            kept = blockpool.stats()["kept_bytes"]
        assert (kept > 50 * page) == big_stays, (max_age, kept)
