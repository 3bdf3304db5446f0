"""The tool list of a pod session comes from the hosts' summaries (made where the hosts
are decoded), never from a host decoded in the server; it must be the list the decoded
first host gives, on every fixture."""

from __future__ import annotations

import os
import threading

import pytest
from conftest import FIXTURES, fixture_names
from werkzeug.test import Client

from tensorboard_plugin_profile import tools
from tensorboard_plugin_profile.pod.host_map import summarize_file
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.cache_config import CacheConfig
from tensorboard_plugin_profile.web.server import StandaloneApp

MULTI_HOST = ["gpu_multi_worker", "jax_two_hosts", "tf_two_hosts"]


def _service(name: str, **config) -> ProfileService:
    return ProfileService(str(FIXTURES / name), config=CacheConfig(disk_dir=None, **config))


@pytest.mark.parametrize("name", fixture_names())
def test_a_host_s_summary_lists_the_tools_its_decoded_space_lists(name):
    service = _service(name)
    try:
        for run in service.runs():
            first = service.logdir.session(run).host_files[0]
            decoded = tools.listed_tools(service.space(first))
            # As in a worker: read without flows, summarised, the tables dropped.
            assert summarize_file(first).tool_names == decoded, run
            assert decoded and decoded[0] == "overview_page"
    finally:
        service.close()


@pytest.mark.parametrize("name", MULTI_HOST)
def test_a_pod_session_s_tool_list_decodes_no_host_in_the_server(name):
    one_by_one = _service(name)
    try:
        run = one_by_one.runs()[0]
        first = one_by_one.logdir.session(run).host_files[0]
        decoded = tools.listed_tools(one_by_one.space(first))
    finally:
        one_by_one.close()
    service = _service(name, workers=2)
    try:
        assert service.run_tools(run) == decoded
        service.host_map.join_background()  # the second host's summary, made meanwhile
        assert service.spaces.decodes == 0 and service.host_map.computed == 2
        # The not-applicable answer names the same tools, still without a decode.
        with pytest.raises(Exception, match="Tools with data for run") as raised:
            service.tool_data(run, "pytorch_distributed")
        assert raised.value.details["tools"] == [t.rstrip("@") for t in decoded]
        assert service.spaces.decodes == 0
    finally:
        service.close()


def _first_host_list(name: str) -> list:
    """The list a session of ``name`` gave before it was answered early: its first host's."""
    service = _service(name)
    try:
        run = service.runs()[0]
        return tools.listed_tools(service.space(service.logdir.session(run).host_files[0]))
    finally:
        service.close()


class _HoldBack:
    """Holds every host but the first back once its summary is made (``HostMap.on_made``),
    until released: what an answer returned before then waited for one host only."""

    def __init__(self, service: ProfileService, first: str):
        self.first = first
        self.made: list = []
        self.release = threading.Event()
        service.host_map.on_made = self

    def __call__(self, host_file) -> None:
        self.made.append(host_file.host)
        if host_file.host != self.first:
            assert self.release.wait(120), "the test never released the other hosts"


@pytest.mark.parametrize("in_workers", [False, True], ids=["in_process", "in_a_worker"])
@pytest.mark.parametrize("name", MULTI_HOST)
def test_a_pod_session_s_tool_list_is_answered_after_its_first_host_s_summary(name, in_workers):
    expected = _first_host_list(name)
    # One worker (or none) summarises the hosts in order, so the first is made first.
    service = _service(name, workers=1)
    if not in_workers:
        service.host_map.pool = None
    run = service.runs()[0]
    first = service.logdir.session(run).host_files[0].host
    held = _HoldBack(service, first)
    try:
        names, listed, hosts = service.tool_list(run)
        assert service.host_map.computed == 1 and held.made == [first]  # one summary done
        assert (names, listed, hosts) == (expected, 1, 2)
        held.release.set()
        service.host_map.join_background()
        assert service.host_map.computed == 2  # the other host went on in the background
        assert service.tool_list(run) == (expected, 2, 2)  # the final list: as before
        assert service.tool_data(run, "overview_page").json()  # merges the two, made before
        assert service.host_map.computed == 2 and service.spaces.decodes == 0
    finally:
        held.release.set()
        service.close()


def test_a_request_during_the_background_summaries_waits_for_them_instead_of_redoing_them():
    service = _service("jax_two_hosts", workers=1)
    service.host_map.pool = None
    run = service.runs()[0]
    held = _HoldBack(service, service.logdir.session(run).host_files[0].host)
    try:
        service.tool_list(run)
        overview = threading.Thread(target=service.tool_data, args=(run, "overview_page"))
        overview.start()
        held.release.set()
        overview.join(120)
        assert service.tool_data(run, "overview_page").json()
        assert service.host_map.computed == 2  # each host once, not once per request
    finally:
        held.release.set()
        service.close()


@pytest.fixture
def cpu_then_gpu_host(tmp_path):
    """A session whose second host has a GPU the first has not (hard links to fixtures)."""
    session = tmp_path / "plugins" / "profile" / "mixed"
    session.mkdir(parents=True)
    cpu = FIXTURES / "jax_two_hosts/plugins/profile/multi_jax2__xprof_client"
    gpu = FIXTURES / "gpu_multi_worker/plugins/profile/GPU-multi-worker"
    os.link(cpu / "127.0.0.1_19111.xplane.pb", session / "a_cpu.xplane.pb")
    os.link(gpu / "34.83.195.179_6003.xplane.pb", session / "b_gpu.xplane.pb")
    return tmp_path


def test_a_tool_only_a_later_host_has_is_listed_once_that_host_s_summary_is_made(
    cpu_then_gpu_host,
):
    service = ProfileService(str(cpu_then_gpu_host), config=CacheConfig(disk_dir=None, workers=1))
    service.host_map.pool = None
    held = _HoldBack(service, "a_cpu")
    try:
        client = Client(StandaloneApp(str(cpu_then_gpu_host), service=service))
        early = client.get("/data/plugin/profile/run_tools?run=mixed")
        assert early.headers["X-Tool-List-Hosts"] == "1/2"  # says it is one host's list
        assert "kernel_stats" not in early.json and "hlo_stats" in early.json
        held.release.set()
        service.host_map.join_background()
        final = client.get("/data/plugin/profile/run_tools?run=mixed")
        assert final.headers["X-Tool-List-Hosts"] == "2/2"
        hosts = service.logdir.session("mixed").host_files
        each = [summarize_file(f).tool_names for f in hosts]
        assert early.json == each[0]
        assert "kernel_stats" in final.json and final.json == tools.sort_tools(
            set(each[0]) | set(each[1])
        )  # every host's tools, in display order
    finally:
        held.release.set()
        service.close()
