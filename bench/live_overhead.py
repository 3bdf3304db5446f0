"""Per-step cost of live tracing while idle: a jitted JAX loop with and without live.serve.

    python bench/live_overhead.py [--steps 300] [--rounds 5] [--size 256] [--poll]

Each round times the same loop without the live page, then with it running (started
once, idle: nobody captures), alternating to cancel drift. ``--poll`` also has a
thread fetch /runs once a second during the "with" rounds, as an open page does.
Reports per-step times (median and best round) and the overhead: the median of
the paired rounds' ratios, and best against best (the least disturbed rounds on a
busy machine).
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
import urllib.request


def per_step_seconds(step, x, steps: int) -> float:
    started = time.perf_counter()
    for _ in range(steps):
        x = step(x)
        x.block_until_ready()
    return (time.perf_counter() - started) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size", type=int, default=256)
    parser.add_argument("--poll", action="store_true", help="poll /runs like an open page")
    args = parser.parse_args()

    import jax
    import jax.numpy as jnp

    from tensorboard_plugin_profile.web import live

    @jax.jit
    def step(x):
        return jnp.tanh(x @ x) * 0.5

    x = jnp.ones((args.size, args.size))
    per_step_seconds(step, x, 20)  # compile and warm up
    without, with_live = [], []
    with tempfile.TemporaryDirectory() as logdir:
        for _ in range(args.rounds):  # alternate: drift on a shared machine hits both
            without.append(per_step_seconds(step, x, args.steps))
            server = live.serve(port=0, logdir=logdir, quiet=True)
            stop = threading.Event()
            if args.poll:
                runs_url = server.route_url("runs")  # with the page's token
                threading.Thread(target=_poll, args=(runs_url, stop), daemon=True).start()
            try:
                time.sleep(0.2)  # let the threads settle into their idle wait
                with_live.append(per_step_seconds(step, x, args.steps))
            finally:
                stop.set()
                server.stop()
    base, live_s = statistics.median(without), statistics.median(with_live)
    paired = statistics.median(w / b for w, b in zip(with_live, without))
    print(f"steps/round {args.steps}, rounds {args.rounds}, matrix {args.size}x{args.size}")
    print(f"without live page: median {base * 1e6:8.1f} us/step, best {min(without) * 1e6:8.1f}")
    polling = " (page polling)" if args.poll else ""
    print(
        f"with live page:    median {live_s * 1e6:8.1f} us/step, "
        f"best {min(with_live) * 1e6:8.1f}{polling}"
    )
    print(
        f"overhead: {100 * (paired - 1):+.2f} % (median of paired rounds), "
        f"{100 * (min(with_live) / min(without) - 1):+.2f} % (best rounds)"
    )


def _poll(url: str, stop: threading.Event) -> None:
    """GETs ``url`` once a second until ``stop``, as an open page polls ``runs``."""
    while not stop.wait(1.0):
        urllib.request.urlopen(url, timeout=10).read()


if __name__ == "__main__":
    main()
