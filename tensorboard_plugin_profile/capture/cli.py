"""``tbprof capture`` and ``tbprof monitor``: the capture client on the command line.

Progress goes to stderr (a countdown while tracing when stderr is a terminal);
on success the session directory is the only thing printed to stdout, so
scripts can use it: ``tensorboard --logdir "$(dirname "$(tbprof capture ...)")"``.
Failures print the advice and exit with 1, without a traceback. Ctrl-C stops a
capture: the profiler servers' calls are cancelled (they stop tracing), nothing is
written, and the exit status is 130.

    parser = argparse.ArgumentParser(prog="tbprof")
    add_capture_arguments(parser.add_subparsers(dest="command"))
    args = parser.parse_args()
    sys.exit(args.func(args))
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from typing import Any, TextIO

from tensorboard_plugin_profile.capture.options import DEFAULT_CONNECT_TIMEOUT_S, ProfilerOptions
from tensorboard_plugin_profile.common.errors import ProfileError

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a Ctrl-C


def add_capture_arguments(subparsers: Any) -> None:
    """Adds the ``capture`` and ``monitor`` subcommands; each sets ``func(args) -> exit code``."""
    capture = subparsers.add_parser(
        "capture",
        help="capture a profile from running TensorFlow/JAX programs",
        description="Capture a profile from profiler servers (jax.profiler.start_server(port) "
        "or tf.profiler.experimental.server.start(port)) into LOGDIR/plugins/profile/.",
    )
    capture.add_argument("service_addr", help="grpc://host:port[,grpc://host:port...]")
    capture.add_argument("--logdir", required=True, help="log directory to write the session to")
    capture.add_argument("--duration-ms", type=int, required=True, help="how long to trace")
    capture.add_argument(
        "--retries", type=int, default=2, help="retries when no trace event was collected"
    )
    capture.add_argument(
        "--delay-ms", type=int, default=0, help="start tracing this long after the request"
    )
    capture.add_argument("--host-tracer-level", type=int, default=2, help="0 off .. 3 verbose")
    capture.add_argument("--device-tracer-level", type=int, default=1, help="0 off, 1 on")
    capture.add_argument("--python-tracer-level", type=int, default=0, help="0 off, 1 on")
    capture.add_argument("--worker-list", default="", help="Cloud TPU: subset of workers")
    _add_connect_timeout(capture)
    capture.set_defaults(func=run_capture)

    watch = subparsers.add_parser(
        "monitor",
        help="print a performance summary from a running TensorFlow program",
        description="Monitor a profiler server (TensorFlow; JAX servers do not implement it).",
    )
    watch.add_argument("service_addr", help="grpc://host:port")
    watch.add_argument("--duration-ms", type=int, required=True, help="how long to monitor")
    watch.add_argument("--monitoring-level", type=int, choices=(1, 2), default=1)
    watch.add_argument("--timestamp", action="store_true", help="prefix results with the time")
    _add_connect_timeout(watch)
    watch.set_defaults(func=run_monitor)


def run_capture(
    args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    progress = ConsoleProgress(stderr)
    try:
        options = ProfilerOptions(
            host_tracer_level=args.host_tracer_level,
            device_tracer_level=args.device_tracer_level,
            python_tracer_level=args.python_tracer_level,
            delay_ms=args.delay_ms,
        )
        from tensorboard_plugin_profile.capture.client import trace  # grpc: only when used

        result = trace(
            args.service_addr,
            args.logdir,
            args.duration_ms,
            worker_list=args.worker_list,
            num_tracing_attempts=max(0, args.retries) + 1,
            options=options,
            progress=progress,
            connect_timeout_s=args.connect_timeout_s,
        )
    except ProfileError as e:
        print(f"Capture failed: {e.message}", file=stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "Capture cancelled (Ctrl-C): the profiler servers were told to stop; "
            "nothing was written.",
            file=stderr,
        )
        return EXIT_INTERRUPTED
    finally:
        progress.close()
    print(f"Done in {result.elapsed_s:.1f} s. {result.summary()}", file=stderr)
    print(result.session_dir, file=stdout)
    return 0


def run_monitor(
    args: argparse.Namespace, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    stdout, stderr = stdout or sys.stdout, stderr or sys.stderr
    print(f"Monitoring {args.service_addr} for {args.duration_ms} ms ...", file=stderr)
    try:
        from tensorboard_plugin_profile.capture.client import monitor  # grpc: only when used

        text = monitor(
            args.service_addr,
            args.duration_ms,
            monitoring_level=args.monitoring_level,
            display_timestamp=args.timestamp,
            connect_timeout_s=args.connect_timeout_s,
        )
    except ProfileError as e:
        print(f"Monitor failed: {e.message}", file=stderr)
        return 1
    print(text, file=stdout)
    return 0


class ConsoleProgress:
    """Prints one line per phase; on a terminal, also a countdown while tracing."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self._stop = threading.Event()
        self._ticker: threading.Thread | None = None

    def __call__(self, phase: str, info: dict) -> None:
        if phase == "tracing":
            self._say(f"Tracing for {info['end_time'] - info['start_time']:.1f} s ...")
            if _is_terminal(self.stream):
                self._start_countdown(info["end_time"])
            return
        self.close()
        if phase == "waiting" and "hosts" in info:
            self._say(f"Connecting to {', '.join(info['hosts'])} ...")
        elif phase == "waiting":
            wait_s = info["start_time"] - time.time()
            attempt = f" (attempt {info['attempt']})" if info["attempt"] > 1 else ""
            if wait_s > 0.05 or attempt:
                self._say(f"Waiting {max(wait_s, 0):.1f} s for the common start time{attempt}")
        elif phase == "collecting":
            self._say("Collecting the profile from the server(s) ...")
        elif phase == "writing":
            self._say("Writing the session ...")

    def close(self) -> None:
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join()
            self._ticker = None
            self.stream.write("\r\033[K")

    def _say(self, text: str) -> None:
        print(text, file=self.stream, flush=True)

    def _start_countdown(self, end_time: float) -> None:
        self._stop = threading.Event()

        def tick() -> None:
            while not self._stop.wait(0.25):
                left = end_time - time.time()
                if left <= 0:
                    return
                self.stream.write(f"\r  {left:4.1f} s left")
                self.stream.flush()

        self._ticker = threading.Thread(target=tick, daemon=True)
        self._ticker.start()


def _add_connect_timeout(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--connect-timeout-s",
        type=float,
        default=DEFAULT_CONNECT_TIMEOUT_S,
        help="how long to wait for a server to accept the connection",
    )


def _is_terminal(stream: TextIO) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)())
