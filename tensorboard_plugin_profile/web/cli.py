"""The ``tbprof`` command (also ``python -m tensorboard_plugin_profile``).

    tbprof serve DIR [--port 8791] [--host 127.0.0.1] [--allowed_hosts NAMES] [cache flags]
                                                                 (or --logdir DIR)
    tbprof advise PATH [--format text|json] [--fail-on critical|warning]
    tbprof convert PATH --tool TOOL [--host H] [--format json|csv] [-o FILE] [cache flags]
    tbprof cache info|clear [--cache_dir DIR]
    tbprof diff BASE EXP --tool TOOL [--format text|json|csv]  compare two runs (diff_cli.py)
    tbprof runs|tools|summary|top-ops|steps|search|sql PATH ... [--format text|json]
                                                                 (agent_cli.py)
    tbprof mcp --logdir DIR                  the MCP server for coding agents (mcp_server.py)

Cache flags (docs/cache.md): --cache_dir DIR, --no_cache, --cache_bytes SIZE,
--disk_cache_bytes SIZE.

DIR may be a log directory, one session folder or one profile file; PATH a
session folder or one profile file: an ``.xplane.pb``, a ProfilerHook
``timeline-N.json`` or a PyTorch ``*.pt.trace.json[.gz]`` (any Chrome-trace JSON). Capture commands
(``capture``, ``monitor``) come from ``capture/``.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from typing import Callable, Optional

from ..common.errors import ProfileError
from ..service import ProfileService
from ..store import remote
from ..store.cache_config import CacheConfig, add_flags
from ..store.disk_cache import DiskCache
from .guard import add_flags as add_host_flags
from .guard import allowed_hosts_setting


def _serve(args: argparse.Namespace) -> int:
    from .server import serve

    logdir = args.logdir or args.path
    if not logdir:
        raise ProfileError("Give the profiles to serve: tbprof serve DIR_OR_FILE (or --logdir).")
    allowed = allowed_hosts_setting(args.allowed_hosts)
    serve(logdir, args.port, args.host, CacheConfig.from_flags(args), allowed)
    return 0


def _cache(args: argparse.Namespace) -> int:
    config = CacheConfig.from_flags(argparse.Namespace(cache_dir=args.cache_dir))
    assert config.disk_dir is not None
    disk = DiskCache(config.disk_dir, config.disk_bytes)
    if args.action == "clear":  # both refuse a folder the cache did not make (exit 1)
        print(f"removed {disk.clear()} cache entries from {disk.root}")
    else:
        entries, size = disk.usage()
        print(f"{disk.root}: {entries} entries, {size / 1e6:.1f} MB")
    return 0


def _convert(args: argparse.Namespace) -> int:
    service = ProfileService(args.path, config=CacheConfig.from_flags(args))
    try:
        return _write_converted(service, args)
    finally:
        service.close()  # the disk cache entry of the decode is written before exiting


def _write_converted(service: ProfileService, args: argparse.Namespace) -> int:
    runs = service.runs()
    if not runs:
        raise ProfileError(f"No profile (.xplane.pb or Chrome trace) found at {args.path}.")
    run = runs[0]
    params = dict(_params(args), run=run)  # tools that link to pages (advisor) name the run
    out = open(args.output, "wb") if args.output else sys.stdout.buffer
    try:
        if args.format == "csv":
            _, text = service.tool_csv(run, args.tool, host=args.host, params=params)
            out.write(text.encode())
        else:
            if args.format == "pprof":  # the scope and code views' profile.proto (gzip)
                params["format"] = "pprof"
            result = service.tool_data(run, args.tool, host=args.host, params=params)
            for chunk in result.chunks():
                out.write(chunk)
            if args.format == "json":
                out.write(b"\n")
    finally:
        if args.output:
            out.close()
    return 0


def _params(args: argparse.Namespace) -> dict:
    params = dict(p.split("=", 1) for p in args.param if "=" in p)
    if args.table is not None:
        params["table"] = str(args.table)
    for name in TREE_OPTIONS:
        value = getattr(args, name, None)
        if value is not None:
            params[name] = str(value)
    return params


# The tree views' options as flags, named as tfprof names them (tools/tree_options.py).
TREE_OPTIONS = {
    "select": "comma list of columns to show (e.g. micros,occurrence)",
    "order_by": "column that orders siblings (e.g. name, micros, occurrence)",
    "max_depth": "show nodes at most this many levels under the root",
    "min_micros": "show nodes with at least this total time (us)",
    "show_name_regexes": "comma list: show nodes whose name fully matches one",
    "hide_name_regexes": "comma list: hide nodes whose name fully matches one",
    "account_type_regexes": "comma list: count only ops whose type fully matches one",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tbprof", description="TensorBoard profile tools.")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="start the standalone Profile server")
    serve.add_argument("path", nargs="?", help="log dir, session folder or profile file")
    serve.add_argument("--logdir", default=None, help="the same as PATH")
    serve.add_argument("--port", type=int, default=8791)
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default loopback)")
    add_host_flags(serve)
    add_flags(serve)
    serve.set_defaults(func=_serve)

    convert = commands.add_parser("convert", help="print one tool's data for a profile")
    convert.add_argument("path", help="a session folder or one profile file")
    convert.add_argument("--tool", required=True)
    convert.add_argument("--host", default=None)
    convert.add_argument(
        "--format",
        choices=("json", "csv", "pprof"),
        default="json",
        help="pprof: profile.proto (gzip) of scope_view or code_view, for go tool pprof",
    )
    convert.add_argument("--table", type=int, default=None, help="table index for CSV")
    convert.add_argument("--param", action="append", default=[], help="extra KEY=VALUE")
    convert.add_argument("-o", "--output", default=None, help="write here instead of stdout")
    tree = convert.add_argument_group(
        "tfprof options of op_types, scope_view and code_view (docs/tfprof_views.md)"
    )
    for name, help_text in TREE_OPTIONS.items():
        tree.add_argument(f"--{name}", default=None, help=help_text)
    add_flags(convert)
    convert.set_defaults(func=_convert)

    from .advise_cli import add_advise_arguments

    add_advise_arguments(commands)

    from .agent_cli import add_agent_arguments

    add_agent_arguments(commands)

    from .diff_cli import add_diff_arguments

    add_diff_arguments(commands)

    from .mcp_server import add_mcp_arguments

    add_mcp_arguments(commands)

    cache = commands.add_parser("cache", help="show or clear the disk cache")
    cache.add_argument("action", choices=("info", "clear"))
    cache.add_argument("--cache_dir", default=None, help="default: TBPROF_CACHE_DIR or ~/.cache/…")
    cache.set_defaults(func=_cache)

    try:
        from ..capture.cli import add_capture_arguments
    except ImportError:
        pass
    else:
        add_capture_arguments(commands)
        capture = commands.choices["capture"]
        capture.set_defaults(func=_capture_into(capture.get_default("func")))
    return parser


def _capture_into(run_capture: Callable) -> Callable:
    """``tbprof capture`` into a gs://, s3:// or az:// logdir: captured into a local staging
    folder, then each session uploaded under a temporary name and moved into place
    (``store.remote.upload_session``, docs/remote_logdirs.md)."""

    def capture(args: argparse.Namespace) -> int:
        if not remote.is_remote(args.logdir):
            return run_capture(args)
        target = args.logdir.rstrip("/") + "/plugins/profile"
        with tempfile.TemporaryDirectory(prefix="tbprof-capture-") as staging:
            code = run_capture(argparse.Namespace(**dict(vars(args), logdir=staging)))
            sessions = os.path.join(staging, "plugins", "profile")
            for session in sorted(os.listdir(sessions)) if os.path.isdir(sessions) else []:
                url = remote.upload_session(os.path.join(sessions, session), target)
                print(f"Uploaded the session to {url}", file=sys.stderr)
        return code

    return capture


def main(argv: Optional[list] = None) -> int:
    args = build_parser().parse_args(argv)
    level = logging.INFO if args.verbose or args.command == "serve" else logging.WARNING
    # stdout is the protocol's channel under ``mcp``: logs go to stderr, as everywhere.
    logging.basicConfig(level=level, format="%(asctime)s %(name)s: %(message)s", stream=sys.stderr)
    try:
        return int(args.func(args) or 0)
    except ProfileError as e:
        print(f"tbprof: {e.message}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
