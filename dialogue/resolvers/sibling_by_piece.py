"""An ellipsis that says a piece of a sibling's name (and maybe its edition) means that
sibling in place of the focus.

After a question about 渡轮随身行李规定, 那托运的2025版呢 names no entity: 托运 is a piece
of the names of 渡轮托运行李规定（2024版） and （2025版）, which share the name 行李规定
with the focus, and 2025版 says which of the two. The turn asks the previous question of
that sibling.

Siblings are the entities of the focus's type that share an alias with it; in a turn
that is an ellipsis, a cue and a few words that ask nothing of their own (研究生的呢
after 本科生宿舍住宿费多少; not 导演是谁呢), also those of its type that
share a piece of a name with it (宿舍: 研究生公寓 is also called 研究生宿舍) or a
name's head, its last Chinese character (华东仓 and 华南仓: 仓), since the cue says the
turn asks the last question of something else. A piece is two Chinese
characters in a row or an English word (understanding/pieces.py) that the sibling's
names hold and the focus's do not. It settles only on exactly one sibling, and only for
a continuation that names nothing else (no name, no pronoun) about one entity in focus;
the link is a counterpart, so the new name is written in place of the old one.

*Limit:* the wider reading scans the focus's type, so it is skipped for a type of more
than ``WIDE_LIMIT`` entities, where only siblings sharing an alias count.
"""

from __future__ import annotations

from dialogue.classify import TurnKind, is_ellipsis, is_short_correction
from dialogue.policy.counterparts import SOURCE
from dialogue.policy.versions import edition, number_said
from dialogue.resolvers import DialogueContext, Resolved
from kg.aliases import AliasSnapshot
from understanding.linker import Candidate, Link, LinkResult
from understanding.mentions import Detection, MentionKind
from understanding.pieces import name_heads, name_pieces, said_pieces

REASON = "a piece of a sibling's name said in an ellipsis: that sibling in place of the focus"


# The most entities of one type the ellipsis reading scans for a shared piece of a name.
WIDE_LIMIT = 2000


def siblings(entity_id: str, snapshot: AliasSnapshot, *, wide: bool = False) -> set[str]:
    """The entities of ``entity_id``'s type that share an alias with it; with ``wide``,
    also those that share a piece of a name with it (in a type of at most WIDE_LIMIT)."""
    entity = snapshot.entities[entity_id]
    out: set[str] = set()
    for alias in entity.all_aliases:
        out.update(snapshot.by_norm.get(snapshot.normalize(alias), ()))
    same = {e for e in out - {entity_id}
            if e in snapshot.entities and snapshot.entities[e].type == entity.type}
    return same | (_sharing_a_name_part(entity_id, snapshot) if wide else set())


def _sharing_a_name_part(entity_id: str, snapshot: AliasSnapshot) -> set[str]:
    kind = snapshot.entities[entity_id].type
    same_type = [e for e, x in snapshot.entities.items() if x.type == kind and e != entity_id]
    if len(same_type) > WIDE_LIMIT:
        return set()
    own, heads = name_pieces(snapshot, entity_id), name_heads(snapshot, entity_id)
    return {e for e in same_type
            if own & name_pieces(snapshot, e) or heads & name_heads(snapshot, e)}


def sibling_meant(old: str, detection: Detection, snapshot: AliasSnapshot, *,
                  short_ellipsis: bool = False) -> str | None:
    """The one sibling of ``old`` whose names hold a piece of the turn that ``old``'s do
    not, narrowed by the edition the turn says; None when none or several are. With
    ``short_ellipsis`` (a cue and a few words that ask nothing of their own), siblings
    sharing a piece of a name count too."""
    said = said_pieces(snapshot, detection.text) - name_pieces(snapshot, old)
    near = siblings(old, snapshot, wide=short_ellipsis)
    found = [e for e in sorted(near) if said & name_pieces(snapshot, e)]
    numbers = [n for m in detection.of(MentionKind.TIME) if (n := number_said(m.text))]
    if numbers:
        found = [e for e in found
                 if (own := edition(snapshot.name(e))) is not None and own[1] == numbers[0]]
    return found[0] if len(found) == 1 else None


class SiblingByPiece:
    name = "sibling_by_piece"

    def resolve(self, links: LinkResult, context: DialogueContext) -> Resolved | None:
        if context.kind is not TurnKind.CONTINUATION:
            return None
        if any(link.mention.kind in (MentionKind.ALIAS, MentionKind.PRONOUN) for link in links.links):
            return None
        implicit = [link for link in links.links if link.mention.kind is MentionKind.IMPLICIT]
        if len(implicit) != 1 or len(implicit[0].entity_ids) != 1:
            return None
        old = implicit[0].entity_ids[0]
        if old not in context.snapshot.entities:
            return None
        detection = context.turn.detection
        # A correction's cue and a few words (说错了，我想问西城) ask, as an ellipsis
        # does, the last question of something else.
        asks_last = is_ellipsis(detection, links) or is_short_correction(detection.text)
        new = sibling_meant(old, detection, context.snapshot, short_ellipsis=asks_last)
        if new is None:
            return None
        link = Link(implicit[0].mention, (Candidate(new, 1.0, SOURCE),), (new,),
                    f"{REASON}: {new} in place of {old}")
        rest = tuple(x for x in links.links if x is not implicit[0])
        return Resolved(LinkResult((*rest, link)), REASON)


RESOLVER = SiblingByPiece()
