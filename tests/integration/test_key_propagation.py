"""A stored key is never answered "not valid" while it exists: two API processes
(two apps, each with its own copy of the keys) over one real Neo4j; keys made on one
are used at once, all together, on the other. A key the copy does not hold and that
cannot be checked because Neo4j does not answer gets 503, never 401."""

from __future__ import annotations

import socket
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from fastapi.testclient import TestClient

from api.app import create_app
from api.auth import hash_key
from common.errors import RetryableDependencyError
from kg.api_keys import KeyTable, Neo4jKeyStore
from kg.neo4j_store import Neo4jOntologyStore
from tests.conftest import ADMIN

pytestmark = pytest.mark.neo4j

KEYS = "/v1/admin/keys"


@pytest.fixture
def two_apps(runtime, keyring):
    """Two apps over the same Neo4j: like two server processes, each loads its own keys."""
    with TestClient(create_app(runtime=runtime, keyring=keyring)) as one, \
            TestClient(create_app(runtime=runtime, keyring=keyring)) as other:
        yield one, other


def test_keys_made_on_one_process_work_at_once_and_together_on_the_other(two_apps, demo_kb):
    one, other = two_apps
    url = f"/v1/kbs/{demo_kb}/admin/version"
    made: list[str] = []
    try:
        for _ in range(4):
            # The other process has just checked its copy: the new keys are not in it.
            assert other.get(url, headers=ADMIN).status_code == 200
            keys = []
            for _ in range(4):
                resp = one.post(KEYS, json={"name": f"k-{uuid.uuid4().hex[:8]}",
                                            "scopes": {demo_kb: "admin"}}, headers=ADMIN)
                assert resp.status_code == 201, resp.text
                keys.append(resp.json()["key"])
                made.append(resp.json()["id"])
            with ThreadPoolExecutor(len(keys)) as pool:
                answers = list(pool.map(
                    lambda key: other.get(url, headers={"Authorization": f"Bearer {key}"}),
                    keys))
            assert [a.status_code for a in answers] == [200] * len(keys), \
                [a.text for a in answers if a.status_code != 200]
    finally:
        for key_id in made:
            one.delete(f"{KEYS}/{key_id}", headers=ADMIN)


def test_a_key_made_elsewhere_is_found_by_a_table_whose_check_is_under_way(settings,
                                                                           neo4j_store):
    """Misses that arrive while a check is running wait for the next one, which began
    after them, instead of being refused on the copy loaded before."""
    keys = Neo4jKeyStore(neo4j_store)
    table = KeyTable(keys, refresh_seconds=0.001, wait_seconds=5)
    made = []
    try:
        table.lookup(hash_key("rk_warm_" + uuid.uuid4().hex))
        for _ in range(5):
            secrets = ["rk_" + uuid.uuid4().hex for _ in range(3)]
            made += [keys.create(name=f"k-{uuid.uuid4().hex[:8]}", key_hash=hash_key(s),
                                 scopes={"faq": "query"}, created_by="test") for s in secrets]
            with ThreadPoolExecutor(6) as pool:
                found = list(pool.map(table.lookup, [hash_key(s) for s in secrets] * 2))
            assert all(k is not None for k in found), found
    finally:
        table.close()
        for key in made:
            keys.revoke(key.id, revoked_by="test")


@pytest.fixture
def frozen_neo4j():
    """A port that accepts connections and never answers: a frozen Neo4j."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept():
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                accepted.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"bolt://127.0.0.1:{listener.getsockname()[1]}"
    stop.set()
    thread.join()
    for conn in accepted:
        conn.close()
    listener.close()


def test_a_key_not_in_the_copy_gets_503_while_neo4j_cannot_be_asked(settings, neo4j_store,
                                                                    frozen_neo4j):
    from api.runtime import open_ontology_store

    keys = Neo4jKeyStore(neo4j_store)
    made = keys.create(name=f"k-{uuid.uuid4().hex[:8]}", key_hash=hash_key("rk_" + uuid.uuid4().hex),
                       scopes={"faq": "query"}, created_by="test")
    # Down: the driver is closed after the first load.
    store = open_ontology_store(settings)
    table = KeyTable(Neo4jKeyStore(store), refresh_seconds=0.05, wait_seconds=0.5)
    try:
        assert table.lookup(made.hash) is not None
        store.close()
        later = hash_key("rk_made_after_the_copy_" + uuid.uuid4().hex)
        with pytest.raises(RetryableDependencyError, match="cannot be checked"):
            table.lookup(later)
        assert table.lookup(made.hash) is not None  # the keys loaded last still serve
    finally:
        table.close()
        keys.revoke(made.id, revoked_by="test")

    # Frozen: connections are accepted and nothing answers.
    frozen = Neo4jOntologyStore.connect(frozen_neo4j, "neo4j", "x", connection_timeout=3,
                                        max_retry_seconds=0)
    table = KeyTable(Neo4jKeyStore(frozen), wait_seconds=0.5, first_wait_seconds=0.5)
    try:
        with pytest.raises(RetryableDependencyError, match="did not answer within 0.5 s"):
            table.lookup(later)
    finally:
        table.close()
        frozen.close()
