"""回到刚才那个产品, show me that again: a revisit whose references name nothing means an
earlier topic, most recent first (the focus it leaves goes last), not the focus."""

from __future__ import annotations

from dialogue.classify import TurnKind
from dialogue.policy.policy import earlier_focus
from dialogue.resolvers import DialogueContext, Resolved
from understanding.linker import LinkResult
from understanding.mentions import MentionKind


class RevisitTopic:
    name = "revisit_topic"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        if context.kind is not TurnKind.REVISIT or any(
                link.mention.kind is MentionKind.ALIAS for link in links.links):
            return None
        turn, state = context.turn, context.state
        relinked = context.linker.link(turn.detection, context.snapshot,
                                       focus=earlier_focus(state, turn.text), listed=state.listed)
        return Resolved(relinked, "a revisit: its references relinked against the earlier topics")


RESOLVER = RevisitTopic()
