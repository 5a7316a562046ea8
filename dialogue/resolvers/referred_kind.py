"""这部电影的导演是林默 after the film's lead actor: a demonstrative whose word says what
it points at, in a turn whose resolved entities are all of the other kind, points at
the most recent entity of its kind in play, which stays the subject beside the names
said. Needs the kb's entity facts; only for a turn that goes on about the same talk.
(The mechanism: :func:`dialogue.policy.policy.keep_referred_kind`.)"""

from __future__ import annotations

from dialogue.policy.policy import keep_referred_kind
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class ReferredKind:
    name = "referred_kind"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        if context.facts is None or not context.going_on:
            return None
        return changed(links, keep_referred_kind(links, context.turn, context.state, context.facts),
                       "the demonstrative points at an entity of its kind")


RESOLVER = ReferredKind()
