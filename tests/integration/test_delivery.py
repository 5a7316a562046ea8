"""Turns are saved exactly once, against real Neo4j, Milvus Lite, SQLite and Redis.

- A retry with the same ``Idempotency-Key`` (or the same ``turn`` number) gets the
  stored answer and the session does not advance; the same key with other text
  is refused. Both session stores.
- A save that reaches a frozen Redis after the client gave up is refused by Redis
  itself: the turn answered 503 is not saved when Redis wakes up.
- The stall run: parallel conversations through two API processes while Redis
  and the Milvus Lite server are frozen (SIGSTOP) and killed, many times, the
  clients retrying with their keys. No turn is saved that was not answered 200
  (phantom) and none answered 200 is missing (lost).
"""

from __future__ import annotations

import os
import random
import signal
import threading
import time
import uuid
from dataclasses import dataclass, field

import httpx
import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from common.errors import RetryableDependencyError
from dialogue.engine import EngineConfig, TurnEngine
from dialogue.redis_store import RedisSessionStore
from dialogue.sqlite_store import SQLiteSessionStore
from tests.conftest import QUERY
from tests.services import ApiServer, RedisServer, free_port, load_demo

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

SALES = ["华东区7月的销售额是多少", "那华南区呢", "为什么涨这么多", "华北区呢", "年假有几天",
         "病假工资怎么算"]


def sid() -> str:
    return f"d-{uuid.uuid4().hex[:10]}"


@pytest.fixture(params=["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def client(request, runtime, keyring, settings, tmp_path):
    """The API over the suite's Neo4j and Milvus Lite, with sessions in SQLite or Redis."""
    if request.param == "sqlite":
        sessions = SQLiteSessionStore(tmp_path / "sessions.sqlite3", ttl_seconds=600)
    else:
        sessions = RedisSessionStore(settings.sessions.redis_url, ttl_seconds=600,
                                     prefix=f"test:{uuid.uuid4().hex[:8]}:")
    engine = TurnEngine(runtime.snapshots, runtime.retriever, sessions,
                        EngineConfig(answers_kept=2))
    saved = runtime.engine, runtime.sessions
    runtime.engine, runtime.sessions = engine, sessions
    try:
        with TestClient(create_app(runtime=runtime, keyring=keyring), headers=QUERY) as c:
            yield c
    finally:
        runtime.engine, runtime.sessions = saved
        sessions.close()


def _turn(client, kb, session, text, key=None, **body):
    headers = {"Idempotency-Key": key} if key else {}
    return client.post(f"/v1/kbs/{kb}/sessions/{session}/turns", json={"text": text, **body},
                       headers=headers)


def test_a_retry_with_the_same_key_gets_the_stored_answer_not_a_second_turn(client, demo_kb):
    s = sid()
    first = _turn(client, demo_kb, s, SALES[0], key="k-1")
    assert first.status_code == 200 and first.json()["turn"] == 1
    assert first.json()["replayed"] is False and "idempotent-replayed" not in first.headers
    again = _turn(client, demo_kb, s, SALES[0], key="k-1")
    assert again.status_code == 200, again.text
    assert again.headers["idempotent-replayed"] == "true"
    body = again.json()
    assert body["replayed"] is True and body["turn"] == 1
    assert body["trace"]["links"] == first.json()["trace"]["links"]  # the kept trace
    assert body["standalone"] == first.json()["standalone"]
    assert [e["chunk_id"] for e in body["evidence"]] == [e["chunk_id"] for e in first.json()["evidence"]]
    # The session did not advance: the next turn is turn 2 and still about the first one.
    second = _turn(client, demo_kb, s, SALES[1], key="k-2")
    assert second.json()["turn"] == 2 and second.json()["standalone"] == "华南区7月的销售额是多少"
    # A turn older than the newest answers kept (2 here) is known but not replayable.
    _turn(client, demo_kb, s, SALES[2], key="k-3")
    gone = _turn(client, demo_kb, s, SALES[0], key="k-1")
    assert gone.status_code == 409 and "no longer kept" in gone.json()["detail"], gone.text
    assert _turn(client, demo_kb, s, SALES[3], key="k-4").json()["turn"] == 4


def test_the_same_key_with_other_text_is_refused_and_plays_nothing(client, demo_kb):
    s = sid()
    assert _turn(client, demo_kb, s, SALES[0], key="same").status_code == 200
    clash = _turn(client, demo_kb, s, SALES[1], key="same")
    assert clash.status_code == 422, clash.text
    assert clash.headers["content-type"].startswith("application/problem+json")
    assert clash.json()["field"] == "Idempotency-Key"
    assert "new key" in clash.json()["detail"]
    clash_k = _turn(client, demo_kb, s, SALES[0], key="same", k=2)
    assert clash_k.status_code == 422
    assert _turn(client, demo_kb, s, SALES[1], key="other").json()["turn"] == 2
    bad = _turn(client, demo_kb, s, SALES[2], key="has space")
    assert bad.status_code == 422 and bad.json()["field"] == "Idempotency-Key"


def test_an_expected_turn_number_makes_a_retry_safe_and_refuses_skips(client, demo_kb):
    s = sid()
    assert _turn(client, demo_kb, s, SALES[0], turn=1).json()["turn"] == 1
    repeat = _turn(client, demo_kb, s, SALES[0], turn=1)
    assert repeat.status_code == 200 and repeat.json()["replayed"] is True
    other = _turn(client, demo_kb, s, SALES[1], turn=1)
    assert other.status_code == 409 and other.json()["field"] == "turn"
    assert '"turn": 2' in other.json()["detail"]
    skip = _turn(client, demo_kb, s, SALES[1], turn=5)
    assert skip.status_code == 409 and "would skip" in skip.json()["detail"]
    second = _turn(client, demo_kb, s, SALES[1], turn=2)
    assert second.json()["turn"] == 2 and second.json()["replayed"] is False
    # The key and the number must agree.
    assert _turn(client, demo_kb, s, SALES[2], key="t3", turn=3).json()["turn"] == 3
    assert _turn(client, demo_kb, s, SALES[2], key="t3", turn=2).status_code == 409


def test_concurrent_retries_with_one_key_play_the_turn_once(client, demo_kb):
    s = sid()
    _turn(client, demo_kb, s, SALES[0], key="a")
    results = []

    def send():
        results.append(_turn(client, demo_kb, s, SALES[1], key="b"))

    threads = [threading.Thread(target=send) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [r.status_code for r in results] == [200] * 4, [r.text for r in results]
    assert {r.json()["turn"] for r in results} == {2}
    assert sum(not r.json()["replayed"] for r in results) == 1
    assert _turn(client, demo_kb, s, SALES[2], key="c").json()["turn"] == 3


# -- Redis frozen under a save ------------------------------------------------------------

@pytest.fixture
def own_redis(tmp_path):
    server = RedisServer(tmp_path / "redis")
    server.start()
    yield server
    if server.proc is not None:
        os.kill(server.proc.pid, signal.SIGCONT)
    server.stop()


@pytest.mark.redis
def test_a_save_that_reaches_a_frozen_redis_too_late_is_not_applied(own_redis):
    store = RedisSessionStore(own_redis.url, ttl_seconds=600, timeout=1.0)
    try:
        state = store.load("kb", "s")
        state.turn_count = 1
        state = store.save(state)
        state.turn_count = 2
        os.kill(own_redis.proc.pid, signal.SIGSTOP)
        started = time.monotonic()
        try:
            with pytest.raises(RetryableDependencyError):
                store.save(state)
            assert time.monotonic() - started < 4
        finally:
            os.kill(own_redis.proc.pid, signal.SIGCONT)
        time.sleep(0.3)  # Redis runs the requests it held: the late save must refuse itself
        again = store.load("kb", "s")
        assert again.turn_count == 1 and again.version == 1
        # And a prompt save still works.
        again.turn_count = 2
        assert store.save(again).version == 2
        assert store.load("kb", "s").turn_count == 2
    finally:
        store.close()


# -- the stall run ---------------------------------------------------------------------

KB = f"delivery_{uuid.uuid4().hex[:6]}"
RUNS = int(os.environ.get("STALL_RUNS", "8"))
CONVERSATIONS = 8
TURNS = len(SALES)


@dataclass
class Turn:
    text: str
    key: str
    statuses: list[int] = field(default_factory=list)  # 0: no answer (transport error)
    body: dict | None = None
    replayed: bool = False


@dataclass
class Conversation:
    server: ApiServer
    session: str
    turns: list[Turn] = field(default_factory=list)
    error: str = ""


@pytest.fixture(scope="module")
def stall_stack(tmp_path_factory, neo4j_store):
    from devservices.local_milvus import LocalMilvus
    from retrieval.milvus_index import MilvusIndex

    root = tmp_path_factory.mktemp("delivery")
    milvus = LocalMilvus(root / "milvus" / "milvus.db", free_port())
    redis = RedisServer(root / "redis")
    servers: list[ApiServer] = []
    try:
        milvus.start()
        redis.start()
        index = MilvusIndex(milvus.uri)
        try:
            load_demo(KB, neo4j_store, index)
        finally:
            index.close()
        servers = ApiServer.several([root / "api-1", root / "api-2"], {
            "REFERENT_MILVUS__URI": milvus.uri,
            "REFERENT_MILVUS__TIMEOUT_SECONDS": "2",
            "REFERENT_SESSIONS__BACKEND": "redis",
            "REFERENT_SESSIONS__REDIS_URL": redis.url,
            "REFERENT_SESSIONS__REDIS_TIMEOUT_SECONDS": "1",
        })
        yield milvus, redis, servers
    finally:
        for server in servers:
            server.stop()
        for proc in (milvus.proc, redis.proc):
            if proc is not None and proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
        milvus.stop()
        redis.stop()
        neo4j_store.delete_kb(KB)


def _converse(conv: Conversation, texts: list[str], deadline: float) -> None:
    """Play ``texts`` one after another, each retried with its own key until it gets
    a 200 (a 5xx or no answer at all: retry after a short pause)."""
    with httpx.Client(base_url=conv.server.url, timeout=15, headers=QUERY) as http:
        for text in texts:
            turn = Turn(text, uuid.uuid4().hex)
            conv.turns.append(turn)
            while time.monotonic() < deadline:
                try:
                    resp = http.post(f"/v1/kbs/{KB}/sessions/{conv.session}/turns",
                                     json={"text": text}, headers={"Idempotency-Key": turn.key})
                except httpx.TransportError:
                    turn.statuses.append(0)
                    time.sleep(0.2)
                    continue
                turn.statuses.append(resp.status_code)
                if resp.status_code == 200:
                    turn.body = resp.json()
                    turn.replayed = resp.headers.get("idempotent-replayed") == "true"
                    break
                if resp.status_code < 500:
                    conv.error = f"{resp.status_code}: {resp.text}"
                    return
                time.sleep(0.2)
            else:
                conv.error = f"turn {text!r} got no 200 before the deadline: {turn.statuses}"
                return


def _fault(kind: str, milvus, redis, rng: random.Random) -> None:
    time.sleep(rng.uniform(0.1, 0.6))
    if kind == "redis-stall":
        os.kill(redis.proc.pid, signal.SIGSTOP)
        time.sleep(rng.uniform(1.5, 3.0))
        os.kill(redis.proc.pid, signal.SIGCONT)
    elif kind == "redis-kill":
        redis.kill()
        time.sleep(rng.uniform(0.3, 1.0))
        redis.start()
    elif kind == "milvus-stall":
        os.kill(milvus.pid, signal.SIGSTOP)
        time.sleep(rng.uniform(1.5, 3.0))
        os.kill(milvus.pid, signal.SIGCONT)
    else:  # milvus-kill
        os.kill(milvus.pid, signal.SIGKILL)
        milvus.stop()
        time.sleep(rng.uniform(0.3, 1.0))
        milvus.start()


@pytest.mark.redis
def test_stalls_and_kills_of_redis_and_milvus_leave_no_phantom_or_lost_turn(stall_stack):
    milvus, redis, servers = stall_stack
    rng = random.Random(14)
    kinds = ["redis-stall", "redis-kill", "milvus-stall", "milvus-kill"]
    figures = {"runs": 0, "turns": 0, "answers_5xx": 0, "no_answer": 0,
               "saved_although_5xx": 0, "phantom": 0, "lost": 0}
    store = RedisSessionStore(redis.url, ttl_seconds=600)
    try:
        for run in range(RUNS):
            kind = kinds[run % len(kinds)]
            conversations = [Conversation(servers[i % 2], f"run{run}-c{i}-{uuid.uuid4().hex[:6]}")
                             for i in range(CONVERSATIONS)]
            deadline = time.monotonic() + 90
            threads = [threading.Thread(target=_converse, args=(c, SALES, deadline))
                       for c in conversations]
            fault = threading.Thread(target=_fault, args=(kind, milvus, redis, rng))
            for t in (*threads, fault):
                t.start()
            for t in (*threads, fault):
                t.join(120)
            figures["runs"] += 1
            for conv in conversations:
                assert not conv.error, (kind, conv.session, conv.error)
                figures["turns"] += len(conv.turns)
                for n, turn in enumerate(conv.turns, start=1):
                    figures["answers_5xx"] += sum(s >= 500 for s in turn.statuses)
                    figures["no_answer"] += turn.statuses.count(0)
                    # A replay after attempts that were all answered 5xx: the write had
                    # landed although the answer said it failed (the key rescued it).
                    if turn.replayed and 0 not in turn.statuses:
                        figures["saved_although_5xx"] += 1
                    # Turn numbers go 1, 2, 3...: a retry that played a second turn
                    # (a phantom under it) would skip one.
                    assert turn.body["turn"] == n, (kind, conv.session, n, turn)
                    assert turn.body["user"] == turn.text
                state = store.load(KB, conv.session)
                played = {p.key: p.turn for p in state.played}
                answered = {t.key: n for n, t in enumerate(conv.turns, start=1)}
                figures["phantom"] += len(set(played) - set(answered))
                figures["lost"] += len(set(answered) - set(played))
                assert state.turn_count == len(conv.turns), (kind, conv.session, state.played)
                assert played == answered, (kind, conv.session)
                assert [r.user for r in state.recent] == SALES[-len(state.recent):]
    finally:
        store.close()
        print(f"\nstall run: {figures}")
    assert figures["phantom"] == 0 and figures["lost"] == 0, figures
    assert figures["answers_5xx"] > 0, "the faults should have been noticed"
