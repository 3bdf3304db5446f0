"""Decoder throughput and size: the raw wire walk, the whole decode, bytes per event.

    python bench/decode.py [--repeat 5] [--pure-python] [FILE ...]

Without files it measures every fixture. Columns:
- ``walk 1t`` / ``walk Nt``: the compiled reader's raw walk (no tables) on one
  thread and on one thread per core, in ms, and ``Mev/s/core`` for one thread;
- ``decode``: ``decode_xspace`` end to end (ms), and ``pb``: the protobuf
  library's own full parse of the same bytes, for scale;
- ``B/ev``: bytes the decoded tables hold per event (``Space.nbytes``);
- ``up ms`` / ``ratio``: upstream's cheapest read, when bench/.venv-xprof
  exists (see setup_peers.sh).
Run one big file at a time: a 200 MB profile decodes to about 1 GB.
"""

from __future__ import annotations

import argparse
import pathlib
import subprocess
import time
from functools import partial

from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace
from tensorboard_plugin_profile.xspace.decode import _decode

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "data"
UPSTREAM_PYTHON = HERE / ".venv-xprof" / "bin" / "python"


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


def best_ms(run, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    # The minimum: the machine is shared, and noise only ever adds time.
    return min(times) * 1e3


def walk_ms(data: bytes, threads: int, repeat: int) -> float:
    if _decode is None:
        return float("nan")
    return best_ms(partial(_decode.decode, data, -1, threads), repeat)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--pure-python", action="store_true", help="force the Python reader")
    parser.add_argument("files", nargs="*", type=pathlib.Path)
    args = parser.parse_args()
    paths = args.files or sorted(FIXTURES.glob("*/plugins/profile/*/*.xplane.pb"))
    upstream = upstream_ms(paths, args.repeat)
    print(
        f"{'file':36} {'events':>9} {'MB':>6} {'walk 1t':>8} {'Mev/s/core':>10} {'walk Nt':>8} "
        f"{'decode':>8} {'pb':>7} {'B/ev':>6} {'up ms':>7} {'ratio':>6}"
    )
    for path in paths:
        data = path.read_bytes()
        space = decode_xspace(data, path.name, pure_python=args.pure_python)
        events = space.num_events
        one = walk_ms(data, 1, args.repeat)
        many = walk_ms(data, 0, args.repeat)
        decode = best_ms(partial(decode_xspace, data, path.name, args.pure_python), args.repeat)
        pb = best_ms(partial(xplane_pb2.XSpace.FromString, data), min(args.repeat, 3))
        label = str(path.relative_to(FIXTURES) if path.is_relative_to(FIXTURES) else path)
        up = upstream.get(str(path), float("nan"))
        print(
            f"{label[-36:]:36} {events:9d} {len(data) / 1e6:6.1f} {one:8.1f} "
            f"{events / one / 1e3 if one else 0:10.1f} {many:8.1f} {decode:8.1f} {pb:7.1f} "
            f"{space.nbytes / max(events, 1):6.0f} {up:7.1f} {decode / up:6.2f}",
            flush=True,
        )
        del space


if __name__ == "__main__":
    main()
