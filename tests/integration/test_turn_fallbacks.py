"""A turn never raises: a stage that fails falls back, says so in the trace and the
metrics, and the answer stays 2xx; a store being down is still a 503.

Real Neo4j, Milvus Lite and SQLite; only the failing component is replaced.
"""

import uuid

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from common.errors import DependencyError
from dialogue.engine import TurnEngine
from dialogue.policy import DialoguePolicy
from tests.conftest import QUERY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


def sid() -> str:
    return f"f-{uuid.uuid4().hex[:10]}"


class _RaisingGate:
    def judge(self, link, turn, state, snapshot):
        raise RuntimeError("a gate bug")


class _RankingFails:
    """The real retriever's configuration, but every search raises."""

    def __init__(self, inner, exc: Exception) -> None:
        self.config = inner.config
        self.exc = exc

    def search(self, *args, **kwargs):
        raise self.exc


def test_a_failing_policy_plans_the_turn_as_understood(runtime, demo_kb):
    engine = TurnEngine(runtime.snapshots, runtime.retriever, runtime.sessions,
                        policy=DialoguePolicy(gate=_RaisingGate()))
    s = sid()
    result = engine.handle(demo_kb, s, "华东区7月的销售额是多少")
    assert result.action == "retrieve" and result.entities == ["region.east"]
    assert "sales-2025-07-east" in [e.doc_id for e in result.evidence]
    assert result.trace["fallbacks"] == [{"stage": "policy", "error": "RuntimeError",
                                          "fallback": "the turn as understood, as a continuation"}]
    assert runtime.sessions.load(demo_kb, s).focus == ["region.east"]


def test_a_failing_retrieval_is_no_answer_over_http_and_counted(runtime, demo_kb, keyring,
                                                                monkeypatch):
    engine = TurnEngine(runtime.snapshots, _RankingFails(runtime.retriever, KeyError("rank")),
                        runtime.sessions)
    monkeypatch.setattr(runtime, "engine", engine)
    s = sid()
    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=QUERY) as client:
        resp = client.post(f"/v1/kbs/{demo_kb}/sessions/{s}/turns",
                           json={"text": "华东区7月的销售额是多少"})
        assert resp.status_code == 200, resp.text
        body = resp.json()
        assert body["action"] == "no_answer" and body["evidence"] == []
        assert body["entities"] == ["region.east"]
        assert body["trace"]["fallbacks"] == [{"stage": "retrieve", "error": "KeyError",
                                               "fallback": "no answer"}]
        metrics = client.get("/metrics").text
    assert 'referent_turn_fallbacks_total{stage="retrieve"} 1.0' in metrics
    state = runtime.sessions.load(demo_kb, s)
    assert state.turn_count == 1 and state.focus == ["region.east"]


def test_a_store_down_is_still_a_503_and_the_session_is_not_advanced(runtime, demo_kb, keyring,
                                                                     monkeypatch):
    down = DependencyError("Milvus is not reachable", service="milvus")
    engine = TurnEngine(runtime.snapshots, _RankingFails(runtime.retriever, down), runtime.sessions)
    monkeypatch.setattr(runtime, "engine", engine)
    s = sid()
    with TestClient(create_app(runtime=runtime, keyring=keyring), headers=QUERY) as client:
        resp = client.post(f"/v1/kbs/{demo_kb}/sessions/{s}/turns", json={"text": "年假有几天"})
    assert resp.status_code == 503
    assert runtime.sessions.load(demo_kb, s).turn_count == 0
