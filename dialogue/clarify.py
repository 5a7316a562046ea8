"""Clarification: the question to ask, and reading the user's answer to it."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from common.language import cues
from common.language.normalize import is_cjk, turn_language
from dialogue.classify import is_switch
from dialogue.models import Clarification, ClarifyOption
from dialogue.state import PendingClarification
from kg.aliases import AliasSnapshot
from understanding.linker import LinkResult
from understanding.mentions import Detection, MentionKind
from understanding.pieces import latin_words, pointed_at

_BOTH_RE = cues.BOTH_RE
_NEITHER_RE = cues.NEITHER_RE


def build_clarification(mention: str, options: list[str], snapshot: AliasSnapshot,
                        user_text: str, *, language: str | None = None) -> Clarification:
    """Ask which entity ``mention`` means, in the user's language (``language``, else
    guessed from ``user_text``), naming what tells the options apart (their names and
    descriptions; in English, an English name of each where the kb has one)."""
    opts = [ClarifyOption(id=eid, name=snapshot.name(eid),
                          description=snapshot.entities[eid].description if eid in snapshot.entities else "")
            for eid in options]
    lang = language or turn_language(user_text)
    words = cues.wording(lang)

    def note(option: ClarifyOption) -> str:
        # In English, an option's English name tells it apart best (Premium Card).
        english = _english_name(option.id, snapshot) if lang != "zh" else ""
        return english or (_short(option.description) if option.description else "")

    listing = words.clarify_separator.join(
        words.clarify_option.format(number=i, name=o.name)
        + (words.clarify_description.format(description=n) if (n := note(o)) else "")
        for i, o in enumerate(opts, 1))
    asked = words.clarify_ask_mention.format(mention=mention) if mention else words.clarify_ask
    question = asked + listing
    return Clarification(question=question, mention=mention, options=opts)


def _english_name(entity_id: str, snapshot: AliasSnapshot) -> str:
    """The entity's longest English alias ("Star Card Premium"), or ""."""
    entity = snapshot.entities.get(entity_id)
    if entity is None or entity.name.isascii():
        return ""
    english = [a for a in entity.all_aliases if a.isascii() and any(c.isalpha() for c in a)]
    return max(english, key=len) if english else ""


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
    if is_switch(text):
        return Answer(AnswerKind.NOT_AN_ANSWER)
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
    # The turn names another thing of the options' kind (江北分部营业厅 while 滨湖路网点
    # is asked about): a new question, even if a word of it (江北) tells the options apart.
    kinds = {snapshot.entities[e].type for e in options if e in snapshot.entities}
    if any(link.mention.kind is MentionKind.ALIAS and e not in options and e in snapshot.entities
           and snapshot.entities[e].type in kinds
           for link in links.links for e in link.entity_ids):
        return Answer(AnswerKind.NOT_AN_ANSWER)
    shared = snapshot.normalize(pending.mention)
    text_norm = snapshot.normalize(text)
    marked = [eid for eid in options
              if any(w in text_norm for w in snapshot.distinguishing_words(eid, shared))]
    if len(marked) == 1:
        return Answer(AnswerKind.CHOSEN, (marked[0],), "distinguishing word")
    newest = _option_by_edition(text, options, snapshot)
    if newest is not None:
        return Answer(AnswerKind.CHOSEN, (newest,), "the newer or older edition")
    # A bare number: "1", "2。"
    digits = cues.OPTION_NUMBER_RE.fullmatch(text)
    if digits and int(digits.group(1)) <= len(options):
        return Answer(AnswerKind.CHOSEN, (options[int(digits.group(1)) - 1],), "option number")
    # A short reply with a piece of one option's name: 尊享那张, 家庭版那个, 青禾的那个,
    # "the enterprise one".
    piece = _option_by_piece(text, options, snapshot)
    if piece is not None:
        return Answer(AnswerKind.CHOSEN, (piece,), "a part of one option's name")
    return Answer(AnswerKind.NOT_AN_ANSWER)


# A reply longer than this is a question of its own, not a pointer at an option.
_SHORT_REPLY_CJK = 10
_SHORT_REPLY_WORDS = 6


def _option_by_edition(text: str, options: Sequence[str], snapshot: AliasSnapshot) -> str | None:
    """The newest or the oldest option, when the options are editions of one thing (their
    names differ only in a year or version number) and a short reply asks for the newer
    or the older one (新的那个, the older one)."""
    # Imported here: dialogue.policy reads answers through this module.
    from dialogue.policy.versions import edition
    newer, older = cues.NEWER_CHOICE_RE.search(text), cues.OLDER_CHOICE_RE.search(text)
    if bool(newer) == bool(older) or len(latin_words(text)) > _SHORT_REPLY_WORDS \
            or sum(1 for c in text if is_cjk(c)) > _SHORT_REPLY_CJK:
        return None
    found = {eid: edition(snapshot.name(eid)) for eid in options}
    if any(f is None for f in found.values()) or len({f[0] for f in found.values()}) != 1:
        return None
    ranked = sorted(options, key=lambda eid: found[eid][1])
    return ranked[-1] if newer else ranked[0]


def _option_by_piece(text: str, options: Sequence[str], snapshot: AliasSnapshot) -> str | None:
    """The one option whose names share a piece with a short reply that no other
    option's names share: two Chinese characters in a row, or an English word."""
    norm = snapshot.normalize(text)
    cjk = sum(1 for c in norm if is_cjk(c))
    words = latin_words(text)
    if cjk > _SHORT_REPLY_CJK or len(words) > _SHORT_REPLY_WORDS or (not cjk and not words):
        return None
    return pointed_at(snapshot, text, options)
