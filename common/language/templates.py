"""How a standalone question is written from its slots, per language.

A rendered question is its subjects (canonical names), their times and versions, and
the question's own words (what is asked: attribute, negation, question words, in the
user's order). These templates say how the subjects and times are written together
and where they go when the question's words do not mark a place for them. The word
joining names and the compared-with note are the language's wording
(``cues.wording``).

Placeholders: ``{subjects}``, ``{times}`` in ``group``; ``{group}``, ``{question}``
and ``{mark}`` (the question's closing mark, kept last) in ``unplaced``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RenderTemplate:
    group: str      # the subjects and their times, written together
    unplaced: str   # a question that does not say where its subjects go
    time_joiner: str
    # Words between two names written together (A和B, A and B): the names are one place.
    name_links: tuple[str, ...] = ()
    # Where a follow-up's own words go when the question has no place for them: right
    # after the subjects (English opens with its question word: "Which is open later, A
    # or B on weekends?"), else before the question word (华东区周末哪个开得晚).
    loose_after_subjects: bool = False


TEMPLATES = {
    # 华南区 + 7月 + 的销售额是多少: names first, the time right after them.
    "zh": RenderTemplate(group="{subjects}{times}", unplaced="{group}{question}{mark}",
                         time_joiner="", name_links=("和", "与", "跟", "及", "、", "，", ",")),
    # What is the fee ({subjects} {times})?: the names after the question, before its mark.
    "en": RenderTemplate(group="{subjects} {times}", unplaced="{question} ({group}){mark}",
                         time_joiner=" ", name_links=("and", "&", "vs.", "vs", ","),
                         loose_after_subjects=True),
}


def template(lang: str) -> RenderTemplate:
    """The template of ``lang`` ('zh', 'en'; anything else gets English)."""
    return TEMPLATES.get(lang, TEMPLATES["en"])


def name_links() -> tuple[str, ...]:
    """The words between two names written together, every language's."""
    return tuple(dict.fromkeys(w for t in TEMPLATES.values() for w in t.name_links))
