"""Every prompt Referent sends to an LLM, declared in one place.

A template names its placeholders; rendering with one missing or one extra
raises at once, so a prompt never goes out with a hole in it.
"""

from __future__ import annotations

import string
from dataclasses import dataclass


class PromptError(ValueError):
    """A prompt was rendered with missing or unexpected values (a programming error)."""


@dataclass(frozen=True)
class PromptTemplate:
    name: str
    text: str

    @property
    def placeholders(self) -> frozenset[str]:
        return frozenset(f for _, f, _, _ in string.Formatter().parse(self.text) if f)

    def render(self, **values: str) -> str:
        missing = self.placeholders - set(values)
        extra = set(values) - self.placeholders
        if missing or extra:
            raise PromptError(f"prompt {self.name!r}: missing {sorted(missing)}, "
                              f"unexpected {sorted(extra)}")
        return self.text.format(**values)


REWRITE_SYSTEM = PromptTemplate("rewrite_system", """\
You rewrite the last user turn of a conversation into standalone search queries.
Rules:
- Use only these entity names, written exactly as given: {allowed_entities}
- Keep every negation (不, 没, 不能, 不再, 除了, not, no longer, except) and every time or
  version expression (7月, 2024版, last year) of the user's turn.
- Add no fact, number or date that is not in the conversation.
- Keep the kind of question (how, why, how much, whether).
- If the turn asks about several entities separately, write one query per entity.
- Follow the structure given with the turn: ask about its entities and attribute, at its
  times and versions, keep both sides of a comparison, and never name an excluded entity.
- Write the query as a whole question in the user's language; never paste the turn's words
  after the previous question.
Answer with JSON only: {{"queries": ["...", "..."]}}""")

REWRITE_USER = PromptTemplate("rewrite_user", """\
Conversation so far (oldest first):
{history}

Last user turn: {turn}
Entities this turn is about: {resolved_entities}
Structure resolved for this turn:
{structure}""")
