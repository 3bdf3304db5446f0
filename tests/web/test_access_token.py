"""A server with an access token (the live page): no route without the token, the page itself open.

Through the real WSGI app; the browser side is frontend/e2e/live-token.e2e.mjs, the live page as
another user tests/advisor/test_live.py.
"""

from __future__ import annotations

import json

import pytest
from conftest import FIXTURES
from werkzeug import Request
from werkzeug.test import Client

from tensorboard_plugin_profile.common.errors import PermissionDenied
from tensorboard_plugin_profile.web import http_api
from tensorboard_plugin_profile.web.access_token import new_token, require
from tensorboard_plugin_profile.web.server import StandaloneApp

TOKEN = new_token()


@pytest.fixture(scope="module")
def client():
    return Client(StandaloneApp(str(FIXTURES / "jax_cpu_train"), access_token=TOKEN))


def _routes() -> list:
    table = http_api.Routes(service=None).table()  # names only: handlers are not called
    return sorted(set(table) - {"/index.js", "/index.html"})


@pytest.mark.parametrize("route", _routes())
@pytest.mark.parametrize("prefix", ["", http_api.PLUGIN_PREFIX])
def test_every_route_needs_the_token(client, prefix, route):
    for query in ("", "?token=", "?token=wrong", f"?token={TOKEN}x", f"?token=a&token={TOKEN}"):
        response = client.get(prefix + route + query)
        assert response.status_code == 403, (route, query)
        error = json.loads(response.data)["error"]
        assert error["code"] == "PERMISSION_DENIED" and "needs the link" in error["message"]


def test_with_the_token_routes_answer_and_never_see_it(client):
    runs = json.loads(client.get(f"/runs?token={TOKEN}").data)
    assert runs
    reply = client.get(f"{http_api.PLUGIN_PREFIX}/run_tools?token={TOKEN}&run={runs[0]}")
    assert reply.status_code == 200 and "overview_page" in json.loads(reply.data)


def test_the_token_is_taken_out_of_the_query_and_the_rest_kept_as_sent():
    request = Request.from_values(f"/data?run=a%2Fb&token={TOKEN}&tag=x+y&empty=")
    passed = require(request, TOKEN)
    assert passed.environ["QUERY_STRING"] == "run=a%2Fb&tag=x+y&empty="
    assert passed.args.to_dict() == {"run": "a/b", "tag": "x y", "empty": ""}
    with pytest.raises(PermissionDenied):
        require(Request.from_values("/data?run=a"), TOKEN)


def test_the_page_and_its_files_need_no_token(client):
    for path in ("/", "/index.html", "/index.js", http_api.PLUGIN_PREFIX + "/index.js"):
        assert client.get(path).status_code == 200, path
