"""Wiring: the backends and the turn engine built from Settings.

Nothing here runs at import time; the CLI and the FastAPI lifespan call
:meth:`Runtime.build` and :meth:`Runtime.close`.
"""

from __future__ import annotations

from dataclasses import dataclass

from api.settings import Settings
from dialogue.engine import EngineConfig, TurnEngine
from dialogue.session_store import SessionStore
from dialogue.sqlite_store import SQLiteSessionStore
from kg.aliases import SnapshotCache
from kg.neo4j_store import Neo4jOntologyStore
from retrieval.milvus_index import MilvusIndex
from retrieval.search import Retriever


def open_ontology_store(settings: Settings) -> Neo4jOntologyStore:
    store = Neo4jOntologyStore.connect(settings.neo4j_uri, settings.neo4j.user,
                                       settings.neo4j.password, settings.neo4j.database)
    store.ensure_schema()
    return store


def open_index(settings: Settings) -> MilvusIndex:
    if settings.milvus.uri is None:
        settings.data_dir.mkdir(parents=True, exist_ok=True)
    return MilvusIndex(settings.milvus_uri, token=settings.milvus.token,
                       collection_prefix=settings.milvus.collection_prefix,
                       batch_bytes=settings.retrieval.insert_batch_bytes)


def open_session_store(settings: Settings) -> SessionStore:
    """SQLite (embedded default) or Redis (shared by several API instances)."""
    if settings.sessions.backend == "redis":
        from dialogue.redis_store import RedisSessionStore

        return RedisSessionStore(settings.sessions.redis_url,
                                 ttl_seconds=settings.sessions.ttl_seconds)
    return SQLiteSessionStore(settings.sqlite_path, ttl_seconds=settings.sessions.ttl_seconds)


@dataclass
class Runtime:
    """Everything a process needs to serve turns."""

    settings: Settings
    ontology: Neo4jOntologyStore
    snapshots: SnapshotCache
    index: MilvusIndex
    sessions: SessionStore
    retriever: Retriever
    engine: TurnEngine

    @classmethod
    def build(cls, settings: Settings) -> Runtime:
        ontology = open_ontology_store(settings)
        index = open_index(settings)
        sessions = open_session_store(settings)
        snapshots = SnapshotCache(ontology)
        retriever = Retriever(index, min_filtered_hits=settings.retrieval.min_filtered_hits)
        engine = TurnEngine(snapshots, retriever, sessions, EngineConfig(
            top_k=settings.retrieval.top_k, recent_turns=settings.sessions.recent_turns,
            consumed_window=settings.sessions.consumed_window))
        return cls(settings, ontology, snapshots, index, sessions, retriever, engine)

    def close(self) -> None:
        self.sessions.close()
        self.index.close()
        self.ontology.close()
