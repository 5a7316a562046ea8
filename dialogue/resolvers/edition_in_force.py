"""那现在用的条款呢: a name that stands for several editions of one thing, in a turn that
says it means the current one, is the edition in force now.
(The mechanism: dialogue/policy/versions.py.)"""

from __future__ import annotations

from dialogue.policy.versions import settle_by_current
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class EditionInForce:
    name = "edition_in_force"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        return changed(links, settle_by_current(links, context.turn.text, context.snapshot),
                       "the turn says current: the edition in force")


RESOLVER = EditionInForce()
