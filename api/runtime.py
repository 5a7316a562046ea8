"""Wiring: the backends and the turn engine built from Settings.

Nothing here runs at import time; the CLI and the FastAPI lifespan call
:meth:`Runtime.build` and :meth:`Runtime.close`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from api.settings import Settings
from dialogue.engine import EngineConfig, TurnEngine
from dialogue.session_store import SessionStore
from dialogue.sqlite_store import SQLiteSessionStore
from kg.aliases import SnapshotCache
from kg.neo4j_admin import Neo4jOntologyAdmin
from kg.neo4j_store import Neo4jOntologyStore
from retrieval.milvus_index import MilvusIndex
from retrieval.retag import BackgroundRetagger
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
    return SQLiteSessionStore(settings.sqlite_path, ttl_seconds=settings.sessions.ttl_seconds)


@dataclass
class Runtime:
    """Everything a process needs to serve turns and admin requests."""

    settings: Settings
    ontology: Neo4jOntologyStore
    snapshots: SnapshotCache
    index: MilvusIndex
    sessions: SessionStore
    retriever: Retriever
    engine: TurnEngine
    admin: Neo4jOntologyAdmin = field(init=False)
    retagger: BackgroundRetagger = field(init=False)

    def __post_init__(self) -> None:
        self.admin = Neo4jOntologyAdmin(self.ontology, on_change=self.on_ontology_change)
        self.retagger = BackgroundRetagger(self.index, self._fresh_snapshot,
                                           self._stored_version)

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

    def on_ontology_change(self, kb: str, version: int | None) -> None:
        """After a write through this process: link with it at once, re-tag in the background."""
        self.snapshots.invalidate(kb)
        self.retagger.request(kb)

    def _fresh_snapshot(self, kb: str):
        self.snapshots.invalidate(kb)
        return self.snapshots.get(kb)

    def _stored_version(self, kb: str) -> int | None:
        state = self.ontology.kb_state(kb)
        return state.version if state is not None else None

    def close(self) -> None:
        self.retagger.close()
        self.sessions.close()
        self.index.close()
        self.ontology.close()
