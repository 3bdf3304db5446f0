"""Multi-host answers from per-host summaries: the same bytes in every mode, cached per host.

Every merging tool (``Tool.from_summaries``) answers a multi-host XSpace session from
summaries made in this process, in the local worker processes and on a real Dask cluster
(``distributed.LocalCluster`` on loopback); the bytes must equal the answer built from the
decoded Spaces themselves (``Tool.convert``), which the reference tests check against
upstream.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import shutil

import pytest
from conftest import FIXTURES

from tensorboard_plugin_profile import tools
from tensorboard_plugin_profile.common.errors import CorruptProfile, NotApplicable
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.cache_config import CacheConfig

SESSIONS = ("jax_two_hosts", "tf_two_hosts", "gpu_multi_worker")
MERGING = sorted(t.name for t in tools.TOOLS.values() if t.from_summaries)
PARAMS = {
    "op_profile": [{}, {"group_by": "category"}, {"view": "tables"}],
    "advisor": [{"run": "a_run"}],
}


def _requests():
    return [(tool, params) for tool in MERGING for params in PARAMS.get(tool, [{}])]


def _answer(service: ProfileService, tool: str, params: dict) -> bytes:
    run = service.runs()[0]
    try:
        result = service.tool_data(run, tool, host=tools.ALL_HOSTS, params=params)
    except NotApplicable as e:
        return b"not applicable: " + e.message.encode()
    return b"".join(c if isinstance(c, bytes) else c.encode() for c in result.chunks())


def _from_spaces(service: ProfileService, tool: str, params: dict) -> bytes:
    """The answer of ``convert`` over the decoded Spaces (no summaries involved)."""
    run = service.runs()[0]
    files = list(service.logdir.session(run).host_files)
    spaces = service.spaces.get_many(files, lambda _: None)
    registered = tools.TOOLS[tool]
    try:
        output = registered.convert(spaces, registered.relevant_params(params))
    except NotApplicable as e:  # the service adds the run's tools to the tool's reason
        return b"not applicable: " + service._not_applicable(run, e.message).message.encode()
    from tensorboard_plugin_profile.service import _to_result

    return b"".join(_to_result(output).chunks())


def _service(logdir, tmp_path=None, **config) -> ProfileService:
    disk = str(tmp_path / "cache") if tmp_path is not None else None
    return ProfileService(str(logdir), config=CacheConfig(disk_dir=disk, **config))


@pytest.fixture(scope="module")
def expected():
    """Per session, the bytes each request gets from the decoded Spaces."""
    answers = {}
    for name in SESSIONS:
        service = _service(FIXTURES / name)
        answers[name] = {
            (tool, str(params)): _from_spaces(service, tool, params) for tool, params in _requests()
        }
        service.close()
    return answers


@pytest.fixture(scope="module")
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
        dashboard_address=None,
    )  # fmt: skip
    yield cluster
    cluster.close()


def test_merging_tools_are_the_multi_host_ones():
    assert set(MERGING) == {
        "overview_page", "input_pipeline_analyzer", "framework_op_stats", "kernel_stats",
        "pod_viewer", "hlo_stats", "op_profile", "roofline_model",
        # With each host's details too (``HostDetails``), mapped on first use.
        "advisor", "op_types", "scope_view", "code_view", "tf_data_bottleneck_analysis",
    }  # fmt: skip
    assert {t.name for t in tools.TOOLS.values() if t.with_details} == {
        "advisor", "op_types", "scope_view", "code_view", "tf_data_bottleneck_analysis",
    }  # fmt: skip


@pytest.mark.parametrize("name", SESSIONS)
def test_worker_processes_give_the_same_bytes(name, expected):
    service = _service(FIXTURES / name, workers=2)
    try:
        for tool, params in _requests():
            assert _answer(service, tool, params) == expected[name][(tool, str(params))], tool
        assert service.host_map.computed == 2  # once per host, shared by every tool
        assert service.host_map.computed_details == 2  # the same for the details
        # The server itself decoded at most the first host: the run's tool list, which a
        # tool's "not applicable" answer names (as the page's first request reads it).
        assert service.spaces.decodes <= 1
    finally:
        service.close()


@pytest.mark.parametrize("name", SESSIONS)
def test_this_process_gives_the_same_bytes(name, expected):
    service = _service(FIXTURES / name)
    service.host_map.pool = None  # no workers: the server summarises hosts itself
    try:
        for tool, params in _requests():
            assert _answer(service, tool, params) == expected[name][(tool, str(params))], tool
        assert service.host_map.computed == 2
    finally:
        service.close()


@pytest.mark.slow
@pytest.mark.parametrize("name", SESSIONS)
def test_a_dask_cluster_gives_the_same_bytes(name, expected, dask_cluster):
    service = _service(FIXTURES / name, dask_scheduler=dask_cluster.scheduler_address)
    try:
        for tool, params in _requests():
            assert _answer(service, tool, params) == expected[name][(tool, str(params))], tool
        assert service.host_map.computed == 2
        assert service.spaces.decodes <= 1  # the run's tool list only, as above
        assert service.host_map.cluster._client is not None  # the cluster did the work
    finally:
        service.close()


def test_summaries_survive_a_restart_and_a_new_host_costs_one_host(tmp_path, expected):
    logdir = tmp_path / "logs"
    shutil.copytree(FIXTURES / "jax_two_hosts", logdir)
    first = _service(logdir, tmp_path, workers=2)
    before = _answer(first, "overview_page", {})
    assert first.host_map.computed == 2
    first.close()  # writes the summaries to the disk cache

    again = _service(logdir, tmp_path, workers=2)
    assert _answer(again, "pod_viewer", {}) == expected["jax_two_hosts"][("pod_viewer", "{}")]
    assert again.host_map.computed == 0  # both came from disk
    session = next(logdir.glob("plugins/profile/*"))
    shutil.copy(next(session.glob("*.xplane.pb")), session / "127.0.0.1_19113.xplane.pb")
    again.logdir = type(again.logdir)(str(logdir))  # a fresh walk sees the third host
    pods = json.loads(_answer(again, "pod_viewer", {}))
    assert again.host_map.computed == 1  # only the new host
    cores = pods["podStatsSequence"]["podStatsMap"][0]["podStatsPerCore"]
    assert sorted(cores) == ["1", "1001", "2001"]  # three hosts now
    assert _answer(again, "overview_page", {}) != before
    again.close()


def test_a_corrupt_host_is_a_typed_error_in_every_mode(tmp_path):
    logdir = tmp_path / "logs"
    shutil.copytree(FIXTURES / "jax_two_hosts", logdir)
    victim = sorted(logdir.glob("plugins/profile/*/*.xplane.pb"))[1]
    victim.write_bytes(b"\x0a\xff\xff\xff\xff\x0f" + b"\x00" * 64)  # a truncated plane
    for workers in (2, None):
        service = _service(logdir, workers=workers)
        if workers is None:
            service.host_map.pool = None
        with pytest.raises(CorruptProfile):
            _answer(service, "overview_page", {})
        service.close()


def test_an_unreachable_cluster_falls_back_to_the_local_workers(caplog, expected):
    service = _service(
        FIXTURES / "jax_two_hosts", workers=2, dask_scheduler="tcp://127.0.0.1:9"
    )
    service.host_map.cluster.connect_timeout_s = 2
    try:
        with caplog.at_level(logging.WARNING):
            answer = _answer(service, "overview_page", {})
        assert answer == expected["jax_two_hosts"][("overview_page", "{}")]
        assert "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in caplog.text
        assert service.host_map.computed == 2
    finally:
        service.close()


def test_one_host_sessions_and_single_host_requests_keep_the_spaces_path():
    service = _service(FIXTURES / "jax_two_hosts", workers=2)
    try:
        run = service.runs()[0]
        host = service.logdir.session(run).hosts()[0]
        service.tool_data(run, "overview_page", host=host)
        assert service.host_map.computed == 0  # one host: decoded here, kept for the trace
        assert service.spaces.decodes == 1
    finally:
        service.close()


def test_config_reads_workers_and_scheduler_from_the_environment(monkeypatch):
    monkeypatch.setenv("TBPROF_WORKERS", "3")
    monkeypatch.setenv("TBPROF_DASK_SCHEDULER", "tcp://127.0.0.1:8786")
    config = CacheConfig.from_flags()
    assert (config.workers, config.dask_scheduler) == (3, "tcp://127.0.0.1:8786")
    monkeypatch.setenv("TBPROF_WORKERS", "lots")
    with pytest.raises(Exception, match="--workers must be a whole number"):
        CacheConfig.from_flags()
    assert dataclasses.replace(config, workers=None).workers is None


def test_listing_a_multi_host_session_s_tools_starts_the_workers_ahead(expected):
    """The page asks for a run's tools before its first multi-host answer: by then the
    workers are started and have imported the map's module, so that answer does not wait
    for them. A one-host session starts none."""
    single = _service(FIXTURES / "jax_cpu_train", workers=2)
    try:
        single.run_tools(single.runs()[0])
        assert single.spaces.pool._executor is None
    finally:
        single.close()
    service = _service(FIXTURES / "jax_two_hosts", workers=2)
    try:
        service.run_tools(service.runs()[0])
        executor = service.spaces.pool._executor
        assert executor is not None and len(executor._processes) == 2
        assert (
            _answer(service, "overview_page", {})
            == expected["jax_two_hosts"][("overview_page", "{}")]
        )
        # The tool list came from the hosts' summaries, made in the workers: no decode here.
        assert service.host_map.computed == 2 and service.spaces.decodes == 0
    finally:
        service.close()


def test_a_pod_session_s_program_views_decode_only_the_host_holding_the_program():
    """module_list comes from the summaries; graph_viewer and memory_viewer decode the first
    host whose summary lists the program (not every host) and answer as over all Spaces."""
    from tensorboard_plugin_profile.analysis.hlo.modules import session_module_names
    from tensorboard_plugin_profile.common.errors import NotFound
    from tensorboard_plugin_profile.service import _to_result

    reference = _service(FIXTURES / "jax_two_hosts")
    run = reference.runs()[0]
    files = list(reference.logdir.session(run).host_files)
    spaces = reference.spaces.get_many(files, lambda _: None)
    names = session_module_names([space for _, space in spaces])
    assert names  # the fixture has programs to show
    wanted = {
        "graph_viewer": {"module_name": names[-1], "type": "ops"},
        "memory_viewer": {"module_name": names[-1]},
    }
    expected = {
        tool: b"".join(_to_result(tools.TOOLS[tool].convert(spaces, params)).chunks())
        for tool, params in wanted.items()
    }
    reference.close()
    service = _service(FIXTURES / "jax_two_hosts", workers=2)
    try:
        assert service.module_list(run) == names
        assert service.spaces.decodes == 0  # the names came from the summaries
        for tool, params in wanted.items():
            result = service.tool_data(run, tool, host=tools.ALL_HOSTS, params=params)
            assert b"".join(result.chunks()) == expected[tool], tool
        assert service.spaces.decodes == 1  # one host, for both views
        with pytest.raises(NotFound, match="No HLO module named 'nope'"):
            service.tool_data(run, "graph_viewer", params={"module_name": "nope"})
        assert service.spaces.decodes == 1
    finally:
        service.close()
