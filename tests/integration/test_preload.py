"""A kb's collection is loaded before the server says it is ready, and no turn waits
on the load: real Milvus Lite, the runtime's own warm-up steps, the load held back
by a gate around the real load call so its duration is the test's to choose."""

from __future__ import annotations

import dataclasses
import gc
import threading
import time
import uuid

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from retrieval.models import Chunk
from retrieval.preload import Preloader, Step
from tests.conftest import QUERY

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]


def _chunks(n: int) -> list[Chunk]:
    return [Chunk(chunk_id=f"c{i}", doc_id=f"d{i // 2}", title=f"年假规定 {i}",
                  text=f"员工入职满一年后每年享有{5 + i % 10}天带薪年假，需提前三天申请。")
            for i in range(n)]


def _load_state(index, kb: str) -> str:
    # The server's own view of the collection, not the preloader's.
    name = f"referent_{kb}"
    return str(index._client.get_load_state(name)["state"])


@pytest.fixture
def released_kb(milvus_index, kb):
    """A kb with chunks whose collection Milvus has released (as after a restart)."""
    milvus_index.ensure_collection(kb)
    milvus_index.upsert(kb, _chunks(40))
    milvus_index._client.release_collection(f"referent_{kb}")
    assert "NotLoad" in _load_state(milvus_index, kb)
    return kb


def _wait_ready(client: TestClient, seconds: float = 60.0):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        resp = client.get("/readyz")
        if resp.status_code == 200:
            return resp
        time.sleep(0.1)
    raise AssertionError(f"not ready after {seconds} s: {resp.text}")


def test_readyz_is_503_until_the_kbs_collection_is_loaded_and_turns_do_not_wait(
        runtime, keyring, milvus_index, released_kb):
    kb = released_kb
    entered, release = threading.Event(), threading.Event()

    def held_back(name: str) -> None:
        entered.set()
        release.wait(60)

    # The runtime's real steps (the collection's load, then its caches), behind a gate.
    preloader = Preloader(milvus_index.kbs, [Step("gate", held_back),
                                             *runtime._warm_up_steps()])
    saved, runtime.preloader = runtime.preloader, preloader
    try:
        with TestClient(create_app(runtime=runtime, keyring=keyring),
                        raise_server_exceptions=False) as client:
            preloader.start()
            assert entered.wait(30)
            for _ in range(3):
                resp = client.get("/readyz")
                assert resp.status_code == 503, resp.text
                collections = resp.json()["checks"]["collections"]
                assert collections["status"] == "loading" and kb in collections["loading"]
            started = time.perf_counter()
            turn = client.post(f"/v1/kbs/{kb}/sessions/s-{uuid.uuid4().hex[:8]}/turns",
                               json={"text": "年假有几天"}, headers=QUERY)
            assert time.perf_counter() - started < 2.0
            assert turn.status_code == 503 and turn.headers["retry-after"], turn.text
            assert "still loading" in turn.json()["detail"]
            assert "NotLoad" in _load_state(milvus_index, kb)

            release.set()
            ready = _wait_ready(client)
            assert ready.json()["checks"]["collections"]["loading"] == []
            assert "Loaded" in _load_state(milvus_index, kb)
            turn = client.post(f"/v1/kbs/{kb}/sessions/s-{uuid.uuid4().hex[:8]}/turns",
                               json={"text": "年假有几天"}, headers=QUERY)
            assert turn.status_code == 200, turn.text
            assert turn.json()["evidence"]
    finally:
        release.set()
        preloader.close()
        runtime.preloader = saved


def test_a_kb_that_cannot_be_loaded_is_reported_and_does_not_hold_readiness(
        runtime, keyring, milvus_index):
    missing = f"t_{uuid.uuid4().hex[:12]}"
    drained: list[str] = []  # the after-load hook runs when the queue is empty, failed or not
    preloader = Preloader(lambda: [missing], [Step("collection", milvus_index.load)],
                          attempts=2, retry_pause=0.01, on_loaded=lambda: drained.append("x"))
    saved, runtime.preloader = runtime.preloader, preloader
    try:
        with TestClient(create_app(runtime=runtime, keyring=keyring),
                        raise_server_exceptions=False) as client:
            preloader.start()
            collections = _wait_ready(client, 30).json()["checks"]["collections"]
            assert collections["failed"] == {missing: "NotFoundError"}
            assert drained == ["x"]
    finally:
        preloader.close()
        runtime.preloader = saved


def test_the_server_freezes_its_heap_once_its_kbs_are_loaded(runtime, keyring, released_kb):
    """After the load the collector no longer walks what the load built (api/heap.py):
    the kb's term statistics, built by its load, are frozen by the time /readyz says so."""
    served = dataclasses.replace(runtime)  # its own preloader, wired as a server's is
    gc.unfreeze()
    try:
        with TestClient(create_app(runtime=served, keyring=keyring),
                        raise_server_exceptions=False) as client:
            assert gc.get_freeze_count() == 0
            served.preloader.start()
            _wait_ready(client)
            stats = served.retriever.term_stats(released_kb)
            assert gc.get_freeze_count() > 0 and gc.is_tracked(stats)
            assert all(thing is not stats for thing in gc.get_objects())  # not in any generation
    finally:
        for part in (served.preloader, served.clarifications, served.retagger):
            part.close()
        gc.unfreeze()
