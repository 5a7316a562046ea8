"""地址在江北区…青萝街12号，电话是多少: a name said inside a value the turn gives
for an attribute of a focus entity (a value that entity's own passage states) is part
of that value, not what the turn is about; the focus entity stays the subject.
Needs the kb's entity facts; only for a turn that goes on about the same talk.
(The mechanism: :func:`dialogue.policy.policy.keep_valued_focus`.)"""

from __future__ import annotations

from dialogue.policy.policy import keep_valued_focus
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class ValuedFocus:
    name = "valued_focus"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        if context.facts is None or not context.going_on:
            return None
        return changed(links, keep_valued_focus(links, context.turn, context.state,
                                                context.snapshot, context.facts),
                       "a name inside the value the turn gives is part of it")


RESOLVER = ValuedFocus()
