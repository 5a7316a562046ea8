"""Topic switches without a cue: low similarity to the previous query.

A turn that names nothing new and has no cue ("公司的报销流程是什么" after three
turns on 华东区) would inherit the focus and be searched as "华东区…报销流程".
With an embedder configured, :class:`SimilarityShift` compares the turn with
the previous standalone query:

- the turn refers back (a pronoun, an ordinal, an ellipsis, a request for more of
  the same, a focus entity by name, or in English a word of a focus entity's name)
  → never a switch, whatever the similarity;
- similarity below ``low`` → a switch;
- similarity at or above ``high`` → a continuation;
- in between (the gray zone) → a switch only when the turn also asks about no
  attribute the focus entities have (负责人 for a region stays on the region).

Without an embedder nothing changes: only explicit cues switch. Thresholds
depend on the embedder; the defaults are the local e5's, calibrated on the
KdConv dev topic-switch labels (docs/dialogue.md).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from common.errors import DependencyError
from common.language.tokens import tokens
from dialogue.classify import asks_for_more, is_ellipsis
from kg.aliases import AliasSnapshot
from understanding.linker import LinkResult
from understanding.mentions import Detection, MentionKind
from retrieval.embedders import Embedder, cosine


def refers_back(detection: Detection, links: LinkResult, focus: Sequence[str]) -> bool:
    """Whether the turn points at the conversation so far by its own words."""
    if detection.of(MentionKind.PRONOUN) or detection.of(MentionKind.ORDINAL):
        return True
    if is_ellipsis(detection, links) or asks_for_more(detection.text):
        # 还有呢, what else is there: more of what was being talked about.
        return True
    return any(link.mention.kind is MentionKind.ALIAS and set(link.entity_ids) & set(focus)
               for link in links.links)


_LATIN_TOKEN_RE = re.compile(r"^[a-z]+$")


def _latin_tokens(text: str) -> set[str]:
    return {t for t in tokens(text) if _LATIN_TOKEN_RE.match(t)}


def shares_name_word(text: str, snapshot: AliasSnapshot, focus: Sequence[str]) -> bool:
    """The turn uses a content word (an English stem, stop words left out) of one of the
    focus entities' names: "Do I need an appointment to rent a locker?" after "gym
    locker rental". Such a turn talks about the focus in its own words; e5's
    similarity, calibrated on Chinese turns, puts any two short English questions near
    the switch threshold (0.81–0.84 for follow-ups and unrelated questions alike), so it
    cannot tell them apart. Chinese names are left to the alias match and the similarity."""
    own = _latin_tokens(text)
    if not own:
        return False
    for entity_id in focus:
        entity = snapshot.entities.get(entity_id)
        if entity is not None and any(own & _latin_tokens(alias) for alias in entity.all_aliases):
            return True
    return False


def attribute_overlap(detection: Detection, snapshot: AliasSnapshot, focus: Sequence[str]) -> bool:
    """The turn asks about an attribute that one of the focus entities' types has."""
    asked = {m.value or m.text for m in detection.of(MentionKind.ATTRIBUTE)}
    if not asked:
        return False
    for entity_id in focus:
        entity = snapshot.entities.get(entity_id)
        if entity is not None and asked & set(snapshot.type_attributes.get(entity.type, ())):
            return True
    return False


@dataclass(frozen=True)
class SimilarityShift:
    embedder: Embedder
    low: float
    high: float

    def is_switch(self, detection: Detection, links: LinkResult, snapshot: AliasSnapshot, *,
                  focus: Sequence[str], previous: str, trace: dict[str, Any]) -> bool:
        """Decide whether a turn classified as a continuation is in fact a new topic."""
        if not focus or not previous or refers_back(detection, links, focus) \
                or shares_name_word(detection.text, snapshot, focus):
            return False
        try:
            similarity = cosine(self.embedder.embed_query(detection.text),
                                self.embedder.embed_query(previous))
        except DependencyError as exc:
            trace["topic_shift"] = {"skipped": str(exc)}
            return False
        overlap = attribute_overlap(detection, snapshot, focus)
        if similarity < self.low:
            verdict, why = True, "below the low threshold"
        elif similarity >= self.high:
            verdict, why = False, "at or above the high threshold"
        else:
            verdict = not overlap
            why = ("gray zone, asks an attribute of the focus" if overlap
                   else "gray zone, no attribute of the focus")
        trace["topic_shift"] = {"similarity": round(similarity, 4), "low": self.low,
                                "high": self.high, "attribute_overlap": overlap,
                                "switch": verdict, "why": why}
        return verdict
