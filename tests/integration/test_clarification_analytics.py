"""Clarification analytics on the real Neo4j: turns through the API are recorded
in the background, answers find their question in either order, a reused
session id starts afresh, a failing recorder never fails a turn; and the
console page is served with nothing from elsewhere."""

from __future__ import annotations

import re
import socket
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient

from analytics.clarifications import ClarificationRecorder
from api.app import create_app
from kg.clarification_log import Answered, Asked, ClarificationLog
from kg.neo4j_store import Neo4jOntologyStore
from retrieval.models import Chunk
from tests.conftest import ADMIN, DEMO, QUERY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

AT = datetime(2026, 1, 1, tzinfo=timezone.utc)
PAIR = ("prod.a.enterprise", "prod.a.personal")


@pytest.fixture
def client(runtime, keyring):
    with TestClient(create_app(runtime=runtime, keyring=keyring)) as c:
        yield c


@pytest.fixture
def demo(kb, runtime, milvus_index):
    """The demo ontology in a kb of its own (its log starts empty), one chunk to search."""
    runtime.ontology.import_ontology(kb, (DEMO / "ontology.jsonl").read_text(encoding="utf-8")
                                     .splitlines())
    milvus_index.ensure_collection(kb)
    milvus_index.upsert(kb, [Chunk("a#0", "a", "A产品", "A产品（个人版）怎么申请：实名注册即可",
                                   entity_ids=("prod.a.personal",))])
    return kb


def turn(client, kb, session, text):
    resp = client.post(f"/v1/kbs/{kb}/sessions/{session}/turns", json={"text": text}, headers=QUERY)
    assert resp.status_code == 200, resp.text
    return resp.json()


def analytics(client, runtime, kb, **params):
    assert runtime.clarifications.flush(10)
    resp = client.get(f"/v1/kbs/{kb}/admin/clarifications", params=params, headers=ADMIN)
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_questions_and_answers_through_the_api_are_counted(client, runtime, demo):
    for answer in ("第一个", "个人版", "2", "都要", "都不是"):
        session = f"s-{uuid.uuid4().hex[:8]}"
        assert turn(client, demo, session, "A产品怎么申请")["action"] == "clarify"
        assert turn(client, demo, session, answer)["action"] in ("retrieve", "no_answer")
    # Asked twice in one session: the first question is dropped for a new one, which stays open.
    session = f"s-{uuid.uuid4().hex[:8]}"
    turn(client, demo, session, "A产品多少钱")
    turn(client, demo, session, "A产品怎么申请")

    data = analytics(client, runtime, demo)
    [group] = data["groups"]
    assert group["alias"] == "a产品" and group["mentions"] == ["A产品"]
    assert [c["id"] for c in group["candidates"]] == list(PAIR)
    assert group["asked"] == 7
    assert group["answers"] == {"chosen": 3, "both": 1, "neither": 1, "new_question": 1, "open": 1}
    assert group["chosen"] == {"prod.a.personal": 2, "prod.a.enterprise": 1}
    # Five answers, none dominant (2 of 5 at most): keep asking.
    assert group["suggestion"]["action"] == "keep"
    assert "40%" in group["suggestion"]["reason"]["en"]
    assert len(data["recent"]) == 7 and data["recent"][0]["answer"] == "open"
    hows = {r["how"] for r in data["recent"] if r["answer"] == "chosen"}
    assert hows == {"ordinal 第一个", "distinguishing word", "option number"}
    assert {r["answer"]: r["chosen"] for r in data["recent"]}["both"] == list(PAIR)

    raised = analytics(client, runtime, demo, min_answers=6)
    assert raised["groups"][0]["suggestion"]["action"] == "wait"
    assert analytics(client, runtime, demo, days=1)["asked"] == 7


def test_the_route_needs_an_admin_key_and_an_existing_kb(client, runtime, demo):
    url = f"/v1/kbs/{demo}/admin/clarifications"
    assert client.get(url, headers=QUERY).status_code == 403
    assert client.get(url).status_code == 401
    assert client.get("/v1/kbs/no_such_kb_here/admin/clarifications", headers=ADMIN).status_code == 404
    assert client.get(url, params={"dominance": 0.3}, headers=ADMIN).status_code == 422


def test_an_answer_recorded_before_its_question_is_kept(runtime, demo):
    """Two API instances: the answer's instance may write before the question's."""
    log = runtime.clarifications.log
    log.record_answer(Answered(demo, "race", 1, AT, "chosen", ("prod.a.personal",), "named an option"))
    assert log.counts(demo) == []  # no question yet: not counted
    log.record_asked(Asked(demo, "race", 1, AT, "alias", "A产品", "a产品", "exact", PAIR))
    [row] = log.counts(demo)
    assert (row.answer, row.chosen, row.count) == ("chosen", ("prod.a.personal",), 1)


def test_a_reused_session_id_starts_a_fresh_question(runtime, demo):
    log = runtime.clarifications.log
    log.record_asked(Asked(demo, "s1", 1, AT, "alias", "A产品", "a产品", "exact", PAIR))
    log.record_answer(Answered(demo, "s1", 1, AT, "neither", (), "neither"))
    # The session was deleted and "s1" reused: its turn 1 asks again.
    log.record_asked(Asked(demo, "s1", 1, AT + timedelta(hours=1), "alias", "A产品", "a产品",
                           "exact", PAIR))
    [row] = log.counts(demo)
    assert (row.answer, row.count) == ("open", 1)
    # A second answer to one question is ignored.
    log.record_answer(Answered(demo, "s1", 1, AT, "both", PAIR, "both"))
    log.record_answer(Answered(demo, "s1", 1, AT, "neither", (), "neither"))
    assert [r.answer for r in log.counts(demo)] == ["both"]


def test_records_are_kept_per_kb_pruned_by_age_and_deleted_with_the_kb(runtime, demo, neo4j_store):
    log = runtime.clarifications.log
    log.record_asked(Asked(demo, "old", 1, AT - timedelta(days=800), "alias", "A产品", "a产品",
                           "exact", PAIR))
    log.record_asked(Asked(demo, "new", 1, AT, "alias", "A产品", "a产品", "exact", PAIR))
    assert sum(r.count for r in log.counts(demo)) == 2
    assert sum(r.count for r in log.counts(demo, since=AT - timedelta(days=1))) == 1
    assert log.prune(AT - timedelta(days=365)) >= 1
    assert sum(r.count for r in log.counts(demo)) == 1
    # No record for a kb that does not exist.
    log.record_asked(Asked("no_such_kb_here", "s", 1, AT, "alias", "x", "x", "exact", PAIR))
    assert log.counts("no_such_kb_here") == []
    neo4j_store.delete_kb(demo)
    assert log.counts(demo) == []


def test_a_recorder_that_fails_never_fails_the_turn(client, runtime, demo, monkeypatch):
    def down(*_, **__):
        raise RuntimeError("Neo4j is down")

    monkeypatch.setattr(runtime.clarifications.log, "record_asked", down)
    failed = runtime.clarifications.failed
    session = f"s-{uuid.uuid4().hex[:8]}"
    assert turn(client, demo, session, "A产品怎么申请")["action"] == "clarify"
    assert runtime.clarifications.flush(10)
    assert runtime.clarifications.failed == failed + 1
    assert turn(client, demo, session, "个人版")["entities"] == ["prod.a.personal"]


def test_with_neo4j_unreachable_the_record_is_lost_not_the_turn(client, runtime, demo,
                                                                 monkeypatch):
    """The recorder's own Neo4j is down (nothing listens on its port)."""
    import neo4j

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    driver = neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{port}", auth=("neo4j", "x"),
                                        connection_timeout=1, max_transaction_retry_time=1)
    recorder = ClarificationRecorder(ClarificationLog(Neo4jOntologyStore(driver)),
                                     runtime.snapshots.peek, retention=None)
    monkeypatch.setattr(runtime, "clarifications", recorder)
    try:
        session = f"s-{uuid.uuid4().hex[:8]}"
        assert turn(client, demo, session, "A产品怎么申请")["action"] == "clarify"
        assert turn(client, demo, session, "第一个")["entities"] == ["prod.a.enterprise"]
        assert recorder.flush(30)
        assert (recorder.failed, recorder.recorded) == (2, 0)
    finally:
        recorder.close()
        driver.close()


def test_the_console_page_is_served_with_nothing_from_elsewhere(client):
    page = client.get("/admin")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    csp = page.headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp and "connect-src 'self'" in csp
    assert client.get("/admin/", follow_redirects=False).headers["location"] == "/admin"
    for path, kind in (("/admin/static/admin.js", "text/javascript"),
                       ("/admin/static/admin.css", "text/css")):
        asset = client.get(path)
        assert asset.status_code == 200 and asset.headers["content-type"].startswith(kind)
        assert not re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", asset.text, re.IGNORECASE), path
    assert not re.search(r"""(?:src|href)=["'](?:https?:)?//""", page.text)
    assert "innerHTML" not in client.get("/admin/static/admin.js").text
