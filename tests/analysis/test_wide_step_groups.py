"""A step group spanning a long stretch of the profile: the step keys still pack (issue 30).

A real JAX profile (``jax_cpu_train``) is doubled into one twice as long, the copy a long
gap later, with its producer/consumer context ids left as they are: step grouping then
links groups of the two halves, so most groups span from the first half to the second (as
a flow from the first step to the last does on a real profile). One sort key of
(group | time | tail) no longer fits in 62 bits; the compiled walk packs the keys in runs of
groups that do fit, where the code before fell back to the numpy sweep and its boundary
arrays (about 16 B x 9 per span: 25 GB on the 2 GB profile).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc

import pandas as pd
import pytest
from conftest import REPO, host_files

from tensorboard_plugin_profile.analysis.steps import build
from tensorboard_plugin_profile.analysis.steps import events as step_events
from tensorboard_plugin_profile.analysis.steps import keys as step_keys
from tensorboard_plugin_profile.kernels import compiled
from tensorboard_plugin_profile.preprocessing import preprocess
from tensorboard_plugin_profile.protobuf import xplane_pb2
from tensorboard_plugin_profile.xspace import decode_xspace, schema

needs_compiled = pytest.mark.skipif(
    compiled.load(step_keys.__name__) is None, reason="built without a C compiler"
)
LONG_GAP_PS = 1 << 52  # 75 minutes: the linked groups need 53 bits of time
SHORT_GAP_PS = 1 << 40  # 1.1 s: every group fits in one layout, as on most profiles


def _doubled(gap_ps: int):
    """The fixture with every event again ``gap_ps`` later, ids unchanged, preprocessed."""
    space = xplane_pb2.XSpace()
    with open(host_files("jax_cpu_train")[0], "rb") as f:
        space.ParseFromString(f.read())
    for plane in space.planes:
        for line in plane.lines:
            events = line.events
            for i in range(len(events)):
                copy = events.add()
                copy.CopyFrom(events[i])
                copy.offset_ps += gap_ps
    return preprocess.preprocess(decode_xspace(space.SerializeToString(), "doubled"))


def _step_table(space, pure_python: bool) -> pd.DataFrame:
    with pytest.MonkeyPatch.context() as env:
        if pure_python:
            env.setenv("TBPROF_PURE_PYTHON", "1")
        else:
            env.delenv("TBPROF_PURE_PYTHON", raising=False)
        return build.step_database(space).steps


def _peak_bytes(space) -> int:
    """Peak traced bytes (numpy's and the walk's allocations) of one step database."""
    build.step_database(space)  # imports and per-name caches out of the measure
    tracemalloc.start()
    try:
        build.step_database(space)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@needs_compiled
def test_a_group_spanning_the_profile_packs_in_runs_and_gives_the_numpy_answer():
    space = _doubled(LONG_GAP_PS)
    group = space.plane(schema.HOST_PLANE).events[schema.GROUP_ID]
    assert int(group.max()) - int(group.min()) + 1 == 24  # 24 steps, most linked across halves
    _, spans = step_events.host_step_events(space.plane(schema.HOST_PLANE), pure_python=False)
    assert isinstance(spans, step_keys.PackedSpans)  # before: None, the numpy sweep
    layouts = [layout for _, layout in spans.runs]
    assert len(layouts) > 1 and max(layout[1] for layout in layouts) == 53  # time bits
    steps = _step_table(space, pure_python=False)
    assert len(steps) == 22 and steps["begin_ps"].max() > LONG_GAP_PS
    pd.testing.assert_frame_equal(steps, _step_table(space, pure_python=True))


@needs_compiled
def test_a_group_spanning_the_profile_costs_no_more_memory_than_a_short_one():
    # The same events a short gap apart pack in one run; the long gap must not cost the
    # numpy sweep's boundary arrays (before: 2.1x the short gap's peak).
    wide, short = _peak_bytes(_doubled(LONG_GAP_PS)), _peak_bytes(_doubled(SHORT_GAP_PS))
    assert wide <= 1.25 * short, (wide, short)


@needs_compiled
def test_one_run_where_every_group_fits():
    space = _doubled(SHORT_GAP_PS)
    plane = space.plane(schema.HOST_PLANE)
    _, spans = step_events.host_step_events(plane, pure_python=False)
    assert isinstance(spans, step_keys.PackedSpans) and len(spans.runs) == 1
    assert spans.runs[0][0] == len(spans.key)
    pd.testing.assert_frame_equal(
        _step_table(space, pure_python=False), _step_table(space, pure_python=True)
    )


_UNDER_A_MEMORY_LIMIT = """
import resource, sys
import numpy as np
import pandas as pd
from tensorboard_plugin_profile.analysis.steps import build
from tensorboard_plugin_profile.common import memsize
from tensorboard_plugin_profile.common.errors import ProfileTooLarge
from tensorboard_plugin_profile.xspace import schema
from tensorboard_plugin_profile.xspace.model import Plane, Space

def host(events):  # one line: a 'train' marker per 1,000 events, then compute calls
    i = np.arange(events)
    marker = i % 1000 == 0
    table = pd.DataFrame({
        "line": np.zeros(events, np.int32),
        "name": pd.Categorical.from_codes(marker.astype(np.int8), ["fn", "train"]),
        "begin_ps": i * 10 - marker,
        "duration_ps": np.where(marker, 10_001, 5),
        schema.GROUP_ID: pd.array(i // 1000, dtype="Int32"),
        schema.STEP_NAME: pd.Categorical.from_codes(np.full(events, -1, np.int8), []),
        "_ipl_stage_name": pd.Categorical.from_codes(np.full(events, -1, np.int8), []),
        "parent_id": pd.array(np.zeros(events, np.int64), "Int64"),
    })
    lines = pd.DataFrame({"id": np.array([1], dtype=np.int64)})
    empty = pd.DataFrame()
    plane = Plane(0, 0, schema.HOST_PLANE, lines, table, empty, empty, empty, {}, {})
    return Space("", [plane], [], [], [])

memsize.limit_heap_fragmentation()  # as the service: large blocks mapped, unmapped when freed
assert len(build.step_database(host(3_000)).steps) == 3  # imports and caches; works
space = host(int(sys.argv[1]))
with open("/proc/self/status") as status:
    size = next(int(s.split()[1]) * 1024 for s in status if s.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + (4 << 20), resource.RLIM_INFINITY))
try:
    build.step_database(space)
    print("answered")
except ProfileTooLarge as e:
    print(e.http_status, e.message)
except MemoryError:
    print("MemoryError")
"""


@pytest.mark.parametrize("pure_python", ["0", "1"])
def test_a_step_breakdown_without_memory_is_a_413_not_a_memory_error(pure_python):
    # A real process under a real address-space limit that leaves the step breakdown of
    # 2 M events 4 MB: the answer is ProfileTooLarge (HTTP 413), not MemoryError (an
    # opaque 500). The same script with a small host answers (the first call).
    path = [str(REPO)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    run = subprocess.run(
        [sys.executable, "-c", _UNDER_A_MEMORY_LIMIT, "2000000"],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, TBPROF_PURE_PYTHON=pure_python, PYTHONPATH=os.pathsep.join(path)),
    )
    assert run.stdout.startswith("413 The step breakdown of this profile needs more memory"), (
        run.stdout + run.stderr[-2000:]
    )
