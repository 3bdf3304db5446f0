"""tbprof mcp: the real server over stdio, driven by the MCP SDK's own client."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import FIXTURES, REPO

if sys.version_info < (3, 10):
    pytest.skip("the MCP SDK needs Python 3.10 or newer", allow_module_level=True)
pytest.importorskip("mcp", reason="the [mcp] extra is not installed: pip install mcp")

import anyio  # noqa: E402
from mcp import ClientSession, StdioServerParameters  # noqa: E402
from mcp.client.stdio import stdio_client  # noqa: E402

from tensorboard_plugin_profile.api import answers  # noqa: E402
from tensorboard_plugin_profile.api.profile import Profile  # noqa: E402
from tensorboard_plugin_profile.service import ProfileService  # noqa: E402

TOOLS = {
    "list_runs",
    "list_tools",
    "get_table",
    "top_ops",
    "step_time",
    "advise",
    "query_sql",
    "search_trace",
}
JAX, TORCH = "jax/session_1", "torch/run/1"


@pytest.fixture(scope="module")
def logdir(tmp_path_factory):
    """Two formats in one log directory: a JAX XSpace and a two-rank PyTorch trace."""
    root = tmp_path_factory.mktemp("logs")
    shutil.copytree(FIXTURES / "jax_cpu_train", root / "jax")
    shutil.copytree(FIXTURES / "pytorch_two_ranks" / "run", root / "torch" / "run")
    (root.parent / "outside.txt").write_text("not a profile\n")
    return root


@pytest.fixture(scope="module")
def service(logdir):
    service = ProfileService(str(logdir))
    yield service
    service.close()


def attr(obj, snake: str, camel: str):
    """A field of the SDK's types: snake_case in mcp 2, camelCase in mcp 1."""
    return getattr(obj, snake) if hasattr(obj, snake) else getattr(obj, camel)


def with_server(logdir, scenario):
    """Runs ``scenario(call, session)`` against ``tbprof mcp --logdir`` in a subprocess."""
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "tensorboard_plugin_profile", "mcp", "--logdir", str(logdir)],
        cwd=str(REPO),
        env={"PYTHONPATH": os.pathsep.join(sys.path), "TBPROF_NO_CACHE": "1"},
    )

    async def main():
        with anyio.fail_after(120):
            return await session_scenario()

    async def session_scenario():
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()

                async def call(name: str, **arguments):
                    result = await session.call_tool(name, arguments)
                    text = result.content[0].text
                    if attr(result, "is_error", "isError"):
                        return ("error", text)
                    return json.loads(text)

                return await scenario(call, session)

    return anyio.run(main)


def test_the_tools_are_listed_read_only(logdir):
    async def scenario(call, session):
        return (await session.list_tools()).tools

    tools = with_server(logdir, scenario)
    assert {t.name for t in tools} == TOOLS
    for t in tools:
        assert attr(t.annotations, "read_only_hint", "readOnlyHint") is True
        assert t.description


def test_runs_tables_and_pages_equal_the_facade(logdir, service):
    async def scenario(call, session):
        runs = await call("list_runs")
        tools = await call("list_tools", run=JAX)
        first = await call("get_table", tool="hlo_stats", run=JAX, limit=20)
        second = await call("get_table", tool="hlo_stats", run=JAX, offset=20, limit=1000)
        return runs, tools, first, second

    runs, tools, first, second = with_server(logdir, scenario)
    assert runs == {
        "runs": [{"run": r, "hosts": Profile(service, r).hosts} for r in service.runs()]
    }
    assert tools["tools"] == service.run_tools(JAX)
    expected = answers.table(Profile(service, JAX), "hlo_stats", limit=1000)
    assert first["total_rows"] == expected["total_rows"] > 20
    assert first["next_offset"] == 20 and second["next_offset"] is None
    assert first["rows"] + second["rows"] == expected["rows"]
    assert first["columns"] == expected["columns"] and "labels" in first


def test_the_analyses_equal_the_cli_answers(logdir, service):
    async def scenario(call, session):
        return (
            await call("top_ops", run=TORCH, limit=5),
            await call("step_time", run=JAX, limit=3),
            await call("advise", run=JAX),
            await call("search_trace", run=JAX, text="dot", limit=3),
        )

    top, steps, advice, search = with_server(logdir, scenario)
    torch, jax = Profile(service, TORCH), Profile(service, JAX)
    assert top == answers.top_ops(torch, 5)
    assert steps == answers.steps(jax, limit=3)
    assert steps["summary"]["count"] == len(jax.steps())
    assert advice == answers.advice(jax)
    assert search == answers.search(jax, "dot", limit=3)
    assert search["matches"] == len(jax.events(names="(?i)dot"))


def test_sql_over_the_kernels_of_both_ranks(logdir, service):
    query = (
        "select host, count(*) as kernels, sum(total_us) as us from kernels group by 1 order by 1"
    )

    async def scenario(call, session):
        return (
            await call("query_sql", run=TORCH, query=query),
            await call("query_sql", run=TORCH, query="delete from kernels"),
            await call("query_sql", run=TORCH, query="select * from events", limit=3),
            await call("query_sql", run=TORCH, query="select 1", timeout_s=10_000),
        )

    answer, write, limited, too_long = with_server(logdir, scenario)
    expected = Profile(service, TORCH).sql(query)
    assert answer["rows"] == expected.values.tolist()
    assert write[0] == "error" and "Only SELECT" in write[1]
    assert len(limited["rows"]) == 3 and limited["truncated"] is True
    assert too_long[0] == "error" and "timeout_s" in too_long[1]


@pytest.mark.parametrize(
    "tool,arguments,message",
    [
        ("list_tools", {"run": "../outside.txt"}, "No run '../outside.txt'; the runs are"),
        ("list_tools", {"run": "/etc"}, "No run '/etc'"),
        ("get_table", {"tool": "../../etc/passwd", "run": JAX}, "Unknown tool"),
        ("top_ops", {"run": JAX, "host": "../../outside.txt"}, "No host '../../outside.txt'"),
        ("search_trace", {"run": JAX, "text": "x", "host": "/etc/passwd"}, "No profile for host"),
        ("get_table", {"tool": "hlo_stats", "run": JAX, "limit": 10**6}, "limit must"),
        ("search_trace", {"run": JAX, "text": "(a+)+$", "regex": True}, "search"),
    ],
)
def test_names_outside_discovery_are_refused(logdir, tool, arguments, message):
    async def scenario(call, session):
        return await call(tool, **arguments)

    kind, text = with_server(logdir, scenario)
    assert kind == "error" and message in text
    assert "not a profile" not in text and "Traceback" not in text


def test_without_the_sdk_the_command_says_how_to_install_it(logdir):
    code = (
        "import sys; sys.modules['mcp'] = None\n"
        "from tensorboard_plugin_profile.web.cli import main\n"
        f"sys.exit(main(['mcp', '--logdir', {str(logdir)!r}]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 1
    assert "pip install 'tensorboard_plugin_profile[mcp]'" in out.stderr
