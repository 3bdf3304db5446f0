"""The cache load benchmark, small: real servers on loopback, sessions at once, a restart."""

from __future__ import annotations

import sys

from conftest import REPO, host_files

sys.path.insert(0, str(REPO / "bench"))
import cache_load  # noqa: E402


def test_three_sessions_opened_at_once_under_a_small_budget_all_answer():
    profile = str(host_files("jax_cpu_train")[0])
    out = cache_load.main(["sessions", profile, "--sessions", "3", "--cache_bytes", "30M"])
    assert out["statuses"] == [200, 200, 200]
    assert out["peak_rss_above_idle_mb"] > 0


def test_a_restarted_server_answers_from_the_disk_cache():
    profile = str(host_files("jax_cpu_train")[0])
    out = cache_load.main(["restart", profile, "--repeat", "3"])
    assert out["restart_overview_s"] < out["cold_overview_s"]
    assert out["restart_new_window_s"] > 0
