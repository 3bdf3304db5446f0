"""tbprof runs|tools|summary|top-ops|steps|search|sql: the real command, answers checked
against the tools' own numbers, exit codes made for scripts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from conftest import FIXTURES, REPO

import tensorboard_plugin_profile as tbp


def tbprof(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tensorboard_plugin_profile", *args],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )


def answer(*args: str) -> dict:
    out = tbprof(*args, "--format", "json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("\n") == 1  # one line of JSON
    return json.loads(out.stdout)


def fixture(name: str) -> str:
    return str(FIXTURES / name)


@pytest.fixture(scope="module")
def profiles():
    opened = {}
    yield lambda name: opened.setdefault(name, tbp.open(fixture(name)))
    for p in opened.values():
        p.close()


def test_runs_and_tools(profiles):
    p = profiles("profiler_hook")
    runs = answer("runs", fixture("profiler_hook"))
    assert [r["run"] for r in runs["runs"]] == p.runs
    assert runs["runs"][0]["hosts"] == p.hosts
    text = tbprof("tools", fixture("profiler_hook"), "--run", p.runs[1])
    assert text.returncode == 0
    assert text.stdout.splitlines()[0] == f"run {p.runs[1]} ({p.runs[1].rsplit('/', 1)[1]})"
    assert "framework_op_stats" in text.stdout.splitlines()


def test_summary_is_the_overview_in_short(profiles):
    summary = answer("summary", fixture("tf_keras2_fit"))
    overview = profiles("tf_keras2_fit").tables("overview_page")[1].attrs["properties"]
    assert f"{summary['steps']['average_ms']:.1f}" == overview["steptime_ms_average"]
    infeed = next(b for b in summary["steps"]["breakdown"] if b["part"] == "infeed_time_ms")
    assert f"{infeed['percent']:.1f}" == "82.5"  # the overview: "82.5% … waiting for input"
    assert summary["environment"]["device_type"] == "CPU"
    assert summary["top_ops"]["rows"][0][1] == "Iterator::Root::Prefetch::MapAndBatch"
    text = tbprof("summary", fixture("tf_keras2_fit"))
    assert "steps: 4, average 99.874 ms" in text.stdout


def test_top_ops_sum_the_hosts_tf_stats(profiles):
    p = profiles("tf_two_hosts")
    top = answer("top-ops", fixture("tf_two_hosts"), "-n", "3")
    assert top["columns"][:5] == [
        "type", "operation", "occurrences", "total_self_time_us", "total_time_us",
    ]  # fmt: skip
    assert len(top["rows"]) == 3 and top["next_offset"] == 3
    kind, name, count, self_us = top["rows"][0][:4]
    per_host = [p.table("framework_op_stats", host=h) for h in p.hosts]
    rows = [t[(t["type"] == kind) & (t["operation"] == name)] for t in per_host]
    assert count == sum(r["occurrences"].sum() for r in rows)
    assert self_us == pytest.approx(sum(r["total_self_time_us"].sum() for r in rows), abs=1e-3)
    selves = [r[3] for r in top["rows"]]
    assert selves == sorted(selves, reverse=True)


def test_steps_are_the_facade_s(profiles):
    steps = answer("steps", fixture("jax_cpu_train"), "-n", "4", "--offset", "2")
    frame = profiles("jax_cpu_train").steps()
    assert steps["columns"] == list(frame.columns)
    assert [r[1] for r in steps["rows"]] == frame["step"].tolist()[2:6]
    assert steps["total_rows"] == len(frame) and steps["next_offset"] == 6


def test_search_counts_the_matching_events(profiles):
    found = answer("search", fixture("jax_cpu_train"), "DOT", "-n", "2")
    events = profiles("jax_cpu_train").events(names="(?i)dot")
    assert found["matches"] == len(events)
    assert found["names"]["total_rows"] == events["name"].nunique()
    assert len(found["events"]["rows"]) == 2
    regex = answer("search", fixture("jax_cpu_train"), "^dot$", "--regex")
    assert regex["names"]["rows"][0][:2] == ["dot", 12]


def test_search_without_a_match_exits_1_like_grep():
    out = tbprof("search", fixture("jax_cpu_train"), "no_such_event_name")
    assert out.returncode == 1
    assert out.stdout == "0 events match 'no_such_event_name'\n"
    assert "no event name contains 'no_such_event_name'" in out.stderr


def test_a_catastrophic_search_pattern_is_refused():
    out = tbprof("search", fixture("jax_cpu_train"), "(a+)+$", "--regex")
    assert out.returncode == 1
    assert "tbprof:" in out.stderr and "Traceback" not in out.stderr


def test_sql_answers_like_the_facade(profiles):
    query = (
        "select host, count(*) as n, sum(total_duration_us) as us from kernels "
        "group by 1 order by 1"
    )
    got = answer("sql", fixture("gpu_multi_worker"), query)
    expected = profiles("gpu_multi_worker").sql(query)
    assert got["columns"] == ["host", "n", "us"]
    assert [r[:2] for r in got["rows"]] == expected[["host", "n"]].values.tolist()
    assert got["truncated"] is False and got["total_rows"] == 2
    limited = answer("sql", fixture("jax_cpu_train"), "select * from events", "-n", "5")
    assert len(limited["rows"]) == 5 and limited["truncated"] is True


@pytest.mark.parametrize(
    "args,message",
    [
        (["sql", "{jax}", "selec 1"], "SQL error: Parser Error"),
        (["sql", "{jax}", "insert into events values (1)"], "Only SELECT"),
        (["top-ops", "{jax}", "--run", "nope"], "No run 'nope'; the runs are session_1"),
        (["steps", "{jax}", "--host", "elsewhere"], "No host 'elsewhere' in run 'session_1'"),
        (["search", "{jax}", "dot", "--host", "elsewhere"], "No profile for host 'elsewhere'"),
        (["summary", "/nonexistent/folder"], "No profile"),
    ],
)
def test_errors_exit_1_with_one_line(args, message):
    out = tbprof(*[a.replace("{jax}", fixture("jax_cpu_train")) for a in args])
    assert out.returncode == 1, out.stdout
    assert out.stdout == ""
    assert out.stderr.startswith("tbprof: ") and message in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "args", [["top-ops"], ["sql", "{jax}"], ["steps", "{jax}", "--format", "xml"], ["runs"]]
)
def test_usage_errors_exit_2(args):
    out = tbprof(*[a.replace("{jax}", fixture("jax_cpu_train")) for a in args])
    assert out.returncode == 2
    assert "usage: tbprof" in out.stderr
