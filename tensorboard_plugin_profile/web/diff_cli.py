"""``tbprof diff BASE EXP --tool TOOL``: what changed between a baseline and an experiment.

    tbprof diff BASE EXP --tool framework_op_stats [--format text|json|csv] [-n 20]
        [--base-run RUN] [--run RUN] [--base-host H] [--host H] [--base-step S] [--step S]
        [--scope all|main_thread_steps]

BASE and EXP are log directories, session folders or profile files, in any input format
(the same one twice compares two of its runs with ``--base-run``/``--run``). The answer is
``api/compare.py``'s (docs/compare.md): text prints the summary and the rows that changed
most; json the comparison as a DataTable (as ``/data?base_run=`` answers); csv every row.
Exit status: 0 answered, 1 an error (the message on stderr), 2 a usage error.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..api.compare import COMPARABLE, SCOPES, compare_runs
from ..api.compare_table import to_datatable
from ..api.profile import Profile, open_profile
from ..common import json_out
from ..store.cache_config import CacheConfig, add_flags
from .agent_cli import columns_text


def add_diff_arguments(commands: Any) -> None:
    parser = commands.add_parser("diff", help="compare a baseline run with an experiment")
    parser.add_argument("base", help="the baseline: log dir, session folder or profile file")
    parser.add_argument("exp", help="the experiment: log dir, session folder or profile file")
    parser.add_argument("--tool", required=True, help=f"one of {', '.join(COMPARABLE)}")
    parser.add_argument("--format", choices=("text", "json", "csv"), default="text")
    parser.add_argument("--base-run", dest="base_run", default=None, help="default: the first")
    parser.add_argument("--run", default=None, help="the experiment's run (default: the first)")
    parser.add_argument("--base-host", dest="base_host", default=None, help="default: all")
    parser.add_argument("--host", default=None, help="the experiment's host (default: all)")
    parser.add_argument("--base-step", dest="base_step", default=None, help="default: average")
    parser.add_argument("--step", default=None, help="the experiment's step (default: average)")
    parser.add_argument(
        "--scope",
        choices=SCOPES,
        default=None,
        help="pytorch_operators: which calls count, every thread (all, the default) or the "
        "step-marking thread inside the steps (main_thread_steps, as torch-tb-profiler's diff)",
    )
    parser.add_argument("-n", type=int, default=20, help="rows to print as text (default 20)")
    add_flags(parser)
    parser.set_defaults(func=_diff)


def _diff(args: argparse.Namespace) -> int:
    config = CacheConfig.from_flags(args)
    with open_profile(args.base, args.base_run, config) as base:
        if args.exp == args.base:
            frame = _compare(base, base.with_run(args.run) if args.run else base, args)
        else:
            with open_profile(args.exp, args.run, config) as exp:
                frame = _compare(base, exp, args)
    if args.format == "json":
        sys.stdout.write(json_out.dumps(to_datatable(frame), ensure_ascii=False) + "\n")
    elif args.format == "csv":
        sys.stdout.write(frame.to_csv(index=False))
    else:
        sys.stdout.write(_text(frame, args.n))
    return 0


def _compare(base: Profile, exp: Profile, args: argparse.Namespace) -> Any:
    from ..api.compare import Side

    return compare_runs(
        Side(base.service, base.run, args.base_host, args.base_step),
        Side(exp.service, exp.run, args.host, args.step),
        args.tool,
        args.scope,
    )


def _text(frame: Any, n: int) -> str:
    """The summary, then the keys and the first value's four columns of the top rows."""
    value = frame.attrs["values"][0]
    names = list(frame.attrs["keys"]) + ["status"]
    names += [f"{value}_{s}" for s in ("base", "exp", "delta", "delta_pct")]
    shown = frame[names].head(n).astype(object).where(frame[names].head(n).notna(), None)
    head = (
        f"{frame.attrs['tool']}: {frame.attrs['base_run']} (base) -> "
        f"{frame.attrs['exp_run']} (exp)\n{frame.attrs['summary']}\n"
    )
    text = head + columns_text(names, shown.values.tolist())
    if len(frame) > n:
        text += f"({n} of {len(frame)} rows shown; -n for more, --format csv for all)\n"
    return text
