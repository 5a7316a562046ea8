"""A correction drops the corrected entity; a name of another type, or another edition
number, said in an ellipsis or a correction stands for the focus's counterpart through
the ontology's relations or editions. (The mechanism: dialogue/policy/counterparts.py.)"""

from __future__ import annotations

from dialogue.policy.counterparts import swap_counterparts
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class Counterparts:
    name = "counterparts"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        return changed(links, swap_counterparts(context.kind, links, context.turn.detection,
                                                context.state.focus, context.snapshot),
                       "the corrected entity dropped, or the focus's counterpart named")


RESOLVER = Counterparts()
