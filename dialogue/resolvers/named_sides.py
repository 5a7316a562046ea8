"""Both sides of a comparison named: a shared name qualified, right beside it, by words
that each pick out one of its readings resolves to every side picked, and nothing is
asked. (The mechanism: dialogue/policy/sides.py.)"""

from __future__ import annotations

from dialogue.policy.sides import REASON, resolve_named_sides
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class NamedSides:
    name = "named_sides"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        return changed(links, resolve_named_sides(links, context.turn.detection,
                                                  context.snapshot), REASON)


RESOLVER = NamedSides()
