from dialogue.engine import EngineConfig, TurnEngine
from dialogue.session_store import SessionStore
from kg.aliases import SnapshotCache
from kg.memory_store import InMemoryOntologyStore
from retrieval.entity_facts import EntityFactsCache
from retrieval.ingest import ingest_corpus
from retrieval.memory_index import InMemoryIndex
from retrieval.search import Retriever
from tests.unit.kg.conftest import snapshot  # noqa: F401  (shared fixture)


def in_memory_engine(kb: str, ontology: list[str], corpus: list[str],
                     sessions: SessionStore, *, facts: bool = False) -> TurnEngine:
    """A turn engine over the in-memory ontology store and index, with ``kb`` imported
    from ``ontology`` and ``corpus`` (JSON lines) as import and ingest do; with
    ``facts``, it reads what the corpus states of each entity, as the server does."""
    store = InMemoryOntologyStore()
    store.import_ontology(kb, ontology)
    snapshots = SnapshotCache(store)
    index = InMemoryIndex()
    ingest_corpus(kb, corpus, index=index, snapshot=snapshots.get(kb))
    return TurnEngine(snapshots, Retriever(index), sessions, EngineConfig(),
                      facts=EntityFactsCache(index) if facts else None)
