"""The vectorised step grouping gives exactly what the per-node graph walk gave.

``grouping_reference.py`` is the previous implementation (a node graph walked in
Python), kept here only as an oracle. Both run on every fixture and on random
spaces built to hit the awkward rules: partly overlapping and out-of-order events,
async events, interleaved lines, contexts over the fan-out cap, self links, loops,
nested roots of one level and ops under both kinds of ``EagerExecute``.

The whole preprocess output of each fixture is also pinned by a digest computed
with the previous implementation (tables, stat names, group names and relations).
"""

from __future__ import annotations

import dataclasses
import hashlib
import random

import numpy as np
import pandas as pd
import pytest
from conftest import all_host_files

from tensorboard_plugin_profile.preprocessing import grouping
from tensorboard_plugin_profile.preprocessing import preprocess as preprocess_module
from tensorboard_plugin_profile.xspace import read_xspace, schema
from tensorboard_plugin_profile.xspace.event_stats import stats_in_order, typed_column

from . import grouping_reference
from .test_preprocess import U64, make_space

# Digests of preprocess(read_xspace(file)) computed with the per-node implementation.
EXPECTED_DIGESTS = {
    "gpu_multi_worker/34.83.195.179_6003.xplane.pb": "6dfabfa5982f03a3",
    "gpu_multi_worker/34.83.195.180_6003.xplane.pb": "6dfabfa5982f03a3",
    "jax_cpu_train/vm.xplane.pb": "a024805b0beeaf6d",
    "jax_remote_capture/127.0.0.1_19101.xplane.pb": "819a0b858eb68604",
    "jax_two_hosts/127.0.0.1_19111.xplane.pb": "0aec0c5bf0de79a3",
    "jax_two_hosts/127.0.0.1_19112.xplane.pb": "9b0d2d3f14fcf7f0",
    "tf_idle_capture/127.0.0.1_19104.xplane.pb": "8bd94c79850bfbcf",
    "tf_keras2_fit/vm.xplane.pb": "981e09cb3b8eebc3",
    "tf_keras_fit/vm.xplane.pb": "5541ea4037f0dbb1",
    "tf_memory/vm.xplane.pb": "8effb645cad83262",
    "tf_remote_capture/127.0.0.1_19103.xplane.pb": "e85722df6de82ff0",
    "tf_two_hosts/127.0.0.1_19113.xplane.pb": "f9d84e88b6ac6223",
    "tf_two_hosts/127.0.0.1_19114.xplane.pb": "7f6429c81216df34",
}


def _stage(space):
    """The space as grouping sees it: after the TraceMe 2.0 mutators."""
    return dataclasses.replace(space, planes=[preprocess_module._mutated(p) for p in space.planes])


def assert_same_grouping(space) -> None:
    old = grouping_reference.group_events(space)
    new = grouping.group_events(space)
    for p in range(len(space.planes)):
        np.testing.assert_array_equal(new.group_ids[p], old.group_ids[p])
        assert new.step_names[p] == old.step_names[p]
        rows, flags = new.is_eager[p]
        assert dict(zip(rows.tolist(), flags.tolist())) == old.is_eager[p]
    assert new.group_names == old.group_names
    assert new.group_parents == old.group_parents
    assert new.group_children == old.group_children


@pytest.mark.parametrize("path", all_host_files(), ids=lambda p: f"{p.parts[-5]}/{p.name}")
def test_fixture_grouping_matches_reference(path):
    assert_same_grouping(_stage(read_xspace(str(path))))


@pytest.mark.parametrize("path", all_host_files(), ids=lambda p: f"{p.parts[-5]}/{p.name}")
def test_fixture_preprocess_output_unchanged(path):
    key = f"{path.parts[-5]}/{path.name}"
    space = preprocess_module.preprocess(read_xspace(str(path)))
    assert space_digest(space) == EXPECTED_DIGESTS[key]


# --- random spaces ----------------------------------------------------------------------
_NAMES = (
    "train",
    "TraceContext",
    "EagerExecute",
    "ExecutorState::Process",
    "IteratorGetNextOp::DoCompute",
    "FunctionRun",
    "InstantiatedCapturedFunction::Run",
    "dense/MatMul:MatMul",
    "TfOpRun",
    "KernelLaunch",
    "work",
)


def _random_stats(rng: random.Random, name: str, device: bool, dense: bool) -> dict:
    """Stats of one event; ``dense`` makes links and step numbers common (many parents)."""
    stats: dict = {}
    boost = 2.5 if dense else 1.0

    def pick():
        return rng.random() / boost

    if name in ("train", "TraceContext", "work") and pick() < 0.6:
        stats["_r"] = rng.choice((1, 1, 2, 0))
    if pick() < 0.25:
        stats["_pt"], stats["_p"] = rng.choice((1, 2)), rng.randrange(4)
    if pick() < 0.3:
        stats["_ct"], stats["_c"] = rng.choice((1, 2)), rng.randrange(4)
    if pick() < 0.1:
        stats["_pid"] = rng.randrange(2)
    if pick() < 0.08:
        stats["_a"] = rng.choice((0, 1))
    if name in ("ExecutorState::Process", "IteratorGetNextOp::DoCompute") or pick() < 0.1:
        stats["id"] = rng.randrange(3)
        if pick() < 0.8:
            stats["iter_num"] = rng.randrange(3)
    if name == "InstantiatedCapturedFunction::Run" and pick() < 0.5:
        stats["id"] = rng.randrange(3)
    if pick() < 0.2:
        stats["step_num"] = rng.randrange(100)
    if name in ("KernelLaunch", "work") and pick() < 0.4:
        stats["correlation_id"] = U64(rng.randrange(6))
    if name == "EagerExecute" and rng.random() < 0.8:
        stats["is_func"] = rng.choice((0, 1))
    if pick() < 0.05:
        stats["graph_type"] = rng.choice(("eval", "train"))
    if device and pick() < 0.5:
        stats["correlation_id"] = U64(rng.randrange(6))
    return stats


def _random_line(rng: random.Random, device: bool, loops: bool, dense: bool) -> list:
    events, t = [], 0
    names = _NAMES if loops else tuple(n for n in _NAMES if n != "ExecutorState::Process")
    for _ in range(rng.randrange(1, 25)):
        t += rng.randrange(0, 6)
        dur = rng.randrange(0, 30)
        name = rng.choice(names)
        events.append((name, t, dur, _random_stats(rng, name, device, dense)))
    if rng.random() < 0.2:
        rng.shuffle(events)  # a line whose begins go backwards: the stack replay path
    return events


def random_space(seed: int):
    rng = random.Random(seed)
    loops, dense = rng.random() < 0.3, seed % 2 == 1
    host = [(k, f"t{k}", _random_line(rng, False, loops, dense)) for k in range(3)]
    planes = [(0, "/host:CPU", host)]
    if rng.random() < 0.5:
        planes.append((1, "/device:GPU:0", [(7, "s", _random_line(rng, True, loops, dense))]))
    space = make_space(planes)
    if rng.random() < 0.5:
        space.planes[0].plane_stats["process_id"] = 1
    return space


@pytest.mark.parametrize("seed", range(300))
def test_random_spaces_group_like_reference(seed):
    assert_same_grouping(random_space(seed))


def test_context_fanout_cap_and_self_links():
    producer = {"_pt": 1, "_p": 9}
    consumer = {"_ct": 1, "_c": 9}
    both = [("train", 0, 10, {"_r": 1, **producer, **consumer})]
    many = [("work", 20 + 2 * i, 1, dict(producer)) for i in range(64)]
    many += [("work", 200 + 2 * i, 1, dict(consumer)) for i in range(64)]
    few = [("TraceContext", 500, 10, {"_pt": 1, "_p": 3})]
    few += [("work", 600 + i, 1, {"_ct": 1, "_c": 3}) for i in range(70)]
    space = make_space([(0, "/host:CPU", [(1, "a", both), (2, "b", many), (3, "c", few)])])
    assert_same_grouping(space)


# --- digest of a preprocessed space -------------------------------------------------------
def _column_bytes(col: pd.Series) -> bytes:
    if isinstance(col.dtype, pd.CategoricalDtype):
        col = col.astype(object)
    mask = col.isna().to_numpy()
    dtype = str(col.dtype)
    if getattr(col.dtype, "kind", "O") in "iub" or dtype.startswith(("Int", "UInt")):
        unsigned = dtype.startswith(("UInt", "uint"))
        values = col.to_numpy(dtype=np.uint64 if unsigned else np.int64, na_value=0)
        return b"i" + values.tobytes() + mask.tobytes()
    if getattr(col.dtype, "kind", "O") == "f":
        return b"f" + col.to_numpy(dtype=np.float64, na_value=0.0).tobytes() + mask.tobytes()
    text = "\x1f".join(repr(None if m else v) for v, m in zip(col.tolist(), mask))
    return b"o" + text.encode()


def _table_digest(table: pd.DataFrame) -> str:
    h = hashlib.sha1()
    for name in sorted(table.columns):
        h.update(name.encode() + b"\x00" + _column_bytes(table[name].reset_index(drop=True)))
    return h.hexdigest()[:12]


def space_digest(space) -> str:
    """Values (not dtypes) of every table, stat names, group names and relations. The
    stats are every event's as listed (``group_id`` in place, wherever it is kept), and the
    events carry the columns of the stats kept only as rows (``schema.ROW_STATS``): the
    digests recorded when both were stored the other way still hold."""
    h = hashlib.sha1()
    for plane in space.planes:
        events = plane.events.assign(**{n: typed_column(plane, n) for n in schema.ROW_STATS})
        for table in (plane.lines, events, stats_in_order(plane), plane.event_metadata):
            h.update(_table_digest(table).encode())
        # Ids given to new stat names are arbitrary; the names are not.
        h.update(repr(sorted(plane.stat_names.values())).encode())
    h.update(repr(sorted(space.group_names.items())).encode())
    h.update(repr(sorted(space.group_children.items())).encode())
    return h.hexdigest()[:16]


def test_ancestor_search_order_intra_thread_before_launch():
    """Two EagerExecute two levels up: the one over the kernel's own thread comes first."""
    device = [
        ("EagerExecute", 0, 100, {"is_func": 1}),
        ("wrapper", 10, 50, {}),
        ("kernel", 20, 10, {"correlation_id": U64(5)}),
    ]
    host = [
        ("train", 0, 200, {"_r": 1, "step_num": 7}),
        ("EagerExecute", 0, 100, {"is_func": 0}),
        ("KernelLaunch", 5, 2, {"correlation_id": U64(5)}),
    ]
    space = make_space(
        [(0, "/host:CPU", [(1, "h", host)]), (1, "/device:GPU:0", [(2, "s", device)])]
    )
    assert_same_grouping(space)
    rows, flags = grouping.group_events(space).is_eager[1]
    assert dict(zip(rows.tolist(), flags.tolist())) == {2: 0}


@pytest.mark.parametrize("seed", range(0, 300, 3))
def test_random_spaces_group_like_reference_without_the_extension(seed, monkeypatch):
    # The numpy fallbacks of the compiled graph passes make the same groups.
    monkeypatch.setenv("TBPROF_PURE_PYTHON", "1")
    assert_same_grouping(random_space(seed))
