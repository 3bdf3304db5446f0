"""Fractional-microsecond times (issue 28, item 3): what nests in nanoseconds nests for us.

Recent PyTorch writes ``ts``/``dur`` in epoch microseconds with three decimals. Read as
doubles (a quarter microsecond at that size), a call could end after its parent; both
readers now take times from the number's text (``chrome_trace/exact_times.py``). No torch is
installed here to record such a trace, so it is made from real ones by the rule PyTorch
follows: the fixtures' traces moved to epoch microseconds, each ``ts`` keeping its decimals
as written (text arithmetic on the integer part, nothing re-rounded).
"""

from __future__ import annotations

import gzip
import re

import numpy as np
import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile.chrome_trace.exact_times import micros_to_ps
from tensorboard_plugin_profile.chrome_trace.read import read_chrome_trace
from tensorboard_plugin_profile.service import ProfileService

EPOCH_US = 1_660_000_000_000_000


def _at_epoch(source, target) -> None:
    text = gzip.decompress(source.read_bytes()).decode()

    def moved(m):
        return f'"ts": {int(m.group(1)) + EPOCH_US}{m.group(2) or ""}'

    text = re.sub(r'"ts": *(\d+)(\.\d+)?', moved, text)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


@pytest.fixture(params=["compiled", "pure_python"])
def reader(request, monkeypatch):
    if request.param == "pure_python":
        monkeypatch.setenv("TBPROF_PURE_PYTHON", "1")
    return request.param


def test_micros_to_ps_is_exact():
    assert micros_to_ps("1661938466265087.123") == 1661938466265087123000
    assert micros_to_ps("12.0005") == 12000500
    assert micros_to_ps("-5.25") == -5250000
    assert micros_to_ps("1.0000005") == 1000000  # half to even
    assert micros_to_ps("1.0000015") == 1000002
    assert micros_to_ps("1.00000050001") == 1000001
    assert micros_to_ps("3") == 3000000 and micros_to_ps("1.5e3") is None


def test_a_call_ending_nanoseconds_before_its_parent_nests(tmp_path, reader):
    """The parent starts at .001 and lasts 10 us; its child starts at .124 and ends 1 ns
    before it. As doubles the parent's start rounds down to .000 and the child's up to
    .125, and the child ended 1 ns after its parent. Read from the text, it nests."""
    base = 1661938466265087
    path = tmp_path / "w.1.pt.trace.json"
    path.write_text(
        '{"traceEvents": ['
        f'{{"ph": "X", "cat": "cpu_op", "name": "parent", "pid": 1, "tid": 1, "ts": {base}.001, '
        '"dur": 10.000},'
        f'{{"ph": "X", "cat": "cpu_op", "name": "child", "pid": 1, "tid": 1, "ts": {base}.124, '
        '"dur": 9.876}]}'
    )
    plane = read_chrome_trace(str(path)).planes[0]
    ev = plane.events.sort_values("begin_ps")
    begin, dur = ev["begin_ps"].to_numpy(), ev["duration_ps"].to_numpy()
    assert begin.tolist() == [0, 123_000] and dur.tolist() == [10_000_000, 9_876_000]
    assert begin[1] + dur[1] <= begin[0] + dur[0]  # the child ends inside its parent


@pytest.mark.parametrize("fixture", ["pytorch_amd_mi250", "pytorch_cpu_only"])
def test_a_trace_at_epoch_microseconds_reads_like_the_same_trace_near_zero(
    tmp_path, reader, fixture
):
    """The same events, 1.66e15 us later: the same times to the picosecond, and the same
    answers from every PyTorch tool. Before, times moved by up to 0.14 us and the AMD
    trace's step breakdown changed."""
    source = next((FIXTURES / fixture / "run").glob("*.pt.trace.json.gz"))
    target = tmp_path / fixture / "run" / source.name.removesuffix(".gz")
    _at_epoch(source, target)
    near, far = read_chrome_trace(str(source)), read_chrome_trace(str(target))
    for a, b in zip(near.planes, far.planes):
        assert np.array_equal(a.events["begin_ps"].to_numpy(), b.events["begin_ps"].to_numpy())
        assert np.array_equal(
            a.events["duration_ps"].to_numpy(), b.events["duration_ps"].to_numpy()
        )
    ours, moved = ProfileService(str(FIXTURES / fixture)), ProfileService(str(tmp_path / fixture))
    try:
        run = ours.runs()[0]
        for tool in ours.run_tools(run):
            if tool.startswith("pytorch_") or tool == "op_types":
                assert moved.tool_data(run, tool).json() == ours.tool_data(run, tool).json(), tool
    finally:
        ours.close()
        moved.close()
