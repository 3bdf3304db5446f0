"""tf_data_bottleneck_analysis against the legacy converter's output, and by hand."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, fixture_names, load_reference

from tensorboard_plugin_profile.common.errors import NotApplicable
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.tools import tf_data_bottleneck_analysis as tool

from .compare_tables import fixture_hosts, table_differences
from .synthetic_events import HostPlane, Uint

GRAPH, SUMMARY, BOTTLENECK, ITERATOR_GRAPH = range(4)


def _values(table: dict) -> list:
    return [[c.get("v") for c in row["c"]] for row in table["rows"]]


def _formatted(table: dict) -> list:
    return [[c.get("f") for c in row["c"]] for row in table["rows"]]


@pytest.mark.parametrize("name", fixture_names())
def test_legacy_ids_reproduce_the_reference(name):
    """Reading ids as the 2.15 converter did, every value and HTML card is its output."""
    ref = load_reference(name, "tf_data_bottleneck_analysis.json")
    ours = tool.tf_data_tables(list(fixture_hosts(name)), legacy_ids=True)
    if name == "gpu_multi_worker":
        _expect_slow_calls_over_all_calls(ours, ref)
    for i in (GRAPH, SUMMARY, BOTTLENECK):
        assert list(ours[i]) == list(ref[i])  # cols, rows[, p] in gviz_api's order
        assert not table_differences(ours[i], ref[i], f"table {i}")
        assert _values(ours[i]) == _values(ref[i])  # integers stay integers
        assert _formatted(ours[i]) == _formatted(ref[i])


def _expect_slow_calls_over_all_calls(ours, ref):
    # Its two hosts share one hostname; upstream counts slow calls of the last file only
    # (1 of 2 calls); we count them over every call (docs/differences.md).
    assert [r[-1] for r in _values(ref[SUMMARY])] == [1, 1]
    assert [r[-1] for r in _values(ours[SUMMARY])] == [2, 2]
    for row in ref[SUMMARY]["rows"]:
        row["c"][-1]["v"] = 2


@pytest.mark.parametrize("name", ["tf_keras_fit", "tf_keras2_fit"])
def test_uint64_ids_are_read_whole(name):
    """By default ids written as uint64 keep their value: Prefetch and TensorSlice no
    longer collide at id 0, so the graph differs while the verdict is the same."""
    ref = load_reference(name, "tf_data_bottleneck_analysis.json")
    ours = tool.tf_data_tables(list(fixture_hosts(name)))
    for i in (SUMMARY, BOTTLENECK):
        assert _values(ours[i]) == _values(ref[i])
    merged = [r for r in _values(ref[GRAPH]) if r[2] == 0]
    assert len(merged) == 3 and merged[0][3] == "0"  # Prefetch and TensorSlice as one
    rank0 = {r[5]: r for r in _values(ours[ITERATOR_GRAPH]) if r[2] == 0}
    assert sorted(rank0) == ["MapAndBatch", "Prefetch", "Root", "TensorSlice"]
    assert rank0["Prefetch"][10] == 1  # one call, not 1 + 32 TensorSlice calls
    assert rank0["TensorSlice"][10] > 1
    assert rank0["MapAndBatch"][4] == rank0["Prefetch"][3]  # reached from Prefetch
    assert rank0["MapAndBatch"][13] and not rank0["TensorSlice"][13]


@pytest.mark.parametrize("name", ["jax_cpu_train", "tf_memory", "tf_idle_capture"])
def test_no_tf_data_says_why(name):
    ours = tool.tf_data_tables(list(fixture_hosts(name)))
    ref = load_reference(name, "tf_data_bottleneck_analysis.json")
    assert ours[:3] == ref
    with pytest.raises(NotApplicable, match="no tf.data iterator events"):
        tool.convert(list(fixture_hosts(name)), {})


def synthetic_pipeline():
    """Root → Prefetch → (async) Map → TFRecord, called twice.

    Call 1 (0–100 us) waits on the Map call that made its element (11–84 us), which
    reads two records (20–30, 40–50). Call 2 (200–220 us) gets an element made earlier
    (121–189 us): that Map call does not overlap, so it is not on the critical path.
    """
    plane = HostPlane("worker-0")
    main, background = plane.line(1, "python"), plane.line(2, "tf_data_private_threadpool")
    record = Uint(2**63 + 4)  # an id TensorFlow writes as uint64
    for start, element in ((0, 7), (200, 8)):
        length = 100 if start == 0 else 20
        plane.event(main, "Iterator::Root", start, length, id=1)
        plane.event(main, "Iterator::Root::Prefetch", start + 2, length - 4, id=2, parent_id=1)
        plane.event(main, "PrefetchConsume", start + length - 8, 1, element_id=element)
    for start, end, element, reads in ((10, 85, 7, (20, 40)), (120, 190, 8, (130,))):
        plane.event(background, "PrefetchProduce", start, end - start, element_id=element)
        plane.event(background, "Iterator::Root::Prefetch::Map", start + 1, end - start - 2,
                    id=3, parent_id=2)  # fmt: skip
        for read in reads:
            name = "Iterator::Root::Prefetch::Map::TFRecord"
            plane.event(background, name, read, 20 if len(reads) == 1 else 10, id=record,
                        parent_id=3)  # fmt: skip
    return plane.decode()


def test_synthetic_pipeline_by_hand():
    graph, summary, bottleneck, tree = tool.convert([("w0", synthetic_pipeline())], {})
    assert _values(summary) == [["worker-0", "Host:0", 20, 60, 100, 2, 1]]
    row = _values(bottleneck)[0]
    assert row[:3] == ["worker-0", "Host:0", 100]
    assert row[3] == (
        "<u>Iterator Type</u>: <b>Map</b><br/><u>Long Name</u>: "
        "Iterator::Root::Prefetch::Map<br/><u>Latency</u>: 53 us"
    )
    assert "num_parallel_calls=tf.data.experimental.AUTOTUNE" in row[4]
    assert bottleneck["p"]["is_input_bound"] == "true"
    record = str(2**63 + 4 - 2**64)
    by_rank = {}
    for r in _values(tree):
        by_rank.setdefault(r[2], {})[r[5]] = r
    # rank, id, from, name, _, start, total, self, calls, async, blocking, bottleneck
    call1 = {name: [r[3], r[4], r[7], r[8], r[9], r[10], r[11], r[12], r[13]]
             for name, r in by_rank[0].items()}  # fmt: skip
    assert call1 == {
        "Root": ["1", "", 0.0, 100.0, 4.0, 1, False, True, False],
        "Prefetch": ["2", "1", 2.0, 96.0, 23.0, 1, True, True, False],
        "Map": ["3", "2", 11.0, 73.0, 53.0, 1, False, True, True],
        "TFRecord": [record, "3", 20.0, 20.0, 20.0, 2, False, True, False],
    }
    call2 = {name: (r[9], r[12], r[13]) for name, r in by_rank[1].items()}
    # Prefetch's element was ready: it waits on nothing it overlaps and is the bottleneck.
    assert call2 == {
        "Root": (4.0, True, False),
        "Prefetch": (16.0, True, True),
        "Map": (48.0, False, False),
        "TFRecord": (20.0, False, False),
    }
    types = {(r[2], r[3]): r[5] for r in _values(graph)}
    assert types[(0, "3")] == 2 and types[(1, "2")] == 2 and types[(1, "3")] == 0


def test_legacy_ids_collide_uint64_ids_at_zero():
    _, _, _, tree = tool.tf_data_tables([("w0", synthetic_pipeline())], legacy_ids=True)
    ids = {r[5]: r[3] for r in _values(tree) if r[2] == 0}
    assert ids["TFRecord"] == "0" and ids["Map"] == "3"


def test_csv_through_the_service():
    service = ProfileService(str(FIXTURES / "tf_keras2_fit"))
    run = service.runs()[0]
    _, text = service.tool_csv(run, "tf_data_bottleneck_analysis", params={"table": "1"})
    assert text.splitlines() == [
        '"Host","Input Pipeline","Min (us)","Avg (us)","Max (us)","# calls","# slow calls"',
        '"vm","Host:0","67667","78904","90535","6","6"',
    ]
