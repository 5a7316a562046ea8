"""Shared fixtures. Integration tests talk to the real services `.ci/run` starts:
Neo4j at REFERENT_NEO4J__URI (default: the local one, `referent neo4j start`),
Milvus Lite in a temporary file, SQLite in a temporary file."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DEMO = REPO / "ontology" / "demo"

# Test-only keys: the app under test is given their hashes (never the keys).
ADMIN_KEY = "rk_test_admin_key_for_the_suite_only_0001"
QUERY_KEY = "rk_test_query_key_for_the_suite_only_0002"
ADMIN = {"Authorization": f"Bearer {ADMIN_KEY}"}
QUERY = {"Authorization": f"Bearer {QUERY_KEY}"}


def auth_settings_json() -> str:
    """REFERENT_AUTH__KEYS for a server process started by a test."""
    import json

    from api.auth import hash_key

    return json.dumps([{"name": "test-admin", "role": "admin", "hash": hash_key(ADMIN_KEY)},
                       {"name": "test-query", "role": "query", "hash": hash_key(QUERY_KEY)}])


@pytest.fixture(scope="session")
def keyring():
    from api.auth import KeyRing, hash_key
    from api.settings import ApiKeySetting

    return KeyRing([ApiKeySetting(name="test-admin", role="admin", hash=hash_key(ADMIN_KEY)),
                    ApiKeySetting(name="test-query", role="query", hash=hash_key(QUERY_KEY))])


@pytest.fixture(scope="session")
def settings(tmp_path_factory):
    from api.settings import Settings

    data = tmp_path_factory.mktemp("referent-data")
    # The suite's in-process clients send hundreds of requests a second with one key;
    # tests/integration/test_rate_limit.py tests the limit with settings of its own.
    return Settings(data_dir=data, rate_limit={"per_key_per_second": 0})


@pytest.fixture(scope="session")
def neo4j_store(settings):
    from api.runtime import open_ontology_store

    store = open_ontology_store(settings)
    store.verify()
    yield store
    store.close()


@pytest.fixture
def kb(neo4j_store, milvus_index):
    """A fresh, isolated knowledge base name, removed afterwards."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    neo4j_store.delete_kb(name)
    milvus_index.drop(name)


@pytest.fixture(scope="session")
def milvus_index(settings):
    from api.runtime import open_index

    index = open_index(settings)
    yield index
    index.close()


@pytest.fixture(scope="module")
def lite_uri(tmp_path_factory) -> str:
    """A Milvus Lite file of the test module's own, for tests that open a second client
    on it (what another process reads back, other batch bounds)."""
    return str(tmp_path_factory.mktemp("milvus") / "referent.db")


@pytest.fixture(scope="module")
def lite_index(lite_uri):
    """The module's own Milvus Lite index (see ``lite_uri``)."""
    from retrieval.milvus_index import MilvusIndex

    index = MilvusIndex(lite_uri)
    yield index
    index.close()


@pytest.fixture
def lite_kb(lite_index):
    """A fresh kb name on the module's own index, with no collection yet; dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    lite_index.drop(name)


@pytest.fixture(scope="session")
def demo_kb(neo4j_store, milvus_index, settings):
    """The demo ontology and corpus loaded once into a kb of their own."""
    from kg.aliases import SnapshotCache
    from retrieval.ingest import ingest_corpus

    name = f"t_demo_{uuid.uuid4().hex[:8]}"
    lines = (DEMO / "ontology.jsonl").read_text(encoding="utf-8").splitlines()
    neo4j_store.import_ontology(name, lines)
    snapshot = SnapshotCache(neo4j_store).get(name)
    ingest_corpus(name, (DEMO / "corpus.jsonl").read_text(encoding="utf-8").splitlines(),
                  index=milvus_index, snapshot=snapshot)
    yield name
    milvus_index.drop(name)
    neo4j_store.delete_kb(name)
    milvus_index.drop(name)


@pytest.fixture(scope="session")
def runtime(settings, neo4j_store, milvus_index):
    """A Runtime sharing the session's store and index (one Milvus Lite process per file)."""
    from api.runtime import Runtime, open_session_store
    from dialogue.engine import EngineConfig, TurnEngine
    from kg.aliases import SnapshotCache
    from retrieval.entity_facts import EntityFactsCache
    from retrieval.search import Retriever

    sessions = open_session_store(settings)
    snapshots = SnapshotCache(neo4j_store, check_interval=0.0)
    retriever = Retriever(milvus_index)
    engine = TurnEngine(snapshots, retriever, sessions, EngineConfig(),
                        facts=EntityFactsCache(milvus_index))
    built = Runtime(settings, neo4j_store, snapshots, milvus_index, sessions, retriever, engine)
    yield built
    built.clarifications.close()
    built.retagger.close()
    sessions.close()
