"""Reciprocal rank fusion of ranked hit lists (BM25 and dense), done here, not in Milvus.

Milvus Lite 2.5.1 ignores ``group_by_field`` inside ``hybrid_search`` and its
fused scores cannot be traced back to either ranking, so the two rankings are
fetched separately and fused in our code:

    rrf(d) = sum over lists L containing d of 1 / (k + rank_L(d)),   rank from 1

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
    """Fuse best-first rankings into one, best first, scores rescaled to (0, 1].

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
    if not fused:
        return []
    top = max(fused.values())
    order = sorted(fused, key=lambda cid: (-fused[cid], cid))
    return [replace(first[cid], score=fused[cid] / top) for cid in order]
