"""The tool list of a pod session comes from the hosts' summaries (made where the hosts
are decoded), never from a host decoded in the server; it must be the list the decoded
first host gives, on every fixture."""

from __future__ import annotations

import pytest
from conftest import FIXTURES, fixture_names

from tensorboard_plugin_profile import tools
from tensorboard_plugin_profile.pod.host_map import summarize_file
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.cache_config import CacheConfig

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
        assert service.spaces.decodes == 0 and service.host_map.computed == 2
        # The not-applicable answer names the same tools, still without a decode.
        with pytest.raises(Exception, match="Tools with data for run") as raised:
            service.tool_data(run, "pytorch_distributed")
        assert raised.value.details["tools"] == [t.rstrip("@") for t in decoded]
        assert service.spaces.decodes == 0
    finally:
        service.close()
