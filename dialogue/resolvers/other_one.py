""""The other one" (另一个呢, 另外那个呢, and the other one?): of two things in play, the
one the talk is not on.

After 国奖一年多少钱, 另一个呢 names nothing, and 另外那个 only points: the user means the
other of a pair they have in mind. That pair is the entities last listed together, when
the focus is one of two there; else the focus and its one ``confusable`` partner (the
ontology's pairs users mix up). The turn's implicit link, or its pointer, goes to that
other entity in place of the focus, as a counterpart, so the previous question is
asked of it (dialogue/render.py).

It settles only on a continuation about one entity in focus, when the pair gives exactly
one other; the words are language data (``OTHER_ONE`` in common/language/).
*Limit:* a third reading (the other of three editions) is not guessed.
"""

from __future__ import annotations

from common.language import cues
from dialogue.classify import TurnKind
from dialogue.policy.counterparts import SOURCE
from dialogue.resolvers import DialogueContext, Resolved
from understanding.linker import Candidate, Link, LinkResult
from understanding.mentions import MentionKind

REASON = "“the other one”: the other of the pair in play, in place of the focus"


def other_of(focus: str, context: DialogueContext) -> str | None:
    """The other of the pair ``focus`` belongs to: the entities last listed together, else
    its one confusable partner; None when there is no single one."""
    listed = list(dict.fromkeys(context.state.listed))
    if len(listed) == 2 and focus in listed:
        return next(e for e in listed if e != focus)
    partners = context.snapshot.confusable.get(focus, frozenset())
    return next(iter(partners)) if len(partners) == 1 else None


class OtherOne:
    name = "other_one"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        said = cues.OTHER_ONE_RE.search(context.turn.detection.text)
        if context.kind is not TurnKind.CONTINUATION or said is None:
            return None
        if any(link.mention.kind is MentionKind.ALIAS for link in links.links):
            return None
        own = [link for link in links.links if link.mention.kind is MentionKind.IMPLICIT
               or (link.mention.kind is MentionKind.PRONOUN
                   and said.start() <= link.mention.start < said.end())]
        if len(own) != 1 or len(own[0].entity_ids) != 1:
            return None
        old = own[0].entity_ids[0]
        new = other_of(old, context)
        if new is None or new not in context.snapshot.entities:
            return None
        link = Link(own[0].mention, (Candidate(new, 1.0, SOURCE),), (new,),
                    f"{REASON}: {new} in place of {old}")
        rest = tuple(x for x in links.links if x is not own[0])
        return Resolved(LinkResult((*rest, link)), REASON)


RESOLVER = OtherOne()
