"""What a suggestion rests on: the passages it came from, its counts, its confidence.

Every suggested entity, alias, edition, confusable pair and relation carries an
:class:`Evidence`; the review screen and the evidence file show it beside the
suggestion, so an administrator judges a name by the passages that use it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from kg.suggest.corpus import Occurrences

MAX_PASSAGES = 3
SNIPPET_CHARS = 80


@dataclass
class Evidence:
    """Passages (id and a snippet around the words), counts and a confidence in [0, 1]."""

    confidence: float
    counts: dict[str, int] = field(default_factory=dict)
    passages: list[dict[str, str]] = field(default_factory=list)
    reason: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"confidence": round(self.confidence, 3), "reason": self.reason,
                "counts": self.counts, "passages": self.passages}


def confidence(*signals: float) -> float:
    """Independent signals, each a weight of evidence ≥ 0, combined to 1 - e^(-sum)."""
    return 1.0 - math.exp(-sum(max(0.0, s) for s in signals))


def cite(occurrences: Occurrences, needle: str, limit: int = MAX_PASSAGES) -> list[dict[str, str]]:
    """The first passages holding ``needle``, each with a snippet around it."""
    cited = []
    for index in occurrences.passages_of(needle)[:limit]:
        p = occurrences.passages[index]
        body = f"{p.title}\n{p.text}"
        at = body.find(needle)
        start = max(0, at - SNIPPET_CHARS // 3)
        snippet = body[start:start + SNIPPET_CHARS].replace("\n", " · ")
        cited.append({"passage_id": p.passage_id, "doc_id": p.doc_id, "snippet": snippet})
    return cited
