"""The flow table's sorts: the fast orders agree with numpy's stable sorts they replace."""

import numpy as np
import pytest

from tensorboard_plugin_profile.analysis.trace import trace_flows
from tensorboard_plugin_profile.kernels import passes


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
@pytest.mark.parametrize(
    "n,distinct", [(0, 1), (1, 1), (2, 1), (1000, 3), (5000, 2500), (4000, 10**6)]
)
def test_stable_order_is_numpys_stable_argsort(dtype, n, distinct):
    rng = np.random.default_rng(n + distinct)
    key = _keys(rng, n, distinct, dtype)
    np.testing.assert_array_equal(passes.stable_order(key), np.argsort(key, kind="stable"))


def test_stable_order_of_narrow_and_shifted_keys():
    """Keys within 32 bits of each other take one pass; both paths agree with numpy."""
    rng = np.random.default_rng(3)
    for base in (0, 10**15, -(10**15)):
        key = base + rng.integers(0, 1000, 3000)
        np.testing.assert_array_equal(
            passes.stable_order(key), np.argsort(key, kind="stable")
        )


@pytest.mark.parametrize("n,flows", [(2, 1), (1000, 500), (1000, 200), (3000, 40), (3000, 3000)])
def test_in_order_is_lexsort_of_flow_time_position(n, flows):
    """Flow ends by (flow key, time, position) as one lexsort: pairs, longer runs, equal
    times, one event with several stats of a flow (equal time and position), lone ends."""
    rng = np.random.default_rng(n * 7 + flows)
    keyed = _keys(rng, n, flows, np.uint64)
    begin = rng.integers(0, 5, n) * 10**12  # many equal times
    pos = rng.integers(0, n // 2 + 1, n)  # and positions
    got = passes.lex_order(keyed, (begin, pos))
    np.testing.assert_array_equal(got, np.lexsort((pos, begin, keyed)))


def _reference_ends_and_arrows(pos, values, hosts, begin) -> tuple:
    """The table's orders as build_flows made them with numpy's sorts (the twin)."""
    keyed = (hosts.astype(np.uint64) << np.uint64(56)) | (
        (values >> np.uint64(2)) & trace_flows._ID_MASK
    )
    order = np.lexsort((pos, begin, keyed))
    pos, keyed, begin = pos[order], keyed[order], begin[order]
    flow = np.cumsum(np.r_[False, keyed[1:] != keyed[:-1]])
    pair = np.flatnonzero((flow[1:] == flow[:-1]) & (pos[1:] != pos[:-1]))
    by_from = np.argsort(begin[pair], kind="stable")
    first, second = pair[by_from], pair[by_from] + 1
    to_order = np.argsort(begin[second], kind="stable")
    return pos, flow, pos[first], pos[second], begin[first], to_order


@pytest.mark.parametrize(
    "name", ["jax_cpu_train", "jax_two_hosts", "tf_keras2_fit", "tf_two_hosts"]
)
def test_flow_table_of_a_fixture_matches_numpys_sorts(name):
    """A real profile's flows (preprocessed, several planes): the table build_flows makes
    equals the one numpy's lexsort and stable argsorts give, and its levels list arrows
    whose second end's time is that arrow's."""
    from conftest import host_files

    from tensorboard_plugin_profile.tools import trace_viewer_at as at
    from tensorboard_plugin_profile.xspace import read_xspace

    hosts = [(f.name[: -len(".xplane.pb")], read_xspace(str(f))) for f in host_files(name)]
    index = at.trace_index_of(hosts)
    flows = index.flows
    assert len(flows) > 0
    pos, values, host, begin, _ = trace_flows._flow_stats(index, index.shown_rows)
    want = _reference_ends_and_arrows(pos, values, host, begin)
    got = (flows.end_pos, flows.end_flow, flows.arrow_from, flows.arrow_to, flows.from_ps,
           flows.to_order)  # fmt: skip
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    to_ps = np.asarray(index.begin_ps)[flows.arrow_to]
    for _, starting, from_ps, ending, ending_ps in flows.levels:
        np.testing.assert_array_equal(from_ps, flows.from_ps[starting])
        np.testing.assert_array_equal(ending_ps, to_ps[ending])


@pytest.mark.parametrize("ascending", [True, False])
def test_positions_of_ascending_and_unordered_events(ascending):
    """Each shown event number's position in ``source``, repeated numbers included, on the
    path for ascending numbers (no binary search) and on the general one."""
    rng = np.random.default_rng(11)
    source = rng.permutation(5000).astype(np.int32)
    events = np.sort(rng.choice(5000, 800)).astype(np.int64)  # repeats: several stats
    if not ascending:
        events = rng.permutation(events)
    inverse = np.argsort(source)
    np.testing.assert_array_equal(trace_flows._positions_of(source, events), inverse[events])


def test_build_flows_holds_little_beside_the_table(monkeypatch):
    """The flow table's transients, traced (no timing): one plane's stats are used as they
    are (not concatenated beside themselves), arrays read no more are freed before the
    sort, and the compiled sort's buffers are numpy scratch. jax_cpu_train's 4,038 flow
    ends: 126 bytes an end at the peak; the code before took 151."""
    import tracemalloc

    from conftest import host_files

    from tensorboard_plugin_profile.kernels import compiled
    from tensorboard_plugin_profile.tools import trace_viewer_at as at
    from tensorboard_plugin_profile.xspace import read_xspace

    if not compiled.use_compiled(passes._passes):
        pytest.skip("the bound is the compiled sort's")
    files = host_files("jax_cpu_train")
    hosts = [(f.name[: -len(".xplane.pb")], read_xspace(str(f))) for f in files]
    build = trace_flows.build_flows
    seen = {}

    def traced(index, rows):
        tracemalloc.start()
        try:
            base = tracemalloc.get_traced_memory()[0]
            table = build(index, rows)
            seen["peak"] = tracemalloc.get_traced_memory()[1] - base
        finally:
            tracemalloc.stop()
        seen["ends"] = len(table.end_pos)
        return table

    monkeypatch.setattr(trace_flows, "build_flows", traced)
    at.trace_index_of(hosts)
    assert seen["ends"] > 4000
    assert seen["peak"] / seen["ends"] < 138, seen
