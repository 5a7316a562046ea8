"""导演是谁 after a film's lead actor: a question whose subjects' passages state none of
what it asks is about the entity in play whose passages do. Needs the kb's entity
facts; only for a turn that goes on about the same talk.
(The mechanism: :func:`dialogue.policy.policy.fit_question`.)"""

from __future__ import annotations

from dialogue.policy.policy import fit_question
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class QuestionFit:
    name = "question_fit"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        if context.facts is None or not context.going_on:
            return None
        return changed(links, fit_question(links, context.turn, context.state, context.facts,
                                            context.snapshot),
                       "the entity the question fits, by what its passages state")


RESOLVER = QuestionFit()
