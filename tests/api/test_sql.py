"""p.sql(query): DuckDB over the events, steps, op_stats and kernels views, read-only and timed."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest
from conftest import FIXTURES, REPO

import tensorboard_plugin_profile as tbp
from tensorboard_plugin_profile.common.errors import DeadlineExceeded, InvalidArgument

pytest.importorskip("duckdb", reason="SQL needs the [sql] extra: pip install duckdb")


@pytest.fixture(scope="module")
def profiles():
    opened = {}
    yield lambda name: opened.setdefault(name, tbp.open(str(FIXTURES / name)))
    for p in opened.values():
        p.close()


def test_kernel_times_from_events_equal_kernel_stats(profiles):
    """The GPU kernels counted and summed from raw events are the kernel_stats tool's numbers."""
    p = profiles("gpu_multi_worker")
    tool = p.sql(
        "select host, kernel_name, sum(occurrences) as n, sum(total_duration_us) as us "
        "from kernels group by all order by all"
    )
    from_events = p.sql(
        "select host, name as kernel_name, count(*) as n, sum(duration_ps) / 1e6 as us "
        "from events where plane like '/device:GPU%' and kernel_details is not null "
        "group by all order by all"
    )
    assert len(tool) > 10 and set(tool["host"]) == set(p.hosts)
    assert tool["kernel_name"].tolist() == from_events["kernel_name"].tolist()
    assert tool["n"].tolist() == from_events["n"].tolist()
    assert np_close(tool["us"], from_events["us"])


def test_pytorch_kernel_times_from_events_equal_the_kernels_table(profiles):
    """A PyTorch GPU plane holds kernels, memcpys and memsets; its kernels, counted and summed
    from raw events of both ranks, are pytorch_kernels' numbers."""
    p = profiles("pytorch_two_ranks")
    tool = p.sql("select host, name, calls, total_us from kernels order by host, name")
    from_events = p.sql(
        "select host, name, count(*) as calls, sum(duration_ps) / 1e6 as total_us "
        "from events where plane like 'GPU%' "
        "and name not like 'Memcpy %' and name not like 'Memset %' "
        "group by all order by host, name"
    )
    assert len(tool) > 300 and set(tool["host"]) == {"rank0", "rank1"}
    assert tool["name"].tolist() == from_events["name"].tolist()
    assert tool["calls"].tolist() == from_events["calls"].tolist()
    assert np_close(tool["total_us"], from_events["total_us"])


def test_step_time_average_equals_the_overview(profiles):
    p = profiles("tf_two_hosts")
    answer = p.sql("select host, count(*) as steps, avg(step_time_ms) as ms from steps group by 1")
    for host, steps, ms in answer.itertuples(index=False):
        overview = p.tables("overview_page", host=host)[1]
        assert steps == len(overview)
        assert f"{ms:.1f}" == overview.attrs["properties"]["steptime_ms_average"]


def test_event_counts_equal_the_decoded_planes(profiles):
    p = profiles("jax_cpu_train")
    space = p.service.space(p.service.logdir.session(p.run).host_files[0])
    answer = p.sql("select plane, count(*) as n from events group by 1")
    counts = dict(zip(answer["plane"], answer["n"]))
    assert counts == {pl.name: pl.num_events for pl in space.planes if pl.num_events}
    assert p.sql("select count(*) as n from op_stats")["n"][0] == len(p.op_stats())


@pytest.mark.parametrize(
    "query",
    [
        "create table t as select 1",
        "insert into events select * from events",
        "copy (select 1) to '/tmp/tbprof_sql_escape.csv'",
        "select 1; select 2",
        "set enable_external_access = true",
        "attach '/tmp/x.db'",
    ],
)
def test_only_one_select_is_answered(profiles, query):
    with pytest.raises(InvalidArgument, match="SELECT|one SQL statement"):
        profiles("jax_cpu_train").sql(query)


def test_files_and_network_are_out_of_reach(profiles, tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("a\n1\n")
    p = profiles("jax_cpu_train")
    for query in (
        f"select * from read_csv('{secret}')",
        f"select * from '{secret}'",
        "select * from read_parquet('https://example.com/x.parquet')",
    ):
        with pytest.raises(InvalidArgument, match="SQL error"):
            p.sql(query)


def test_bad_sql_says_what_duckdb_said(profiles):
    p = profiles("jax_cpu_train")
    with pytest.raises(InvalidArgument, match="SQL error: .*no_such_column"):
        p.sql("select no_such_column from events")
    with pytest.raises(InvalidArgument, match="SQL error: .*syntax"):
        p.sql("selec 1")
    with pytest.raises(InvalidArgument, match="one SQL SELECT"):
        p.sql("  ")


def test_a_long_query_is_stopped_at_its_time_limit(profiles):
    p = profiles("jax_cpu_train")
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="time limit"):
        p.sql("select sum(hash(a.range * b.range)) from range(200000) a, range(200000) b", 0.5)
    assert time.monotonic() - started < 10


def test_max_rows_and_views_without_rows(profiles):
    p = profiles("profiler_hook")
    assert len(p.sql("select * from events", max_rows=7)) == 7
    assert len(p.sql("select * from events limit 100;", max_rows=3)) == 3
    assert p.sql("select count(*) as n from steps")["n"][0] == 0
    assert p.sql("select count(*) as n from kernels")["n"][0] == 0


def test_without_duckdb_the_error_names_the_extra():
    code = (
        "import sys; sys.modules['duckdb'] = None\n"
        "import tensorboard_plugin_profile as tbp\n"
        "from tensorboard_plugin_profile.common.errors import Unavailable\n"
        "p = tbp.open('tests/data/jax_cpu_train')\n"
        "try:\n    p.sql('select 1')\nexcept Unavailable as e:\n    print(e.message)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert "pip install 'tensorboard_plugin_profile[sql]'" in out.stdout


def np_close(a, b) -> bool:
    return all(abs(x - y) <= 1e-6 * max(1.0, abs(x)) for x, y in zip(a.tolist(), b.tolist()))
