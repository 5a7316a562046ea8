"""Several API processes sharing one Neo4j, one Milvus (a Milvus Lite server) and one
Redis: a session started on one continues on the other; an admin write made through
one is used by the other within 2 seconds; parallel writes lose nothing; one turn
always links against one consistent alias table."""

from __future__ import annotations

import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest

from retrieval.models import Chunk
from tests.conftest import ADMIN, QUERY
from tests.services import (REGIONS_CORPUS, REGIONS_ONTOLOGY, ApiServer,
                            two_servers_on_lite)

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus, pytest.mark.redis]



@pytest.fixture(scope="module")
def two_servers(tmp_path_factory, neo4j_store, settings):
    """Two uvicorn processes on the suite's Neo4j and Redis and one Milvus Lite server."""
    kb = f"t_live_{uuid.uuid4().hex[:8]}"
    env = {"REFERENT_SESSIONS__BACKEND": "redis",
           "REFERENT_SESSIONS__REDIS_URL": settings.sessions.redis_url}
    with two_servers_on_lite(tmp_path_factory.mktemp("instances"), kb, neo4j_store,
                             REGIONS_ONTOLOGY, REGIONS_CORPUS, env) as (first, second):
        yield kb, first, second


def _turn(server: ApiServer, kb: str, session: str, text: str) -> dict:
    resp = server.client.post(f"/v1/kbs/{kb}/sessions/{session}/turns", json={"text": text},
                              headers=QUERY)
    assert resp.status_code == 200, resp.text
    return resp.json()


def test_a_session_started_on_one_process_continues_on_the_other(two_servers):
    kb, a, b = two_servers
    session = f"s-{uuid.uuid4().hex[:8]}"
    first = _turn(a, kb, session, "华东区7月的销售额是多少")
    assert (first["turn"], first["entities"]) == (1, ["region.east"])
    assert {e["doc_id"] for e in first["evidence"]} == {"east-0", "east-1", "east-2"}

    # B reads the state A saved: the ellipsis resolves against A's turn.
    second = _turn(b, kb, session, "那华南区呢")
    assert (second["turn"], second["entities"]) == (2, ["region.south"])
    assert second["standalone"] == "华南区7月的销售额是多少"
    assert {e["doc_id"] for e in second["evidence"]} == {"south-0", "south-1", "south-2"}
    # Each process explains the other's turns.
    trace = a.client.get(f"/v1/kbs/{kb}/sessions/{session}/turns/2/trace", headers=QUERY)
    assert trace.status_code == 200 and trace.json()["user"] == "那华南区呢"

    # The consumed window is shared: what A showed at turn 1 is not shown again.
    third = _turn(a, kb, session, "华东区呢")
    assert (third["turn"], third["entities"]) == (3, ["region.east"])
    assert third["evidence"] == [] and third["action"] == "no_answer"

    # Forgotten through B, the session starts afresh on A.
    assert b.client.delete(f"/v1/kbs/{kb}/sessions/{session}", headers=QUERY).status_code == 204
    again = _turn(a, kb, session, "华南区7月的销售额是多少")
    assert (again["turn"], again["entities"]) == (1, ["region.south"])


def test_parallel_turns_of_one_session_through_both_processes_lose_none(two_servers):
    kb, a, b = two_servers
    session = f"p-{uuid.uuid4().hex[:8]}"

    def send(i: int):
        server = (a, b)[i % 2]
        resp = server.client.post(f"/v1/kbs/{kb}/sessions/{session}/turns",
                                  json={"text": ("华东区7月的销售额是多少", "华南区7月的销售额是多少")[i % 2]},
                                  headers=QUERY)
        return resp.status_code, resp.json()

    with ThreadPoolExecutor(max_workers=6) as pool:
        results = list(pool.map(send, range(6)))
    # Optimistic concurrency: a turn that keeps losing the race is told so (409), never lost.
    assert {status for status, _ in results} <= {200, 409}, results
    turns = sorted(body["turn"] for status, body in results if status == 200)
    assert turns == list(range(1, len(turns) + 1))
    assert _turn(b, kb, session, "华东区呢")["turn"] == len(turns) + 1


def _linked(server: ApiServer, kb: str, text: str) -> list[str]:
    resp = server.client.post(f"/v1/kbs/{kb}/sessions/s-{uuid.uuid4().hex[:8]}/turns",
                              json={"text": text}, headers=QUERY)
    assert resp.status_code == 200, resp.text
    return resp.json()["entities"]


def _seconds_until(condition, limit: float = 10.0) -> float:
    start = time.monotonic()
    while not condition():
        if time.monotonic() - start > limit:
            return float("inf")
        time.sleep(0.05)
    return time.monotonic() - start


def test_a_write_through_one_process_is_used_by_the_other_within_2_seconds(two_servers):
    kb, a, b = two_servers
    alias = f"东部{uuid.uuid4().hex[:4]}区"
    # Both processes hold a snapshot already, without the new alias.
    assert _linked(a, kb, f"{alias}7月销售额") == []
    assert _linked(b, kb, f"{alias}7月销售额") == []

    added = a.client.post(f"/v1/kbs/{kb}/admin/entities/region.east/aliases",
                          json={"alias": alias}, headers=ADMIN)
    assert added.status_code == 201
    # The writer uses it at once; the other within the check interval.
    assert _linked(a, kb, f"{alias}7月销售额") == ["region.east"]
    elapsed = _seconds_until(lambda: _linked(b, kb, f"{alias}7月销售额") == ["region.east"])
    assert elapsed < 2.0, f"process B used the new alias after {elapsed:.2f} s"
    version = added.json()["version"]
    assert b.client.get(f"/v1/kbs/{kb}/admin/version", headers=ADMIN).json() == {
        "kb": kb, "version": version, "snapshot_version": version}

    removed = b.client.delete(f"/v1/kbs/{kb}/admin/entities/region.east/aliases",
                              params={"alias": alias}, headers=ADMIN)
    assert removed.status_code == 200
    elapsed = _seconds_until(lambda: _linked(a, kb, f"{alias}7月销售额") == [])
    assert elapsed < 2.0, f"process A dropped the alias after {elapsed:.2f} s"


def test_parallel_writes_through_both_processes_lose_nothing(two_servers):
    kb, a, b = two_servers
    url = f"/v1/kbs/{kb}/admin"
    before = a.client.get(f"{url}/version", headers=ADMIN).json()["version"]
    audit_before = len(a.client.get(f"{url}/audit", params={"limit": 500}, headers=ADMIN).json()["entries"])
    tag = uuid.uuid4().hex[:4]
    aliases = [f"并发{tag}第{i}号" for i in range(40)]

    def add(i: int) -> int:
        server = (a, b)[i % 2]
        entity = ("region.east", "region.south")[i % 2]
        return server.client.post(f"{url}/entities/{entity}/aliases", json={"alias": aliases[i]},
                                  headers=ADMIN).status_code

    with ThreadPoolExecutor(max_workers=16) as pool:
        statuses = list(pool.map(add, range(40)))
    assert statuses == [201] * 40
    east = a.client.get(f"{url}/entities/region.east", headers=ADMIN).json()["aliases"]
    south = b.client.get(f"{url}/entities/region.south", headers=ADMIN).json()["aliases"]
    assert set(aliases[0::2]) <= set(east) and set(aliases[1::2]) <= set(south)
    assert a.client.get(f"{url}/version", headers=ADMIN).json()["version"] == before + 40
    entries = a.client.get(f"{url}/audit", params={"limit": 500}, headers=ADMIN).json()["entries"]
    assert len(entries) == audit_before + 40
    assert len({e["version"] for e in entries}) == len(entries)

    # Racing to give one new alias to two entities: exactly one wins, the other is told.
    contested = f"争{tag}"

    def claim(i: int) -> int:
        server = (a, b)[i % 2]
        entity = ("region.east", "region.south")[i % 2]
        return server.client.post(f"{url}/entities/{entity}/aliases", json={"alias": contested},
                                  headers=ADMIN).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(claim, range(8)))
    assert results.count(201) == 1
    assert set(results) <= {200, 201, 409}
    owners = [h["id"] for h in a.client.get(f"{url}/search", params={"q": contested},
                                            headers=ADMIN).json()["hits"]]
    assert len(owners) == 1


def test_one_turn_sees_one_consistent_alias_table(runtime, kb, milvus_index):
    """A writer keeps moving two aliases between two pairs of entities in one
    transaction each; every turn links both mentions within one state."""
    states = []
    for left, right in (("e1", "e2"), ("e3", "e4")):
        lines = [json.dumps({"kind": "entity", "id": eid, "name": f"实体{eid}", "type": "T",
                             "aliases": ([alias] if eid in (left, right) else [])},
                            ensure_ascii=False)
                 for eid, alias in (("e1", "甲方案"), ("e2", "乙方案"), ("e3", "甲方案"),
                                    ("e4", "乙方案"))]
        states.append(lines)
    runtime.ontology.import_ontology(kb, states[0])
    milvus_index.ensure_collection(kb)
    milvus_index.upsert(kb, [Chunk("c#0", "c", "方案", "甲方案和乙方案的比较")])

    stop = threading.Event()
    writes = 0

    def writer() -> None:
        nonlocal writes
        while not stop.is_set():
            runtime.ontology.import_ontology(kb, states[(writes + 1) % 2])
            writes += 1

    thread = threading.Thread(target=writer)
    thread.start()
    seen = set()
    try:
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            result = runtime.engine.handle(kb, f"c-{uuid.uuid4().hex[:8]}", "甲方案和乙方案哪个好")
            seen.add(tuple(sorted(result.entities)))
    finally:
        stop.set()
        thread.join()
    assert writes >= 4, "the writer should have switched states several times"
    assert seen <= {("e1", "e2"), ("e3", "e4")}, seen
    assert len(seen) == 2, "turns should have seen both states"
