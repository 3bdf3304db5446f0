"""``tbprof advise PATH``: the advisor's findings for a profile, for people and for CI.

    tbprof advise PATH [--run RUN] [--host H] [--format text|json] [--fail-on critical|warning]

PATH is a log directory, a session folder or one profile file. Every run found is
advised, one after the other (``--run`` picks one); ``--fail-on`` makes the exit status
2 when a finding of that severity or worse exists in any of them, so a CI job can gate
on a whole log directory. Before, only the first run was advised, silently.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..analysis.advice.findings import SEVERITY_ORDER, advise
from ..common.errors import ProfileError
from ..service import ProfileService
from ..store.cache_config import CacheConfig, add_flags
from ..tools import ALL_HOSTS

EXIT_FINDINGS = 2


def add_advise_arguments(commands: Any) -> None:
    parser = commands.add_parser("advise", help="check a profile for known performance problems")
    parser.add_argument("path", help="log dir, session folder or .xplane.pb file")
    parser.add_argument("--run", default=None, help="one run (default: every run)")
    parser.add_argument("--host", default=None, help="one host (default: all hosts)")
    parser.add_argument("--format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--fail-on",
        choices=("critical", "warning"),
        default=None,
        help="exit with status 2 when a finding this severe (or worse) exists",
    )
    add_flags(parser)
    parser.set_defaults(func=run_advise)


def run_advise(args: argparse.Namespace) -> int:
    service = ProfileService(args.path, config=CacheConfig.from_flags(args))
    try:
        return _advise(service, args)
    finally:
        service.close()  # decodes land in the disk cache before exiting


def _advise(service: ProfileService, args: argparse.Namespace) -> int:
    runs = service.runs()
    if not runs:
        raise ProfileError(f"No profile (.xplane.pb or Chrome trace) found at {args.path}.")
    if args.run is not None:
        if args.run not in runs:
            raise ProfileError(f"No run {args.run!r} at {args.path}; runs: {', '.join(runs)}.")
        runs = [args.run]
    reports = [(run, _report(service, run, args.host)) for run in runs]
    if args.format == "json":
        objects = [dict(report.as_json(), run=run) for run, report in reports]
        out: Any = objects[0] if len(objects) == 1 else {"runs": objects}
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        sys.stdout.write("\n".join(format_text(report, run) for run, report in reports))
    if args.fail_on:
        limit = SEVERITY_ORDER[args.fail_on]
        findings = [f for _, report in reports for f in report.findings]
        if any(SEVERITY_ORDER[f.severity] <= limit for f in findings):
            return EXIT_FINDINGS
    return 0


def _report(service: ProfileService, run: str, host: Any) -> Any:
    """The advisor's report of one run (its Spaces leave the cache as the budget needs)."""
    session = service.logdir.session(run)
    files = list(session.host_files)
    if host and host != ALL_HOSTS:
        files = [session.host_file(host)]
    hosts = [(f.host, service.space(f)) for f in files]
    return advise(hosts, run=run, host=host or "")


def format_text(report: Any, run: str) -> str:
    lines = [f"Advisor: {run} ({report.framework} profile), {len(report.findings)} findings", ""]
    for finding in report.findings:
        lines.append(f"[{finding.severity.upper()}] {finding.title}")
        lines.append(f"    evidence: {finding.evidence}")
        lines.append(f"    what to do: {finding.advice}")
        if finding.link:
            lines.append(f"    see: {finding.link['query']}")
        lines.append("")
    return "\n".join(lines)
