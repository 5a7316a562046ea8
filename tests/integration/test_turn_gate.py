"""The turn gate on the real app, engine, Neo4j and Milvus: at most the configured turns
run at once, the others wait in arrival order and are all answered; beyond the queue a
turn is refused at once with 503 and Retry-After, and the turns already taken are still
answered with their evidence."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from api.app import create_app, get_engine
from api.settings import LimitsSettings
from tests.conftest import QUERY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

QUESTION = "年假有几天"


class CountingEngine:
    """The real engine, with the number of turns inside it counted; with ``hold``, each
    turn waits for it first (so a test can fill the slots deterministically)."""

    def __init__(self, engine, hold: threading.Event | None = None) -> None:
        self._engine = engine
        self._hold = hold
        self._lock = threading.Lock()
        self.inside = 0
        self.most_inside = 0
        self.entered = threading.Semaphore(0)

    def handle(self, *args, **kwargs):
        with self._lock:
            self.inside += 1
            self.most_inside = max(self.most_inside, self.inside)
        self.entered.release()
        try:
            if self._hold is not None:
                assert self._hold.wait(30), "the test never released the held turns"
            return self._engine.handle(*args, **kwargs)
        finally:
            with self._lock:
                self.inside -= 1


def gated_app(runtime, keyring, engine: CountingEngine, *, concurrent: int, queued: int):
    limits = LimitsSettings(concurrent_turns=concurrent, queued_turns=queued)
    settings = runtime.settings.model_copy(update={"limits": limits})
    app = create_app(settings=settings, runtime=runtime, keyring=keyring)
    app.dependency_overrides[get_engine] = lambda: engine
    return app


def turn(client: TestClient, kb: str):
    return client.post(f"/v1/kbs/{kb}/sessions/g-{uuid.uuid4().hex[:10]}/turns",
                       json={"text": QUESTION}, headers=QUERY)


def test_sixteen_clients_on_two_slots_are_all_answered_two_at_a_time(runtime, keyring, demo_kb):
    engine = CountingEngine(runtime.engine)
    app = gated_app(runtime, keyring, engine, concurrent=2, queued=64)
    with TestClient(app) as client, ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda _: turn(client, demo_kb), range(32)))
    assert [a.status_code for a in answers] == [200] * 32, [a.text for a in answers if a.status_code != 200]
    assert all(a.json()["evidence"] for a in answers)
    assert engine.most_inside == 2


def test_a_turn_beyond_the_queue_gets_503_at_once_and_the_taken_ones_are_answered(
        runtime, keyring, demo_kb):
    hold = threading.Event()
    engine = CountingEngine(runtime.engine, hold)
    app = gated_app(runtime, keyring, engine, concurrent=1, queued=1)
    with TestClient(app) as client, ThreadPoolExecutor(2) as pool:
        running = pool.submit(turn, client, demo_kb)
        assert engine.entered.acquire(timeout=30)  # the one slot is taken
        queued = pool.submit(turn, client, demo_kb)
        gate = app.state.turn_gate
        for _ in range(3000):  # until the second turn is seen waiting in the queue
            if gate.state() == (1, 1):
                break
            time.sleep(0.01)
        try:
            refused = turn(client, demo_kb)
        finally:
            hold.set()
        first, second = running.result(timeout=60), queued.result(timeout=60)
        metrics = client.get("/metrics").text
    assert refused.status_code == 503, refused.text
    assert refused.headers["Retry-After"] == "1"
    body = refused.json()
    assert body["title"] == "Server busy" and "retry" in body["detail"]
    assert first.status_code == 200 and first.json()["evidence"]
    assert second.status_code == 200 and second.json()["evidence"]
    assert engine.most_inside == 1
    assert "referent_turns_refused_total 1.0" in metrics
