"""``tbprof runs|tools|summary|top-ops|steps|search|sql``: short answers for scripts and agents.

    tbprof runs PATH
    tbprof tools PATH [--run RUN]
    tbprof summary PATH [--run RUN]
    tbprof top-ops PATH [--run RUN] [--host H] [-n 10]
    tbprof steps PATH [--run RUN] [--host H] [-n 50] [--offset 0]
    tbprof search PATH TEXT [--regex] [--run RUN] [--host H] [-n 10]
    tbprof sql PATH "select ..." [--run RUN] [-n 100] [--timeout 30]

Every command takes ``--format text|json`` (text by default) and the cache flags. PATH is
a log directory, a session folder or one profile file; RUN one of ``tbprof runs``
(default: the first). The answers are ``api/answers.py``'s: JSON prints them as they are,
text as aligned columns. Exit status: 0 answered, 1 an error or nothing found (the
message on stderr; ``search`` with no match, like grep), 2 a usage error (argparse).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable

from ..api import answers
from ..api.profile import open_profile
from ..common import json_out
from ..store.cache_config import CacheConfig, add_flags

EXIT_NOT_FOUND = 1
MAX_CELL_CHARS = 60


def add_agent_arguments(commands: Any) -> None:
    def command(name: str, help_text: str, answer: Callable, text: Callable) -> Any:
        parser = commands.add_parser(name, help=help_text)
        parser.add_argument("path", help="log dir, session folder or profile file")
        if name != "runs":
            parser.add_argument("--run", default=None, help="one of `tbprof runs` (default: first)")
        parser.add_argument("--format", choices=("text", "json"), default="text")
        add_flags(parser)
        parser.set_defaults(func=lambda args: _run(args, answer, text))
        return parser

    command("runs", "list the runs and their hosts", lambda p, a: answers.runs(p), _runs_text)
    command("tools", "list the tools of a run", lambda p, a: answers.tools(p), _tools_text)
    command(
        "summary",
        "step time, its breakdown, top ops, environment",
        lambda p, a: answers.summary(p),
        _summary_text,
    )
    top = command(
        "top-ops",
        "the ops with the most self time",
        lambda p, a: answers.top_ops(p, a.n, a.host),
        _page_text,
    )
    _host_and_count(top, 10)
    steps = command(
        "steps",
        "step times and their breakdown",
        lambda p, a: answers.steps(p, a.host, a.offset, a.n),
        _steps_text,
    )
    _host_and_count(steps, 50)
    steps.add_argument("--offset", type=int, default=0, help="first step row to print")
    search = command(
        "search",
        "trace events by name",
        lambda p, a: answers.search(p, a.text, a.regex, a.host, a.n),
        _search_text,
    )
    search.add_argument("text", help="text in event names (case-insensitive)")
    search.add_argument("--regex", action="store_true", help="TEXT is a regular expression")
    _host_and_count(search, 10)
    sql = command(
        "sql",
        "one read-only SQL SELECT over events, steps, op_stats, kernels",
        lambda p, a: answers.sql(p, a.query, a.n, a.timeout),
        _page_text,
    )
    sql.add_argument("query", help='e.g. "select name, count(*) from events group by 1"')
    sql.add_argument("-n", type=int, default=100, help="rows to print at most")
    sql.add_argument("--timeout", type=float, default=30.0, help="seconds before it is stopped")


def _host_and_count(parser: argparse.ArgumentParser, n: int) -> None:
    parser.add_argument("--host", default=None, help="one host (default: all)")
    parser.add_argument("-n", type=int, default=n, help=f"rows to print (default {n})")


def _run(args: argparse.Namespace, answer: Callable, text: Callable) -> int:
    with open_profile(args.path, getattr(args, "run", None), CacheConfig.from_flags(args)) as p:
        result = answer(p, args)
    if args.format == "json":
        sys.stdout.write(json_out.dumps(result, ensure_ascii=False) + "\n")  # one line
    else:
        sys.stdout.write(text(result))
    if isinstance(result, dict) and result.get("matches") == 0:
        verb = "matches" if getattr(args, "regex", False) else "contains"
        print(f"tbprof: no event name {verb} {result['query']!r}.", file=sys.stderr)
        return EXIT_NOT_FOUND
    return 0


# --- text -----------------------------------------------------------------------------
def _runs_text(result: dict) -> str:
    rows = [[r["run"], len(r["hosts"]), ", ".join(r["hosts"])] for r in result["runs"]]
    return columns_text(["run", "hosts", "host names"], rows)


def _tools_text(result: dict) -> str:
    return (
        f"run {result['run']} ({', '.join(result['hosts'])})\n" + "\n".join(result["tools"]) + "\n"
    )


def _summary_text(result: dict) -> str:
    lines = [f"run: {result['run']} ({result['format']}, hosts: {', '.join(result['hosts'])})"]
    steps = result["steps"]
    if steps:
        lines.append(
            f"steps: {steps['count']}, average {steps['average_ms']} ms "
            f"(min {steps['min_ms']}, max {steps['max_ms']})"
        )
        for part in steps["breakdown"]:
            lines.append(f"  {part['part']}: {part['average']} ({part['percent']}% of the step)")
    else:
        lines.append("steps: none marked in this profile")
    for key, value in result["environment"].items():
        lines.append(f"environment.{key}: {value}")
    lines.append("top ops:")
    return "\n".join(lines) + "\n" + _page_text(result["top_ops"])


def _steps_text(result: dict) -> str:
    return _page_text(result)


def _search_text(result: dict) -> str:
    head = f"{result['matches']} events match {result['query']!r}\n"
    if not result["matches"]:
        return head
    return head + _page_text(result["names"]) + "first events:\n" + _page_text(result["events"])


def _page_text(page: dict) -> str:
    text = columns_text(page["columns"], page["rows"])
    shown, total = len(page["rows"]), page.get("total_rows")
    if page.get("truncated") or (total is not None and shown < total):
        more = f" of {total}" if total is not None else " (more rows exist)"
        text += f"({shown} rows shown{more}; -n for more)\n"
    return text


def columns_text(names: list, rows: list) -> str:
    """Aligned columns: numbers right-aligned, long text cut at ``MAX_CELL_CHARS``."""
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [len(n) for n in names]
    for row in cells:
        widths = [max(w, len(c)) for w, c in zip(widths, row)]
    numeric = [
        all(isinstance(r[i], (int, float)) or r[i] is None for r in rows) for i in range(len(names))
    ]

    def line(values: list) -> str:
        parts = [v.rjust(w) if num else v.ljust(w) for v, w, num in zip(values, widths, numeric)]
        return "  ".join(parts).rstrip()

    return "\n".join([line(list(names))] + [line(row) for row in cells]) + "\n"


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        text = f"{value:.3f}".rstrip("0").rstrip(".")
        return text if text not in ("", "-0") else "0"
    text = str(value).replace("\n", " ")
    return text if len(text) <= MAX_CELL_CHARS else text[: MAX_CELL_CHARS - 1] + "…"
