"""ProfileService: the one object behind the plugin, the server, the CLI and notebooks.

It answers the questions of the HTTP API (runs, tools, hosts, tool data, CSV)
from a log directory, and owns the caches (docs/cache.md): decoded Spaces
(``space_store``) keyed by the file's (path, size, mtime), and serialized tool
results keyed by those and the parameters the tool reads, in memory under one
byte budget (with admission control for decodes in flight) and on disk in a
cache directory that survives restarts. A cold request decodes; later requests
for any tool of that session reuse the decoded Space.

Usage::

    service = ProfileService("/tmp/logs")
    run = service.runs()[0]
    result = service.tool_data(run, "trace_viewer", host="vm")
    print(result.content_type, b"".join(result.chunks())[:80])
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import re
import time
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

from . import tools as tool_registry
from .common import json_out, work
from .common.errors import InvalidArgument, NotApplicable, NotFound, ProfileTooLarge
from .common.formats import XSPACE
from .common.params import int_param
from .common.progress import ProgressTracker
from .kernels import blockpool
from .pod.host_map import HostMap
from .store import session_export
from .store.cache import ByteBudgetCache
from .store.cache_config import DEFAULT_MEMORY_BYTES, CacheConfig
from .store.disk_cache import DiskCache, code_fingerprint
from .store.formats import reader_for
from .store.host_pool import pool_for
from .store.logdir import Session
from .store.remote_logdir import open_logdir
from .store.space_store import SpaceStore
from .tools import ALL_HOSTS, ToolOutput
from .tools.datatable import to_csv

logger = logging.getLogger(__name__)

DEFAULT_CACHE_BYTES = DEFAULT_MEMORY_BYTES
_UNSAFE_FILENAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")


@dataclasses.dataclass(frozen=True)
class ToolResult:
    """A tool's answer, ready to send: bytes produced lazily by ``chunks``."""

    content_type: str
    chunks: Callable[[], Iterable[bytes]]

    def json(self) -> Any:
        """The parsed answer (for CSV export); None for streamed or non-JSON answers."""
        if not isinstance(self.chunks, _Body) or self.content_type != "application/json":
            return None
        return json.loads(self.chunks.data)


class ProfileService:
    def __init__(
        self,
        logdir: str,
        cache_bytes: Optional[int] = None,
        config: Optional[CacheConfig] = None,
    ):
        """``config`` defaults to the environment's (``TBPROF_CACHE_DIR`` & co., docs/cache.md)."""
        config = config or CacheConfig.from_flags()
        if cache_bytes is not None:
            config = dataclasses.replace(config, memory_bytes=cache_bytes)
        self.config = config
        self.cache = ByteBudgetCache(config.memory_bytes, config.admission_timeout_s)
        self.disk = DiskCache(config.disk_dir, config.disk_bytes) if config.disk_dir else None
        if self.disk is not None and not self.disk.usable():
            self.disk = None  # a folder the cache did not make (docs/cache.md): stay off
        self.logdir = open_logdir(logdir, self.disk)  # a path, or a gs://, s3://, az:// URL
        self.spaces = SpaceStore(self.cache, self.disk, pool_for(config.workers))
        self.host_map = HostMap(
            self.spaces, self.cache, self.disk, self.spaces.pool, _cluster(config)
        )
        self.progress = ProgressTracker()

    def close(self) -> None:
        """Finishes background disk writes and stops worker processes."""
        if self.disk is not None:
            self.disk.flush()
        if self.spaces.pool is not None:
            self.spaces.pool.shutdown()
        if self.host_map.cluster is not None:
            self.host_map.cluster.shutdown()

    # --- discovery ---------------------------------------------------------
    def runs(self) -> list:
        return self.logdir.runs()

    def is_active(self) -> Optional[bool]:
        """Cached answer to "is there anything to show?" (never touches disk)."""
        return self.logdir.has_runs_cached()

    def diagnose(self) -> dict:
        return dataclasses.asdict(self.logdir.diagnose())

    def run_tools(self, run: str) -> list:
        """The tools with data for ``run``, judged on its first host. A pod session's list
        comes from the hosts' summaries (made in the workers, like ``module_list``), so the
        server decodes no host to answer it; one host's comes from its decoded Space."""
        session = self.logdir.session(run)
        if not session.host_files:
            return []
        files = list(session.host_files)
        if session.all_steps:  # the steps together: their time line; each step is its own run
            return ["trace_viewer@"]
        if len(files) > 1 and _all_xspace(files):
            return list(self.host_map.summaries(files)[0].tool_names)
        key = ("run_tools", code_fingerprint()) + files[0].key
        compute = lambda: _to_result(tool_registry.listed_tools(self.space(files[0])))  # noqa: E731
        with self._reading(files[:1]):
            return self._cached_result(key, compute).json()

    def hosts(self, run: str, tag: str) -> list:
        session = self.logdir.session(run)
        tool = self._tool(tag)
        names = session.hosts()
        if len(names) > 1:
            if session.all_steps and tool.hosts_mode == tool_registry.HOSTS_TRACE:
                names = [ALL_HOSTS] + names  # opens on every step; one step on request
            elif tool.hosts_mode == tool_registry.HOSTS_COMBINED:
                names = [ALL_HOSTS]
            elif tool.hosts_mode == tool_registry.HOSTS_EACH_OR_ALL:
                names = sorted(names + [ALL_HOSTS])
        return [{"hostname": name} for name in names]

    def export_session(self, run: str, max_bytes: Optional[int] = None) -> tuple:
        """(file name, iterator of bytes): the run's profile files as one ``.zip``
        (``store/session_export.py``: listed files only, bounded)."""
        return session_export.export_session(self.logdir.session(run), max_bytes)

    def module_list(self, run: str, order: str = "name") -> list:
        """The compiled programs of a session (``module(program_id)``), from every host (a
        pod session's from the hosts' summaries: no host is decoded here). ``order="time"``
        lists the program with the most XLA op time first (the XLA pages open on it)."""
        from .analysis.host_summary import modules_by_time, summaries_of

        if order not in ("name", "time"):
            raise InvalidArgument(f"order must be 'name' or 'time', not {order!r}.")
        session = self.logdir.session(run)
        files = session.host_files
        if len(files) > 1 and _all_xspace(files):
            summaries = self.host_map.summaries(list(files))
        else:
            with self._reading(files):
                summaries = [s for _, s in summaries_of([(f.host, self.space(f)) for f in files])]
        if order == "time":
            return modules_by_time(summaries)
        return sorted({name for s in summaries for name in s.module_names})

    # --- data --------------------------------------------------------------
    def space(self, host_file: Any) -> Any:
        """The decoded Space of one host file, from cache when unchanged."""
        return self.spaces.get(host_file)

    def tool_data(
        self,
        run: str,
        tag: str,
        host: Optional[str] = None,
        hosts: Optional[str] = None,
        params: Optional[Mapping[str, str]] = None,
    ) -> ToolResult:
        tool = self._tool(tag)
        session = self.logdir.session(run)
        selected = self._select_hosts(session, tool, host, hosts)
        source = reader_for(selected[0].name)
        if source.name not in tool.formats:
            reason = f"Tool {tool.name} does not apply to this run ({source.display_name})."
            raise self._not_applicable(run, reason)
        relevant = tool.relevant_params(params or {})
        key: tuple = ("tool", code_fingerprint(), tool.name, tuple(sorted(relevant.items())))
        key += tuple(f.key for f in selected)
        try:
            with self._reading(selected):
                return self._cached_result(
                    key,
                    lambda: self._convert(run, tool, selected, relevant),
                    on_disk=tool.disk_cached,
                )
        except NotApplicable as e:
            raise self._not_applicable(run, e.message) from None
        except MemoryError:
            # The process's memory or address-space limit refused an allocation while
            # decoding or analysing: a clear 413 (nothing is cached, so a retry once memory
            # is free computes afresh), never an opaque 500.
            raise _out_of_memory(tool.name, [f.host for f in selected]) from None

    def _reading(self, host_files: Sequence[Any]) -> Any:
        """Pins the Spaces of ``host_files`` while a request reads them, until its answer is
        stored: making room for it (or for another request) drops other data, never them,
        so the request and the next one never decode them again (docs/cache.md)."""
        return self.cache.pinned([self.spaces.key(f) for f in host_files])

    def _not_applicable(self, run: str, reason: str) -> NotApplicable:
        """``reason``, then the tools that have data for ``run`` (also as ``tools``)."""
        listed = [t.rstrip("@") for t in self.run_tools(run)]
        return NotApplicable(
            f"{reason} Tools with data for run {run}: {', '.join(listed)}.", {"tools": listed}
        )

    def _convert(self, run: str, tool: Any, selected: list, params: dict) -> Any:
        if tool.from_summaries and len(selected) > 1 and _all_xspace(selected):
            return self._reduce(run, tool, selected, params)
        if tool.reads_one_module and len(selected) > 1 and _all_xspace(selected):
            selected = self._module_host(selected, params.get("module_name"))
        with self.progress.task(run, tool.name) as task, self._computing(), blockpool.reusing():
            need = self.spaces.estimate(selected)
            listen = work.listening(progress=task.detail)  # the decoder's "35 of 120 MB read"
            with listen, self.cache.reservation(need, on_wait=task.stage):
                spaces = self.spaces.get_many(selected, task.stage)
                task.stage("converting")
                started = time.perf_counter()
                try:
                    output = tool.convert(spaces, params)
                except NotApplicable as e:
                    return e  # as much an answer as data: cached, raised to every caller
                finally:
                    self.spaces.recharge(selected, spaces)
            logger.info(
                "%s on %s (%s): %.0f ms",
                tool.name,
                run,
                ",".join(f.host for f in selected),
                (time.perf_counter() - started) * 1e3,
            )
            return _to_result(output)  # serialised once; warm requests send the bytes

    def _reduce(self, run: str, tool: Any, selected: list, params: dict) -> Any:
        """Several XSpace hosts: each host's summary (the pod map), merged by the tool."""
        with self.progress.task(run, tool.name) as task, self._computing():
            if tool.with_details:
                summaries = self.host_map.detailed(selected, task.stage)
            else:
                summaries = self.host_map.summaries(selected, task.stage)
            task.stage("merging hosts")
            started = time.perf_counter()
            try:
                output = tool.reduce([(f.host, s) for f, s in zip(selected, summaries)], params)
            except NotApplicable as e:
                return e
            logger.info(
                "%s on %s (%d hosts, merged): %.0f ms",
                tool.name,
                run,
                len(selected),
                (time.perf_counter() - started) * 1e3,
            )
            return _to_result(output)

    def _module_host(self, selected: list, name: Optional[str]) -> list:
        """The one host whose program a graph or memory view of a pod session shows: found
        in the hosts' summaries, so only that host is decoded (not all of them)."""
        from .analysis.host_summary import module_host

        if not name:
            return selected[:1]  # the tool says which parameter is missing
        found = module_host(self.host_map.summaries(selected), name)
        if found is None:
            raise NotFound(f"No HLO module named {name!r} in this profile (see /module_list).")
        return [selected[found]]

    def _computing(self) -> Any:
        """While a tool computes, the disk cache holds back its background stores."""
        return self.disk.busy() if self.disk is not None else contextlib.nullcontext()

    def _cached_result(
        self, key: tuple, compute: Callable[[], Any], on_disk: bool = True
    ) -> ToolResult:
        """A result from memory, else from disk, else computed (and then kept in both;
        only in memory unless ``on_disk``)."""
        disk = self.disk if on_disk else None

        def load_or_compute() -> Any:
            stored = disk.load_bytes("result", key) if disk is not None else None
            if stored is not None:
                return _from_disk(*stored)
            result = compute()
            if disk is not None:
                _to_disk(disk, key, result)
            return result

        result = self.cache.get_or_compute(key, load_or_compute, size_of=_result_size)
        if isinstance(result, ToolResult) and not isinstance(result.chunks, _Body):
            # Streamed: a closure over a Space or its trace index. Kept, it would keep them
            # alive, uncounted, after the budget evicted or shed them; the next request
            # makes another from the memoised index (milliseconds).
            self.cache.discard(key)
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
        tables = _tables_of(result.json())
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
            names = [n for n in tool_registry.TOOL_ORDER if not n.endswith("@")]
            raise NotFound(
                f"Unknown tool {tag!r}. Tools: {', '.join(names)}; `run_tools` lists those "
                "with data for a run.",
                {"tools": names},
            )
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


def _out_of_memory(tool: str, hosts: Sequence[str]) -> ProfileTooLarge:
    return ProfileTooLarge(
        f"{tool} for {', '.join(hosts)} needs more memory than the server could get. Run the "
        "server where it has more memory (or a higher memory limit), give it a smaller memory "
        "budget for kept profiles (--cache_bytes), or record a shorter profile."
    )


def _all_xspace(host_files: Sequence[Any]) -> bool:
    return all(reader_for(f.name).name == XSPACE for f in host_files)


def _cluster(config: CacheConfig) -> Any:
    """The Dask cluster per-host work runs on, when the server was given one."""
    if not config.dask_scheduler:
        return None
    from .pod.dask_pool import DaskPool

    return DaskPool(config.dask_scheduler)


@dataclasses.dataclass(frozen=True)
class _Body:
    """Serialised tool data, replayed by every request that hits the cache."""

    data: bytes

    def __call__(self) -> list:
        return [self.data]


def _to_result(output: Any) -> ToolResult:
    if isinstance(output, ToolOutput):
        if output.chunks is None:
            output = output.json_obj
        else:
            chunks = output.chunks()
            if not isinstance(chunks, (list, tuple)):  # a generator: streamed, never kept
                return ToolResult(output.content_type, output.chunks)
            return ToolResult(output.content_type, _Body(b"".join(chunks)))
    if isinstance(output, bytes):
        body = output
    else:
        body = json_out.utf8(json_out.dumps(output, separators=(",", ":"), ensure_ascii=False))
    return ToolResult("application/json", _Body(body))


def _to_disk(disk: DiskCache, key: tuple, result: Any) -> None:
    if isinstance(result, NotApplicable):
        disk.store_bytes("result", key, result.message.encode(), {"not_applicable": True})
    elif isinstance(result.chunks, _Body):
        disk.store_bytes("result", key, result.chunks.data, {"content_type": result.content_type})


def _from_disk(meta: dict, data: bytes) -> Any:
    if meta.get("not_applicable"):
        return NotApplicable(data.decode())
    return ToolResult(str(meta.get("content_type", "application/json")), _Body(data))


def _result_size(result: Any) -> int:
    if isinstance(result, NotApplicable):
        return len(result.message) + 200
    if isinstance(result.chunks, _Body):
        return len(result.chunks.data) + 200
    return 1 << 10  # streamed: dropped once its request has it (_cached_result)


def _tables_of(obj: Any) -> list:
    if isinstance(obj, dict) and "cols" in obj:
        return [obj]
    if isinstance(obj, list):
        return [t for t in obj if isinstance(t, dict) and "cols" in t]
    return []


def _first_non_empty(tables: list) -> int:
    return next((i for i, t in enumerate(tables) if t.get("cols")), 0)
