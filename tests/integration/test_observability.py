"""What operators see, on the real app with real Neo4j, Milvus Lite and SQLite:
/metrics after real turns and failures, and the JSON log lines, which carry the
request, kb, session and turn ids and never a key, a secret or (by default) the
user's text."""

from __future__ import annotations

import io
import json
import logging
import re
import socket
import uuid

import pytest
from fastapi.testclient import TestClient

from api import log
from api.app import create_app, get_engine
from api.runtime import Runtime
from api.settings import Settings
from tests.conftest import ADMIN, ADMIN_KEY, QUERY, QUERY_KEY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

LLM_KEY = "sk-llm-secret-key-0123456789"


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def metric(text: str, name: str, **labels: str) -> float | None:
    """A sample's value from the Prometheus text, or None."""
    for line in text.splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            found = dict(re.findall(r'(\w+)="([^"]*)"', line.rsplit(" ", 1)[0]))
            if all(found.get(k) == v for k, v in labels.items()):
                return float(line.rsplit(" ", 1)[1])
    return None


@pytest.fixture
def client(runtime, keyring):
    with TestClient(create_app(runtime=runtime, keyring=keyring),
                    raise_server_exceptions=False) as c:
        yield c


@pytest.fixture
def degraded_runtime(settings, neo4j_store, milvus_index):
    """A Runtime whose session store (Redis) and LLM endpoint both refuse connections."""
    from dialogue.engine import EngineConfig, TurnEngine
    from dialogue.llm_rewriter import LLMRewriter
    from dialogue.redis_store import RedisSessionStore
    from kg.aliases import SnapshotCache
    from retrieval.search import Retriever

    llm_url = f"http://127.0.0.1:{closed_port()}/v1"
    configured = Settings(data_dir=settings.data_dir,
                          llm={"base_url": llm_url, "api_key": LLM_KEY, "timeout_seconds": 1})
    sessions = RedisSessionStore(f"redis://127.0.0.1:{closed_port()}/0", ttl_seconds=60,
                                 timeout=0.5)
    snapshots = SnapshotCache(neo4j_store, check_interval=0.0)
    retriever = Retriever(milvus_index)
    engine = TurnEngine(snapshots, retriever, sessions, EngineConfig(),
                        llm=LLMRewriter(base_url=llm_url, model="m", api_key=LLM_KEY, timeout=1))
    built = Runtime(configured, neo4j_store, snapshots, milvus_index, sessions, retriever, engine)
    yield built
    built.retagger.close()
    engine.close()


# -- metrics ------------------------------------------------------------------------------

def test_metrics_after_real_turns(client, runtime, demo_kb):
    session = f"secret-session-{uuid.uuid4().hex[:8]}"
    url = f"/v1/kbs/{demo_kb}/sessions/{session}/turns"
    asked = client.post(url, json={"text": "A产品怎么申请"}, headers=QUERY).json()
    answered = client.post(url, json={"text": "个人版"}, headers=QUERY).json()
    assert (asked["action"], answered["action"]) == ("clarify", "retrieve")
    nothing = client.post(url.replace(session, f"{session}-2"),
                          json={"text": "火星基地的氧气供应系统用什么型号的电池"}, headers=QUERY).json()
    assert nothing["action"] == "no_answer"
    client.get(f"/v1/kbs/{demo_kb}/admin/version", headers=ADMIN)
    client.get(f"/v1/kbs/{demo_kb}/admin", headers={"Authorization": "Bearer rk_not_a_key_at_all"})

    resp = client.get("/metrics")
    assert resp.status_code == 200 and resp.headers["content-type"].startswith("text/plain")
    text = resp.text
    for action in ("clarify", "retrieve", "no_answer"):
        assert metric(text, "referent_turns_total", kb=demo_kb, action=action) == 1
    assert metric(text, "referent_clarification_answers_total", kb=demo_kb, kind="chosen") == 1
    # The clarification turn stops after "rewrite" (classify and clarify): no retrieve or pack.
    for stage, turns in (("session_load", 3), ("detect", 3), ("link", 3), ("rewrite", 3),
                         ("retrieve", 2), ("pack", 2), ("session_save", 3), ("total", 3)):
        assert metric(text, "referent_turn_stage_duration_seconds_count", stage=stage) == turns
    assert metric(text, "referent_alias_snapshot_version", kb=demo_kb) == \
        runtime.snapshots.peek(demo_kb).version
    route = "/v1/kbs/{kb}/sessions/{session_id}/turns"
    assert metric(text, "referent_http_requests_total", route=route, method="POST",
                  status="200") == 3
    assert metric(text, "referent_http_requests_total", route="/v1/kbs/{kb}/admin",
                  method="GET", status="401") == 1
    assert metric(text, "referent_http_request_duration_seconds_count", route=route,
                  method="POST") == 3
    # Nothing a caller sent, but the kb name: no session id, no text, no key.
    for private in (session, "A产品", "火星基地", QUERY_KEY, ADMIN_KEY, "rk_not_a_key"):
        assert private not in text


def test_metrics_count_dependency_failures_and_fallbacks(degraded_runtime, keyring, demo_kb):
    with TestClient(create_app(runtime=degraded_runtime, keyring=keyring),
                    raise_server_exceptions=False) as c:
        failed = c.post(f"/v1/kbs/{demo_kb}/sessions/s1/turns", json={"text": "年假有几天"},
                        headers=QUERY)
        assert failed.status_code == 503 and failed.headers["retry-after"]
        ready = c.get("/readyz")
        assert ready.status_code == 503
        checks = ready.json()["checks"]
        assert (checks["sessions"]["status"], checks["llm"]["status"]) == ("down", "down")
        text = c.get("/metrics").text
    assert metric(text, "referent_dependency_errors_total", dependency="sessions") == 1
    assert LLM_KEY not in ready.text


def test_an_llm_that_fails_is_counted_and_the_rules_rewrite_used(runtime, keyring, demo_kb):
    from dialogue.engine import TurnEngine
    from dialogue.llm_rewriter import LLMRewriter

    llm = LLMRewriter(base_url=f"http://127.0.0.1:{closed_port()}/v1", model="m", timeout=1)
    engine = TurnEngine(runtime.snapshots, runtime.retriever, runtime.sessions, llm=llm)
    app = create_app(runtime=runtime, keyring=keyring)
    app.dependency_overrides[get_engine] = lambda: engine
    url = f"/v1/kbs/{demo_kb}/sessions/llm-{uuid.uuid4().hex[:8]}/turns"
    try:
        with TestClient(app) as c:
            c.post(url, json={"text": "意外险不保哪些情况"}, headers=QUERY)
            second = c.post(url, json={"text": "那综合意外险呢"}, headers=QUERY).json()
            text = c.get("/metrics").text
    finally:
        engine.close()
    assert second["rewrite"]["source"] == "rules"
    assert metric(text, "referent_rewrite_fallbacks_total", kb=demo_kb, to="rules") == 1
    assert metric(text, "referent_dependency_errors_total", dependency="llm") == 1


# -- logs -----------------------------------------------------------------------------------

@pytest.fixture
def json_logs():
    """Everything logged at INFO and above, through the JSON formatter, into a buffer."""
    buffer = io.StringIO()
    handler = logging.StreamHandler(buffer)
    handler.setFormatter(log.JsonFormatter(log.Redactor([LLM_KEY])))
    handler.addFilter(log.ContextFilter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield buffer
    root.removeHandler(handler)
    root.setLevel(level)


def records(buffer: io.StringIO) -> list[dict]:
    return [json.loads(line) for line in buffer.getvalue().splitlines()]


def access_lines(buffer: io.StringIO) -> list[dict]:
    return [r for r in records(buffer) if r["logger"] == log.ACCESS_LOGGER]


def test_access_lines_carry_the_ids_and_not_the_text(client, demo_kb, json_logs):
    session = f"s-{uuid.uuid4().hex[:8]}"
    resp = client.post(f"/v1/kbs/{demo_kb}/sessions/{session}/turns",
                       json={"text": "华东区7月的销售额是多少"},
                       headers={**QUERY, "X-Request-ID": "req-42"})
    assert resp.status_code == 200
    client.get(f"/v1/kbs/{demo_kb}/sessions/{session}/turns/1/trace", headers=QUERY)
    turn, trace = access_lines(json_logs)
    assert {k: turn[k] for k in ("request_id", "kb", "session", "turn", "route", "method",
                                 "status", "action", "text_chars")} == {
        "request_id": "req-42", "kb": demo_kb, "session": session, "turn": 1,
        "route": "/v1/kbs/{kb}/sessions/{session_id}/turns", "method": "POST", "status": 200,
        "action": "retrieve", "text_chars": 12}
    assert turn["latency_ms"] > 0
    assert trace["turn"] == 1 and trace["request_id"] == trace["request_id"] != "req-42"
    assert "华东区7月" not in json_logs.getvalue()


def test_the_text_is_logged_only_when_the_setting_allows_it(runtime, keyring, demo_kb, json_logs):
    settings = Settings(data_dir=runtime.settings.data_dir, log={"include_text": True})
    with TestClient(create_app(settings, runtime=runtime, keyring=keyring)) as c:
        c.post(f"/v1/kbs/{demo_kb}/sessions/s-{uuid.uuid4().hex[:8]}/turns",
               json={"text": "年假有几天"}, headers=QUERY)
    assert access_lines(json_logs)[0]["text"] == "年假有几天"


def test_no_key_or_secret_reaches_the_logs(runtime, degraded_runtime, keyring, demo_kb,
                                           json_logs):
    wrong_key = "rk_" + "W" * 43

    class Broken:
        def handle(self, *args, **kwargs):
            raise RuntimeError(f"failed while holding {ADMIN_KEY} and Bearer {QUERY_KEY}")

    app = create_app(runtime=runtime, keyring=keyring)
    with TestClient(app, raise_server_exceptions=False) as c:
        admin = f"/v1/kbs/{demo_kb}/admin"
        c.get(admin, headers=ADMIN)
        c.get(admin, headers={"X-API-Key": ADMIN_KEY})
        c.get(admin, headers=QUERY)  # 403
        c.get(admin, headers={"Authorization": f"Bearer {wrong_key}"})  # 401
        c.get(admin, headers={"Authorization": f"Basic {ADMIN_KEY}"})  # 401
        c.get(f"{admin}/search", params={"q": "华东", "api_key": ADMIN_KEY}, headers=ADMIN)
        app.dependency_overrides[get_engine] = lambda: Broken()
        assert c.post(f"/v1/kbs/{demo_kb}/sessions/s1/turns", json={"text": "年假"},
                      headers=QUERY).status_code == 500
    with TestClient(create_app(runtime=degraded_runtime, keyring=keyring),
                    raise_server_exceptions=False) as c:
        c.get("/readyz")  # the LLM probe fails while sending its key
    text = json_logs.getvalue()
    assert len(access_lines(json_logs)) == 8
    assert any(r["level"] == "error" and "exc" in r for r in records(json_logs))
    for secret in (ADMIN_KEY, QUERY_KEY, wrong_key, LLM_KEY):
        assert secret not in text


@pytest.fixture
def served_logs():
    """The logging of `referent serve` (JSON lines into a buffer), undone afterwards."""
    root = logging.getLogger()
    saved_root = (list(root.handlers), root.level)
    saved = {name: (list(logger.handlers), logger.propagate)
             for name, logger in logging.root.manager.loggerDict.items()
             if isinstance(logger, logging.Logger)}
    buffer = io.StringIO()
    log.configure_logging(Settings(log={"format": "json", "level": "INFO"}), stream=buffer)
    yield buffer
    root.handlers[:], root.level = saved_root
    for name, (handlers, propagate) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers[:] = handlers
        logger.propagate = propagate
    logging.getLogger("uvicorn.access").disabled = False


def test_a_driver_error_with_a_traceback_is_one_json_record(milvus_index, served_logs):
    """pymilvus logs its RPC errors with a multi-line traceback through a handler of its
    own: with the server's logging it is one JSON record, the traceback inside it."""
    from pymilvus import MilvusException

    with pytest.raises(MilvusException):
        milvus_index._client.query(f"referent_missing_{uuid.uuid4().hex[:8]}", filter="",
                                   limit=1)
    lines = served_logs.getvalue().splitlines()
    parsed = [json.loads(line) for line in lines]  # every line is one JSON object
    driver = [r for r in parsed if r["logger"].startswith("pymilvus")]
    assert driver and driver[0]["level"] == "error", lines
    assert "Traceback" in driver[0]["msg"] and "\n" in driver[0]["msg"]
