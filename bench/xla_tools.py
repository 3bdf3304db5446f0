"""The XLA tools' cold and warm times, ours beside upstream xprof, on one JAX profile.

    python bench/xla_tools.py [--fixture jax_remote_capture] [--module 'jit_step(8)'] [--runs 5]
    python bench/xla_tools.py --path /some/run/vm.xplane.pb --module 'jit_train_step(12)'

Both sides see the same sequence of requests, as the page makes them: the module list, then
memory_viewer and graph_viewer (short text) of one module, then op_profile, hlo_stats and
roofline_model. "cold" is each tool's first request in a fresh service / fresh upstream process
(the module list pays for decoding the file; upstream also extracts the HLO protos to files, and
its later tools reuse caches it wrote), "warm" is the same request again. Medians over --runs
fresh runs. Upstream runs from its own virtualenv (--upstream-python) on a fresh copy of the file.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import statistics
import subprocess
import tempfile
import time

from tensorboard_plugin_profile.common.errors import ProfileError
from tensorboard_plugin_profile.service import ProfileService

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parent / "tests" / "data"
TOOLS = (
    ("memory_viewer", {"module_name": None}),
    ("graph_viewer", {"module_name": None, "type": "short_txt"}),
    ("op_profile", {}),
    ("hlo_stats", {}),
    ("roofline_model", {}),
)


def _timed(call) -> float:
    started = time.perf_counter()
    try:
        call()
    except ProfileError:
        pass  # NOT_APPLICABLE (roofline on a CPU) is an answer too
    return time.perf_counter() - started


def ours_once(logdir: pathlib.Path, module: str) -> dict:
    service = ProfileService(str(logdir))
    (run,) = service.runs()
    out = {"module_list": [_timed(lambda: service.module_list(run))]}
    for tool, params in TOOLS:
        params = {k: module if v is None else v for k, v in params.items()}

        def call(tool=tool, params=params):
            b"".join(service.tool_data(run, tool, params=params).chunks())

        out[tool] = [_timed(call), _timed(call)]
    return out


def upstream_once(python: str, path: pathlib.Path, module: str) -> dict:
    result = subprocess.run(
        [python, str(HERE / "upstream_xla.py"), str(path), module],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout.strip().splitlines()[-1])


def _logdir_for(path: pathlib.Path, tmp: str) -> pathlib.Path:
    """A one-run logdir holding only this file (our service discovers runs in a logdir)."""
    session = pathlib.Path(tmp) / "plugins" / "profile" / "run"
    session.mkdir(parents=True)
    shutil.copyfile(path, session / path.name)
    return pathlib.Path(tmp)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fixture", default="jax_remote_capture")
    parser.add_argument("--path", help="an .xplane.pb file instead of a fixture")
    parser.add_argument("--module", default="jit_step(8)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--upstream-python", default=str(HERE / ".venv-xprof" / "bin" / "python"))
    args = parser.parse_args()
    path = (
        pathlib.Path(args.path)
        if args.path
        else next((FIXTURES / args.fixture).glob("plugins/profile/*/*.xplane.pb"))
    )
    have_upstream = shutil.which(args.upstream_python) is not None
    samples: dict = {}
    with tempfile.TemporaryDirectory() as tmp:
        logdir = _logdir_for(path, tmp)
        for i in range(args.runs):
            print(f"run {i + 1}/{args.runs}", flush=True)
            for side, result in (
                ("ours", ours_once(logdir, args.module)),
                ("upstream", upstream_once(args.upstream_python, path, args.module)
                 if have_upstream else {}),
            ):  # fmt: skip
                for tool, times in result.items():
                    for kind, value in zip(("cold", "warm"), times):
                        samples.setdefault((tool, side, kind), []).append(value)
    print(f"\n{path} ({path.stat().st_size / 1e6:.1f} MB), module {args.module}")
    print(f"{'tool':16} {'ours cold':>10} {'ours warm':>10} {'up cold':>10} {'up warm':>10}  (ms)")
    for tool in ["module_list"] + [t for t, _ in TOOLS]:
        cells = []
        for side in ("ours", "upstream"):
            for kind in ("cold", "warm"):
                values = samples.get((tool, side, kind))
                cells.append(f"{statistics.median(values) * 1e3:10.1f}" if values else f"{'-':>10}")
        print(f"{tool:16} " + " ".join(cells))


if __name__ == "__main__":
    main()
