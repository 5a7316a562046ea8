"""它, 这个景点 while several entities are in focus that the user did not name side by
side: the most salient one. Two named side by side stay for the clarify gate.
(The mechanism: :func:`dialogue.policy.policy.settle_by_salience`.)"""

from __future__ import annotations

from dialogue.policy.policy import settle_by_salience
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class Salience:
    name = "salience"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        return changed(links, settle_by_salience(links, context.state, context.snapshot),
                       "a pronoun among focus entities not named side by side: the most salient")


RESOLVER = Salience()
