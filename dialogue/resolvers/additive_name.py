"""A new name followed by "too" asks the question just asked of that name as well: the
subject talked about stays beside it.

After 渡轮上的热水要收费吗, 年卡会员也要付吗 is still about the hot water, now for the
pass holders; after a question about the luggage limit, 那年卡还能多带几件 is still about
the luggage. The cue right after the name is language data (``ADDITIVE_AFTER_NAME``).

Only when what the turn names is another kind of thing than every entity in focus: a
name of the focus's own kind after "too" (东馆也有吗 after 西馆的展厅) is a counterpart
or a new subject, which other resolvers settle. Nothing stays when a pronoun of the
turn already says what it is about, nor what the user corrected away from.
"""

from __future__ import annotations

from common.language import cues
from dialogue.resolvers import DialogueContext, Resolved
from kg.aliases import AliasSnapshot
from understanding.linker import Candidate, Link, LinkResult
from understanding.mentions import Mention, MentionKind

REASON = "a name followed by 'too': the subject talked about stays beside it"


def _named(links: LinkResult) -> list[Link]:
    return [link for link in links.links if link.mention.kind is MentionKind.ALIAS and link.entity_ids]


def _types(entity_ids, snapshot: AliasSnapshot) -> set[str]:
    return {snapshot.entities[e].type for e in entity_ids if e in snapshot.entities}


def asks_it_too(text: str, links: LinkResult) -> bool:
    """Every name of the turn is followed right away by the "too" cue."""
    named = _named(links)
    return bool(named) and all(cues.ADDITIVE_AFTER_NAME_RE.match(text, link.mention.end)
                               for link in named)


def staying(links: LinkResult, context: DialogueContext) -> tuple[str, ...]:
    """The focus entities that stay beside the turn's names (none when one of them is of
    a focus entity's kind)."""
    snapshot, state = context.snapshot, context.state
    named = [e for link in _named(links) for e in link.entity_ids]
    focus = [e for e in state.focus if e not in named and e not in state.negated
             and e in snapshot.entities]
    if not focus or _types(named, snapshot) & _types(focus, snapshot):
        return ()
    return tuple(focus)


class AdditiveName:
    name = "additive_name"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        if not context.going_on or any(link.mention.kind in (MentionKind.PRONOUN, MentionKind.IMPLICIT)
                                       for link in links.links):
            return None
        if not asks_it_too(context.turn.detection.text, links):
            return None
        kept = staying(links, context)
        if not kept:
            return None
        link = Link(Mention(MentionKind.IMPLICIT, "", 0, 0),
                    tuple(Candidate(e, 1.0, "focus") for e in kept), kept, REASON)
        return Resolved(LinkResult((*links.links, link)), REASON)


RESOLVER = AdditiveName()
