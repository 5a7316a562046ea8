"""Faults, against real services this module starts for itself and stops on purpose:
a Neo4j, a Milvus Lite server and a Redis of its own (never the suite's), one API
process (uvicorn) using them, and a local HTTP server speaking the OpenAI protocol.

- Neo4j down (stopped) or frozen (SIGSTOP): turns keep linking with the alias
  snapshot the process holds, without waiting longer than the check timeout (the
  trace and the log say so); admin writes and a kb never loaded answer 503, a
  frozen Neo4j within the call bound, and the write it refused is not applied when
  Neo4j wakes up.
- Milvus down: a turn answers 503 and the session is not advanced.
- Redis down: 503, nothing lost or corrupted; sessions go on when it is back.
- LLM slow, failing or down: the rules rewrite, within the LLM timeout.

After each fault the next turns are checked against the demo suite's expectations.
"""

from __future__ import annotations

import json
import os
import signal
import threading
import time
import uuid
from dataclasses import dataclass

import pytest

from tests.conftest import ADMIN, QUERY
from tests.http_fakes import FakeServer, serve
from tests.services import ApiServer, RedisServer, free_port, load_demo, suite_turns

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus, pytest.mark.redis]

KB = "faults_demo"
LLM_TIMEOUT = 1.0
NEO4J_RETRY = 2.0
CHECK_TIMEOUT = 0.5
CALL_TIMEOUT = 8.0


@dataclass
class Stack:
    neo4j: object  # devservices.local_neo4j.LocalNeo4j
    milvus: object  # devservices.local_milvus.LocalMilvus
    redis: RedisServer
    llm: FakeServer
    api: ApiServer


def _chat(content: str):
    return 200, {"id": "c1", "object": "chat.completion", "created": 0, "model": "fake",
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": content}}],
                 "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def _failing_llm(path, body):
    return 503, {"error": {"message": "overloaded"}}


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    from devservices.local_milvus import LocalMilvus
    from devservices.local_neo4j import DEFAULT_JAVA_OPTIONS, LocalNeo4j
    from kg.neo4j_store import Neo4jOntologyStore
    from retrieval.milvus_index import MilvusIndex

    root = tmp_path_factory.mktemp("faults")
    java = [o for o in DEFAULT_JAVA_OPTIONS if not o.startswith(("-Xms", "-Xmx"))]
    neo4j = LocalNeo4j(root / "neo4j", free_port(), java_options=["-Xms128m", "-Xmx512m", *java])
    milvus = LocalMilvus(root / "milvus" / "milvus.db", free_port())
    redis = RedisServer(root / "redis")
    api = None
    with serve(_failing_llm) as llm:
        try:
            milvus.start()
            redis.start()
            neo4j.start()
            store = Neo4jOntologyStore.connect(neo4j.uri, "neo4j", "referent-dev")
            store.ensure_schema()
            index = MilvusIndex(milvus.uri)
            try:
                load_demo(KB, store, index)
            finally:
                index.close()
                store.close()
            api = ApiServer(root / "api", {
                "REFERENT_NEO4J__URI": neo4j.uri,
                "REFERENT_NEO4J__CONNECTION_TIMEOUT_SECONDS": "2",
                "REFERENT_NEO4J__MAX_RETRY_SECONDS": str(NEO4J_RETRY),
                "REFERENT_NEO4J__SNAPSHOT_CHECK_TIMEOUT_SECONDS": str(CHECK_TIMEOUT),
                "REFERENT_NEO4J__CALL_TIMEOUT_SECONDS": str(CALL_TIMEOUT),
                "REFERENT_MILVUS__URI": milvus.uri,
                "REFERENT_MILVUS__TIMEOUT_SECONDS": "3",
                "REFERENT_SESSIONS__BACKEND": "redis",
                "REFERENT_SESSIONS__REDIS_URL": redis.url,
                "REFERENT_LLM__BASE_URL": f"{llm.url}/v1",
                "REFERENT_LLM__MODEL": "fake",
                "REFERENT_LLM__TIMEOUT_SECONDS": str(LLM_TIMEOUT),
            })
            yield Stack(neo4j, milvus, redis, llm, api)
        finally:
            if api is not None:
                api.stop()
            neo4j.stop(timeout=15)
            milvus.stop()
            redis.stop()


def _session() -> str:
    return f"f-{uuid.uuid4().hex[:10]}"


def _post(stack: Stack, session: str, text: str):
    return stack.api.client.post(f"/v1/kbs/{KB}/sessions/{session}/turns", json={"text": text},
                                 headers=QUERY)


def _turn(stack: Stack, session: str, text: str) -> dict:
    resp = _post(stack, session, text)
    assert resp.status_code == 200, resp.text
    return resp.json()


def _check(result: dict, expect: dict) -> None:
    """The demo suite's expectations of one turn: action, entities, the evidence
    (a doc id, or a chunk id with '#') and clarification options."""
    assert result["action"] == expect["action"], result
    if "entities" in expect:
        assert set(expect["entities"]) <= set(result["entities"]), result
    for entity in expect.get("not_entities", ()):
        assert entity not in result["entities"], result
    if expect.get("evidence"):
        found = {e["chunk_id"] for e in result["evidence"]} | {e["doc_id"] for e in result["evidence"]}
        assert found & set(expect["evidence"]), (expect["evidence"], result["evidence"])
    if "clarify_options" in expect:
        options = {o["id"] for o in result["clarification"]["options"]}
        assert options == set(expect["clarify_options"]), result


def _play(stack: Stack, session: str, turns: list[dict], first: int = 1) -> None:
    for n, turn in enumerate(turns, start=first):
        result = _turn(stack, session, turn["user"])
        assert result["turn"] == n, result
        _check(result, turn["expect"])


def _when_back(send, limit: float = 20.0):
    """``send()`` again while it answers 503 (a dependency just restarted: clients are
    told to retry); the first other answer."""
    deadline = time.monotonic() + limit
    while True:
        resp = send()
        if resp.status_code != 503 or time.monotonic() > deadline:
            return resp
        time.sleep(0.5)


def _assert_503(resp, dependency: str) -> None:
    assert resp.status_code == 503, resp.text
    assert resp.headers["content-type"].startswith("application/problem+json")
    assert int(resp.headers["retry-after"]) > 0
    body = resp.json()
    assert body["status"] == 503 and body["dependency"] == dependency, body
    assert body["detail"]


SALES = suite_turns("demo-01")       # 华东区7月的销售额是多少 → 那华南区呢 → 为什么涨这么多
PRODUCT = suite_turns("demo-02")     # A产品怎么申请 (clarify) → 个人版 → 它多少钱


def test_neo4j_frozen_costs_a_turn_at_most_the_check_timeout(stack):
    """A Neo4j that accepts connections but answers nothing (SIGSTOP): the version
    check cannot fail fast, so the turn stops waiting for it."""
    session = _session()
    _play(stack, session, SALES[:1])
    pid = stack.neo4j.status().pid
    os.kill(pid, signal.SIGSTOP)
    try:
        time.sleep(1.2)
        for turn in SALES[1:]:
            started = time.monotonic()
            result = _turn(stack, session, turn["user"])
            assert time.monotonic() - started < CHECK_TIMEOUT + 3
            _check(result, turn["expect"])
    finally:
        os.kill(pid, signal.SIGCONT)
    assert result["turn"] == 3 and "alias_snapshot_stale" in result["trace"]


def test_neo4j_frozen_admin_calls_answer_503_in_time_and_the_refused_write_never_lands(stack):
    """SIGSTOP: Neo4j accepts connections and answers nothing. An admin write and a
    read answer 503 with Retry-After within the call bound; once Neo4j runs again,
    the write it was told failed has not been applied, and writes work again."""
    admin = f"/v1/kbs/{KB}/admin"
    # Warm (a cold query may take longer than the bound on a busy machine).
    before = _when_back(lambda: stack.api.client.get(f"{admin}/entities/region.north",
                                                     headers=ADMIN))
    assert before.status_code == 200, before.text
    version = stack.api.client.get(f"{admin}/version", headers=ADMIN).json()["version"]
    alias = f"冻结{uuid.uuid4().hex[:6]}"
    pid = stack.neo4j.status().pid
    os.kill(pid, signal.SIGSTOP)
    try:
        started = time.monotonic()
        write = stack.api.client.post(f"{admin}/entities/region.north/aliases",
                                      json={"alias": alias}, headers=ADMIN)
        write_s = time.monotonic() - started
        _assert_503(write, "neo4j")
        assert "CALL_TIMEOUT_SECONDS" in write.json()["detail"]
        started = time.monotonic()
        read = stack.api.client.get(f"{admin}/entities/region.north", headers=ADMIN)
        read_s = time.monotonic() - started
        _assert_503(read, "neo4j")
        assert write_s < CALL_TIMEOUT + 1.5 and read_s < CALL_TIMEOUT + 1.5, (write_s, read_s)
    finally:
        os.kill(pid, signal.SIGCONT)
    time.sleep(3)  # the held write reaches Neo4j now, finds its deadline passed, rolls back
    after = _when_back(lambda: stack.api.client.get(f"{admin}/entities/region.north",
                                                    headers=ADMIN))
    assert after.status_code == 200, after.text
    assert alias not in after.json()["aliases"]
    assert stack.api.client.get(f"{admin}/version", headers=ADMIN).json()["version"] == version
    # Neo4j answers again: the same write goes through, once (a retry of an alias that
    # landed answers 200 "changed": false).
    again = _when_back(lambda: stack.api.client.post(f"{admin}/entities/region.north/aliases",
                                                     json={"alias": alias}, headers=ADMIN))
    assert again.status_code in (200, 201), again.text
    assert again.json()["version"] == version + 1
    assert alias in stack.api.client.get(f"{admin}/entities/region.north",
                                         headers=ADMIN).json()["aliases"]
    removed = _when_back(lambda: stack.api.client.delete(
        f"{admin}/entities/region.north/aliases", params={"alias": alias}, headers=ADMIN))
    assert removed.status_code == 200, removed.text


def test_neo4j_down_turns_link_with_the_cached_snapshot_and_admin_writes_answer_503(stack):
    session = _session()
    _play(stack, session, SALES[:1])
    stack.neo4j.stop(timeout=15)
    try:
        time.sleep(1.2)  # past the snapshot check interval: the next turn's check fails
        started = time.monotonic()
        result = _turn(stack, session, SALES[1]["user"])
        assert time.monotonic() - started < 5
        assert result["turn"] == 2
        _check(result, SALES[1]["expect"])
        assert result["standalone"] == "华南区7月的销售额是多少"
        assert "alias_snapshot_stale" in result["trace"]
        # A new conversation, with a clarification, works on the snapshot too.
        other = _session()
        _play(stack, other, PRODUCT[:2])

        started = time.monotonic()
        write = stack.api.client.post(f"/v1/kbs/{KB}/admin/entities/region.south/aliases",
                                      json={"alias": "南方大区"}, headers=ADMIN)
        _assert_503(write, "neo4j")
        assert time.monotonic() - started < NEO4J_RETRY + 6
        _assert_503(stack.api.client.get(f"/v1/kbs/{KB}/admin/version", headers=ADMIN), "neo4j")
        # A kb this process never loaded cannot be linked: 503, not a wrong 404.
        _assert_503(stack.api.client.post("/v1/kbs/never_loaded/sessions/x/turns",
                                          json={"text": "华东区"}, headers=QUERY), "neo4j")
    finally:
        stack.neo4j.start()
    assert "alias table check of kb 'faults_demo' failed" in stack.api.output()

    # Back: writes work again and the writing process links with them at once.
    # (A Neo4j just started is slow at first: its first writes may hit the call bound.)
    write = _when_back(lambda: stack.api.client.post(
        f"/v1/kbs/{KB}/admin/entities/region.south/aliases", json={"alias": "南方大区"},
        headers=ADMIN), limit=60)
    assert write.status_code == 201, write.text
    result = _turn(stack, _session(), "南方大区7月的销售额是多少")
    assert result["entities"] == ["region.south"]
    assert "alias_snapshot_stale" not in result["trace"]
    _play(stack, session, SALES[2:], first=3)
    _play(stack, other, PRODUCT[2:], first=3)


def test_milvus_down_answers_503_and_does_not_advance_the_session(stack):
    session = _session()
    _play(stack, session, SALES[:1])
    stack.milvus.stop()
    try:
        started = time.monotonic()
        _assert_503(_post(stack, session, SALES[1]["user"]), "milvus")
        assert time.monotonic() - started < 10
        _assert_503(_post(stack, session, SALES[1]["user"]), "milvus")
    finally:
        stack.milvus.start()
    # The failed turns left no trace in the session: this is turn 2, after turn 1.
    started = time.monotonic()
    resp = _when_back(lambda: _post(stack, session, SALES[1]["user"]))
    assert resp.status_code == 200, resp.text
    assert time.monotonic() - started < 15
    assert resp.json()["turn"] == 2
    _check(resp.json(), SALES[1]["expect"])
    _play(stack, session, SALES[2:], first=3)


def test_redis_down_answers_503_loses_nothing_and_recovers(stack):
    session = _session()
    _play(stack, session, PRODUCT[:1])  # a clarification is pending in Redis
    stack.redis.kill()
    try:
        _assert_503(_post(stack, session, PRODUCT[1]["user"]), "redis")
        _assert_503(stack.api.client.delete(f"/v1/kbs/{KB}/sessions/{session}", headers=QUERY),
                    "redis")
    finally:
        stack.redis.start()
    # The pending question survived the crash; the answer resumes it.
    resp = _when_back(lambda: _post(stack, session, PRODUCT[1]["user"]), limit=10)
    assert resp.status_code == 200 and resp.json()["turn"] == 2, resp.text
    _check(resp.json(), PRODUCT[1]["expect"])
    _play(stack, session, PRODUCT[2:], first=3)


def test_redis_killed_under_a_stream_of_turns_corrupts_nothing(stack):
    """Turns keep coming while Redis is killed and restarted: every answer is a 200
    or a 503, turn numbers only go up, and the session reads back whole."""
    session = _session()
    texts = ["华东区7月的销售额是多少", "华南区7月的销售额是多少"]
    wanted = {texts[0]: ["region.east"], texts[1]: ["region.south"]}
    seen: list[tuple[int, dict, str, str | None]] = []  # status, body, text, Retry-After
    stop = threading.Event()

    def talk() -> None:
        i = 0
        while not stop.is_set():
            text = texts[i % 2]
            try:
                resp = _post(stack, session, text)
            except Exception as exc:  # recorded, and the test fails on it below
                seen.append((0, {"error": repr(exc)}, text, None))
                return
            seen.append((resp.status_code, resp.json(), text, resp.headers.get("retry-after")))
            if resp.status_code == 200:
                i += 1
            else:
                time.sleep(0.05)

    thread = threading.Thread(target=talk)
    thread.start()
    try:
        time.sleep(1.0)
        stack.redis.kill()
        time.sleep(1.0)
        stack.redis.start()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline and [s for s, *_ in seen[-3:]] != [200, 200, 200]:
            time.sleep(0.1)
    finally:
        stop.set()
        thread.join(30)
    assert {status for status, *_ in seen} <= {200, 503}, seen
    assert any(status == 503 for status, *_ in seen), "the kill should have been noticed"
    for status, body, text, retry_after in seen:
        if status == 200:
            assert body["entities"] == wanted[text], body
        else:
            assert body["dependency"] == "redis" and retry_after, body
    turns = [body["turn"] for status, body, *_ in seen if status == 200]
    assert turns == sorted(turns) and len(set(turns)) == len(turns), turns
    assert [status for status, *_ in seen[-3:]] == [200, 200, 200], seen[-5:]
    after = _turn(stack, session, "那华南区呢")
    # A save that Redis applied just before dying may have lost its answer: at most one.
    assert turns[-1] + 1 <= after["turn"] <= turns[-1] + 2
    assert after["entities"] == ["region.south"]


def test_llm_slow_failing_or_down_falls_back_to_the_rules_rewrite(stack):
    insurance = ("意外险不保哪些情况", "那综合意外险呢")
    rules = "综合意外险不保哪些情况"

    def play() -> tuple[dict, float]:
        session = _session()
        _turn(stack, session, insurance[0])
        started = time.monotonic()
        result = _turn(stack, session, insurance[1])
        return result, time.monotonic() - started

    # Working: the LLM's rewrite is used (so the fallbacks below are real fallbacks).
    stack.llm.handler = lambda path, body: _chat(json.dumps({"queries": ["综合意外险不保障哪些情况"]},
                                                            ensure_ascii=False))
    result, _ = play()
    assert result["rewrite"]["source"] == "llm" and result["standalone"] == "综合意外险不保障哪些情况"

    def slow(path, body):
        time.sleep(LLM_TIMEOUT + 2)
        return _chat(json.dumps({"queries": ["综合意外险不保障哪些情况"]}, ensure_ascii=False))

    for handler, why in ((slow, "timeout"), (_failing_llm, "503")):
        stack.llm.handler = handler
        result, elapsed = play()
        assert result["rewrite"]["source"] == "rules" and result["standalone"] == rules, result
        assert result["evidence"] and result["entities"] == ["ins.accident.comprehensive"], result
        assert why in result["trace"]["rewrite"]["tried"][0]["error"]
        assert elapsed < LLM_TIMEOUT + 3

    stack.llm.close()  # down: connection refused
    result, elapsed = play()
    assert result["rewrite"]["source"] == "rules" and result["standalone"] == rules
    assert "cannot reach the LLM" in result["trace"]["rewrite"]["tried"][0]["error"]
    assert elapsed < LLM_TIMEOUT + 3
