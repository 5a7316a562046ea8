"""The dual path: when the rewrite's evidence is weak, search the user's own words too.

A rewrite can be wrong in ways no validator sees (the right entities, the
wrong reading). When the best evidence for the rewritten queries covers less
than ``weak_below`` of its query (:func:`retrieval.search.coverage`), the
user's original text is searched as well — without the entity filter, since
the filter came from the same linking — and the two rankings are fused by
reciprocal rank. Each evidence item keeps the query that found it
(``Found.query``), so a reader sees which path it came from. When both paths
are weak, the turn answers ``no_answer``. "Weak" for the rewrite path means
that its evidence covers the user's own words less than the no-answer
threshold asks: a rewrite's strength can come from nothing but the entity name
it carried over (退货政策 + 火星上的天气怎么样), which is no evidence for what
the user asked.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from common.language import cues
from common.language.normalize import normalize
from retrieval.fusion import rrf
from retrieval.models import Hit
from retrieval.novelty import TermStats, units
from retrieval.request import SearchRequest
from retrieval.search import Found, Retriever, SearchOutcome
from retrieval.unanswerable import own_records


_NUMBER_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?")


def own_coverage(original: str, hit: Hit, stats: TermStats) -> float:
    """IDF-weighted share of the user's content characters (and English words) found
    in the hit: 火星 weighs more than 上 or 天, which most passages have."""
    asked = units(original)
    have = units(f"{hit.title}\n{hit.text}")
    if not any(u.isascii() and u.isalpha() for u in have):
        asked = {u for u in asked if not (u.isascii() and u.isalpha())}  # English over Chinese
    total = sum(stats.idf(u) for u in asked)
    if not asked or total <= 0:
        return 1.0
    return sum(stats.idf(u) for u in asked if u in have) / total


def says_something(original: str) -> bool:
    """Whether the user's words hold a content word besides times and numbers."""
    return bool(units(_NUMBER_RE.sub(" ", cues.TIME_RE.sub(" ", original))))


def dual_search(retriever: Retriever, kb: str, request: SearchRequest, original: str, *,
                weak_below: float) -> SearchOutcome:
    """Search ``request``; if its evidence is weak, also ``original``, and fuse.

    ``weak_below`` 0 turns the dual path off. ``original`` is searched with the request's
    exclusions and readmittable chunks, without its entity filter, context or names (they
    came from the same linking). The outcome's trace is the first search's, with a
    ``dual_path`` entry saying whether the second ran and what it found.
    """
    # The context's last query is not new in either search (readmission).
    request = replace(request, known_words=request.known)
    queries, abstain = request.queries, request.abstain
    first = retriever.search(kb, request)
    # The user's own words ask for their own records (帮我查一下我这张卡还欠多少): nothing in a
    # knowledge base answers that, whatever the rewrite made of 这张卡.
    records = own_records(original) if abstain and request.readmit == "novel" else None
    if records and first.found:
        trace = dict(first.trace)
        trace["no_answer"] = {**trace.get("no_answer", {}), "abstained": True,
                              "own_records": records,
                              "withheld": [f.hit.chunk_id for f in first.found]}
        return SearchOutcome(found=(), trace=trace, no_answer=True, strength=first.strength)
    judged = first.trace.get("no_answer", {})
    if judged.get("unknown_things") or judged.get("unknown_future"):
        # What the user asks a named thing to have, or a year to bring, the kb never writes
        # of: the user's own words would only find the thing itself
        # (retrieval/unanswerable.py).
        first.trace["dual_path"] = {"ran": False, "strength": round(first.strength, 4),
                                    "weak_below": weak_below,
                                    "skipped": "the question asks for something the kb never names"}
        return first
    asked = {normalize(q) for q in queries}
    if weak_below <= 0 or first.strength >= weak_below or not normalize(original) \
            or normalize(original) in asked:
        first.trace["dual_path"] = {"ran": False, "strength": round(first.strength, 4),
                                    "weak_below": weak_below}
        return first
    if not says_something(original):
        # 那7月的呢: a time and cue words, nothing to search without the topic the rewrite
        # put back; over the whole kb it finds any passage that names July.
        first.trace["dual_path"] = {"ran": False, "strength": round(first.strength, 4),
                                    "weak_below": weak_below,
                                    "skipped": "the user's words name only a time or a number"}
        return first
    second = retriever.search(kb, request.with_queries(
        (original,), entity_ids=(), context=None, names=None,
        linked=bool(request.entity_ids)))
    # How much of what the user wrote the rewrite's evidence covers, in content
    # characters: a follow-up's own words are few (一般多久能转过去), and their bigrams
    # rarely survive a paraphrase, while a rewrite that only carried a name over
    # (退货政策 + 火星上的天气怎么样) still shares next to nothing with the question.
    stats = retriever.term_stats(kb)
    own = max((own_coverage(original, f.hit, stats) for f in first.found), default=0.0)
    floor = retriever.config.no_answer_threshold
    if own < floor and second.strength < floor and abstain:
        found: list[Found] = []
    else:
        found = _fused(first.found if own >= floor or not abstain else (), second.found,
                       request.k, retriever.config.chunks_per_doc)
    trace = dict(first.trace)
    trace["dual_path"] = {
        "ran": True, "weak_below": weak_below, "original": original,
        "rewrite_strength": round(first.strength, 4), "rewrite_covers_original": round(own, 4),
        "original_strength": round(second.strength, 4),
        "original_trace": second.trace,
        "from_rewrite": sum(f.query != original for f in found),
        "from_original": sum(f.query == original for f in found),
    }
    if not found:
        trace["dual_path"]["verdict"] = "both paths weak: no answer"
    return SearchOutcome(found=tuple(found), trace=trace, no_answer=not found,
                         strength=max(first.strength, second.strength))


def _fused(first: Sequence[Found], second: Sequence[Found], k: int, per_doc: int) -> list[Found]:
    """Reciprocal-rank fusion of the two paths' evidence; each item keeps the query
    of the path that ranked it first, at most ``per_doc`` chunks per document."""
    if not first or not second:
        return list(first or second)[:k]
    label: dict[str, Found] = {}
    for found in (*first, *second):
        label.setdefault(found.hit.chunk_id, found)
    fused = rrf([[f.hit for f in first], [f.hit for f in second]])
    out: list[Found] = []
    per: dict[str, int] = {}
    for hit in fused:
        if per.get(hit.doc_id, 0) >= per_doc:
            continue
        per[hit.doc_id] = per.get(hit.doc_id, 0) + 1
        out.append(replace(label[hit.chunk_id], hit=hit))
        if len(out) == k:
            break
    return out
