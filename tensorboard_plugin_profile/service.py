"""ProfileService: the one object behind the plugin, the server, the CLI and notebooks.

It answers the questions of the HTTP API (runs, tools, hosts, tool data, CSV)
from a log directory, and owns the caches: decoded Spaces keyed by the file's
(path, size, mtime) and serialized tool results keyed by the inputs' keys, both
under one byte budget. A cold request decodes; later requests for any tool of
that session reuse the decoded Space.

Usage::

    service = ProfileService("/tmp/logs")
    run = service.runs()[0]
    result = service.tool_data(run, "trace_viewer", host="vm")
    print(result.content_type, b"".join(result.chunks())[:80])
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
import time
from typing import Any, Callable, Iterable, Mapping, Optional

from . import tools as tool_registry
from .cache import ByteBudgetCache
from .chrome_trace import read_chrome_trace
from .errors import InvalidArgument, NotApplicable, NotFound
from .logdir import XPLANE_SUFFIX, LogDir, Session
from .params import int_param
from .progress import ProgressTracker
from .tools import ALL_HOSTS, ToolOutput
from .tools.datatable import to_csv
from .xspace import read_xspace

logger = logging.getLogger(__name__)

DEFAULT_CACHE_BYTES = 4 << 30
# Parameters that change no tool's answer (the page copies its URL into calls).
_IGNORED_PARAMS = frozenset({"run", "tag", "host", "hosts", "tqx", "tool", "table", "_"})
_UNSAFE_FILENAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


@dataclasses.dataclass(frozen=True)
class ToolResult:
    """A tool's answer, ready to send: bytes produced lazily by ``chunks``."""

    content_type: str
    chunks: Callable[[], Iterable[bytes]]
    json_obj: Any = None


class ProfileService:
    def __init__(self, logdir: str, cache_bytes: int = DEFAULT_CACHE_BYTES):
        self.logdir = LogDir(logdir)
        self.cache = ByteBudgetCache(cache_bytes)
        self.progress = ProgressTracker()

    # --- discovery ---------------------------------------------------------
    def runs(self) -> list:
        return self.logdir.runs()

    def is_active(self) -> Optional[bool]:
        """Cached answer to "is there anything to show?" (never touches disk)."""
        return self.logdir.has_runs_cached()

    def diagnose(self) -> dict:
        return dataclasses.asdict(self.logdir.diagnose())

    def run_tools(self, run: str) -> list:
        session = self.logdir.session(run)
        if not session.host_files:
            return []
        first = self.space(session.host_files[0])
        names = [t.name for t in tool_registry.TOOLS.values() if t.listed_for(first)]
        if "trace_viewer@" in names:
            # As upstream: the page opens the windowed viewer; the complete JSON stays at /data.
            names.remove("trace_viewer")
        return tool_registry.sort_tools(names)

    def hosts(self, run: str, tag: str) -> list:
        session = self.logdir.session(run)
        tool = self._tool(tag)
        names = session.hosts()
        if len(names) > 1:
            if tool.hosts_mode == tool_registry.HOSTS_COMBINED:
                names = [ALL_HOSTS]
            elif tool.hosts_mode == tool_registry.HOSTS_EACH_OR_ALL:
                names = sorted(names + [ALL_HOSTS])
        return [{"hostname": name} for name in names]

    # --- data --------------------------------------------------------------
    def space(self, host_file: Any) -> Any:
        """The decoded Space of one host file, from cache when unchanged."""

        def decode() -> Any:
            started = time.perf_counter()
            logger.info("decoding %s (%.1f MB)", host_file.path, host_file.size / 1e6)
            space = _read_profile(host_file.path)
            logger.info(
                "decoded %s: %d events in %.0f ms",
                host_file.host,
                space.num_events,
                (time.perf_counter() - started) * 1e3,
            )
            return space

        return self.cache.get_or_compute(("space",) + host_file.key, decode, size_of=_space_size)

    def tool_data(
        self,
        run: str,
        tag: str,
        host: Optional[str] = None,
        hosts: Optional[str] = None,
        params: Optional[Mapping[str, str]] = None,
    ) -> ToolResult:
        params = dict(params or {})
        tool = self._tool(tag)
        session = self.logdir.session(run)
        selected = self._select_hosts(session, tool, host, hosts)
        relevant = tuple(sorted((k, v) for k, v in params.items() if k not in _IGNORED_PARAMS))
        key = ("tool", tool.name, relevant) + tuple(f.key for f in selected)

        def compute() -> Any:
            with self.progress.task(run, tool.name) as task:
                spaces = []
                for i, f in enumerate(selected, 1):
                    task.stage(f"decoding {f.host} ({i}/{len(selected)})")
                    spaces.append((f.host, self.space(f)))
                task.stage("converting")
                started = time.perf_counter()
                try:
                    output = tool.convert(spaces, params)
                except NotApplicable as e:
                    return e  # as much an answer as data: cached, raised to every caller
                logger.info(
                    "%s on %s (%s): %.0f ms",
                    tool.name,
                    run,
                    ",".join(f.host for f in selected),
                    (time.perf_counter() - started) * 1e3,
                )
                return _to_result(output)  # serialised once; warm requests send the bytes

        result = self.cache.get_or_compute(key, compute, size_of=_result_size)
        if isinstance(result, NotApplicable):
            raise NotApplicable(result.message)  # a fresh error: no shared traceback
        return result

    def tool_csv(
        self,
        run: str,
        tag: str,
        host: Optional[str] = None,
        params: Optional[Mapping[str, str]] = None,
    ) -> tuple:
        """(file name, CSV text) of one table of a tool (``table`` = its index)."""
        params = dict(params or {})
        result = self.tool_data(run, tag, host=host, params=params)
        tables = _tables_of(result.json_obj)
        if not tables:
            raise InvalidArgument(f"Tool {tag} has no table to export as CSV.")
        index = int_param(params, "table", _first_non_empty(tables))
        if not 0 <= index < len(tables):
            raise InvalidArgument(f"Table {index} does not exist; tool {tag} has {len(tables)}.")
        name_parts = [tag, run, (host or "").rsplit("-", 1)[-1]]
        if index:
            name_parts.append(f"table{index}")
        filename = "_".join(_UNSAFE_FILENAME_CHARS.sub("_", p) for p in name_parts if p)
        return filename + ".csv", to_csv(tables[index])

    # --- helpers -----------------------------------------------------------
    @staticmethod
    def _tool(tag: str) -> Any:
        if not tag:
            raise InvalidArgument("The 'tag' parameter (tool name) is required.")
        name = tool_registry.canonical_name(tag)
        if name is None:
            raise NotFound(f"Unknown tool {tag!r}.")
        return tool_registry.TOOLS[name]

    @staticmethod
    def _select_hosts(
        session: Session, tool: Any, host: Optional[str], hosts: Optional[str]
    ) -> list:
        if not session.host_files:
            raise NotFound(f"No readable profile files in run {session.run!r}.")
        if hosts and tool.hosts_mode == tool_registry.HOSTS_TRACE and not host:
            return [session.host_file(h) for h in hosts.split(",") if h]
        if host and host != ALL_HOSTS:
            return [session.host_file(host)]
        if tool.hosts_mode == tool_registry.HOSTS_SINGLE and len(session.host_files) > 1:
            raise InvalidArgument(
                f"Tool {tool.name} shows one host at a time; choose one of "
                f"{', '.join(session.hosts())}."
            )
        return list(session.host_files)


def _read_profile(path: str) -> Any:
    """One decoder per input format: XSpace protobufs, else Chrome-trace JSON."""
    if path.endswith((XPLANE_SUFFIX, XPLANE_SUFFIX + ".gz")):
        return read_xspace(path)
    return read_chrome_trace(path)


def _space_size(space: Any) -> int:
    # The preprocessed copy and per-host analyses are memoised on the Space, so
    # they leave the cache with it: count them in its share of the budget.
    return 3 * space.nbytes


@dataclasses.dataclass(frozen=True)
class _Body:
    """Serialised tool data, replayed by every request that hits the cache."""

    data: bytes

    def __call__(self) -> list:
        return [self.data]


def _to_result(output: Any) -> ToolResult:
    if isinstance(output, ToolOutput):
        if output.chunks is not None:
            return ToolResult(output.content_type, output.chunks, output.json_obj)
        output = output.json_obj
    if isinstance(output, bytes):
        body = output
    else:
        body = json.dumps(output, separators=(",", ":"), ensure_ascii=False).encode()
    return ToolResult("application/json", _Body(body), output)


def _result_size(result: Any) -> int:
    if isinstance(result, NotApplicable):
        return len(result.message) + 200
    if isinstance(result.chunks, _Body):
        # The bytes, plus the parsed object kept for CSV export (a few times larger).
        return 4 * len(result.chunks.data)
    return 1 << 20  # streamed: only the generator's closure is kept


def _tables_of(obj: Any) -> list:
    if isinstance(obj, dict) and "cols" in obj:
        return [obj]
    if isinstance(obj, list):
        return [t for t in obj if isinstance(t, dict) and "cols" in t]
    return []


def _first_non_empty(tables: list) -> int:
    return next((i for i, t in enumerate(tables) if t.get("cols")), 0)
