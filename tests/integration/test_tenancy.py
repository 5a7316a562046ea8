"""Two API processes sharing one Neo4j, one Redis (sessions and rate limits) and one
Milvus Lite server: a key made or revoked through one is in force on the other within
2 seconds; a session made through one is nobody else's on the other; one key's rate
limit is counted once across both."""

from __future__ import annotations

import time
import uuid

import pytest

from tests.conftest import ADMIN
from tests.services import (REGIONS_CORPUS, REGIONS_ONTOLOGY, ApiServer,
                            two_servers_on_lite)

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus, pytest.mark.redis]

RATE, BURST = 5, 20


@pytest.fixture(scope="module")
def two(tmp_path_factory, neo4j_store, settings):
    kb = f"t_ten_{uuid.uuid4().hex[:8]}"
    env = {"REFERENT_SESSIONS__BACKEND": "redis",
           "REFERENT_SESSIONS__REDIS_URL": settings.sessions.redis_url,
           # Counted in the sessions' Redis: no REFERENT_RATE_LIMIT__REDIS_URL needed.
           "REFERENT_RATE_LIMIT__PER_KEY_PER_SECOND": str(RATE),
           "REFERENT_RATE_LIMIT__BURST": str(BURST)}
    with two_servers_on_lite(tmp_path_factory.mktemp("tenancy"), kb, neo4j_store,
                             REGIONS_ONTOLOGY, REGIONS_CORPUS, env) as (first, second):
        yield kb, first, second


def _key(server: ApiServer, scopes: dict[str, str]) -> tuple[str, str]:
    resp = server.client.post("/v1/admin/keys", headers=ADMIN,
                              json={"name": f"k-{uuid.uuid4().hex[:8]}", "scopes": scopes})
    assert resp.status_code == 201, resp.text
    return resp.json()["key"], resp.json()["id"]


def _h(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


def _known_on(server: ApiServer, kb: str, key: str) -> float:
    """Wait until ``server`` accepts a key made through another process; the seconds it took."""
    started = time.monotonic()
    while server.client.get(f"/v1/kbs/{kb}/sessions/x/turns/1/trace",
                            headers=_h(key)).status_code == 401:
        assert time.monotonic() - started < 2.0, "a new key is still refused after 2 s"
        time.sleep(0.05)
    return time.monotonic() - started


def test_a_key_made_on_one_process_works_on_the_other_and_stops_there_within_2_s(two):
    kb, a, b = two
    key, key_id = _key(a, {kb: "query"})
    _known_on(b, kb, key)
    url = f"/v1/kbs/{kb}/sessions/s-{uuid.uuid4().hex[:8]}/turns"
    assert b.client.post(url, json={"text": "华东区7月的销售额"}, headers=_h(key)).status_code == 200
    assert b.client.delete(f"/v1/admin/keys/{key_id}", headers=ADMIN).status_code == 200
    revoked_at = time.monotonic()
    while True:
        resp = a.client.get(f"/v1/kbs/{kb}/sessions/x/turns/1/trace", headers=_h(key))
        if resp.status_code == 401:
            break
        assert resp.status_code == 404  # still accepted (no such trace)
        assert time.monotonic() - revoked_at < 2.0, "the revoked key still works after 2 s"
        time.sleep(0.05)


def test_a_session_is_its_owners_on_every_process(two):
    kb, a, b = two
    alice, _ = _key(a, {kb: "query"})
    mallory, _ = _key(a, {kb: "query"})
    kb_admin, _ = _key(a, {kb: "admin"})
    for key in (alice, mallory, kb_admin):
        _known_on(b, kb, key)
    base = f"/v1/kbs/{kb}/sessions/s-{uuid.uuid4().hex[:8]}"
    first = a.client.post(f"{base}/turns", json={"text": "华东区7月的销售额"}, headers=_h(alice))
    assert first.status_code == 200 and first.json()["entities"] == ["region.east"]
    for resp in (b.client.get(f"{base}/turns/1/trace", headers=_h(mallory)),
                 b.client.post(f"{base}/turns", json={"text": "那华南区呢"}, headers=_h(mallory)),
                 b.client.delete(base, headers=_h(mallory))):
        assert resp.status_code == 404, resp.text
    trace = b.client.get(f"{base}/turns/1/trace", headers=_h(kb_admin))
    assert trace.status_code == 200 and trace.json()["user"] == "华东区7月的销售额"
    assert trace.json()["owner"]["subject"] is None
    second = b.client.post(f"{base}/turns", json={"text": "那华南区呢"}, headers=_h(alice))
    assert second.status_code == 200
    assert (second.json()["turn"], second.json()["entities"]) == (2, ["region.south"])


def test_one_keys_rate_limit_is_shared_by_both_processes(two):
    kb, a, b = two
    key, _ = _key(a, {kb: "query"})
    url = f"/v1/kbs/{kb}/sessions/none/turns/1/trace"
    _known_on(b, kb, key)
    time.sleep(BURST / RATE)  # the bucket full again after the probes
    answers = []
    started = time.monotonic()
    for i in range(2 * BURST):
        server = (a, b)[i % 2]
        resp = server.client.get(url, headers=_h(key))
        answers.append((server.port, resp.status_code, resp))
    elapsed = time.monotonic() - started
    accepted = sum(1 for _, status, _ in answers if status == 404)
    limited = [resp for _, status, resp in answers if status == 429]
    # One bucket for both: BURST plus what refilled meanwhile, not BURST per process.
    assert BURST <= accepted <= BURST + RATE * elapsed + 1, (accepted, elapsed)
    assert len(limited) == 2 * BURST - accepted
    assert {port for port, status, _ in answers if status == 429} == {a.port, b.port}
    problem = limited[0]
    assert problem.headers["content-type"].startswith("application/problem+json")
    assert int(problem.headers["retry-after"]) >= 1
    assert problem.json()["status"] == 429 and problem.json()["request_id"]
    # Another key is not held back by this one.
    other, _ = _key(b, {kb: "query"})
    _known_on(a, kb, other)
    assert a.client.get(url, headers=_h(other)).status_code == 404
    time.sleep(1.0 / RATE + 0.1)
    assert b.client.get(url, headers=_h(key)).status_code == 404
