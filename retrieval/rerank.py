"""Entity- and time-aware rerank of one query's candidates.

BM25 weighs a month or a version number (7月, 2024版) like any other token,
so a June report that repeats the region's name can outrank the July one.
The rerank lifts chunks that contain the query's time and version
expressions literally and chunks tagged with the resolved entities, and
pushes down chunks tagged only with a confusable sibling of them. Among a
document's passages it lifts the one that states the kind of value the
question asks for: a duration for 多久 / how long, a time of day for 几点,
a count for 几张 (the opening-hours passage for 几点下班, not the one that
mentions 下午).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from common.language.cues import ANSWER_TYPES, time_expressions
from common.language.normalize import normalize
from retrieval.models import Hit

TIME_WEIGHT = 0.5
ENTITY_WEIGHT = 0.2
CONFUSABLE_PENALTY = 0.5
ANSWER_TYPE_WEIGHT = 0.15


def asked_types(query: str) -> tuple[int, ...]:
    """Which kinds of value (indexes into ``ANSWER_TYPES``) the query asks for."""
    return tuple(i for i, (asks, _) in enumerate(ANSWER_TYPES) if asks.search(query))


def states_type(kinds: Sequence[int], text: str) -> bool:
    """Whether ``text`` states a value of one of the asked ``kinds``."""
    return any(ANSWER_TYPES[i][1].search(text) for i in kinds)


def time_terms(query: str) -> tuple[str, ...]:
    """The time and version expressions of a query, normalized (7月, 2024版)."""
    return tuple(dict.fromkeys(normalize(t) for t in time_expressions(query)))


@dataclass(frozen=True)
class EntityAwareReranker:
    """Rescores hits as ``bm25 / best_bm25 + boosts``; keeps the BM25 order among equals."""

    confusable: Mapping[str, Iterable[str]] | None = None

    def rerank(self, query: str, hits: Sequence[Hit], *, entity_ids: Sequence[str] = ()) -> list[Hit]:
        if not hits:
            return []
        top = max(h.score for h in hits) or 1.0
        times = time_terms(query)
        kinds = asked_types(query)
        wanted = set(entity_ids)
        siblings = {s for e in wanted for s in (self.confusable or {}).get(e, ())} - wanted
        rescored = []
        for hit in hits:
            score = hit.score / top
            if times:
                # In the passage itself counts fully; only in the document's title, half.
                text, title = normalize(hit.text), normalize(hit.title)
                matched = sum(1.0 if t in text else 0.5 if t in title else 0.0 for t in times)
                score += TIME_WEIGHT * matched / len(times)
            if kinds and states_type(kinds, hit.text):
                score += ANSWER_TYPE_WEIGHT
            tags = set(hit.entity_ids)
            if wanted and tags & wanted:
                score += ENTITY_WEIGHT
            elif tags & siblings:
                score -= CONFUSABLE_PENALTY
            rescored.append((score, hit))
        rescored.sort(key=lambda pair: -pair[0])
        return [replace(h, score=round(s, 6)) for s, h in rescored]
