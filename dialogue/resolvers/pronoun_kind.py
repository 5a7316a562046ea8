"""他 and 她 mean a person, 它 a thing, 这部电影 a film: a reference goes to the most recent
entity in play of the kind its word (or what the turn asks) says, by what the kb's
passages state about each entity. Needs the kb's entity facts.
(The mechanism: :func:`dialogue.policy.policy.fit_pronouns`.)"""

from __future__ import annotations

from dialogue.policy.policy import fit_pronouns
from dialogue.resolvers import DialogueContext, Resolved, changed
from understanding.linker import LinkResult


class PronounKind:
    name = "pronoun_kind"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        if context.facts is None:
            return None
        return changed(links, fit_pronouns(links, context.turn, context.state, context.facts),
                       "a reference to a person or a thing: one of that kind")


RESOLVER = PronounKind()
