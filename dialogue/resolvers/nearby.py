"""A shared name settles on the candidate nearest, through the ontology, to what the
dialogue talked about (the entity itself, a related one, a sibling).
(The mechanism: dialogue/policy/nearby.py.)"""

from __future__ import annotations

from dialogue.policy.nearby import REASON, settle_by_nearby
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class Nearby:
    name = "nearby"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        return changed(links, settle_by_nearby(links, context.state, context.snapshot), REASON)


RESOLVER = Nearby()
