"""A name shared by entities of different types settles on the one whose type has an
attribute the turn says a piece of. It runs after the dialogue-based resolvers: what
the turn asks outweighs what the dialogue was about.
(The mechanism: dialogue/policy/attribute_fit.py.)"""

from __future__ import annotations

from dialogue.policy.attribute_fit import settle_by_attribute_piece
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class AttributePiece:
    name = "attribute_piece"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        return changed(links, settle_by_attribute_piece(links, context.turn.detection,
                                                        context.snapshot),
                       "only one candidate's type has the attribute the turn asks")


RESOLVER = AttributePiece()
