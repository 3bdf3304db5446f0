"""tfprof's options of the tree views, on the real fixtures, through the tools and over HTTP."""

from __future__ import annotations

import json
import re
import time

import pytest
from conftest import FIXTURES
from tbprof_cli import tbprof_convert
from werkzeug.test import Client

from tensorboard_plugin_profile.analysis.ops.attribution import op_records
from tensorboard_plugin_profile.common.errors import InvalidArgument
from tensorboard_plugin_profile.tools import code_view, op_types, scope_view
from tensorboard_plugin_profile.web.server import StandaloneApp
from tools.compare_tables import fixture_hosts

MS = 1e-3


def rows(table: dict) -> list:
    ids = [c["id"] for c in table["cols"]]
    return [dict(zip(ids, (cell["v"] for cell in r["c"]))) for r in table["rows"]]


@pytest.fixture(scope="module")
def jax():
    return list(fixture_hosts("jax_cpu_train"))


@pytest.fixture(scope="module")
def tf():
    return list(fixture_hosts("tf_keras2_fit"))


def children_of(table_rows: list) -> dict:
    out: dict = {}
    for r in table_rows[1:]:
        out.setdefault(r["parent"], []).append(r)
    return out


def test_without_options_the_tree_is_unchanged(jax):
    # The default order is by total time, as before: no option changes nothing.
    assert (
        scope_view.convert(jax, {})["rows"]
        == scope_view.convert(jax, {"order_by": "total_time_us"})["rows"]
    )


@pytest.mark.parametrize(
    "order_by, column, descending",
    [
        ("name", "name", False),
        ("occurrence", "occurrences", True),
        ("self_time_us", "self_time_us", True),
    ],
)
def test_order_by_sorts_every_set_of_siblings(jax, order_by, column, descending):
    table = rows(scope_view.convert(jax, {"order_by": order_by}))
    assert len(table) == len(rows(scope_view.convert(jax, {})))  # the same nodes
    for siblings in children_of(table).values():
        values = [s[column] for s in siblings]
        assert values == sorted(values, reverse=descending)
    # Still depth-first: each row's parent comes before it.
    seen = set()
    for r in table:
        assert r["parent"] == -1 or r["parent"] in seen
        seen.add(r["id"])


def test_max_depth_keeps_the_top_levels(jax):
    full = rows(scope_view.convert(jax, {}))
    table = rows(scope_view.convert(jax, {"max_depth": "2"}))
    assert max(r["depth"] for r in table) == 2
    assert sorted(r["id"] for r in table) == sorted(r["id"] for r in full if r["depth"] <= 2)


def test_min_micros_hides_small_nodes_but_keeps_totals(jax):
    table = rows(scope_view.convert(jax, {"min_micros": "5000"}))
    assert all(r["total_time_us"] >= 5000 for r in table)
    full = rows(scope_view.convert(jax, {}))
    assert table[0]["total_time_us"] == full[0]["total_time_us"]
    assert len(table) < len(full)


def test_show_name_regexes_lift_matches_to_their_nearest_shown_ancestor(jax):
    table = rows(code_view.convert(jax, {"show_name_regexes": r".*\(Host\)"}))
    assert len(table) > 1
    assert all(re.fullmatch(r".*\(Host\)", r["name"]) for r in table[1:])
    assert {r["parent"] for r in table[1:]} == {0} and {r["depth"] for r in table[1:]} == {1}
    records = op_records(jax)
    assert len(table) - 1 == len(records)  # every op, none of the frames


def test_hide_name_regexes_hide_the_node_not_its_children(jax):
    full = rows(scope_view.convert(jax, {}))
    table = rows(scope_view.convert(jax, {"hide_name_regexes": r"jvp\(\)"}))
    hidden = [r for r in full if r["name"] == "jvp()"]
    assert hidden and not any(r["name"] == "jvp()" for r in table)
    ids = {r["id"] for r in table}
    under = [r for r in full if r["parent"] in {h["id"] for h in hidden}]
    assert under and all(r["id"] in ids for r in under)
    by_id = {r["id"]: r for r in table}
    for r in under:  # moved up to the hidden node's parent, one level higher
        hidden_node = next(h for h in hidden if h["id"] == r["parent"])
        assert by_id[r["id"]]["parent"] == hidden_node["parent"]
        assert by_id[r["id"]]["depth"] == r["depth"] - 1


def test_account_type_regexes_count_only_matching_op_types(tf):
    records = op_records(tf)
    types = records["type"].astype(str)
    wanted = types.str.fullmatch(r"Mat.*|Conv.*")
    assert wanted.any() and not wanted.all()
    table = rows(op_types.convert(tf, {"account_type_regexes": "Mat.*,Conv.*"}))
    expected_us = records.loc[wanted, "self_time_ps"].sum() / 1e6
    assert table[0]["total_time_us"] == pytest.approx(expected_us, abs=MS)
    assert {r["name"] for r in table if r["kind"] == "type"} == set(types[wanted])


def test_select_sends_the_chosen_columns_and_the_tree(jax):
    table = scope_view.convert(jax, {"select": "micros,occurrence"})
    assert [c["id"] for c in table["cols"]] == [
        "name",
        "kind",
        "total_time_us",
        "occurrences",
        "id",
        "parent",
        "depth",
        "path",
    ]


@pytest.mark.parametrize(
    "params, words",
    [
        ({"order_by": "colour"}, ["'order_by'", "colour", "micros"]),
        ({"select": "micros,nope"}, ["'select'", "nope"]),
        ({"max_depth": "-1"}, ["'max_depth'"]),
        ({"min_micros": "nan"}, ["'min_micros'"]),
        ({"format": "svg"}, ["'format'", "pprof"]),
        ({"show_name_regexes": "(a+)+b"}, ["exponential"]),
        ({"hide_name_regexes": "(unclosed"}, ["not a regex"]),
        ({"account_type_regexes": "(?=Mat)"}, ["look-arounds"]),
        ({"show_name_regexes": "x" * 300}, ["at most 256 characters"]),
        ({"show_name_regexes": ",".join(["a"] * 17)}, ["at most 16 patterns"]),
    ],
)
def test_bad_options_are_refused_saying_what_is_wrong(jax, params, words):
    with pytest.raises(InvalidArgument) as e:
        scope_view.convert(jax, params)
    assert all(w in e.value.message for w in words), e.value.message


def test_op_types_has_no_pprof_form(jax):
    with pytest.raises(InvalidArgument, match="scope_view or code_view"):
        op_types.convert(jax, {"format": "pprof"})


# --- over HTTP: the real WSGI app of the standalone server ------------------------------
@pytest.fixture(scope="module")
def client():
    return Client(StandaloneApp(str(FIXTURES)))


def _get(client, **params):
    response = client.get("/data/plugin/profile/data", query_string=params)
    return response.status_code, response.get_data()


def test_options_over_http(client):
    base = {"run": "jax_cpu_train/session_1", "tag": "scope_view"}
    status, body = _get(client, **base, max_depth="1", order_by="name", select="micros")
    assert status == 200
    table = json.loads(body)
    assert max(r["depth"] for r in rows(table)) == 1
    names = [r["name"] for r in rows(table) if r["depth"] == 1]
    assert names == sorted(names)


def test_a_hostile_pattern_is_a_400_answered_at_once(client):
    base = {"run": "jax_cpu_train/session_1", "tag": "code_view"}
    for pattern in ("(a+)+$", "(x|xx)*y", r"(\w+\s?)*$", ".*.*.*.*.*.*.*.*.*.*.*x"):
        started = time.perf_counter()
        status, body = _get(client, **base, show_name_regexes=pattern)
        assert status == 400, (pattern, body)
        assert time.perf_counter() - started < 5
        assert json.loads(body)["error"]["code"] == "INVALID_ARGUMENT"


def test_a_pod_session_merges_hosts_then_applies_the_options(client):
    # Several hosts answer from per-host summaries (reduce); the options apply the same way.
    params = {"max_depth": "2", "order_by": "occurrence", "hide_name_regexes": ".*Iterator.*"}
    run = next(
        r
        for r in json.loads(client.get("/data/plugin/profile/runs").get_data())
        if r.startswith("tf_two_hosts")
    )
    status, body = _get(client, run=run, tag="scope_view", host="ALL_HOSTS", **params)
    assert status == 200, body
    expected = scope_view.convert(list(fixture_hosts("tf_two_hosts")), params)
    assert json.loads(body)["rows"] == expected["rows"]


def test_tbprof_convert_takes_the_options_as_tfprof_named_flags():
    from conftest import host_files

    path = host_files("jax_cpu_train")[0]
    options = ("--max_depth", "1", "--order_by", "name", "--select", "micros,occurrence")
    result = tbprof_convert(path, "scope_view", *options)
    assert result.returncode == 0, result.stderr
    table = json.loads(result.stdout)
    assert [c["id"] for c in table["cols"]][:4] == ["name", "kind", "total_time_us", "occurrences"]
    names = [r["name"] for r in rows(table)[1:]]
    assert names == sorted(names) and max(r["depth"] for r in rows(table)) == 1
    bad = tbprof_convert(path, "scope_view", "--order_by", "colour")
    assert bad.returncode != 0 and b"colour" in bad.stderr and b"Traceback" not in bad.stderr
