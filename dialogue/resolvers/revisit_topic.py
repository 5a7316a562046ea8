"""回到刚才那个产品, show me that again: a revisit whose references name nothing means an
earlier topic, most recent first (the focus it leaves goes last), not the focus."""

from __future__ import annotations

from dialogue.classify import TurnKind
from dialogue.policy.policy import earlier_focus
from dialogue.resolvers import DialogueContext, Resolved
from understanding.linker import Link, LinkResult
from understanding.mentions import MentionKind


class RevisitTopic:
    name = "revisit_topic"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        if context.kind is not TurnKind.REVISIT or any(
                link.mention.kind is MentionKind.ALIAS for link in links.links):
            return None
        turn, state = context.turn, context.state
        earlier = earlier_focus(state, turn.text)
        relinked = context.linker.link(turn.detection, context.snapshot,
                                       focus=earlier, listed=state.listed)
        return Resolved(LinkResult(tuple(_most_recent(link, earlier) for link in relinked.links)),
                        "a revisit: its references relinked against the earlier topics")


def _most_recent(link: Link, earlier: list[str]) -> Link:
    """A reference the linker left open among several earlier topics (it would leave the
    choice to the clarify gate): the revisit says which, the most recent one it goes
    back to (回到刚才那个区 after 华东区 then 华南区: 华东区)."""
    if link.entity_ids or link.mention.kind is not MentionKind.PRONOUN or not link.candidates:
        return link
    offered = {c.entity_id for c in link.candidates}
    chosen = next((e for e in earlier if e in offered), None)
    if chosen is None:
        return link
    return Link(link.mention, link.candidates, (chosen,),
                "a revisit: the most recent earlier topic it may mean")


RESOLVER = RevisitTopic()
