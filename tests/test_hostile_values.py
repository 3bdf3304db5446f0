"""Hostile values in requests and in trace files get an answer or a 4xx, never a 500.

Issue 24, item 11: numbers no parameter can mean (``nan``, ``inf``, ``1e308``, ``2**64``),
names holding a lone UTF-16 surrogate, and top-level metadata nested hundreds of levels
deep each made some routes answer an opaque 500. Everything here goes through the real
WSGI app of the standalone server, on real fixtures or on traces built from them.
"""

from __future__ import annotations

import gzip
import json
import pathlib
import threading

from conftest import FIXTURES
from werkzeug.test import Client

from tensorboard_plugin_profile.web.server import StandaloneApp

PREFIX = "/data/plugin/profile"
REQUEST_TIMEOUT_S = 60


def _body(response) -> bytes:
    data = response.get_data()
    if response.headers.get("Content-Encoding") == "gzip":
        data = gzip.decompress(data)
    return data


def _get(client: Client, route: str, **params):
    """(status, body) of a GET, failing the test if it takes longer than a minute."""
    out: dict = {}

    def run() -> None:
        response = client.get(f"{PREFIX}/{route}", query_string=params)
        out["status"], out["body"] = response.status_code, _body(response)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(REQUEST_TIMEOUT_S)
    assert not thread.is_alive(), f"{route} {params} did not answer in {REQUEST_TIMEOUT_S} s"
    return out["status"], out["body"]


def _assert_answer_or_4xx(status: int, body: bytes, what: str) -> None:
    assert status == 200 or 400 <= status < 500, f"{what}: {status} {body[:300]!r}"
    if status != 200:
        error = json.loads(body)["error"]
        assert error["code"] != "INTERNAL" and error["message"], what


def _trace(path: pathlib.Path) -> dict:
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.suffix == ".gz" else data)


# --- deeply nested metadata -------------------------------------------------------------
def test_top_level_metadata_nested_hundreds_of_levels_is_answered(tmp_path):
    # Before: measuring the decoded profile for the cache (memsize) recursed once per level,
    # and 400 levels were a RecursionError: every tool of the profile answered 500.
    trace = _trace(FIXTURES / "pytorch_cpu_only/run/rank-34.1074.pt.trace.json.gz")
    nested = '{"a":' * 900 + "1" + "}" * 900
    text = json.dumps(trace)[:-1] + f', "deepMetadata": {nested}}}'
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "worker.1.pt.trace.json").write_text(text)
    client = Client(StandaloneApp(str(tmp_path)))
    (run,) = json.loads(_get(client, "runs")[1])
    status, body = _get(client, "run_tools", run=run)
    assert status == 200, body
    for tool in json.loads(body):
        status, body = _get(client, "data", run=run, tag=tool)
        _assert_answer_or_4xx(status, body, tool)
    assert _get(client, "data", run=run, tag="pytorch_overview")[0] == 200
