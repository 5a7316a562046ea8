"""Reciprocal rank fusion of ranked hit lists (BM25 and dense).

    rrf(d) = sum over lists L containing d of 1 / (k + rank_L(d)),   rank from 1

Milvus computes the same fusion in one ``hybrid_search`` request (its
``RRFRanker``), which is how a hybrid query is normally searched
(``VectorIndex.hybrid_search``). The rankings are fused here instead when they
had to be fetched separately: a ranking topped up with a grouped search, or a
filtered and an unfiltered ranking merged when the entity filter starves
(``retrieval.search``), and by backends without a fused search.

RRF needs no score calibration between BM25 (unbounded) and cosine (bounded),
and ``k`` (60, as in Cormack et al. 2009) damps the influence of the very top
ranks. The fused score is then rescaled so the best fused hit scores 1.0, which
keeps the entity-aware rerank's boosts on the same scale with or without
dense vectors.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from retrieval.models import Hit


def rrf(rankings: Sequence[Sequence[Hit]], *, k: int = 60) -> list[Hit]:
    """Fuse best-first rankings into one, best first, scores rescaled to (0, 1]."""
    return rescaled(rrf_scores(rankings, k=k))


def rescaled(fused: Sequence[Hit]) -> list[Hit]:
    """Fused hits with their scores divided by the best one (best = 1.0)."""
    top = max((hit.score for hit in fused), default=0.0) or 1.0
    return [replace(hit, score=hit.score / top) for hit in fused]


def by_score(hits: Sequence[Hit]) -> list[Hit]:
    """Best first, ties broken by chunk id so the order is deterministic."""
    return sorted(hits, key=lambda hit: (-hit.score, hit.chunk_id))


def rrf_scores(rankings: Sequence[Sequence[Hit]], *, k: int = 60) -> list[Hit]:
    """Fuse best-first rankings into one, best first, each hit scored by its RRF sum.

    A hit found by several rankings keeps the first occurrence's fields (and
    the vector of whichever ranking carried one). Ties are broken by chunk id
    so the order is deterministic.
    """
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    fused: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for ranking in rankings:
        for rank, hit in enumerate(ranking, start=1):
            fused[hit.chunk_id] = fused.get(hit.chunk_id, 0.0) + 1.0 / (k + rank)
            kept = first.get(hit.chunk_id)
            if kept is None or (kept.vector is None and hit.vector is not None):
                first[hit.chunk_id] = hit if kept is None else replace(kept, vector=hit.vector)
    return by_score([replace(first[cid], score=score) for cid, score in fused.items()])
