"""Confusable pairs: entities users mix up.

Two entities are proposed as confusable when they share a short form (both
called 晨星卡) or their names differ by one character (华东区, 华南区), and the
passages about them state different figures: the note shows the first
figures one states and the other does not.
"""

from __future__ import annotations

import itertools
from collections import defaultdict

from common.language import documents
from kg.suggest.corpus import Occurrences
from kg.suggest.evidence import Evidence, confidence
from kg.suggest.model import SuggestedConfusable, SuggestedEntity, Suggestion

MAX_HOLDERS = 4


def add(suggestion: Suggestion, occurrences: Occurrences) -> None:
    entities = suggestion.entities
    pairs: dict[tuple[str, str], str] = {}
    for alias, keys in suggestion.ambiguous_aliases().items():
        if len(keys) <= MAX_HOLDERS:
            for a, b in itertools.combinations(sorted(keys), 2):
                pairs.setdefault((a, b), f"both called {alias}")
    masked: dict[str, list[str]] = defaultdict(list)  # 华?区 → 华东区, 华南区
    for name in sorted(entities):
        if len(name) >= 2 and not name.isascii():
            for i in range(len(name)):
                masked[name[:i] + "\u0000" + name[i + 1:]].append(name)
    for names in masked.values():
        for a, b in itertools.combinations(names, 2):
            pairs.setdefault((a, b), "names differ by one character")
    for (a, b), why in pairs.items():
        fa, fb = _figures(entities[a], occurrences), _figures(entities[b], occurrences)
        only_a, only_b = sorted(fa - fb)[:2], sorted(fb - fa)[:2]
        if not (only_a and only_b):
            continue
        note = f"{why}; {a}: {', '.join(only_a)} / {b}: {', '.join(only_b)}"
        suggestion.confusables.append(SuggestedConfusable(
            a, b, note, Evidence(confidence(0.5, 0.1 * min(len(fa ^ fb), 10)),
                                 {"differing_figures": len(fa ^ fb)}, [], why)))


def _figures(entity: SuggestedEntity, occurrences: Occurrences) -> set[str]:
    found: set[str] = set()
    for index in occurrences.passages_of(entity.name)[:10]:
        text = occurrences.passages[index].text
        at = text.find(entity.name)
        window = text[max(0, at):at + 200] if at >= 0 else text[:200]
        found.update(m.group(0).strip() for m in documents.FIGURE_RE.finditer(window) if len(m.group(0)) > 1)
    return found
