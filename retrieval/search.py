"""Search for one turn: several queries → the turn's evidence, each chunk once.

Per query:

1. BM25 (and, with an embedder, a dense search) over the kb, inside the entity
   filter and outside the excluded chunks/documents (the session's consumed
   window, passed in by the caller: retrieval knows nothing of sessions).
2. When the filter leaves fewer than ``min_filtered_hits`` documents, the same
   searches run without it and the filter becomes a boost: entity-tagged
   chunks are lifted above every untagged one (``RELAXED_ENTITY_BOOST``)
   instead of being the only ones allowed, so untagged chunks only fill the
   places left. The trace says ``relaxed_to_boost``. When the keyword search
   found none of the entities' own passages at all (a Chinese question about
   a course whose page is in English), the filtered keyword search runs once
   more with the entities' names in the other script (``names_in_filter``;
   keyword search alone: a dense search finds those passages by itself).
3. BM25 and dense rankings are fused by reciprocal rank fusion
   (``retrieval.fusion``): in one hybrid request to the index, or here when
   the rankings had to be fetched apart (a starving filter, a pool a few
   documents fill: ``Retriever._one_request``). The fused score, or BM25's
   alone, is rescaled so the best hit is 1.0.
4. An optional cross-encoder (``POST /rerank``) reorders the pool; on a
   timeout or a bad answer the pool keeps its order and the trace says why.
5. The entity- and time-aware rerank.

Then across queries: at most ``chunks_per_doc`` chunks per document while
documents last (further chunks fill places no other document can), near-
duplicate passages dropped, the best ``k`` kept, and a no-answer decision:
when the best evidence covers less than ``no_answer_threshold`` of the
query's content (see :func:`coverage`), the turn returns nothing rather than
weak evidence.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from common.errors import ConfigurationError, DependencyError
from common.language import cues
from common.language.normalize import normalize
from retrieval.cross_encoder import Reranker
from retrieval.dedup import drop_near_duplicates
from retrieval.embedders import Embedder, embed_queries
from retrieval.fusion import rescaled, rrf
from retrieval.history import Carried, CarryConfig, carry_weight, fuse_by_document, history_query
from retrieval.index import VectorIndex
from retrieval.models import Chunk, Hit
from retrieval.novelty import (HOLDS_NEW_WORDS, NOVELTY_MIN_GAIN, NOVELTY_MOST, NOVELTY_RANK,
                               REPEAT_REASONS, TIE_LEAD, Shown, StatsCache, TermStats, admit,
                               editions, repeat_reason, unknown_editions)
from retrieval.request import SearchRequest
from retrieval.rerank import EntityAwareReranker
from retrieval.unanswerable import unknown_future, unknown_things

# Chunks fetched per query for the rerank to choose from, as a multiple of k. They
# are fetched ungrouped so the rerank can pick the best chunk of a document, not
# only the one BM25 liked; the per-document cap is enforced after the rerank.
POOL_FACTOR = 4

# Added to entity-tagged hits when the entity filter was relaxed: more than every other
# score component together (fused score ≤ 1, time ≤ 0.5, entity 0.2, so any tagged hit
# outranks any untagged one), so untagged chunks only fill the places tagged ones leave.
RELAXED_ENTITY_BOOST = 2.0

# How long a kb seen to exist is not asked about again (has_kb).
KB_SEEN_SECONDS = 5.0

# Characters that carry no topic: question words, particles, pronouns. A query
# bigram made only of these does not count towards coverage.
_FUNCTION_CHARS = cues.FUNCTION_CHARS


@dataclass(frozen=True)
class RetrieverConfig:
    """How a turn's evidence is chosen; defaults are the documented ones (docs/retrieval.md)."""

    min_filtered_hits: int = 3
    chunks_per_doc: int = 1
    near_duplicate_cosine: float = 0.95
    near_duplicate_shingles: float = 0.8
    rrf_k: int = 60
    no_answer_threshold: float = 0.15
    cross_encoder_top_n: int = 20
    pool_factor: int = POOL_FACTOR
    # A chunk shown earlier comes back only when it holds this share of the turn's new
    # question words and ranks within the first this many of its evidence, ahead of the
    # unseen ones (retrieval/novelty.py).
    novelty_rank: int = NOVELTY_RANK
    # ... and within the first this many for a turn that resolved no entity: its pool is the
    # whole kb, where the unseen candidates below a shown chunk that holds the new words
    # are mostly off the topic, not other passages about it (retrieval/history.py).
    novelty_rank_unlinked: int = 5
    novelty_min_gain: float = NOVELTY_MIN_GAIN
    # At most this many shown chunks come back in a turn that resolved an entity (a revisit
    # excepted): the best answer to what is new; others that answer it as well only repeat.
    novelty_most: int = NOVELTY_MOST
    # A turn that links no entity is searched with the previous turn's query too, that
    # ranking weighted by how much the turn needs it (retrieval/history.py).
    carry: CarryConfig = field(default_factory=CarryConfig)


@dataclass(frozen=True)
class Found:
    """A hit and the query that found it."""

    hit: Hit
    query: str
    # The turn that showed this chunk before, when it comes back (novelty).
    seen_in_turn: int | None = None


@dataclass(frozen=True)
class SearchOutcome:
    """The turn's evidence, best first, and what happened on the way (``trace``).

    ``no_answer`` is True when evidence was found but judged too weak (then
    ``found`` is empty) or when nothing was found at all. ``strength`` is the
    best evidence's coverage of its query, in [0, 1]; a shown chunk that came back
    rather than no answer only for being about the turn's entities does not count
    (``retrieval/dual_path.py`` then also searches the user's own words).
    """

    found: tuple[Found, ...]
    trace: dict[str, Any] = field(default_factory=dict)
    no_answer: bool = False
    strength: float = 0.0


def content_units(text: str) -> frozenset[str]:
    """The query's content bigrams after normalization (function-word pairs left out)."""
    norm = normalize(text)
    if len(norm) < 2:
        return frozenset({norm}) if norm and norm not in _FUNCTION_CHARS else frozenset()
    return frozenset(norm[i:i + 2] for i in range(len(norm) - 1)
                     if not (norm[i] in _FUNCTION_CHARS and norm[i + 1] in _FUNCTION_CHARS))


def coverage(query: str, hit: Hit) -> float:
    """Share of the query's content bigrams found in the hit's title or text, in [0, 1].

    BM25 scores are unbounded and depend on the corpus and the query length, so
    a no-answer threshold cannot sit on them; coverage is bounded, comparable
    across queries and kbs, and low exactly when the best passage shares little
    more than a word or two with the question. A query with no content bigrams
    (``嗯嗯``) counts as fully covered: there is nothing to judge it by.
    """
    units = content_units(query)
    haystack = normalize(f"{hit.title}\n{hit.text}")
    if not re.search(r"[a-z]{2}", haystack):
        # A passage without English cannot hold the English words of a mixed question:
        # they are judged by the rest (the dense path, if any, matched their meaning).
        units = frozenset(u for u in units if not re.search(r"[a-z]", u))
    if not units:
        return 1.0
    return sum(1 for unit in units if unit in haystack) / len(units)


class Retriever:
    """Composes index searches, fusion, rerank and dedup into one turn's evidence.

    Args:
        index: the kb's chunk store.
        config: thresholds and limits.
        embedder: dense query embeddings; None for BM25 only.
        kb_embedder: with no ``embedder``, maps the embedder name a kb was built with to
            one that can embed its queries (None: refuse as for any mismatch), so a kb
            ingested with the bundled e5 is searched with it whatever the process set.
        cross_encoder: an optional ``/rerank`` endpoint.
        reranker: the entity-aware rerank (its confusable map may be given per search).
    """

    def __init__(self, index: VectorIndex, *, config: RetrieverConfig | None = None,
                 embedder: Embedder | None = None, cross_encoder: Reranker | None = None,
                 reranker: EntityAwareReranker | None = None,
                 min_filtered_hits: int | None = None,
                 kb_embedder: Callable[[str], Embedder | None] | None = None) -> None:
        config = config or RetrieverConfig()
        if min_filtered_hits is not None:
            config = replace(config, min_filtered_hits=min_filtered_hits)
        self._index = index
        self._config = config
        self._embedder = embedder
        # With no embedder configured: the embedder for a kb built with one (by its
        # recorded name), when this process can run it (the bundled e5), else None.
        self._kb_embedder = kb_embedder
        self._cross = cross_encoder
        self._reranker = reranker or EntityAwareReranker()
        self._stats = StatsCache(index)
        # kb -> when its collection was last seen to exist (has_kb)
        self._seen: dict[str, float] = {}

    @property
    def config(self) -> RetrieverConfig:
        return self._config

    def incomplete(self, kb: str) -> dict | None:
        """The record of an unfinished ingest into ``kb`` (None: complete, or unknown
        because the store did not answer: the search itself will say so)."""
        try:
            return self._index.incomplete(kb)
        except DependencyError:
            return None

    def warm_up(self, kb: str) -> None:
        """Load what searching ``kb`` needs besides its collection: the embedder it was
        built with (the bundled e5 is read from disk on first use), by embedding a query."""
        embedder = self._check_embedder(kb)
        if embedder is not None:
            embedder.embed_query("warm-up")

    def has_kb(self, kb: str) -> bool:
        """Whether anything was ingested into ``kb``. A kb found is remembered for
        ``KB_SEEN_SECONDS`` (every turn of a kb without an ontology asks; a kb dropped
        meanwhile fails in its search, with the store's not-found error)."""
        seen = self._seen.get(kb)
        if seen is not None and time.monotonic() - seen < KB_SEEN_SECONDS:
            return True
        found = self._index.has_collection(kb)
        if found:
            self._seen[kb] = time.monotonic()
        return found

    def chunks(self, kb: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The stored chunks of ``kb`` with these ids (those still stored)."""
        return self._index.get_chunks(kb, list(chunk_ids)) if chunk_ids else []

    def search(self, kb: str, request: SearchRequest) -> SearchOutcome:
        """Search every query of ``request`` and return its best ``k`` chunks (the
        request's fields say what each input does: ``retrieval/request.py``).

        Raises:
            ConfigurationError: the configured embedder is not the one the kb was built with.
            DependencyError: Milvus failed (an embedder or cross-encoder failure
                only degrades the search; the trace says so).
        """
        cfg = self._config
        queries, k, entity_ids = request.queries, request.k, request.entity_ids
        exclude_chunk_ids, exclude_doc_ids = request.exclude_chunk_ids, request.exclude_doc_ids
        shown, intent, history = request.readmittable, request.intent, request.context
        names, abstain, previous = request.names, request.abstain, request.known
        embedder = self._check_embedder(kb)
        use_dense = embedder is not None
        trace: dict[str, Any] = {
            "queries": [], "entity_filter": list(entity_ids),
            "excluded": len(exclude_chunk_ids), "excluded_docs": len(exclude_doc_ids),
            "fusion": f"rrf(k={cfg.rrf_k})" if use_dense else "bm25",
        }
        excluded = list(dict.fromkeys(exclude_chunk_ids))
        hard = set(excluded)
        competing = {s.chunk_id: s for s in shown if s.chunk_id not in hard}
        if intent == "more" and competing:
            # "还有呢 / what else": everything shown stays out.
            excluded.extend(competing)
            competing = {}
        carries = history is not None and bool(history.earlier) and not entity_ids
        stats = self.term_stats(kb) if competing or carries else None
        searched = self._with_history(list(queries), history if carries else None, stats, trace)
        if names:
            searched = [(_with_other_names(q, entity_ids, names), asked, w)
                        for q, asked, w in searched]
            trace["names_added"] = [q for q, _, _ in searched if q not in queries]
        pool = k * cfg.pool_factor if request.rerank else k
        # Shown chunks are not excluded, so they may take places in the pool.
        pool += min(len(competing), pool)
        reranker = (EntityAwareReranker(request.confusable) if request.confusable is not None
                    else self._reranker)
        unseen: list[Found] = []
        # Shown chunks the searches found again, each with its showing record and the
        # question the query that found it asks.
        again: list[tuple[Found, Shown, str]] = []
        novelty: dict[str, Any] = {"intent": intent, "shown": len(competing), "returned": [],
                                   "left_out": 0} if shown or intent != "new" else {}
        pools: list[list[Hit]] = []
        vectors, failed = self._embed_all(embedder, [q for q, _, _ in searched])
        for (query, _, _), vector in zip(searched, vectors, strict=True):
            q_trace: dict[str, Any] = {"query": query}
            if failed:
                q_trace["dense"] = f"skipped, BM25 only: {failed}"
            hits = self._query_pool(kb, query, vector, pool, k, entity_ids, excluded,
                                    exclude_doc_ids, q_trace, names=names)
            if request.rerank:
                hits = self._cross_encode(query, hits, q_trace)
                hits = reranker.rerank(query, hits, entity_ids=entity_ids)
            if q_trace.get("entity_filter") == "relaxed_to_boost":
                hits = _lift_tagged(hits, entity_ids)
            q_trace["hits"] = len(hits)
            trace["queries"].append(q_trace)
            pools.append(hits)
        # A turn that resolved no entity searched the whole kb: a shown chunk among the first
        # k its own words find answers those words, however they are spelled (Android for
        # 安卓), and comes back like one that holds the new words.
        unlinked = not entity_ids if request.linked is None else not request.linked
        answers_own = _first_documents(pools[0], k) if pools and unlinked else set()
        rankings: list[tuple[list[Found], float]] = []
        for (query, asked, weight), hits in zip(searched, pools, strict=True):
            candidates: list[Found] = []
            rankings.append((candidates, weight))
            for hit in hits:
                before = competing.get(hit.chunk_id)
                if before is None:
                    item = Found(hit, query)
                    unseen.append(item)
                else:
                    item = Found(hit, query, seen_in_turn=before.turn)
                    again.append((item, before, asked))
                candidates.append(item)
        by_score = lambda f: (-f.hit.score, f.hit.chunk_id)  # noqa: E731
        let_back: set[str] = set()
        if again:
            assert stats is not None
            rivals = _per_document(sorted(unseen, key=by_score), cfg.chunks_per_doc)[:k]
            let_back = admit([(f.hit, before, asked) for f, before, asked in again],
                             [f.hit for f in rivals], stats, intent=intent,
                             min_gain=cfg.novelty_min_gain, entity_ids=entity_ids,
                             previous=previous, tie_lead=0.0 if use_dense else TIE_LEAD)
            if intent != "revisit":
                let_back |= {f.hit.chunk_id for f, _, _ in again} & answers_own
            novelty["left_out"] += len({f.hit.chunk_id for f, _, _ in again} - let_back)
        rankings = [([f for f in items if f.seen_in_turn is None or f.hit.chunk_id in let_back],
                     weight) for items, weight in rankings]
        back = [f for f, _, _ in again if f.hit.chunk_id in let_back]
        if len(searched) > len(queries):
            # The turn's own ranking and the one after the previous turn's query, per document.
            fused = fuse_by_document(rankings, lambda f: f.hit)
            ranked = [replace(f, hit=replace(f.hit, score=round(score, 6))) for f, score in fused]
        else:
            ranked = sorted([*unseen, *back], key=by_score)
        if intent == "revisit":
            # "再给我看看 / show me that again" asks for what was shown: it goes first.
            ranked.sort(key=lambda f: f.seen_in_turn is None)
        everything = ranked
        ranked, overflow = _per_document(everything, cfg.chunks_per_doc, overflow=True)
        if intent != "revisit" and competing:
            top = cfg.novelty_rank_unlinked if unlinked else cfg.novelty_rank
            most = top if unlinked else cfg.novelty_most
            kept, demoted = _novel_first(ranked, top, most)
            gone: set[str] = set()
            while len(kept) < len(ranked):
                # A shown chunk that leaves its place leaves its document's place too: the
                # document's next chunk (unseen: the price list's second passage when its
                # first was shown) competes for it, rather than the document vanishing.
                gone |= {f.hit.chunk_id for f in ranked} - {f.hit.chunk_id for f in kept}
                ranked, overflow = _per_document(
                    [f for f in everything if f.hit.chunk_id not in gone],
                    cfg.chunks_per_doc, overflow=True)
                kept, more = _novel_first(ranked, top, most)
                demoted += more
            ranked = kept
            if novelty and demoted:
                novelty["left_out"] += demoted
        if len(ranked) < k:
            # Fewer documents than places: further unseen chunks of the same documents fill
            # them rather than leave them empty. (Shown chunks the first place left out stay
            # out: letting them fill added repeats on enterprise-dev and no hit.)
            ranked += [f for f in overflow if f.seen_in_turn is None][:k - len(ranked)]
        kept_hits, dropped = drop_near_duplicates(
            [f.hit for f in ranked], cosine_at=cfg.near_duplicate_cosine,
            shingles_at=cfg.near_duplicate_shingles, keep=k)
        if dropped:
            trace["near_duplicates_dropped"] = [{"dropped": d, "kept": kept} for d, kept in dropped]
        kept_ids = {h.chunk_id for h in kept_hits}
        found = [f for f in ranked if f.hit.chunk_id in kept_ids][:k]
        found = [replace(f, hit=replace(f.hit, vector=None)) for f in found]
        if novelty:
            novelty["returned"] = [{"chunk_id": f.hit.chunk_id, "seen_in_turn": f.seen_in_turn}
                                   for f in found if f.seen_in_turn is not None]
            trace["novelty"] = novelty
        strength = max((self._coverage(f, queries[0], trace) for f in found), default=0.0)
        # A revisit asks for what was found before: it never abstains.
        threshold = cfg.no_answer_threshold if abstain and intent != "revisit" else 0.0
        reported = strength
        if intent == "new" and again and (not found or strength < threshold):
            # The unseen evidence is too weak to answer, but a shown chunk is the turn's
            # best match: showing it again (marked) beats answering nothing.
            repeat = _rather_than_nothing(again, found, unseen, strength, stats,
                                          entity_ids=entity_ids, names=names, previous=previous)
            if repeat is not None:
                best, covers, why = repeat
                if why == HOLDS_NEW_WORDS:
                    # Only a passage that holds the asked words is evidence that the
                    # rewrite read the question right; one about its entities is not, so
                    # the dual path still searches the user's own words.
                    reported = covers
                found, strength = [best, *found][:k], covers
                novelty["returned_rather_than_abstain"] = best.hit.chunk_id
                novelty["returned"] = [*novelty.get("returned", []), {
                    "chunk_id": best.hit.chunk_id, "seen_in_turn": best.seen_in_turn,
                    "why": f"rather than no answer: nothing unseen answers, and it {why}"}]
        weak = bool(found) and strength < threshold
        # A question about an edition the kb never names (8.0版, 2023年, 钻石版): what was
        # found is about the editions it does hold.
        unknown = (unknown_editions(queries[0], self.term_stats(kb))
                   if found and abstain and intent == "new" and queries and editions(queries[0])
                   else [])
        # A thing a named entity does not have (锦绣卡有没有钻石版): what was found is about
        # what it has (retrieval/unanswerable.py).
        things = (unknown_things(queries[0], self.term_stats(kb),
                                 [n for e in entity_ids for n in (names or {}).get(e, ())])
                  if abstain and intent == "new" and queries and names and entity_ids else [])
        # What will happen at a later time no passage writes of (明年会涨价吗): what was
        # found states what holds now.
        # "Now" is read off the passages the turn's own query found about its entities,
        # shown before or not.
        future = (unknown_future(queries[0], _about(pools[0] if pools else [], entity_ids, k),
                                 self.term_stats(kb))
                  if found and abstain and intent == "new" and queries else [])
        weak = weak or bool(unknown) or bool(things) or bool(future)
        trace["no_answer"] = {"strength": round(strength, 4), "threshold": threshold,
                              "abstained": weak}
        if unknown:
            trace["no_answer"]["unknown_editions"] = unknown
        if things:
            trace["no_answer"]["unknown_things"] = things
        if future:
            trace["no_answer"]["unknown_future"] = future
        if weak:
            trace["no_answer"]["withheld"] = [f.hit.chunk_id for f in found]
            found = []
        return SearchOutcome(found=tuple(found), trace=trace, no_answer=not found,
                             strength=reported if found else strength)

    # -- steps -------------------------------------------------------------------------

    def term_stats(self, kb: str) -> TermStats:
        """Document frequencies of the kb's words (built once, refreshed when it grows)."""
        return self._stats.get(kb)

    def _with_history(self, queries: list[str], history: Carried | None,
                      stats: TermStats | None,
                      trace: dict[str, Any]) -> list[tuple[str, str, float]]:
        """(query searched, question it asks, weight) triples: the queries themselves
        (weight 1), and for a turn that resolved no entity, the first one after the
        previous turn's query, weighted by how much the turn needs it (0: not searched)."""
        triples = [(q, q, 1.0) for q in queries]
        if history is None or stats is None or not queries:
            return triples
        carry = self._config.carry
        decided: dict[str, Any] = {}
        weight = carry_weight(queries[0], history, stats, carry, decided)
        searched = history_query(queries[0], history, carry)
        if weight <= 0 or searched == queries[0]:
            return triples
        trace["history"] = {"query": searched, **decided}
        return [*triples, (searched, queries[0], weight)]

    @staticmethod
    def _coverage(found: Found, own: str, trace: Mapping[str, Any]) -> float:
        """How well the evidence covers the question. Evidence found after the previous
        turn's query is judged by what the turn asks: its own words, or, for a follow-up
        (which says little by itself), its own words after the previous turn's."""
        history = trace.get("history")
        if not history or found.query != history["query"]:
            return coverage(found.query, found.hit)
        best = coverage(own, found.hit)
        if history["follow_up"]:
            best = max(best, coverage(found.query, found.hit))
        return best

    def _check_embedder(self, kb: str) -> Embedder | None:
        """The embedder to search ``kb``'s dense vectors with (None: BM25 only); refuse
        an embedder the kb was not built with."""
        recorded = self._index.dense_spec(kb)
        configured = self._embedder.name if self._embedder is not None else None
        if recorded is None and configured is None:
            return None
        if recorded is not None and recorded.embedder == configured:
            return self._embedder
        if recorded is not None and configured is None and self._kb_embedder is not None:
            follow = self._kb_embedder(recorded.embedder)
            if follow is not None and follow.dim == recorded.dim:
                return follow
        built = "no embedder (BM25 only)" if recorded is None else \
            f"embedder {recorded.embedder!r} ({recorded.dim} dimensions)"
        now = "no embedder" if configured is None else f"embedder {configured!r}"
        raise ConfigurationError(
            f"knowledge base {kb!r} was ingested with {built}, but {now} is configured: set "
            "REFERENT_EMBED__BACKEND / REFERENT_EMBED__MODEL to what the kb was built with, "
            "or re-ingest it into a fresh kb")

    @staticmethod
    def _embed_all(embedder: Embedder | None,
                   queries: list[str]) -> tuple[list[Sequence[float] | None], str | None]:
        """Every query's vector, in one batch (one model call or one HTTP request; texts
        embedded before come from the embedder's memo), and why there are none: all None
        for BM25 only, or when the embedder failed (the error, then)."""
        if embedder is None or not queries:
            return [None] * len(queries), None
        try:
            return list(embed_queries(embedder, queries)), None
        except DependencyError as exc:
            return [None] * len(queries), str(exc)

    def _query_pool(self, kb: str, query: str, vector: tuple[float, ...] | None, pool: int,
                    min_docs: int, entity_ids: Sequence[str], exclude_chunk_ids: Sequence[str],
                    exclude_doc_ids: Sequence[str], q_trace: dict[str, Any], *,
                    names: Mapping[str, Sequence[str]] | None = None) -> list[Hit]:
        """The query's candidate pool (steps 1-3 of the module's docstring). ``names``
        (entity → its names) are added in every script to the keyword search inside the
        filter when the query's own words find none of the entities' passages."""
        if vector is not None and query.strip():
            fused = self._one_request(kb, query, vector, pool, min_docs, entity_ids,
                                      exclude_chunk_ids, exclude_doc_ids, q_trace)
            if fused is not None:
                return rescaled(fused)
        want_vectors = vector is not None

        def topped_up(search, entities: Sequence[str], **extra: Any) -> list[Hit]:
            # The pool is fetched ungrouped so the rerank can choose among a document's
            # chunks; when a few long documents fill it, a grouped search adds the best
            # chunk of further documents, so a turn still gets k different documents.
            hits = search(limit=pool, entity_ids=entities, group_by_doc=False, **extra)
            if len(hits) == pool and len({h.doc_id for h in hits}) < min_docs:
                grouped = search(limit=min(pool, 2 * min_docs), entity_ids=entities,
                                 group_by_doc=True, **extra)
                hits = _merge(hits, grouped)
                q_trace["topped_up"] = True
            return hits

        def rankings(entities: Sequence[str], words: str = query) -> list[list[Hit]]:
            common = {"exclude_chunk_ids": exclude_chunk_ids, "exclude_doc_ids": exclude_doc_ids}
            found = [topped_up(lambda **kw: self._index.search(kb, words, **kw), entities,
                               with_vectors=want_vectors, **common)]
            if vector is not None:
                found.append(topped_up(lambda **kw: self._index.dense_search(kb, vector, **kw),
                                       entities, with_vectors=True, **common))
            return found

        ranked = rankings(entity_ids)
        if entity_ids and vector is None and not ranked[0] and names:
            # None of the entities' passages holds a word of the question: they may be
            # written in the other language. Their names in it find them, ranked by
            # whatever else of the query they hold (the rerank decides among them). A
            # dense search needs no such help: it finds them inside the filter.
            named = _with_other_names(query, entity_ids, names, any_script=True)
            if named != query:
                ranked[0] = rankings(entity_ids, named)[0]
                q_trace["names_in_filter"] = named
        if entity_ids:
            docs = len({h.doc_id for r in ranked for h in r})
            q_trace["filtered_docs"] = docs
            if docs < self._config.min_filtered_hits:
                # Too few inside the filter: search everything, keep the filtered hits
                # too (they may sit below the unfiltered pool's cut), and let the
                # entity-aware rerank lift the tagged ones.
                wide = rankings(())
                ranked = [_merge(narrow, broad) for narrow, broad in zip(ranked, wide, strict=True)]
                q_trace["entity_filter"] = "relaxed_to_boost"
            else:
                q_trace["entity_filter"] = "applied"
        q_trace["bm25"] = len(ranked[0])
        if vector is not None:
            q_trace["dense"] = len(ranked[1])
            return rrf(ranked, k=self._config.rrf_k)
        return rescaled(ranked[0])

    def _one_request(self, kb: str, query: str, vector: tuple[float, ...], pool: int,
                     min_docs: int, entity_ids: Sequence[str], exclude_chunk_ids: Sequence[str],
                     exclude_doc_ids: Sequence[str], q_trace: dict[str, Any]) -> list[Hit] | None:
        """The hybrid query's pool from one request (BM25 and dense fused by the index), or
        None when the separate rankings are needed: when the entity filter leaves fewer
        than ``min_filtered_hits`` documents (each ranking is then relaxed on its own), and
        when a full pool holds fewer than ``min_docs`` documents (a ranking a few long
        documents fill is topped up with a grouped search, which hybrid search cannot do).
        The one request cannot tell a ranking's own documents apart: a ranking with too few
        documents is not topped up when the other one already brings enough."""
        fused = self._index.hybrid_search(
            kb, query, vector, limit=pool, entity_ids=entity_ids, rrf_k=self._config.rrf_k,
            exclude_chunk_ids=exclude_chunk_ids, exclude_doc_ids=exclude_doc_ids,
            with_vectors=True)
        docs = len({h.doc_id for h in fused})
        if entity_ids and docs < self._config.min_filtered_hits:
            q_trace["hybrid"] = "separate requests: the entity filter starves"
            return None
        if len(fused) >= pool and docs < min_docs:
            q_trace["hybrid"] = "separate requests: a few documents fill the pool"
            return None
        q_trace["hybrid"] = "one request"
        q_trace["fused"] = len(fused)
        if entity_ids:
            q_trace["filtered_docs"] = docs
            q_trace["entity_filter"] = "applied"
        return fused

    def _cross_encode(self, query: str, hits: list[Hit], q_trace: dict[str, Any]) -> list[Hit]:
        """Reorder the top of the pool by the cross-encoder; fall back to the pool's order."""
        if self._cross is None or not hits:
            return hits
        head, tail = hits[:self._config.cross_encoder_top_n], hits[self._config.cross_encoder_top_n:]
        try:
            scores = self._cross.scores(query, [f"{h.title}\n{h.text}" for h in head])
        except DependencyError as exc:
            q_trace["cross_encoder"] = f"failed, fused order kept: {exc}"
            return hits
        q_trace["cross_encoder"] = self._cross.name
        lo, hi = min(scores), max(scores)
        span = (hi - lo) or 1.0
        # Min-max to [0, 1] so the entity boosts keep their meaning; the pool's tail
        # (not sent to the cross-encoder) goes below every scored hit.
        rescored = [((s - lo) / span, h) for s, h in zip(scores, head, strict=True)]
        rescored.sort(key=lambda pair: (-pair[0], pair[1].chunk_id))
        return ([replace(h, score=s) for s, h in rescored]
                + [replace(h, score=0.0) for h in tail])


def _about(hits: Sequence[Hit], entity_ids: Sequence[str], k: int) -> Iterator[str]:
    """The texts of ``hits`` tagged with one of ``entity_ids`` (the first ``k`` hits when
    the turn resolved none), read only when asked for."""
    wanted = set(entity_ids)
    return (h.text for h in (hits if wanted else hits[:k])
            if not wanted or wanted & set(h.entity_ids))


def _lift_tagged(hits: list[Hit], entity_ids: Sequence[str]) -> list[Hit]:
    wanted = set(entity_ids)
    lifted = [replace(h, score=h.score + RELAXED_ENTITY_BOOST) if wanted & set(h.entity_ids) else h
              for h in hits]
    return sorted(lifted, key=lambda h: (-h.score, h.chunk_id))


def _merge(narrow: list[Hit], broad: list[Hit]) -> list[Hit]:
    """One ranking from a filtered and an unfiltered one of the same query and metric."""
    by_id = {h.chunk_id: h for h in broad}
    for h in narrow:
        by_id.setdefault(h.chunk_id, h)
    return sorted(by_id.values(), key=lambda h: (-h.score, h.chunk_id))


_CJK = re.compile(r"[\u3400-\u9fff]")


def _with_other_names(query: str, entity_ids: Sequence[str],
                      names: Mapping[str, Sequence[str]], per_entity: int = 3, *,
                      any_script: bool = False) -> str:
    """The query plus each entity's names in a script (Chinese / Latin) that the
    question's own words are written in but the entity is not yet named in: an English
    question gets the English names of an entity the rewrite named in Chinese, and the
    reverse. A question in one script only gets nothing (more names would only add
    weight to the entity over what is asked about it), unless ``any_script``: then
    every script the entity is not named in."""
    low = query.lower()
    rest = low
    for entity_id in entity_ids:
        for name in sorted(names.get(entity_id, ()), key=len, reverse=True):
            if name.strip():
                rest = rest.replace(name.lower(), " ")
    asked_in = {script for script, found in ((True, _CJK.search(rest)),
                                             (False, re.search(r"[a-z]{2,}", rest))) if found}
    extra: list[str] = []
    for entity_id in entity_ids:
        all_names = list(dict.fromkeys(n for n in names.get(entity_id, ()) if n.strip()))
        present = {bool(_CJK.search(n)) for n in all_names if n.lower() in low}
        if not present:
            continue  # this query is about another of the turn's entities
        added = 0
        for name in all_names:
            if added == per_entity:
                break
            script = bool(_CJK.search(name))
            if script in present or (script not in asked_in and not any_script) \
                    or name.lower() in low or name in extra:
                continue
            extra.append(name)
            added += 1
    return f"{query} {' '.join(extra)}" if extra else query


def _first_documents(hits: Sequence[Hit], k: int) -> set[str]:
    """The best chunk of each of a ranking's first ``k`` documents (what a plain search of
    those words would show)."""
    best: dict[str, str] = {}
    for h in hits:
        if h.doc_id not in best:
            if len(best) == k:
                break
            best[h.doc_id] = h.chunk_id
    return set(best.values())


def _rather_than_nothing(again: Sequence[tuple[Found, Shown, str]], found: Sequence[Found],
                        unseen: Sequence[Found], strength: float, stats: TermStats | None, *,
                        entity_ids: Sequence[str], names: Mapping[str, Sequence[str]] | None,
                        previous: Sequence[str]) -> tuple[Found, float, str] | None:
    """The shown chunk to show again when the unseen evidence (``found``, of coverage
    ``strength``) is too weak to answer, with its coverage and why it may (None: none).

    It must be the turn's best match overall (one that unseen chunks outrank is no better
    an answer than they are), cover the question better than the unseen evidence, and
    have a reason to answer it (:func:`retrieval.novelty.repeat_reason`): a chunk holding
    the newly asked words is preferred to one that is only about the turn's entities.
    """
    if stats is None:
        return None
    kept = {f.hit.chunk_id for f in found}
    top_unseen = max((f.hit.score for f in unseen), default=float("-inf"))
    why: dict[str, str] = {}
    for f, before, asked in again:
        if f.hit.chunk_id not in kept and f.hit.chunk_id not in why:
            reason = repeat_reason(f.hit, before, asked, stats, entity_ids=entity_ids,
                                   names=names, previous=previous)
            if reason is not None:
                why[f.hit.chunk_id] = reason
    for reason in REPEAT_REASONS:
        best = min((f for f, _, _ in again if why.get(f.hit.chunk_id) == reason),
                   key=lambda f: (-f.hit.score, f.hit.chunk_id), default=None)
        if best is None or best.hit.score < top_unseen:
            continue
        covers = coverage(best.query, best.hit)
        if covers > strength:
            return replace(best, hit=replace(best.hit, vector=None)), covers, reason
    return None


def _novel_first(ranked: list[Found], top: int, most: int) -> tuple[list[Found], int]:
    """Shown chunks keep their place only within the first ``top`` of the ranking: there
    they answer the new question better than all but a few unseen chunks; further down
    they would only fill places, so they leave them to unseen ones. Only the first
    ``most`` of them keep it: one shown chunk is the answer to what is new, a second that
    answers it as well only repeats what the user has read. Returns the ranking and how
    many shown chunks left it."""
    out: list[Found] = []
    left = back = 0
    for f in ranked:
        if f.seen_in_turn is not None:
            if len(out) >= top or back >= most:
                left += 1
                continue
            back += 1
        out.append(f)
    return out, left


def _per_document(ranked: list[Found], cap: int, *, overflow: bool = False):
    """At most ``cap`` chunks per document, each chunk once, keeping the best first.
    With ``overflow``, also the chunks the cap left out (best first), as a second list."""
    per_doc: dict[str, int] = {}
    seen: set[str] = set()
    out = []
    over = []
    for f in ranked:
        if f.hit.chunk_id in seen:
            continue
        seen.add(f.hit.chunk_id)
        if per_doc.get(f.hit.doc_id, 0) >= cap:
            over.append(f)
            continue
        per_doc[f.hit.doc_id] = per_doc.get(f.hit.doc_id, 0) + 1
        out.append(f)
    return (out, over) if overflow else out


def degraded_dependencies(trace: Mapping[str, Any]) -> list[str]:
    """The optional endpoints a search went on without, as its trace records them:
    ``embedder`` (BM25 only), ``reranker`` (the fused order kept)."""
    out = []
    for query in trace.get("queries") or []:
        if str(query.get("dense", "")).startswith("skipped"):
            out.append("embedder")
        if str(query.get("cross_encoder", "")).startswith("failed"):
            out.append("reranker")
    return out
