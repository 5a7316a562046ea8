"""Turn classification: how this turn relates to the conversation so far."""

from __future__ import annotations

import re
from enum import Enum

from kg.linker import LinkResult
from kg.mentions import Detection, MentionKind

_SWITCH_RE = re.compile(r"换个话题|换一个话题|另外问一下|另外问个|另外想问|顺便问一下|顺便问下|"
                        r"我想问别的|\bby the way\b|\bbtw\b|\banother question\b|\bchanging the subject\b",
                        re.IGNORECASE)


class TurnKind(str, Enum):
    NEW_TOPIC = "new_topic"          # names entities, none of them in focus
    CONTINUATION = "continuation"    # refers back (pronoun, ellipsis, or names nothing)
    SWITCH = "switch"                # an explicit topic-switch cue
    ANSWER = "answer"                # answers a pending clarification


def classify(detection: Detection, links: LinkResult, focus: list[str]) -> TurnKind:
    """Classify a turn that is not the answer to a clarification."""
    if _SWITCH_RE.search(detection.text):
        return TurnKind.SWITCH
    named = {i for link in links.links if link.mention.kind is MentionKind.ALIAS
             for i in (link.entity_ids or tuple(c.entity_id for c in link.candidates))}
    if named and not named & set(focus):
        return TurnKind.NEW_TOPIC
    return TurnKind.CONTINUATION
