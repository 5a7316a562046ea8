"""Search for one turn: several queries, entity filter (relaxed when it starves),
the session's consumed chunks excluded, one chunk per document, best first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from retrieval.index import VectorIndex
from retrieval.models import Hit
from retrieval.rerank import EntityAwareReranker

# Chunks fetched per query for the rerank to choose from, as a multiple of k. They
# are fetched ungrouped so the rerank can pick the best chunk of a document, not
# only the one BM25 liked; one chunk per document is enforced after the rerank.
POOL_FACTOR = 4


@dataclass(frozen=True)
class Found:
    """A hit and the query that found it."""

    hit: Hit
    query: str


@dataclass(frozen=True)
class SearchOutcome:
    found: tuple[Found, ...]
    trace: dict[str, Any] = field(default_factory=dict)


class Retriever:
    """Composes index searches into one turn's evidence."""

    def __init__(self, index: VectorIndex, *, min_filtered_hits: int = 1,
                 reranker: EntityAwareReranker | None = None) -> None:
        self._index = index
        self._min_filtered = min_filtered_hits
        self._reranker = reranker or EntityAwareReranker()

    def search(self, kb: str, queries: Sequence[str], *, k: int,
               entity_ids: Sequence[str] = (), exclude_chunk_ids: Sequence[str] = (),
               confusable: dict[str, frozenset[str]] | None = None,
               rerank: bool = True) -> SearchOutcome:
        """Search every query and keep the best chunk per document, top ``k`` overall.

        With ``entity_ids``, only chunks tagged with one of them are searched;
        when that leaves fewer than ``min_filtered_hits`` hits for a query, the
        filter is dropped for that query and the trace says so.
        """
        best: dict[str, Found] = {}
        trace: dict[str, Any] = {"queries": [], "entity_filter": list(entity_ids),
                                 "excluded": len(exclude_chunk_ids)}
        pool = k * POOL_FACTOR if rerank else k
        reranker = EntityAwareReranker(confusable) if confusable is not None else self._reranker
        for query in queries:
            hits = self._index.search(kb, query, limit=pool, entity_ids=entity_ids,
                                      exclude_chunk_ids=exclude_chunk_ids, group_by_doc=not rerank)
            relaxed = False
            if entity_ids and len(hits) < max(self._min_filtered, 1):
                relaxed = True
                hits = self._index.search(kb, query, limit=pool, exclude_chunk_ids=exclude_chunk_ids,
                                          group_by_doc=not rerank)
            if rerank:
                hits = reranker.rerank(query, hits, entity_ids=entity_ids)
            trace["queries"].append({"query": query, "hits": len(hits),
                                     "filter_relaxed": relaxed})
            for hit in hits:
                kept = best.get(hit.doc_id)
                if kept is None or hit.score > kept.hit.score:
                    best[hit.doc_id] = Found(hit, query)
        ranked = sorted(best.values(), key=lambda f: (-f.hit.score, f.hit.chunk_id))[:k]
        return SearchOutcome(found=tuple(ranked), trace=trace)
