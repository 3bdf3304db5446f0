"""Analyses side by side (analysis/together.py): the same answer and the same first error
for any thread count, memoised pieces computed once, the caller's context in the helpers."""

from __future__ import annotations

import contextvars
import threading
import time

import pandas as pd
import pytest
from conftest import host_files

from tensorboard_plugin_profile.analysis import together
from tensorboard_plugin_profile.analysis.hlo import op_events
from tensorboard_plugin_profile.analysis.input_pipeline import breakdown as ia
from tensorboard_plugin_profile.analysis.input_pipeline import host_ops as input_ops
from tensorboard_plugin_profile.analysis.ops import op_stats
from tensorboard_plugin_profile.analysis.steps import build as steps
from tensorboard_plugin_profile.common import json_out, memo
from tensorboard_plugin_profile.common.errors import ProfileTooLarge
from tensorboard_plugin_profile.common.memo import memoized
from tensorboard_plugin_profile.tools import input_pipeline_analyzer, overview_page, overview_tables
from tensorboard_plugin_profile.xspace import read_xspace

FIXTURES = ("jax_cpu_train", "tf_keras_fit", "gpu_multi_worker", "tf_two_hosts")


def _hosts(name: str) -> list:
    """Freshly decoded hosts: nothing memoised from another thread count."""
    return [(p.name[: -len(".xplane.pb")], read_xspace(str(p))) for p in host_files(name)]


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_values_in_task_order(threads):
    def task(i):
        def run():
            time.sleep(0.01 * (5 - i))  # later tasks end first
            return i * i

        return run

    assert together.run_all([task(i) for i in range(5)], threads) == [0, 1, 4, 9, 16]
    assert together.run_all([], threads) == []


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_first_failure_in_task_order_raises(threads):
    def fail(message, delay):
        def run():
            time.sleep(delay)
            raise ValueError(message)

        return run

    # The second task fails last in time, the third first: the second's error is raised,
    # as a sequential run (which never reaches the third) raises it.
    tasks = [lambda: 1, fail("second", 0.05), fail("third", 0.0)]
    with pytest.raises(ValueError, match="^second$"):
        together.run_all(tasks, threads)


def test_tasks_after_a_known_failure_are_not_started():
    started = []

    def fail():
        started.append(0)
        raise KeyError("first")

    def later(i):
        def run():
            started.append(i)
            time.sleep(0.02)

        return run

    with pytest.raises(KeyError):
        together.run_all([fail] + [later(i) for i in range(1, 9)], 2)
    assert started[0] == 0 and len(started) <= 2  # at most the one a helper had taken


def test_threads_from_the_environment(monkeypatch):
    monkeypatch.setenv(together.ANALYSIS_THREADS_ENV, "1")
    assert together.analysis_threads() == 1
    monkeypatch.setenv(together.ANALYSIS_THREADS_ENV, "64")
    assert together.analysis_threads() == together.MAX_THREADS
    monkeypatch.setenv(together.ANALYSIS_THREADS_ENV, "x")
    assert 1 <= together.analysis_threads() <= together.MAX_THREADS
    seen = []
    monkeypatch.setenv(together.ANALYSIS_THREADS_ENV, "1")
    together.run_all([lambda: seen.append(threading.get_ident())] * 3)
    assert set(seen) == {threading.get_ident()}


def test_helpers_see_the_callers_context():
    """The block pool's numpy handler is context-local: helpers must inherit it."""
    var = contextvars.ContextVar("var", default="unset")
    var.set("caller")
    barrier = threading.Barrier(3, timeout=5)

    def read():
        barrier.wait()  # three tasks at once: two of them on helpers
        return var.get(), threading.get_ident()

    seen = together.run_all([read, read, read], 3)
    assert [value for value, _ in seen] == ["caller"] * 3
    assert len({ident for _, ident in seen}) == 3


def test_a_memo_two_tasks_share_is_computed_once():
    class Owner:
        pass

    owner, calls = Owner(), []

    def compute():
        calls.append(1)
        time.sleep(0.05)
        return "value"

    one_memo = [lambda: memoized([owner], "one memo", compute)] * 3
    assert together.run_all(one_memo, 3) == ["value"] * 3
    assert len(calls) == 1


@pytest.mark.parametrize("name", FIXTURES)
def test_overview_same_bytes_for_any_thread_count(name, monkeypatch):
    answers = []
    for threads in ("1", "3"):
        monkeypatch.setenv(together.ANALYSIS_THREADS_ENV, threads)
        out = overview_page.convert(_hosts(name), {})
        answers.append(b"".join(out.chunks()))
    assert answers[0] == answers[1]


@pytest.mark.parametrize("threads", [1, 3])
def test_a_failing_step_database_gives_its_error(threads, monkeypatch):
    """The error of a sequential run: the op tables succeed, the step database's 413."""
    space = _hosts("jax_cpu_train")[0][1]

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(steps, "_step_database", no_memory)
    with pytest.raises(ProfileTooLarge, match="step breakdown"):
        op_stats.analyse_host(space, threads)


@pytest.mark.parametrize("threads", [1, 3])
def test_the_first_failing_analysis_wins(threads, monkeypatch):
    """Op tables and step database both fail: the op tables' error, as sequentially."""
    space = _hosts("jax_cpu_train")[0][1]

    def broken(*args, **kwargs):
        raise RuntimeError("op tables")

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(op_stats.ops, "host_op_metrics", broken)
    monkeypatch.setattr(steps, "_step_database", no_memory)
    with pytest.raises(RuntimeError, match="op tables"):
        op_stats.analyse_host(space, threads)


@pytest.mark.parametrize("name", ["jax_cpu_train", "tf_keras_fit"])
def test_overview_builds_no_hlo_op_table(name):
    """The overview asks only whether XLA ops exist; the HLO op table is hlo_stats' work."""
    hosts = _hosts(name)
    overview_page.convert(hosts, {})
    for _, space in hosts:
        kept = memo.derived_from(space)
        assert not any(isinstance(v, pd.DataFrame) and "hlo_op" in v for v in kept)
        assert op_events.has_xla_ops(space) == (name == "jax_cpu_train")
        assert op_events.has_xla_ops(space) == (not op_events.host_op_table(space).empty)


def test_input_pipeline_after_the_overview_reuses_its_step_pieces(monkeypatch):
    """The step details, the input ops and the step-time table are made once per OpStats
    for both tools, and each tool's answer is the bytes it gives alone."""
    alone = input_pipeline_analyzer.convert(_hosts("tf_keras_fit"), {})
    hosts = _hosts("tf_keras_fit")
    overview_page.convert(hosts, {})
    calls = []
    for module, name in (
        (overview_tables, "step_time_table"),
        (ia, "_step_details"),
        (input_ops, "_input_ops"),
    ):
        made = getattr(module, name)
        monkeypatch.setattr(
            module, name, lambda *a, _made=made, _name=name: calls.append(_name) or _made(*a)
        )
    after = input_pipeline_analyzer.convert(hosts, {})
    assert calls == []
    assert json_out.dumps(after) == json_out.dumps(alone)
