"""The flow table's sorts: the fast orders agree with numpy's stable sorts they replace."""

import numpy as np
import pytest

from tensorboard_plugin_profile.analysis.trace import trace_flows


def _keys(rng, n: int, distinct: int, dtype) -> np.ndarray:
    if np.dtype(dtype).kind == "u":
        pool = rng.integers(0, 2**63, distinct, dtype=np.uint64) * np.uint64(2)
        pool[0] = np.uint64(2**64 - 1)
    else:
        pool = rng.integers(-(2**62), 2**62, distinct, dtype=np.int64)
        pool[0] = np.iinfo(np.int64).min
        pool[-1] = np.iinfo(np.int64).max if distinct > 1 else pool[-1]
    return rng.choice(pool, n).astype(dtype)


@pytest.mark.parametrize("dtype", [np.uint64, np.int64, np.int32])
@pytest.mark.parametrize("n,distinct", [(0, 1), (1, 1), (2, 1), (1000, 3), (5000, 2500), (4000, 10**6)])
def test_stable_order_is_numpys_stable_argsort(dtype, n, distinct):
    rng = np.random.default_rng(n + distinct)
    key = _keys(rng, n, distinct, dtype)
    np.testing.assert_array_equal(
        trace_flows._stable_order(key), np.argsort(key, kind="stable")
    )


def test_stable_order_of_narrow_and_shifted_keys():
    """Keys within 32 bits of each other take one pass; both paths agree with numpy."""
    rng = np.random.default_rng(3)
    for base in (0, 10**15, -(10**15)):
        key = base + rng.integers(0, 1000, 3000)
        np.testing.assert_array_equal(
            trace_flows._stable_order(key), np.argsort(key, kind="stable")
        )


@pytest.mark.parametrize("n,flows", [(2, 1), (1000, 500), (1000, 200), (3000, 40), (3000, 3000)])
def test_in_order_is_lexsort_of_flow_time_position(n, flows):
    """Flow ends by (flow key, time, position) as one lexsort: pairs, longer runs, equal
    times, one event with several stats of a flow (equal time and position), lone ends."""
    rng = np.random.default_rng(n * 7 + flows)
    keyed = _keys(rng, n, flows, np.uint64)
    begin = rng.integers(0, 5, n) * 10**12  # many equal times
    pos = rng.integers(0, n // 2 + 1, n)  # and positions
    got = trace_flows._in_order(keyed, (begin, pos))
    np.testing.assert_array_equal(got, np.lexsort((pos, begin, keyed)))
