"""In-process decoder throughput on every fixture (events per second).

python bench/decode.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import pathlib
import statistics
import subprocess
import time

from tensorboard_plugin_profile.xspace import decode_xspace

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "data"
UPSTREAM_PYTHON = HERE / ".venv-upstream" / "bin" / "python"


def upstream_ms(paths: list, repeat: int) -> dict:
    if not UPSTREAM_PYTHON.exists():
        return {}
    out = subprocess.run(
        [str(UPSTREAM_PYTHON), str(HERE / "upstream_parse.py"), str(repeat), *map(str, paths)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in out.splitlines()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pure-python", action="store_true", help="force the Python reader")
    args = parser.parse_args()
    paths = sorted(FIXTURES.glob("*/plugins/profile/*/*.xplane.pb"))
    upstream = upstream_ms(paths, args.repeat)
    print(
        f"{'file':44} {'events':>7} {'MB':>5} {'ms':>7} {'events/s':>9} {'up ms':>7} {'ratio':>6}"
    )
    for path in paths:
        data = path.read_bytes()
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            space = decode_xspace(data, path.name, pure_python=args.pure_python)
            times.append(time.perf_counter() - started)
        ms = statistics.median(times) * 1e3
        label = str(path.relative_to(FIXTURES))[:44]
        rate = space.num_events / ms * 1e3 if ms else 0
        up = upstream.get(str(path), float("nan"))
        print(
            f"{label:44} {space.num_events:7d} {len(data) / 1e6:5.2f} {ms:7.1f} {rate:9.0f} "
            f"{up:7.1f} {ms / up:6.2f}"
        )


if __name__ == "__main__":
    main()
