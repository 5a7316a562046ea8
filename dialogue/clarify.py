"""Clarification: the question to ask, and reading the user's answer to it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from common.language import cues
from common.language.normalize import language_of
from dialogue.models import Clarification, ClarifyOption
from dialogue.state import PendingClarification
from kg.aliases import AliasSnapshot
from kg.linker import LinkResult
from kg.mentions import Detection, MentionKind

_BOTH_RE = cues.BOTH_RE
_NEITHER_RE = cues.NEITHER_RE


def build_clarification(mention: str, options: list[str], snapshot: AliasSnapshot,
                        user_text: str) -> Clarification:
    """Ask which entity ``mention`` means, in the user's language, naming what
    tells the options apart (their names and descriptions)."""
    opts = [ClarifyOption(id=eid, name=snapshot.name(eid),
                          description=snapshot.entities[eid].description if eid in snapshot.entities else "")
            for eid in options]
    words = cues.wording(language_of(user_text))
    listing = words.clarify_separator.join(
        words.clarify_option.format(number=i, name=o.name)
        + (words.clarify_description.format(description=_short(o.description)) if o.description else "")
        for i, o in enumerate(opts, 1))
    asked = words.clarify_ask_mention.format(mention=mention) if mention else words.clarify_ask
    question = asked + listing
    return Clarification(question=question, mention=mention, options=opts)


def _short(description: str, limit: int = 60) -> str:
    """Enough of a description to tell the options apart, not the whole paragraph."""
    first = re.split(r"(?<=[。！？.!?])\s*", description.strip(), maxsplit=1)[0]
    return first if len(first) <= limit else first[:limit].rstrip() + "…"


class AnswerKind(str, Enum):
    CHOSEN = "chosen"
    BOTH = "both"
    NEITHER = "neither"
    NOT_AN_ANSWER = "not_an_answer"


@dataclass(frozen=True)
class Answer:
    kind: AnswerKind
    entity_ids: tuple[str, ...] = ()
    how: str = ""


def read_answer(detection: Detection, links: LinkResult, pending: PendingClarification,
                snapshot: AliasSnapshot) -> Answer:
    """Decide whether this turn answers the pending clarification, and how.

    Accepted answers: an ordinal (第一个, the latter), a name or alias of one
    option, a distinguishing word (个人版), both (都要), neither (都不是).
    Anything else is a new question and the pending one is dropped.
    """
    options = pending.options
    text = detection.text
    if _NEITHER_RE.search(text):
        return Answer(AnswerKind.NEITHER, (), "neither")
    if _BOTH_RE.search(text):
        return Answer(AnswerKind.BOTH, tuple(options), "both")
    for mention in detection.of(MentionKind.ORDINAL):
        index = int(mention.value)
        if -len(options) <= index < len(options):
            return Answer(AnswerKind.CHOSEN, (options[index],), f"ordinal {mention.text}")
    named = [eid for eid in links.resolved if eid in options]
    if len(named) == 1:
        return Answer(AnswerKind.CHOSEN, (named[0],), "named an option")
    shared = snapshot.normalize(pending.mention)
    text_norm = snapshot.normalize(text)
    marked = [eid for eid in options
              if any(w in text_norm for w in snapshot.distinguishing_words(eid, shared))]
    if len(marked) == 1:
        return Answer(AnswerKind.CHOSEN, (marked[0],), "distinguishing word")
    # A bare number: "1", "2。"
    digits = cues.OPTION_NUMBER_RE.fullmatch(text)
    if digits and int(digits.group(1)) <= len(options):
        return Answer(AnswerKind.CHOSEN, (options[int(digits.group(1)) - 1],), "option number")
    return Answer(AnswerKind.NOT_AN_ANSWER)
