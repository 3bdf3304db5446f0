"""``tbprof advise PATH``: the advisor's findings for a profile, for people and for CI.

    tbprof advise PATH [--host H] [--format text|json] [--fail-on critical|warning]

PATH is a log directory, a session folder or one ``.xplane.pb`` file (the first
run found is advised). ``--fail-on`` makes the exit status 2 when a finding of
that severity or worse exists, so a CI job can gate on it.
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
        raise ProfileError(f"No .xplane.pb profile found at {args.path}.")
    run = runs[0]
    session = service.logdir.session(run)
    files = list(session.host_files)
    if args.host and args.host != ALL_HOSTS:
        files = [session.host_file(args.host)]
    hosts = [(f.host, service.space(f)) for f in files]
    report = advise(hosts, run=run, host=args.host or "")
    if args.format == "json":
        out = dict(report.as_json(), run=run)
        sys.stdout.write(json.dumps(out, indent=2) + "\n")
    else:
        sys.stdout.write(format_text(report, run))
    if args.fail_on:
        limit = SEVERITY_ORDER[args.fail_on]
        if any(SEVERITY_ORDER[f.severity] <= limit for f in report.findings):
            return EXIT_FINDINGS
    return 0


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
