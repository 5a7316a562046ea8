"""The API's edges on the real app: one error shape everywhere, request ids,
body and text limits, liveness and readiness."""

from __future__ import annotations

import json
import re
import threading
import time
import uuid

import pytest
from fastapi.testclient import TestClient

from api.app import create_app, get_engine
from api.health import Probe, Readiness
from api.settings import Settings
from common.errors import RetryableDependencyError
from tests.conftest import ADMIN, QUERY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

PROBLEM = "application/problem+json"


@pytest.fixture
def client(runtime, keyring):
    with TestClient(create_app(runtime=runtime, keyring=keyring),
                    raise_server_exceptions=False) as c:
        yield c


def assert_problem(resp, status: int) -> dict:
    assert resp.status_code == status, resp.text
    assert resp.headers["content-type"] == PROBLEM
    body = resp.json()
    assert body["status"] == status and body["title"] and body["detail"]
    assert body["request_id"] == resp.headers["X-Request-ID"]
    return body


def turn_url(kb: str, session: str = "s1") -> str:
    return f"/v1/kbs/{kb}/sessions/{session}/turns"


# -- one error shape ---------------------------------------------------------------------

def test_unknown_path_and_wrong_method_answer_problems(client):
    assert "/openapi.json" in assert_problem(client.get("/v2/nothing"), 404)["detail"]
    wrong = client.put("/healthz")
    assert "Allow" in assert_problem(wrong, 405)["detail"]
    assert wrong.headers["allow"] == "GET"


METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def test_every_405_lists_every_method_its_path_takes(client):
    """For every path of the document, every method it does not take: 405 with an
    ``Allow`` naming exactly the methods the document gives that path."""
    wrong = []
    for template, item in client.app.openapi()["paths"].items():
        path = re.sub(r"\{[^}]+\}", "x1", template)
        documented = sorted(m.upper() for m in item)
        for method in set(METHODS) - set(documented):
            resp = client.request(method, path, headers=ADMIN)
            assert_problem(resp, 405)
            if resp.headers.get("allow") != ", ".join(documented):
                wrong.append((method, template, resp.headers.get("allow"), documented))
    assert not wrong, wrong


def test_integers_and_booleans_in_a_body_are_json_integers_and_booleans(client, demo_kb):
    url = turn_url(demo_kb, f"s-{uuid.uuid4().hex[:8]}")
    for bad in (True, "2", 2.0):
        body = assert_problem(client.post(url, json={"text": "年假有几天", "turn": bad},
                                          headers=QUERY), 422)
        assert body["field"] == "turn" and "valid integer" in body["detail"], body
    body = assert_problem(client.post(url, json={"text": "年假有几天", "k": "3"}, headers=QUERY),
                          422)
    assert body["field"] == "k"
    alias = client.post(f"/v1/kbs/{demo_kb}/admin/entities/nothing.here/aliases",
                        json={"alias": "某别名", "ambiguous": "yes"}, headers=ADMIN)
    assert assert_problem(alias, 422)["field"] == "ambiguous"
    assert client.post(url, json={"text": "年假有几天", "turn": 1}, headers=QUERY).status_code == 200


@pytest.mark.parametrize("depth", [65, 900, 10_000])
def test_a_body_nested_too_deeply_is_a_400_that_says_so(client, demo_kb, kb, depth):
    deep = "[" * depth + "]" * depth
    for method, url, text in [
            ("POST", turn_url(demo_kb), '{"text": "年假", "used": %s}' % deep),
            ("POST", f"/v1/kbs/{demo_kb}/admin/entities",
             '{"id": "x.deep", "name": "深", "type": "Thing", "attributes": {"a": %s}}' % deep),
            ("POST", "/v1/admin/keys", '{"name": "deep", "scopes": %s}' % deep)]:
        resp = client.request(method, url, content=text.encode(),
                              headers={**ADMIN, "content-type": "application/json"})
        body = assert_problem(resp, 400)
        assert "nested too deeply" in body["detail"] and "UTF-8" not in body["detail"], body
        assert body["field"] == "body"
    # 64 levels in all (the body, attributes, then 62 arrays) is within the limit: the
    # body is read, then judged on its fields.
    fine = "[" * 62 + "]" * 62
    resp = client.post(f"/v1/kbs/{kb}/admin/entities", headers=ADMIN,
                       json={"id": "x.deep", "name": "深", "type": "Thing",
                             "attributes": {"a": json.loads(fine)}})
    assert resp.status_code != 400 and resp.status_code < 500, resp.text


def test_validation_errors_name_the_field(client, demo_kb):
    body = assert_problem(client.post(turn_url(demo_kb), json={"text": "年假", "k": 0},
                                      headers=QUERY), 422)
    assert body["field"] == "k" and body["errors"][0]["field"] == "k"
    assert_problem(client.post(turn_url("bad-kb!"), json={"text": "年假"}, headers=QUERY), 422)
    malformed = assert_problem(client.post(turn_url(demo_kb), content=b"{not json",
                                           headers={**QUERY, "content-type": "application/json"}),
                               400)
    assert malformed["field"] == "body"


def test_an_unexpected_failure_is_a_500_problem_naming_the_request_id(runtime, keyring):
    class Broken:
        def handle(self, *args, **kwargs):
            raise RuntimeError("the engine fell over")

    app = create_app(runtime=runtime, keyring=keyring)
    app.dependency_overrides[get_engine] = lambda: Broken()
    with TestClient(app, raise_server_exceptions=False) as c:
        resp = c.post(turn_url("hr"), json={"text": "年假"},
                      headers={**QUERY, "X-Request-ID": "trace-me-1"})
    body = assert_problem(resp, 500)
    assert body["request_id"] == "trace-me-1" and "trace-me-1" in body["detail"]
    assert "fell over" not in resp.text  # the cause goes to the log, not to the caller


def test_auth_problems_say_what_to_send(client, demo_kb):
    missing = client.get(f"/v1/kbs/{demo_kb}/admin")
    assert assert_problem(missing, 401) and missing.headers["www-authenticate"] == "Bearer"
    assert_problem(client.get(f"/v1/kbs/{demo_kb}/admin", headers=QUERY), 403)


# -- request ids ------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/healthz", "/metrics", "/nowhere"])
def test_a_valid_request_id_is_echoed_on_every_answer(client, path):
    rid = f"req-{uuid.uuid4().hex}:1/2+3=@x.y_z"
    assert client.get(path, headers={"X-Request-ID": rid}).headers["X-Request-ID"] == rid


@pytest.mark.parametrize("bad", ["", "has space", "x" * 129, "quote\"", "semi;colon", "<script>",
                                 "new\\nline", "é".encode()])
def test_an_unsafe_request_id_is_replaced(client, bad):
    resp = client.get("/nowhere", headers={"X-Request-ID": bad})
    rid = resp.headers["X-Request-ID"]
    assert rid != bad and len(rid) == 32 and rid.isalnum()
    assert resp.json()["request_id"] == rid


def test_without_a_request_id_each_answer_gets_its_own(client):
    ids = {client.get("/healthz").headers["X-Request-ID"] for _ in range(3)}
    assert len(ids) == 3


# -- limits ----------------------------------------------------------------------------

@pytest.fixture
def small_limits(runtime, keyring):
    settings = Settings(data_dir=runtime.settings.data_dir,
                        limits={"max_body_bytes": 2048, "max_import_bytes": 4096,
                                "max_text_chars": 40})
    app = create_app(settings, runtime=runtime, keyring=keyring)
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def test_a_body_over_the_limit_is_refused_before_it_is_read(small_limits, demo_kb):
    big = b'{"text": "' + b"a" * 4000 + b'"}'
    body = assert_problem(small_limits.post(turn_url(demo_kb), content=big, headers={
        **QUERY, "content-type": "application/json"}), 413)
    assert "4012 bytes" in body["detail"] and "REFERENT_LIMITS__MAX_BODY_BYTES" in body["detail"]

    def chunked():  # no Content-Length: counted while it streams in
        for _ in range(10):
            yield b"a" * 500

    body = assert_problem(small_limits.post(turn_url(demo_kb), content=chunked(), headers={
        **QUERY, "content-type": "application/json"}), 413)
    assert "more than 2048 bytes" in body["detail"]


def test_the_import_route_has_its_own_larger_limit(small_limits, kb):
    url = f"/v1/kbs/{kb}/admin/import?dry_run=true"
    def types(n: int) -> bytes:
        return "".join(f'{{"kind": "type", "name": "T{i}", "attributes": [], "parent": null}}\n'
                       for i in range(n)).encode()

    assert 2048 < len(types(40)) < 4096
    fits = small_limits.post(url, content=types(40), headers=ADMIN)
    assert fits.status_code == 200, fits.text
    too_big = assert_problem(small_limits.post(url, content=types(80), headers=ADMIN), 413)
    assert "REFERENT_LIMITS__MAX_IMPORT_BYTES" in too_big["detail"]


def test_the_text_limit_is_a_setting(small_limits, demo_kb):
    ok = small_limits.post(turn_url(demo_kb, f"s-{uuid.uuid4().hex[:8]}"), json={"text": "年假" * 20},
                           headers=QUERY)
    assert ok.status_code == 200, ok.text
    long = assert_problem(small_limits.post(turn_url(demo_kb), json={"text": "年" * 41},
                                            headers=QUERY), 422)
    assert long["field"] == "text" and "40 characters" in long["detail"]
    schema = small_limits.get("/openapi.json").json()["components"]["schemas"]["TurnRequest"]
    assert schema["properties"]["text"]["maxLength"] == 40


@pytest.mark.parametrize("text", ["a\x00b", "\x1b[31mred", "   ", "a\x7fb"])
def test_control_characters_and_blank_text_are_refused(client, demo_kb, text):
    body = assert_problem(client.post(turn_url(demo_kb), json={"text": text}, headers=QUERY), 422)
    assert body["field"] == "text"


def test_tabs_and_line_breaks_are_text(client, demo_kb):
    resp = client.post(turn_url(demo_kb, f"s-{uuid.uuid4().hex[:8]}"),
                       json={"text": "年假\t有几天\n怎么申请"}, headers=QUERY)
    assert resp.status_code == 200, resp.text


# -- health and readiness -------------------------------------------------------------------

def test_healthz_and_readyz_answer_without_a_key(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    resp = client.get("/readyz")
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert body["status"] == "ready"
    assert {name: c["status"] for name, c in body["checks"].items()} == {
        "milvus": "ok", "sessions": "ok", "neo4j": "ok", "collections": "ok"}
    assert body["checks"]["milvus"]["required"] and not body["checks"]["neo4j"]["required"]


def test_head_answers_as_get_without_a_body(client, demo_kb):
    """HEAD (load balancers, ``curl -I``) gets the GET's status and headers, no body,
    and goes through the same key check."""
    for path, headers in (("/healthz", {}), ("/readyz", {}),
                          (f"/v1/kbs/{demo_kb}/admin", ADMIN)):
        get, head = client.get(path, headers=headers), client.head(path, headers=headers)
        assert head.status_code == get.status_code == 200, (path, head.status_code)
        assert head.content == b""
        assert head.headers["content-type"] == get.headers["content-type"]
        assert int(head.headers["content-length"]) > 0
        if path != "/readyz":  # its body carries each check's milliseconds
            assert int(head.headers["content-length"]) == len(get.content)
    refused = client.head(f"/v1/kbs/{demo_kb}/admin")
    assert refused.status_code == 401 and refused.content == b""
    not_get = client.head(turn_url(demo_kb))
    assert not_get.status_code == 405 and not_get.headers["allow"] == "POST"


def probe(name: str, required: bool, run) -> Probe:
    return Probe(name, required, run, {})


def ok() -> None:
    pass


def down() -> None:
    raise RetryableDependencyError("connection refused to redis://:s3cret@cache:6379")


def test_a_required_dependency_down_makes_readyz_503_with_every_check(client):
    client.app.state.readiness = Readiness([probe("milvus", True, ok),
                                            probe("sessions", True, down),
                                            probe("neo4j", False, ok)])
    resp = client.get("/readyz")
    body = assert_problem(resp, 503)
    assert resp.headers["retry-after"]
    assert body["checks"]["sessions"] == {"required": True, "status": "down",
                                          "error": "RetryableDependencyError"}
    assert body["checks"]["milvus"]["status"] == "ok"
    assert "sessions" in body["detail"] and "s3cret" not in resp.text


def test_an_optional_dependency_down_is_degraded_but_ready(client):
    client.app.state.readiness = Readiness([probe("milvus", True, ok),
                                            probe("sessions", True, ok),
                                            probe("neo4j", False, down),
                                            probe("llm", False, down)])
    resp = client.get("/readyz")
    assert resp.status_code == 200
    assert resp.json()["status"] == "degraded"
    assert resp.json()["checks"]["llm"]["status"] == "down"


def test_a_hanging_probe_is_bounded_and_not_started_twice(client):
    release = threading.Event()
    started = []

    def hang() -> None:
        started.append(1)
        release.wait(10)

    client.app.state.readiness = Readiness([probe("milvus", True, hang),
                                            probe("sessions", True, ok)], timeout=0.3)
    try:
        for _ in range(3):
            t0 = time.perf_counter()
            body = assert_problem(client.get("/readyz"), 503)
            assert time.perf_counter() - t0 < 2
            assert body["checks"]["milvus"]["status"] == "timeout"
        assert len(started) == 1
    finally:
        release.set()
