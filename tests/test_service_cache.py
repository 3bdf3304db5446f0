"""The service's caches: keys from what tools read, real charges, admission, parallel hosts."""

from __future__ import annotations

import gc
import json
import threading
import weakref

import numpy as np
import pandas as pd
import pytest
from conftest import FIXTURES
from werkzeug.test import Client

from tensorboard_plugin_profile import tools as tool_registry
from tensorboard_plugin_profile.common import memo
from tensorboard_plugin_profile.common.errors import NotApplicable, Overloaded
from tensorboard_plugin_profile.common.memsize import deep_size
from tensorboard_plugin_profile.preprocessing.preprocess import preprocess
from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.store.cache_config import CacheConfig
from tensorboard_plugin_profile.store.space_store import full_size
from tensorboard_plugin_profile.web.server import StandaloneApp
from tensorboard_plugin_profile.xspace import read_xspace


def _body(result) -> bytes:
    return b"".join(result.chunks())


def _memory_only(logdir, **kwargs) -> ProfileService:
    return ProfileService(str(logdir), config=CacheConfig(disk_dir=None, **kwargs))


# --- keys ------------------------------------------------------------------
def test_junk_parameters_do_not_bust_the_result_cache():
    service = _memory_only(FIXTURES / "jax_cpu_train")
    run = service.runs()[0]
    first = _body(service.tool_data(run, "overview_page"))
    misses = service.cache.misses
    for i in range(2000):
        params = {"junk": str(i), "run": run, "tag": "overview_page", "_": str(i)}
        assert _body(service.tool_data(run, "overview_page", params=params)) == first
    assert service.cache.misses == misses
    assert len(service.cache) <= 3  # the Space, run_tools at most, one overview


def test_parameters_a_tool_reads_still_key_its_results():
    service = _memory_only(FIXTURES / "jax_cpu_train")
    run = service.runs()[0]
    narrow = {"format": "columnar", "start_time_ms": "0", "end_time_ms": "1"}
    wide = dict(narrow, end_time_ms="1000000", junk="1")
    a = json.loads(_body(service.tool_data(run, "trace_viewer@", params=narrow)))
    b = json.loads(_body(service.tool_data(run, "trace_viewer@", params=wide)))
    assert a != b
    again = dict(wide, junk="2")
    assert json.loads(_body(service.tool_data(run, "trace_viewer@", params=again))) == b


class _Recorder(dict):
    """Parameters that remember which names a tool asked for."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.asked: set = set()

    def get(self, key, default=None):
        self.asked.add(key)
        return super().get(key, default)

    def __getitem__(self, key):
        self.asked.add(key)
        return super().__getitem__(key)

    def __contains__(self, key):
        self.asked.add(key)
        return super().__contains__(key)


@pytest.mark.parametrize(
    "fixture, tool, params",
    [
        ("jax_cpu_train", "trace_viewer@", {}),
        ("jax_cpu_train", "trace_viewer@", {"format": "columnar"}),
        ("jax_cpu_train", "trace_viewer@", {"start_time_ms": "0", "end_time_ms": "5"}),
        ("jax_cpu_train", "trace_viewer@", {"search": "jit"}),
        ("jax_cpu_train", "trace_viewer@", {"search_regex": "j.t"}),
        ("jax_cpu_train", "trace_viewer@", {"details": "0"}),
        ("tf_memory", "memory_profile", {}),
        ("tf_memory", "memory_profile", {"view": "tables"}),
        ("tf_keras2_fit", "overview_page", {}),
        ("tf_keras2_fit", "framework_op_stats", {}),
        ("tf_keras2_fit", "input_pipeline_analyzer", {}),
        ("tf_keras2_fit", "tf_data_bottleneck_analysis", {}),
        ("tf_keras2_fit", "pod_viewer", {}),
        ("gpu_multi_worker", "kernel_stats", {}),
        ("jax_cpu_train", "trace_viewer", {}),
    ],
)
def test_each_tool_reads_only_the_parameters_it_declares(fixture, tool, params):
    service = _memory_only(FIXTURES / fixture)
    run = service.runs()[0]
    session = service.logdir.session(run)
    spaces = [(f.host, service.space(f)) for f in session.host_files[:1]]
    recorder = _Recorder(params)
    try:
        output = tool_registry.TOOLS[tool].convert(spaces, recorder)
        if getattr(output, "chunks", None) is not None:
            for _ in output.chunks():
                pass
    except Exception as e:  # NotApplicable and friends still show what was read
        if not hasattr(e, "message"):
            raise
    assert recorder.asked <= set(tool_registry.TOOLS[tool].params)


# --- real sizes ------------------------------------------------------------
def test_memory_charges_count_categories_object_strings_and_shared_buffers_once():
    names = [f"op_{i:06d}_" + "x" * 100 for i in range(2000)]
    values = np.arange(100_000, dtype=np.int64)
    frame = pd.DataFrame(
        {
            "name": pd.Categorical.from_codes(np.arange(100_000) % 2000, categories=names),
            "text": pd.Series(np.array(names * 50, dtype=object), dtype=object),
            "none": pd.Series(np.full(100_000, None, dtype=object), dtype=object),
            "ints": values,
        }
    )
    size = deep_size(frame)
    strings = sum(len(n) + 49 for n in names)  # CPython str overhead is 49 bytes
    # Categories once, the object column's distinct strings once + a pointer a row.
    expected = 2 * 100_000 + strings + (8 * 100_000 + strings) + 8 * 100_000 + 8 * 100_000
    assert expected <= size <= expected * 1.2
    assert deep_size([frame, frame["ints"]]) < size + 10_000  # the shared buffer once


def test_columns_a_trace_index_makes_on_first_use_are_charged_too():
    service = _memory_only(FIXTURES / "tf_keras2_fit")
    run = service.runs()[0]
    service.tool_data(run, "trace_viewer@", params={"format": "columnar"})
    host_file = service.logdir.session(run).host_files[0]
    key = service.spaces.key(host_file)
    before = service.cache._entries[key][1]
    b"".join(service.tool_data(run, "trace_viewer@").chunks())  # the envelope reads group ids
    index = next(d for d in memo.derived_from(service.space(host_file)) if hasattr(d, "lazy"))
    assert "group_id" in index.lazy
    assert service.cache._entries[key][1] >= before + index.lazy["group_id"].nbytes


@pytest.mark.parametrize("name", ["tf_keras2_fit", "jax_cpu_train"])
def test_a_space_s_charge_walks_only_what_each_request_added_and_equals_a_full_walk(name):
    service = _memory_only(FIXTURES / name)
    run = service.runs()[0]
    host_file = service.logdir.session(run).host_files[0]
    key = service.spaces.key(host_file)
    space = service.space(host_file)
    space_objects = set()
    deep_size(space, space_objects)  # what a walk of the Space alone visits
    requests = [
        ("overview_page", {}),
        ("trace_viewer@", {"format": "columnar"}),
        ("trace_viewer@", {}),  # the envelope: group ids, made on first use by the index
        ("framework_op_stats", {}),
        ("op_profile", {}),
        ("input_pipeline_analyzer", {}),
        ("overview_page", {}),  # warm: nothing new to walk
    ]
    walked_per_request = []
    for tool, params in requests:
        walked = service.spaces.walked
        try:
            b"".join(service.tool_data(run, tool, params=params).chunks())
        except NotApplicable:
            pass  # not every tool has data on both profiles; the others still run
        # Never the Space again: at most the memoised results' objects (the trace index is
        # walked again when it grew), none of the Space's.
        everything = set(space_objects)
        for derived in memo.derived_from(space):
            deep_size(derived, everything)
        walked_per_request.append(service.spaces.walked - walked)
        assert walked_per_request[-1] <= len(everything) - len(space_objects), tool
        # A streamed answer makes the index's columns after the request's own recharge
        # (the next cold request charges them): measure that growth too before comparing.
        service.spaces.recharge([host_file], [(host_file.host, space)])
        assert service.cache._entries[key][1] == full_size(space), tool
    assert walked_per_request[0] > 0 and walked_per_request[-1] == 0  # warm: nothing walked


def test_a_space_is_charged_its_real_size_including_derived_tables():
    service = _memory_only(FIXTURES / "tf_keras2_fit")
    run = service.runs()[0]
    service.tool_data(run, "overview_page")
    host_file = service.logdir.session(run).host_files[0]
    space = service.space(host_file)
    charged = service.cache._entries[service.spaces.key(host_file)][1]
    tables = deep_size(preprocess(read_xspace(host_file.path)))
    assert space.preprocessed  # the service keeps the preprocessed tables only
    assert charged > tables + 10_000  # and the op statistics memoised on them count too
    assert service.cache.used_bytes >= charged
    assert space is service.space(host_file)


# --- admission -------------------------------------------------------------
def test_two_sessions_opened_together_stay_within_budget_plus_one_session():
    logdir = FIXTURES / "tf_two_hosts"
    probe = _memory_only(logdir)
    run = probe.runs()[0]
    host_files = probe.logdir.session(run).host_files
    one_session = probe.spaces.estimate(list(host_files[:1]))
    budget = int(one_session * 1.5)  # room for one session at a time
    service = _memory_only(logdir, memory_bytes=budget)
    errors: list = []

    def open_host(host):
        try:
            service.tool_data(run, "overview_page", host=host)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=open_host, args=(f.host,)) for f in host_files]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert service.cache.peak_bytes <= budget + one_session
    assert service.cache.reserved_bytes == 0


def test_after_one_profile_a_reservation_covers_the_working_set_not_just_what_stays():
    service = _memory_only(FIXTURES / "tf_two_hosts")
    run = service.runs()[0]
    first, second = service.logdir.session(run).host_files[:2]
    service.tool_data(run, "overview_page", host=first.host)
    kept = service.cache._entries[service.spaces.key(first)][1]
    # The learned ratio is what stays; a cold request peaks well above it (docs/cold_path.md).
    assert service.spaces.estimate([second]) >= 2 * kept * second.size / first.size
    assert service.spaces.estimate([first]) == 0  # already in memory


def test_beyond_the_budget_a_request_gets_503_with_a_message():
    logdir = FIXTURES / "jax_cpu_train"
    service = _memory_only(logdir, memory_bytes=1000)
    service.cache.admission_timeout_s = 0.2
    app = Client(StandaloneApp(str(logdir), service=service))
    run = service.runs()[0]
    with service.cache.reservation(800):  # another decode holds the budget
        response = app.get(f"/data?run={run}&tag=overview_page")
    assert response.status_code == 503
    error = response.get_json()["error"]
    assert error["code"] == Overloaded.code and "--cache_bytes" in error["message"]
    assert app.get(f"/data?run={run}&tag=overview_page").status_code == 200


# --- what makes room: derived data before Spaces, never a Space in use -----------------
WINDOW = {"format": "columnar"}  # the trace viewer's first window


def _sizes(logdir, host: int = 0) -> tuple:
    """(the Space alone, the Space with its trace index) of a fixture's host, as charged."""
    probe = _memory_only(logdir)
    run = probe.runs()[0]
    host_file = probe.logdir.session(run).host_files[host]
    probe.tool_data(run, "trace_viewer@", host=host_file.host, params=WINDOW)
    space = probe.space(host_file)
    return deep_size(space), probe.cache._entries[probe.spaces.key(host_file)][1]


@pytest.mark.parametrize("name", ["tf_keras2_fit", "jax_cpu_train"])
def test_trace_first_then_the_overview_decodes_once_when_space_and_index_exceed_the_budget(name):
    # The 2 GB profile: its Space fits the budget, Space + trace index do not. Storing the
    # window evicted the Space (the oldest entry) and the overview decoded it again.
    space_bytes, with_index = _sizes(FIXTURES / name)
    budget = (space_bytes + with_index) // 2
    service = _memory_only(FIXTURES / name, memory_bytes=budget)
    run = service.runs()[0]
    service.tool_data(run, "trace_viewer@", params=WINDOW)
    service.tool_data(run, "overview_page")
    service.tool_data(run, "trace_viewer@", params={"start_time_ms": "0", "end_time_ms": "1"})
    assert service.spaces.decodes == 1


def test_a_space_larger_than_the_whole_budget_is_decoded_once_for_its_requests():
    logdir = FIXTURES / "tf_keras2_fit"
    space_bytes, _ = _sizes(logdir)
    service = _memory_only(logdir, memory_bytes=space_bytes // 2)
    run = service.runs()[0]
    requests = [("trace_viewer@", WINDOW), ("overview_page", {}), ("framework_op_stats", {})]
    for tool, params in requests:
        service.tool_data(run, tool, params=params)
    assert service.spaces.decodes == 1
    # It stays until another profile needs the room, alone over the budget.
    assert [key[0] for key in service.cache._entries].count("space") == 1


@pytest.mark.parametrize("over", [False, True], ids=["space_fits", "space_over_budget"])
def test_the_page_s_requests_trace_first_decode_once_through_the_server(over):
    # As the page asks: runs, the run's tools (judged on its decoded Space), hosts, the
    # first trace window, then the overview; the listing's answer evicted an over-budget
    # Space before the window (nothing pinned it).
    logdir = FIXTURES / "tf_keras2_fit"
    space_bytes, with_index = _sizes(logdir)
    budget = space_bytes // 2 if over else (space_bytes + with_index) // 2
    service = _memory_only(logdir, memory_bytes=budget)
    app = Client(StandaloneApp(str(logdir), service=service))
    run = app.get("/runs").get_json()[0]
    assert "trace_viewer@" in app.get(f"/run_tools?run={run}").get_json()
    host = app.get(f"/hosts?run={run}&tag=trace_viewer@").get_json()[0]["hostname"]
    query = f"run={run}&host={host}"
    assert app.get(f"/data?{query}&tag=trace_viewer@&format=columnar").status_code == 200
    assert app.get(f"/data?{query}&tag=overview_page").status_code == 200
    assert service.spaces.decodes == 1


def test_making_room_drops_the_trace_index_and_keeps_the_space_charged_as_a_full_walk():
    logdir = FIXTURES / "tf_keras2_fit"
    service = _memory_only(logdir)
    run = service.runs()[0]
    host_file = service.logdir.session(run).host_files[0]
    key = service.spaces.key(host_file)
    service.tool_data(run, "trace_viewer@", params=WINDOW)
    space = service.space(host_file)
    space_bytes = deep_size(space)
    assert service.cache._entries[key][1] > space_bytes  # the index is charged
    # The budget shrinks below Space + index; another value needs room.
    service.cache.budget_bytes = space_bytes + 100_000
    service.cache.get_or_compute("another", lambda: b"x" * 50_000, size_of=len)
    assert service.cache.sheds == 1 and service.cache.evictions <= 1  # the window's result
    assert memo.derived_from(space) == []
    assert service.cache._entries[key][1] == space_bytes == full_size(space)
    service.tool_data(run, "trace_viewer@", params={"start_time_ms": "0", "end_time_ms": "1"})
    assert service.spaces.decodes == 1  # the index was rebuilt from the Space in memory
    assert service.cache._entries[key][1] == full_size(space) > space_bytes


@pytest.mark.parametrize("tool", ["trace_viewer@", "trace_viewer"])
def test_a_streamed_answer_keeps_nothing_alive_after_the_budget_dropped_it(tool):
    # The streamed answers (the whole trace) were kept in the result cache at 1 KB: their
    # closure kept the trace index (or the Space) alive after it was shed or evicted.
    service = _memory_only(FIXTURES / "tf_keras2_fit")
    run = service.runs()[0]
    host_file = service.logdir.session(run).host_files[0]
    b"".join(service.tool_data(run, "trace_viewer@", params=WINDOW).chunks())
    index = weakref.ref(next(d for d in memo.derived_from(service.space(host_file))))
    space = weakref.ref(service.space(host_file))
    first = _body(service.tool_data(run, tool))
    assert [key[0] for key in service.cache._entries].count("tool") == 1  # the window's only
    # Room for another 50 KB value only: the Space and the window's answer go (oldest
    # first); before, the streamed answer (newest, 1 KB) stayed and held them.
    service.cache.budget_bytes = 60_000
    service.cache.get_or_compute("another", lambda: b"x" * 50_000, size_of=len)
    gc.collect()
    assert index() is None and space() is None
    assert _body(service.tool_data(run, tool)) == first


def test_a_request_never_evicts_a_space_it_reads_to_make_room_for_another_it_reads():
    # Two hosts drawn together, one already in memory: the reservation for the other used
    # to evict it, and the same request then decoded it again.
    logdir = FIXTURES / "tf_two_hosts"
    first_space, _ = _sizes(logdir, 0)
    service = _memory_only(logdir, memory_bytes=int(first_space * 1.2))
    run = service.runs()[0]
    first, second = service.logdir.session(run).host_files[:2]
    service.tool_data(run, "overview_page", host=first.host)
    assert service.spaces.decodes == 1
    service.tool_data(run, "trace_viewer@", hosts=f"{first.host},{second.host}", params=WINDOW)
    assert service.spaces.decodes == 2


# --- parallel hosts --------------------------------------------------------
@pytest.mark.parametrize("fixture", ["tf_two_hosts", "jax_two_hosts"])
def test_hosts_decoded_in_worker_processes_give_the_same_answers(fixture, tmp_path):
    logdir = FIXTURES / fixture
    in_process = _memory_only(logdir)
    # Asked for: under pytest the main module is not ours, so none by default (host_pool).
    config = CacheConfig(disk_dir=str(tmp_path), workers=2)
    pooled = ProfileService(str(logdir), config=config)
    try:
        run = in_process.runs()[0]
        # The trace of several hosts reads every host's tables (every merging tool, the
        # advisor and the op views included, uses per-host summaries: tests/pod/).
        hosts = ",".join(in_process.logdir.session(run).hosts())
        expected = _body(in_process.tool_data(run, "trace_viewer", hosts=hosts))
        assert _body(pooled.tool_data(run, "trace_viewer", hosts=hosts)) == expected
        assert pooled.spaces.pool is not None and pooled.spaces.pool._executor is not None
        assert pooled.spaces.decodes == 2  # in the workers, counted by the parent
    finally:
        pooled.close()


def test_when_the_worker_pool_cannot_start_hosts_are_decoded_in_process(tmp_path, monkeypatch):
    from tensorboard_plugin_profile.store import host_pool

    def no_processes():
        raise OSError("no process may be started here")

    monkeypatch.setattr(host_pool, "_context", no_processes)
    logdir = FIXTURES / "tf_two_hosts"
    service = ProfileService(str(logdir), config=CacheConfig(disk_dir=str(tmp_path), workers=2))
    run = service.runs()[0]
    hosts = ",".join(service.logdir.session(run).hosts())
    expected = _body(_memory_only(logdir).tool_data(run, "trace_viewer", hosts=hosts))
    assert _body(service.tool_data(run, "trace_viewer", hosts=hosts)) == expected
    assert service.spaces.decodes == 2 and not service.spaces.pool.usable
    # The pod map falls back to this process too (tests/pod/ covers it in every mode).
    assert _body(service.tool_data(run, "advisor")) == _body(
        _memory_only(logdir).tool_data(run, "advisor")
    )
    service.close()


_OUT_OF_MEMORY = r"""
import os, resource, sys
from tensorboard_plugin_profile.common import memsize
from tensorboard_plugin_profile.common.errors import ProfileTooLarge
from tensorboard_plugin_profile.service import ProfileService

memsize.limit_heap_fragmentation()  # as the server: large blocks mapped
service = ProfileService(sys.argv[1])
run = service.runs()[0]
first, second = [h["hostname"] for h in service.hosts(run, "kernel_stats")][:2]
service.tool_data(run, "kernel_stats", host=first).chunks()  # imports and warms; answers
with open("/proc/self/status") as status:
    size = next(int(s.split()[1]) * 1024 for s in status if s.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 20), resource.RLIM_INFINITY))
try:
    service.tool_data(run, "kernel_stats", host=second)  # a 3 MB file to map and decode
    print("answered")
except ProfileTooLarge as e:
    print(e.http_status, e.message)
except MemoryError:
    print("MemoryError")
"""


def test_a_request_without_the_memory_it_needs_is_a_413_naming_tool_and_host_not_a_500():
    # A real process under a real address-space limit that leaves 1 MB for reading and
    # decoding a 3 MB host: the allocation fails (numpy's MemoryError, or mmap's ENOMEM
    # OSError for the file's pages), and the request answers ProfileTooLarge (HTTP 413)
    # naming the tool and host, not an opaque 500. The first host, before the limit, answers.
    import os
    import subprocess
    import sys

    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = [repo] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    run = subprocess.run(
        [sys.executable, "-c", _OUT_OF_MEMORY, str(FIXTURES / "gpu_multi_worker")],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, TBPROF_NO_CACHE="1", PYTHONPATH=os.pathsep.join(path)),
    )
    out = run.stdout.strip()
    assert out.startswith("413 kernel_stats for 34.83.195.180_6003 needs more memory"), (
        out + run.stderr[-2000:]
    )
