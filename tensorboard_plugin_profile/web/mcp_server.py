"""``tbprof mcp --logdir DIR``: the profiles of a log directory, for coding agents, over MCP.

A Model Context Protocol server on stdio (the official ``mcp`` SDK, an optional extra:
``pip install 'tensorboard_plugin_profile[mcp]'``, Python 3.10 or newer). Its tools answer
with ``api/answers.py``'s dicts, the numbers of ``tbprof summary`` & co.:

    list_runs, list_tools, get_table (a page of any tool's table, with its total),
    top_ops, step_time, advise, query_sql (one read-only SELECT), search_trace

It only reads. A run is one of ``list_runs`` and a host one of the run's hosts: both are
looked up in the maps discovery built, never joined onto a path, so a client can name
nothing outside the log directory. An error is a tool error carrying the service's message
(what exists, what to do); anything unexpected is logged on stderr and answered
"Internal error" without its text. A client (Claude Desktop, Cursor, an agent SDK) starts
it as ``{"command": "tbprof", "args": ["mcp", "--logdir", "/path/to/logs"]}``.
"""

from __future__ import annotations

import argparse
import functools
import logging
import sys
from typing import Any, Callable, Optional

from ..api import answers
from ..api.profile import Profile
from ..common import json_out
from ..common.errors import InvalidArgument, ProfileError, Unavailable
from ..service import ProfileService
from ..store.cache_config import CacheConfig, add_flags

logger = logging.getLogger(__name__)

INSTALL_HINT = "pip install 'tensorboard_plugin_profile[mcp]'"
MAX_SQL_TIMEOUT_S = 120.0
INSTRUCTIONS = (
    "Performance profiles (TensorFlow, JAX, PyTorch) of one log directory. Start with "
    "list_runs, then step_time / top_ops / advise for a run; get_table reads any tool of "
    "list_tools a page at a time; query_sql runs one SELECT over the views events, steps, "
    "op_stats, kernels; search_trace finds events by name. Times carry their unit in the "
    "column name (_ps, _us, _ms)."
)


def add_mcp_arguments(commands: Any) -> None:
    parser = commands.add_parser("mcp", help="serve a log dir to coding agents (MCP, stdio)")
    parser.add_argument("--logdir", required=True, help="the log directory to serve")
    add_flags(parser)
    parser.set_defaults(func=run_mcp)


def run_mcp(args: argparse.Namespace) -> int:
    service = ProfileService(args.logdir, config=CacheConfig.from_flags(args))
    try:
        build_server(service).run("stdio")  # until the client closes stdin
    finally:
        service.close()
    return 0


def _sdk() -> tuple:
    """(server class, ToolError) of the installed SDK: 2.x ``MCPServer`` or 1.x ``FastMCP``."""
    if sys.version_info < (3, 10):
        raise Unavailable(
            f"tbprof mcp needs Python 3.10 or newer (the MCP SDK's minimum); this is "
            f"{sys.version_info.major}.{sys.version_info.minor}."
        )
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        try:
            from mcp.server.fastmcp import (  # type: ignore[attr-defined,no-redef]
                FastMCP as MCPServer,
            )
            from mcp.server.fastmcp.exceptions import ToolError  # type: ignore[no-redef]
        except ImportError:
            raise Unavailable(
                f"tbprof mcp needs the MCP SDK, an optional extra: {INSTALL_HINT}."
            ) from None
    return MCPServer, ToolError


def build_server(service: ProfileService) -> Any:
    """The MCP server over ``service`` (not yet running)."""
    server_class, tool_error = _sdk()
    from mcp.types import ToolAnnotations

    server = server_class(name="tensorboard-plugin-profile", instructions=INSTRUCTIONS)
    hints = {"readOnlyHint": True, "destructiveHint": False, "openWorldHint": False}
    read_only = ToolAnnotations.model_validate(hints)  # the wire names, in mcp 1 and 2

    def tool(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def answered(*args: Any, **kwargs: Any) -> str:
            try:
                result = fn(*args, **kwargs)
            except ProfileError as e:
                raise tool_error(e.message) from None
            except Exception:
                logger.exception("MCP tool %s failed", fn.__name__)
                raise tool_error("Internal error; see the server's log.") from None
            # Compact JSON text: what a model reads, at the fewest tokens.
            return json_out.dumps(result, separators=(",", ":"), ensure_ascii=False)

        server.tool(annotations=read_only, structured_output=False)(answered)
        return answered

    def profile(run: Optional[str]) -> Profile:
        return Profile(service, run)  # NotFound unless the run is one discovery found

    @tool
    def list_runs() -> dict:
        """The runs (profiling sessions) of the log directory, each with its hosts."""
        runs = service.runs()
        return answers.runs(Profile(service, runs[0])) if runs else {"runs": []}

    @tool
    def list_tools(run: Optional[str] = None) -> dict:
        """The tools (pages) a run has; get_table reads the ones that are tables."""
        return answers.tools(profile(run))

    @tool
    def get_table(
        tool: str,
        run: Optional[str] = None,
        host: Optional[str] = None,
        table: Optional[int] = None,
        offset: int = 0,
        limit: int = 50,
        params: Optional[dict[str, str]] = None,
    ) -> dict:
        """A page of a tool's table (its main one, or number `table`): columns (units in the
        names), labels, rows from `offset`, total_rows and next_offset. `params` are the
        tool's own query parameters (e.g. {"group_by": "category"})."""
        return answers.table(profile(run), tool, host, table, offset, limit, _params(params))

    @tool
    def top_ops(run: Optional[str] = None, host: Optional[str] = None, limit: int = 10) -> dict:
        """The ops with the most self time, summed over hosts (or on one), with their share."""
        return answers.top_ops(profile(run), limit, host)

    @tool
    def step_time(
        run: Optional[str] = None, host: Optional[str] = None, offset: int = 0, limit: int = 50
    ) -> dict:
        """Step times and their breakdown (input, compute, ...): a summary and a page of steps."""
        return answers.steps(profile(run), host, offset, limit)

    @tool
    def advise(run: Optional[str] = None, host: Optional[str] = None) -> dict:
        """Known performance problems found in the run, with evidence and what to do."""
        return answers.advice(profile(run), host)

    @tool
    def query_sql(
        query: str, run: Optional[str] = None, limit: int = 100, timeout_s: float = 30.0
    ) -> dict:
        """One read-only SQL SELECT (DuckDB) over the views events (host, plane, line, name,
        start_ps, duration_ps, stats), steps, op_stats and kernels of every host."""
        if not 0 < timeout_s <= MAX_SQL_TIMEOUT_S:
            raise InvalidArgument(f"timeout_s must be in (0, {MAX_SQL_TIMEOUT_S:g}].")
        return answers.sql(profile(run), query, limit, timeout_s)

    @tool
    def search_trace(
        text: str,
        regex: bool = False,
        run: Optional[str] = None,
        host: Optional[str] = None,
        limit: int = 10,
    ) -> dict:
        """Trace events whose name contains `text` (case-insensitive; or matches it as a
        regular expression): per name, count and time; then the first events in time."""
        return answers.search(profile(run), text, regex, host, limit)

    return server


def _params(params: Optional[dict]) -> dict:
    """A tool's query parameters: strings only (the service reads only the tool's own)."""
    params = dict(params or {})
    if not all(isinstance(k, str) and isinstance(v, (str, int, float)) for k, v in params.items()):
        raise InvalidArgument("params must map parameter names to strings.")
    return {k: str(v) for k, v in params.items()}
