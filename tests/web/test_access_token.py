"""A server with an access token (the live page): no route without the token, the page itself open.

The token comes on top of ``guard.py``: the Host check first, and a capture still needs a POST
with the capture token. Through the real WSGI app; the browser side is
frontend/e2e/live-token.e2e.mjs, the live page as another user tests/advisor/test_live.py.
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
from tensorboard_plugin_profile.web.guard import TOKEN_HEADER, Guard
from tensorboard_plugin_profile.web.server import StandaloneApp

TOKEN = new_token()
REBOUND = "rebind.attacker.example"
# A capture that got past every check: the route itself refuses the duration.
BAD_ARGS = {"service_addr": "127.0.0.1:1", "duration": "x"}
GOT_THROUGH = {
    "error": {"code": "INVALID_ARGUMENT", "message": "duration must be an integer, got 'x'."}
}


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


def _code(response) -> tuple:
    return response.status_code, json.loads(response.data)["error"]["code"]


def test_the_host_guard_comes_first_even_with_the_token(tmp_path):
    guard = Guard.for_bind("127.0.0.1", ["box.lan"])
    client = Client(StandaloneApp(str(tmp_path), access_token=TOKEN, guard=guard))
    for query in ("", f"?token={TOKEN}"):
        for path in ("/runs", "/capture_token", "/", "/index.js"):
            response = client.get(path + query, headers={"Host": REBOUND})
            assert _code(response) == (403, "HOST_NOT_ALLOWED"), (path, query)
        capture = client.post(f"/capture_profile{query}", data=BAD_ARGS, headers={"Host": REBOUND})
        assert _code(capture) == (403, "HOST_NOT_ALLOWED"), query
    # A name of --allowed_hosts is answered, with the token only.
    assert client.get(f"/runs?token={TOKEN}", headers={"Host": "box.lan:8791"}).status_code == 200
    assert _code(client.get("/runs", headers={"Host": "box.lan"})) == (403, "PERMISSION_DENIED")


def test_a_capture_needs_both_tokens_and_a_post(tmp_path):
    client = Client(StandaloneApp(str(tmp_path), access_token=TOKEN))
    url = f"{http_api.PLUGIN_PREFIX}/capture_profile"
    # The capture token is not handed out without the access token; it is another secret.
    assert _code(client.get("/capture_token")) == (403, "PERMISSION_DENIED")
    capture_token = json.loads(client.get(f"/capture_token?token={TOKEN}").data)["token"]
    assert capture_token and capture_token != TOKEN
    with_capture_token = {TOKEN_HEADER: capture_token, "Sec-Fetch-Site": "same-origin"}
    refusals = [
        (client.post(url, data=BAD_ARGS), "PERMISSION_DENIED"),
        (client.post(url, data=BAD_ARGS, headers=with_capture_token), "PERMISSION_DENIED"),
        (client.post(f"{url}?token={TOKEN}", data=BAD_ARGS), "FORBIDDEN"),
        (
            client.post(
                f"{url}?token={TOKEN}",
                data=BAD_ARGS,
                headers={**with_capture_token, "Sec-Fetch-Site": "cross-site"},
            ),
            "FORBIDDEN",
        ),
    ]
    for response, code in refusals:
        assert _code(response) == (403, code)
    get = client.get(f"{url}?token={TOKEN}&service_addr=127.0.0.1:1&duration=x")
    assert _code(get) == (405, "METHOD_NOT_ALLOWED") and get.headers["Allow"] == "POST"
    # Both tokens: the capture route runs (and sees only its own parameters).
    response = client.post(f"{url}?token={TOKEN}", data=BAD_ARGS, headers=with_capture_token)
    assert response.status_code == 400 and json.loads(response.data) == GOT_THROUGH
    query = f"service_addr=127.0.0.1:1&token={TOKEN}&duration=x"
    response = client.post(f"{url}?{query}", headers=with_capture_token)
    assert json.loads(response.data) == GOT_THROUGH
    status = client.get(f"/capture_status?job=nope&token={TOKEN}")
    assert status.status_code == 200
