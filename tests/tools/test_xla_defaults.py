"""Issue 28 item 9: the XLA pages open on the busiest program and on a meaningful op.

The expected program and op are read from the HLO stats table the page shows (its rows'
program ids and self times), not from the code under test: the program whose ops have the
most self time comes first in ``module_list?order=time``, and the graph viewer's ``type=ops``
answer starts on that program's op with the most self time.
"""

from __future__ import annotations

import collections
import json

import pytest
from conftest import FIXTURES
from werkzeug.test import Client

from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.web.server import StandaloneApp

JAX_RUNS = (
    "jax_two_hosts/multi_jax2__xprof_client",
    "jax_remote_capture/jax_server__xprof_client",
    "jax_cpu_train/session_1",
)


def _hlo_rows(service, run):
    table = json.loads(b"".join(service.tool_data(run, "hlo_stats").chunks()))
    ids = [c["id"] for c in table["cols"]]
    return [dict(zip(ids, (cell["v"] for cell in row["c"]))) for row in table["rows"]]


def _program(name):
    return name.rsplit("(", 1)[1].rstrip(")")


@pytest.fixture(scope="module")
def service():
    return ProfileService(str(FIXTURES))


@pytest.mark.parametrize("run", JAX_RUNS)
def test_module_list_by_time_starts_with_the_busiest_program(service, run):
    per_program = collections.Counter()
    for row in _hlo_rows(service, run):
        per_program[str(row["program_id"])] += row["total_self_time"]
    ordered = service.module_list(run, "time")
    assert sorted(ordered) == service.module_list(run)  # the same programs, another order
    times = [per_program.get(_program(name), 0.0) for name in ordered]
    assert times == sorted(times, reverse=True)
    assert times[0] == max(per_program.values())
    if run.startswith("jax_two_hosts"):
        assert ordered[0] == "jit_step(8)"  # 97% of the time; jit_add(12) has 0.8%


@pytest.mark.parametrize("run", JAX_RUNS)
def test_graph_viewer_starts_on_the_programs_most_expensive_op(service, run):
    busiest = service.module_list(run, "time")[0]
    rows = [r for r in _hlo_rows(service, run) if str(r["program_id"]) == _program(busiest)]
    expected = max(rows, key=lambda r: r["total_self_time"])
    answer = service.tool_data(run, "graph_viewer", params={"module_name": busiest, "type": "ops"})
    start = json.loads(b"".join(answer.chunks()))["start"]
    assert start["name"] == expected["hlo_op_name"]
    assert "most self time" in start["reason"]
    if "two_hosts" not in run:  # the graph viewer reads one host; hlo_stats sums both
        share = expected["total_self_time"] / sum(r["total_self_time"] for r in rows)
        assert start["share"] == pytest.approx(share, rel=1e-9)


def test_a_program_that_never_ran_starts_on_its_entry_root(service):
    run = "jax_cpu_train/session_1"
    idle = service.module_list(run, "time")[-1]
    assert not [r for r in _hlo_rows(service, run) if str(r["program_id"]) == _program(idle)]
    answer = service.tool_data(run, "graph_viewer", params={"module_name": idle, "type": "ops"})
    start = json.loads(b"".join(answer.chunks()))["start"]
    text = b"".join(
        service.tool_data(run, "graph_viewer", params={"module_name": idle}).chunks()
    ).decode()
    entry = text.split("\nENTRY ", 1)[1]
    root_line = next(line for line in entry.splitlines() if line.strip().startswith("ROOT "))
    assert root_line.strip().split()[1] == start["name"]
    assert "root of the entry computation" in start["reason"]


def test_module_list_route_takes_the_order_and_refuses_others():
    client = Client(StandaloneApp(str(FIXTURES)))
    run = "jax_two_hosts/multi_jax2__xprof_client"
    listed = client.get(f"/data/plugin/profile/module_list?run={run}&order=time")
    assert listed.status_code == 200
    assert listed.get_data(as_text=True).split(",")[0] == "jit_step(8)"
    bad = client.get(f"/data/plugin/profile/module_list?run={run}&order=size")
    assert bad.status_code == 400
    assert "order must be 'name' or 'time'" in bad.get_json()["error"]["message"]
