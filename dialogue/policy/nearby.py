"""A shared name settled by what the dialogue talked about, through the ontology.

我明天去南校区上课 → 图书馆怎么走 → 自习室周末开放吗: 自习室 is shared by both campuses'
buildings, and the focus is now the south campus's library, not the campus. The
linker settles a shared name by the focus itself or by an entity one relation away
from it; here the department meant is a *sibling* of the focus (part of the same
campus), and the campus was said two turns ago. 我是星卡，能带孩子一起进去吗 after a
question about a waiting lounge: the membership tier grants access to it, the gym's card
does not.

For each entity the dialogue talked about (the focus, then the entities of the recent
turns, most recent first), the candidates nearest it are found: the entity itself,
then those related to it, then those sharing a related entity with it. The first
entity and distance at which exactly one candidate is near settles the name; one at
which several are tells nothing and the search goes on. Entities the user corrected
away from count for nothing. A hub that most entities hang off (the company) does
not make two entities siblings: a shared neighbour counts only when it has at most
:data:`SIBLING_HUB_LIMIT` relations.
"""

from __future__ import annotations

from collections.abc import Sequence

from dialogue.state import SessionState
from kg.aliases import AliasSnapshot
from understanding.linker import Link, LinkResult
from understanding.mentions import MentionKind

#: A shared neighbour with more relations than this (a company, a hub) makes no siblings.
SIBLING_HUB_LIMIT = 12
REASON = "the entity near what the dialogue talked about"


def settle_by_nearby(links: LinkResult, state: SessionState,
                     snapshot: AliasSnapshot) -> LinkResult:
    """Each ambiguous name settled by the dialogue's entities (see the module); returns
    ``links`` itself when none is."""
    pool = talked_about(state)
    if not pool:
        return links
    out = list(links.links)
    changed = False
    for i, link in enumerate(out):
        if link.mention.kind is not MentionKind.ALIAS or not link.ambiguous:
            continue
        found = nearest(tuple(c.entity_id for c in link.candidates), pool, snapshot)
        if found is None:
            continue
        chosen, anchor, distance = found
        out[i] = Link(link.mention, link.candidates, (chosen,),
                      f"{REASON}: {anchor} ({_DISTANCES[distance]})")
        changed = True
    return LinkResult(tuple(out)) if changed else links


_DISTANCES = ("itself", "related to it", "sharing a related entity with it")


def talked_about(state: SessionState) -> list[str]:
    """The focus, then the entities of the recent turns, most recent first, less what the
    user corrected away from."""
    seen = [*state.focus, *(e for record in reversed(state.recent) for e in record.entities)]
    return [e for e in dict.fromkeys(seen) if e not in state.negated]


def nearest(candidates: Sequence[str], pool: Sequence[str],
            snapshot: AliasSnapshot) -> tuple[str, str, int] | None:
    """The one candidate nearest an entity of ``pool``, that entity and the distance; None
    when none is, or when several were talked about themselves (which of them is meant
    is the clarify gate's question)."""
    if len(set(candidates) & set(pool)) > 1:
        return None
    for distance in range(len(_DISTANCES)):
        for anchor in pool:
            near = [c for c in candidates if _near(c, anchor, distance, snapshot)]
            if len(near) == 1:
                return near[0], anchor, distance
    return None


def _near(candidate: str, anchor: str, distance: int, snapshot: AliasSnapshot) -> bool:
    if distance == 0:
        return candidate == anchor
    own = snapshot.related.get(candidate, frozenset())
    if distance == 1:
        return anchor in own
    shared = own & snapshot.related.get(anchor, frozenset())
    return any(len(snapshot.related.get(e, ())) <= SIBLING_HUB_LIMIT for e in shared)
