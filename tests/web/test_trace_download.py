"""Issue 28 item 10: the whole trace is announced by its size, sent compressed, and offered as a
``.json.gz`` file in the Chrome trace format (what ui.perfetto.dev and chrome://tracing open).

Over a real server on loopback (werkzeug, as ``tbprof serve``) with urllib: the trace's /data
answer is gzip-encoded when the client accepts it; ``size=estimate`` tells the JSON's size
before it is sent (exact on small traces, within 2 % on the larger fixtures); the download is a
gzip file of the same events, each with a phase (no closing ``{}``).
"""

from __future__ import annotations

import gzip
import json
import threading
import urllib.error
import urllib.request

import pytest
from conftest import FIXTURES
from werkzeug.serving import make_server

from tensorboard_plugin_profile.service import ProfileService
from tensorboard_plugin_profile.tools import trace_viewer
from tensorboard_plugin_profile.web.server import StandaloneApp

PREFIX = "data/plugin/profile"
CASES = [
    ("jax_two_hosts/multi_jax2__xprof_client", "127.0.0.1_19111"),
    ("gpu_multi_worker/GPU-multi-worker", ""),
    ("profiler_hook/train/timeline-8", ""),
    ("pytorch_cpu_only/run/1074", ""),
]


@pytest.fixture(scope="module")
def base():
    server = make_server("127.0.0.1", 0, StandaloneApp(str(FIXTURES)), threaded=True)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_port}/{PREFIX}/"
    server.shutdown()


def _get(url, gzip_ok=False):
    headers = {"Accept-Encoding": "gzip"} if gzip_ok else {"Accept-Encoding": "identity"}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=120) as r:
        return r.status, dict(r.headers), r.read()


def _query(run, host):
    return f"run={run}" + (f"&host={host}" if host else "")


@pytest.mark.parametrize("run, host", CASES)
def test_trace_is_sent_gzipped_and_its_size_is_told_first(base, run, host):
    url = f"{base}data?{_query(run, host)}&tag=trace_viewer"
    _, plain_headers, plain = _get(url)
    assert "Content-Encoding" not in plain_headers
    status, headers, zipped = _get(url, gzip_ok=True)
    assert status == 200 and headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped) == plain
    _, _, answer = _get(f"{url}&size=estimate")
    estimate = json.loads(answer)
    if estimate["exact"]:
        assert estimate["bytes"] == len(plain)
    else:
        assert abs(estimate["bytes"] - len(plain)) <= 0.02 * len(plain)
    assert 0.5 * len(zipped) <= estimate["gzipBytes"] <= 1.5 * len(zipped)
    drawn = [e for e in json.loads(plain)["traceEvents"] if e and e.get("ph") != "M"]
    objects = sum(1 for e in drawn if e["ph"] in ("N", "D"))  # an object draws N, O and D
    assert estimate["events"] == len(drawn) - objects


@pytest.mark.parametrize("run, host", CASES)
def test_download_is_a_json_gz_of_the_same_events_each_with_a_phase(base, run, host):
    status, headers, body = _get(f"{base}trace_download?{_query(run, host)}", gzip_ok=True)
    assert status == 200 and headers["Content-Type"] == "application/gzip"
    assert "Content-Encoding" not in headers  # the file itself is the .gz
    assert headers["Content-Disposition"].endswith('.trace.json.gz"')
    trace = json.loads(gzip.decompress(body))
    _, _, plain = _get(f"{base}data?{_query(run, host)}&tag=trace_viewer")
    shown = json.loads(plain)
    assert shown["traceEvents"][-1] == {}
    assert trace["traceEvents"] == shown["traceEvents"][:-1]
    assert all(isinstance(e.get("ph"), str) for e in trace["traceEvents"])
    assert trace["displayTimeUnit"] == "ns"


def test_a_bad_size_or_run_is_a_clear_4xx(base):
    run = "profiler_hook/train/timeline-8"
    with pytest.raises(urllib.error.HTTPError) as bad:
        _get(f"{base}data?run={run}&tag=trace_viewer&size=huge")
    assert bad.value.code == 400
    assert "size must be 'estimate'" in json.loads(bad.value.read())["error"]["message"]
    with pytest.raises(urllib.error.HTTPError) as missing:
        _get(f"{base}trace_download?run=no/such/run")
    assert missing.value.code == 404


def test_estimate_with_a_tiny_sample_stays_close():
    """The sample size is a parameter: a 50-event sample per plane still lands within 5 %."""
    service = ProfileService(str(FIXTURES))
    run = "gpu_multi_worker/GPU-multi-worker"
    actual = len(b"".join(service.tool_data(run, "trace_viewer").chunks()))
    session = service.logdir.session(run)
    hosts = [(f.host, service.space(f)) for f in session.host_files]
    estimate = trace_viewer.size_estimate(hosts, sample_per_plane=50)
    assert not estimate["exact"]
    assert abs(estimate["bytes"] - actual) <= 0.05 * actual


@pytest.mark.parametrize(
    "chunks, expected",
    [
        ([b'{"traceEvents":[\n{"ph": "M"},\n', b"{}]}\n"], b'{"traceEvents":[\n{"ph": "M"}\n]}\n'),
        ([b'{"traceEvents":[\n', b"", b"{}]}\n"], b'{"traceEvents":[\n\n]}\n'),
        ([b'{"a":[\n{"ph": "X"},\n{', b"}]", b"}\n"], b'{"a":[\n{"ph": "X"}\n]}\n'),
    ],
)
def test_the_closing_empty_event_is_dropped_across_chunk_borders(chunks, expected):
    out = b"".join(trace_viewer.without_sentinel(iter(chunks)))
    assert out == expected
    json.loads(out)
