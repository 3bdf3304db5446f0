"""A sha256 per tool answer on one profile: the check that a speed change moved no number.

    python bench/outputs_hash.py FILE.xplane.pb > before.txt     # on the base checkout
    python bench/outputs_hash.py FILE.xplane.pb | diff before.txt -   # on the change

A fresh service without the disk cache answers every host tool, three ``trace_viewer@``
requests (the first columnar window, a zoomed window at full resolution, the default
format) and prints one line per request: tool, parameters, hash and size (or the error a
tool gives where it does not apply). Two checkouts agree when the lines are identical.

A PyTorch trace (a ``*.pt.trace.json[.gz]`` file or a folder of them) gets the PyTorch tools
instead, on every run and host: overview, operators (both groupings), kernels, memory,
distributed, the complete trace (every decoded event, so the decoder's output is covered
whole) and the same three windows.

``--through_cache`` answers from a Space read back from the disk cache instead: a first
service decodes the profile and writes its Space entry, a second one (no answer on disk,
no decode) reads it and answers; its lines must equal those of a run without it.

    python bench/outputs_hash.py FILE.xplane.pb --through_cache | diff before.txt -
"""

from __future__ import annotations

import glob
import hashlib
import os
import sys
import tempfile

from cold_path import OTHER_TOOLS  # bench/ is on sys.path when a script of it runs

# The host tools of the cold-path benchmark, and the op/scope/code views.
TOOLS = ("overview_page",) + OTHER_TOOLS + ("op_types", "scope_view", "code_view")
WINDOWS = (
    {"format": "columnar", "resolution": "2000"},
    {"format": "columnar", "resolution": "0", "start_time_ms": "100", "end_time_ms": "140"},
    {"resolution": "2000"},
)
PYTORCH_TOOLS = (
    ("pytorch_overview", {}),
    ("pytorch_operators", {}),
    ("pytorch_operators", {"group_by": "input_shape"}),
    ("pytorch_kernels", {}),
    ("pytorch_memory", {}),
    ("pytorch_distributed", {}),
    ("trace_viewer", {}),
)


def main() -> None:
    if "--through_cache" in sys.argv[2:]:
        with tempfile.TemporaryDirectory() as cache:
            _hashes(_service_from_cache(sys.argv[1], cache))
    else:
        os.environ["TBPROF_NO_CACHE"] = "1"
        from tensorboard_plugin_profile.service import ProfileService

        _hashes(ProfileService(sys.argv[1]))


def _service_from_cache(path: str, cache: str) -> object:
    """A service whose only way to the profile is the Space entry another one wrote."""
    from tensorboard_plugin_profile.service import ProfileService
    from tensorboard_plugin_profile.store.cache_config import CacheConfig

    config = CacheConfig(disk_dir=cache, workers=1)
    first = ProfileService(path, config=config)
    first.run_tools(first.runs()[0])  # decodes, and stores the Space
    first.close()
    for folder in glob.glob(os.path.join(cache, "v*")):
        for name in os.listdir(folder):
            if not name.startswith("space-"):
                os.remove(os.path.join(folder, name))
    return ProfileService(path, config=config)


def _hashes(service) -> None:
    run = service.runs()[0]
    windows = [("trace_viewer@", w) for w in WINDOWS]
    if "pytorch_overview" not in service.run_tools(run):
        _print_hashes(service, [(run, None)], [(tool, {}) for tool in TOOLS] + windows)
    else:
        targets = [
            (run, entry["hostname"])
            for run in service.runs()
            for entry in service.hosts(run, "pytorch_overview")
        ]
        _print_hashes(service, targets, list(PYTORCH_TOOLS) + windows)
    if service.disk is not None:  # --through_cache: every answer came from the stored Space
        assert service.spaces.decodes == 0, "the Space was decoded, not read from the cache"


def _print_hashes(service, targets: list, requests: list) -> None:
    from tensorboard_plugin_profile.common.errors import ProfileError

    for run, host in targets:
        label = () if host is None else (run, host)
        for tool, params in requests:
            try:
                chunks = service.tool_data(run, tool, host=host, params=params).chunks()
                data = b"".join(c if isinstance(c, bytes) else c.encode() for c in chunks)
                digest = hashlib.sha256(data).hexdigest()
                print(*label, tool, sorted(params.items()), digest, len(data))
            except ProfileError as e:
                print(*label, tool, sorted(params.items()), "error", type(e).__name__)


if __name__ == "__main__":
    main()
