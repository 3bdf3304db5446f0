"""``tensorboard_plugin_profile.open(path)``: a profile as DataFrames, for notebooks and scripts.

A ``Profile`` is a thin facade over the same ``ProfileService`` that serves the pages, so a
table here holds the numbers the page shows. It selects one run (the first found, or the
one named), and every method answers for that run, all of its hosts unless told:

    import tensorboard_plugin_profile as tbp
    p = tbp.open("logs/")                      # a logdir, a session folder or one file
    p.runs, p.hosts, p.tools
    p.table("framework_op_stats")              # the tool's main table
    p.events(names="Conv", host="vm")          # trace events, one row each, in columns
    p.steps(), p.advise(), p.sql("select name, sum(duration_ps) from events group by 1")

Errors are the service's (``common.errors``): ``NotFound`` for an unknown run, host or
tool, ``InvalidArgument`` for a bad parameter, ``NotApplicable`` when a tool has nothing
for this profile; each says what to do. docs/notebook.md has a worked example.
"""

from __future__ import annotations

import dataclasses
import html
import os
from typing import Any, Iterator, Optional, Sequence, Union

import pandas as pd

from ..common.errors import InvalidArgument, NotFound
from ..service import ProfileService
from ..store.cache_config import CacheConfig
from ..tools import ALL_HOSTS
from . import events as event_frames
from .tables import table_frame, tables_of

Hosts = Union[None, str, Sequence[str]]

# Where each view of ``p.sql`` and each method below reads its rows, by input format: the
# first tool the run lists wins.
STEP_TOOLS = ("overview_page", "pytorch_overview")
OP_STATS_TOOLS = ("framework_op_stats", "pytorch_operators")
KERNEL_TOOLS = ("kernel_stats", "pytorch_kernels")
_STEP_NAME_IDS = ("stepnum", "step")


def open_profile(
    path: str, run: Optional[str] = None, config: Optional[CacheConfig] = None
) -> Profile:
    """The profile at ``path`` (see ``Profile``); ``run`` picks one of ``p.runs``."""
    return Profile(ProfileService(path, config=config), run)


class Profile:
    """One run of a log directory, answered as DataFrames (see the module docstring)."""

    def __init__(self, service: ProfileService, run: Optional[str] = None):
        self.service = service
        runs = service.runs()
        if not runs:
            raise NotFound(
                f"No profile (.xplane.pb, ProfilerHook timeline or PyTorch trace) found at "
                f"{service.logdir.path}; give a log directory, a session folder or one file."
            )
        if run is not None and run not in runs:
            raise NotFound(f"No run {run!r}; the runs are {', '.join(runs)}.")
        self.run = run if run is not None else runs[0]

    # --- what there is -------------------------------------------------------------
    @property
    def path(self) -> str:
        return str(self.service.logdir.path)

    @property
    def runs(self) -> list:
        return self.service.runs()

    @property
    def hosts(self) -> list:
        return self.service.logdir.session(self.run).hosts()

    @property
    def tools(self) -> list:
        return self.service.run_tools(self.run)

    @property
    def source_format(self) -> str:
        """The input format of the run's files (``common/formats.py``: xspace, pytorch...)."""
        first = self.service.logdir.session(self.run).host_files[0]
        return str(self.service.space(first).source_format)

    def event_names(self, host: Hosts = None) -> pd.Index:
        """The distinct event names of the chosen hosts (all by default), sorted."""
        names: set = set()
        for _, space in self._spaces(host):
            for plane in space.planes:
                names.update(plane.events["name"].cat.categories)
        return pd.Index(sorted(str(n) for n in names), dtype=object)

    def environment(self) -> dict:
        """What the overview says of where the profile ran (device type, hosts, tasks...)."""
        listed = set(self.tools)
        if "overview_page" in listed:
            for frame in self.tables("overview_page"):
                if "device_type" in frame.attrs["properties"]:
                    return dict(frame.attrs["properties"])
        if "pytorch_overview" in listed:
            for frame in self.tables("pytorch_overview", host=self.hosts[0]):
                if list(frame.columns) == ["property", "value"]:
                    return dict(zip(frame["property"].tolist(), frame["value"].tolist()))
        return {}

    def with_run(self, run: str) -> Profile:
        """The same profile, another of its runs (sharing the decoded files' cache)."""
        return Profile(self.service, run)

    # --- tools ---------------------------------------------------------------------
    def data(self, tool: str, host: Optional[str] = None, **params: Any) -> Any:
        """A tool's answer as parsed JSON (for tools that are not tables, like op_profile)."""
        params = {k: str(v) for k, v in params.items()}
        params.setdefault("run", self.run)  # the advisor's links name the run
        result = self.service.tool_data(self.run, tool, host=host, params=params)
        parsed = result.json()
        if parsed is None:
            raise InvalidArgument(
                f"Tool {tool} streams its answer (content type {result.content_type}); "
                "read its events with Profile.events() instead."
            )
        return parsed

    def tables(self, tool: str, host: Optional[str] = None, **params: Any) -> list:
        """Every table of a tool, as DataFrames in the tool's order."""
        found = tables_of(self.data(tool, host, **params))
        if not found:
            raise InvalidArgument(
                f"Tool {tool} answers with no table; read it with Profile.data({tool!r})."
            )
        return [table_frame(t, tool) for t in found]

    def table(
        self, tool: str, host: Optional[str] = None, table: Optional[int] = None, **params: Any
    ) -> pd.DataFrame:
        """A tool's main table (its first with columns), or table number ``table``."""
        found = tables_of(self.data(tool, host, **params))
        if not found:
            raise InvalidArgument(
                f"Tool {tool} answers with no table; read it with Profile.data({tool!r})."
            )
        index = (
            table
            if table is not None
            else next((i for i, t in enumerate(found) if t.get("cols")), 0)
        )
        if not 0 <= index < len(found):
            raise InvalidArgument(f"Table {index} does not exist; tool {tool} has {len(found)}.")
        return table_frame(found[index], tool)

    def compare(
        self,
        baseline: Union[Profile, str],
        tool: str,
        host: Optional[str] = None,
        baseline_host: Optional[str] = None,
        step: Optional[str] = None,
        baseline_step: Optional[str] = None,
        scope: Optional[str] = None,
    ) -> pd.DataFrame:
        """This run (the experiment) against ``baseline``: a ``Profile``, a run of this log
        directory, or the path of another profile. One row per aligned row of ``tool``
        (docs/compare.md): its keys, ``status`` (common, added, removed) and, per value,
        ``*_base``, ``*_exp``, ``*_delta``, ``*_delta_pct``; ``attrs["summary"]`` says it in
        a line. ``step``/``baseline_step`` pick one step of each side (default: average).
        ``scope`` (``pytorch_operators``): ``"all"`` threads (default) or
        ``"main_thread_steps"``, the step-marking thread inside the steps, as
        torch-tb-profiler's diff view counts."""
        from .compare import Side, compare_runs

        owned = None
        if isinstance(baseline, str):
            if baseline in self.runs:
                baseline = self.with_run(baseline)
            else:
                baseline = owned = open_profile(baseline, config=self.service.config)
        try:
            base = Side(baseline.service, baseline.run, baseline_host, baseline_step)
            return compare_runs(base, Side(self.service, self.run, host, step), tool, scope)
        finally:
            if owned is not None:
                owned.close()

    # --- events --------------------------------------------------------------------
    def events(
        self,
        host: Hosts = None,
        start_ps: Optional[int] = None,
        end_ps: Optional[int] = None,
        names: event_frames.Names = None,
        stats: Sequence[str] = (),
    ) -> pd.DataFrame:
        """Trace events of the chosen hosts (all by default) in one DataFrame.

        One row per event (host, plane, line, name, start_ps, duration_ps and the
        well-known stats the events carry), those overlapping [start_ps, end_ps) whose name
        matches ``names`` (a regular expression, or a list of exact names); ``stats`` adds
        columns of other stats by name (PyTorch's ``correlation``, ``stream``...).
        """
        batches = self.iter_events(host, start_ps, end_ps, names, stats=stats)
        return event_frames.concat_batches(batches)

    def iter_events(
        self,
        host: Hosts = None,
        start_ps: Optional[int] = None,
        end_ps: Optional[int] = None,
        names: event_frames.Names = None,
        batch_rows: int = event_frames.BATCH_ROWS,
        stats: Sequence[str] = (),
    ) -> Iterator[pd.DataFrame]:
        """``events`` in batches of at most ``batch_rows`` rows, one host decoded at a time."""
        return event_frames.event_batches(
            self._spaces(host), start_ps, end_ps, names, batch_rows, stats
        )

    def _spaces(self, host: Hosts) -> Iterator[tuple]:
        session = self.service.logdir.session(self.run)
        if host is None or host == ALL_HOSTS:
            files = list(session.host_files)
        else:
            files = [session.host_file(h) for h in ([host] if isinstance(host, str) else host)]
        for f in files:
            yield f.host, self.service.space(f)

    # --- views across hosts ----------------------------------------------------------
    def steps(self) -> pd.DataFrame:
        """One row per step and host: ``host``, ``step``, ``step_time_ms`` and the step's
        breakdown as the overview page shows it (empty when the profile marks no steps)."""
        frames = []
        for host, tables in self._per_host(STEP_TOOLS):
            step_table = next((t for t in tables if set(t.columns) & set(_STEP_NAME_IDS)), None)
            if step_table is not None:
                frames.append(_step_rows(step_table, host))
        if not frames:
            return pd.DataFrame(
                {
                    "host": pd.Series(dtype="string"),
                    "step": pd.Series(dtype="string"),
                    "step_time_ms": pd.Series(dtype="float64"),
                }
            )
        return pd.concat(frames, ignore_index=True)

    def op_stats(self) -> pd.DataFrame:
        """The op statistics of every host (TF stats; PyTorch's operators), with ``host``."""
        return _with_hosts([(h, tables[0]) for h, tables in self._per_host(OP_STATS_TOOLS)])

    def kernels(self) -> pd.DataFrame:
        """The GPU kernels of every host (kernel stats; PyTorch's kernels), with ``host``."""
        return _with_hosts([(h, tables[0]) for h, tables in self._per_host(KERNEL_TOOLS)])

    def _per_host(self, candidates: Sequence[str]) -> list:
        """(host, its tables) of the first tool of ``candidates`` the run lists, per host."""
        listed = set(self.tools)
        tool = next((t for t in candidates if t in listed), None)
        if tool is None:
            return []
        return [(host, self.tables(tool, host=host)) for host in self.hosts]

    # --- advice, SQL -----------------------------------------------------------------
    def advise(self, host: Optional[str] = None) -> Advice:
        """The advisor's findings for the run (all hosts, or one)."""
        from ..analysis.advice.findings import advise

        session = self.service.logdir.session(self.run)
        files = list(session.host_files)
        if host and host != ALL_HOSTS:
            files = [session.host_file(host)]
        report = advise([(f.host, self.service.space(f)) for f in files], self.run, host or "")
        return Advice(self.run, report.framework, list(report.findings))

    def sql(
        self, query: str, timeout_s: float = 30.0, max_rows: Optional[int] = None
    ) -> pd.DataFrame:
        """The answer to one read-only SQL SELECT over the views ``events``, ``steps``,
        ``op_stats`` and ``kernels`` of every host, stopped after ``timeout_s`` (DuckDB:
        ``pip install 'tensorboard_plugin_profile[sql]'``; api/sql.py)."""
        from .sql import run_query

        return run_query(self, query, timeout_s, max_rows)

    # --- life, display -----------------------------------------------------------------
    def export(self, path: str) -> str:
        """Writes this run's profile files as one ``.zip`` at ``path`` (a folder: a file named
        after the run inside it); returns the file's path. Bounded as the page's download
        (``TBPROF_EXPORT_MAX_BYTES``); unzip it into ``<logdir>/plugins/profile/`` to reopen."""
        name, chunks = self.service.export_session(self.run)
        if os.path.isdir(path):
            path = os.path.join(path, name)
        partial = path + ".partial"
        try:
            with open(partial, "wb") as out:
                for chunk in chunks:
                    out.write(chunk)
            os.replace(partial, path)
        finally:
            if os.path.exists(partial):
                os.remove(partial)
        return path

    def close(self) -> None:
        self.service.close()

    def __enter__(self) -> Profile:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        return (
            f"<Profile {self.path!r} run={self.run!r} hosts={self.hosts} ({len(self.runs)} runs)>"
        )

    def _repr_html_(self) -> str:
        runs = self.runs
        listed = ", ".join(runs[:8]) + (", …" if len(runs) > 8 else "")
        rows = [
            ("path", self.path),
            ("run", f"{self.run} (runs: {listed})"),
            ("hosts", ", ".join(self.hosts)),
            ("tools", ", ".join(self.tools)),
        ]
        cell = "<tr><th style='text-align:left'>{}</th><td style='text-align:left'>{}</td></tr>"
        cells = "".join(cell.format(html.escape(k), html.escape(v)) for k, v in rows)
        return f"<table><caption>Profile</caption>{cells}</table>"


@dataclasses.dataclass
class Advice:
    """The advisor's findings (``analysis.advice.findings.Finding``), most severe first."""

    run: str
    framework: str
    findings: list

    @property
    def frame(self) -> pd.DataFrame:
        """One row per finding: check, severity, title, evidence, advice."""
        columns = ("check", "severity", "title", "evidence", "advice")
        data = {
            c: pd.array([getattr(f, c) for f in self.findings], dtype="string") for c in columns
        }
        return pd.DataFrame(data)

    def __len__(self) -> int:
        return len(self.findings)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.findings)

    def __repr__(self) -> str:
        lines = [f"Advice for {self.run} ({self.framework} profile): {len(self.findings)} findings"]
        lines += [f"  [{f.severity.upper()}] {f.title}" for f in self.findings]
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        caption = html.escape(f"Advice for {self.run} ({self.framework} profile)")
        return self.frame.to_html(index=False, escape=True).replace(
            "<thead>", f"<caption>{caption}</caption><thead>", 1
        )


def _step_rows(frame: pd.DataFrame, host: str) -> pd.DataFrame:
    """A step table (overview or PyTorch overview) as host, step, step_time_ms, breakdown."""
    step = next(c for c in frame.columns if c in _STEP_NAME_IDS)
    frame = frame.drop(columns=[c for c in ("tooltip",) if c in frame.columns])
    frame = frame.rename(columns={step: "step"})
    frame = frame[frame["step"] != "Average"]  # PyTorch's first row is the mean over steps
    if "step_time_ms" not in frame.columns and "total_us" in frame.columns:
        frame = frame.rename(columns={"total_us": "step_time_us"})
        frame.insert(1, "step_time_ms", frame["step_time_us"] / 1e3)
    ordered = ["step", "step_time_ms"] + [
        c for c in frame.columns if c not in ("step", "step_time_ms")
    ]
    frame = frame[ordered].reset_index(drop=True)
    frame.insert(0, "host", pd.array([host] * len(frame), dtype="string"))
    return frame


def _with_hosts(per_host: list) -> pd.DataFrame:
    frames = []
    for host, frame in per_host:
        frame = frame.copy()
        frame.insert(0, "host", pd.array([host] * len(frame), dtype="string"))
        frames.append(frame)
    if not frames:
        return pd.DataFrame({"host": pd.Series(dtype="string")})
    out = pd.concat(frames, ignore_index=True)
    out.attrs = dict(frames[0].attrs)
    return out
