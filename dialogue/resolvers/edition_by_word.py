"""旧版条款呢, what did the older terms say: a name that stands for several editions of
one thing, with a word for an older or newer edition right before it, is that edition
(the one before the edition in force, or the newest).
(The mechanism: dialogue/policy/versions.py.)"""

from __future__ import annotations

from dialogue.policy.versions import settle_by_relative_word
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class EditionByWord:
    name = "edition_by_word"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        return changed(links, settle_by_relative_word(links, context.turn.text,
                                                      context.snapshot),
                       "the turn says older or newer beside a name editions share")


RESOLVER = EditionByWord()
