from dialogue.engine import EngineConfig, TurnEngine
from dialogue.policy.clarify_model import ClarifyModel, ClarifyParams, FeatureExtractor
from dialogue.session_store import SessionStore
from kg.aliases import SnapshotCache
from kg.memory_store import InMemoryOntologyStore
from retrieval.entity_facts import EntityFactsCache
from retrieval.ingest import ingest_corpus
from retrieval.memory_index import InMemoryIndex
from retrieval.search import Retriever
from tests.unit.kg.conftest import snapshot  # noqa: F401  (shared fixture)


def in_memory_engine(kb: str, ontology: list[str], corpus: list[str],
                     sessions: SessionStore, *, facts: bool = False,
                     clarify_model: bool = False) -> TurnEngine:
    """A turn engine over the in-memory ontology store and index, with ``kb`` imported
    from ``ontology`` and ``corpus`` (JSON lines) as import and ingest do; with
    ``facts``, it reads what the corpus states of each entity, as the server does; with
    ``clarify_model``, the shipped clarify-or-resolve model decides what the linker
    leaves open, as the server does by default (its lexical set: no embedder here; its
    chunk features read the in-memory index), instead of the linker's fit margin."""
    store = InMemoryOntologyStore()
    store.import_ontology(kb, ontology)
    snapshots = SnapshotCache(store)
    index = InMemoryIndex()
    ingest_corpus(kb, corpus, index=index, snapshot=snapshots.get(kb))
    clarifier = None
    if clarify_model:
        def chunk_search(kb_: str, query: str, entity_id: str):
            return [(h.score, h.text) for h in index.search(kb_, query, limit=3,
                                                            entity_ids=[entity_id])]

        clarifier = ClarifyModel(ClarifyParams.load(),
                                 extractor=FeatureExtractor(chunk_search=chunk_search))
    return TurnEngine(snapshots, Retriever(index), sessions, EngineConfig(), clarifier=clarifier,
                      facts=EntityFactsCache(index) if facts else None)
