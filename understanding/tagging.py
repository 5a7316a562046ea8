"""Tagging passages with the canonical entities they mention (for chunks ingested
without ``entity_ids``).

A passage is tagged with what it names (:func:`tag_entities`), and the passages of
one document are tagged together (:func:`tag_document`), so that the general
passages of a family's document reach each member: see that function.
"""

from __future__ import annotations

from collections.abc import Sequence

from kg.aliases import AliasSnapshot
from understanding.linker import EntityLinker
from understanding.mentions import MentionKind, detect_mentions

#: The type of an entity no head word typed: sharing it says nothing of a kind.
UNTYPED = "Entity"
#: Members a document must give a passage of their own before it counts as a family's.
MIN_MEMBERS = 2


def tag_entities(text: str, snapshot: AliasSnapshot, linker: EntityLinker | None = None) -> tuple[str, ...]:
    """Entity ids a passage mentions by alias, in order of first mention.

    A shared alias that the passage itself does not settle (no distinguishing
    word) tags every entity it may name: a passage about "A产品" stays findable
    under either edition, and the entity-aware rerank sorts them out.
    """
    linker = linker or EntityLinker()
    detection = detect_mentions(text, snapshot)
    result = linker.link(detection, snapshot)
    ids: dict[str, None] = {}
    for link in result.links:
        if link.mention.kind is not MentionKind.ALIAS:
            continue
        for eid in link.entity_ids or tuple(c.entity_id for c in link.candidates):
            ids.setdefault(eid, None)
    return tuple(ids)


def tag_document(title: str, texts: Sequence[str], snapshot: AliasSnapshot,
                 linker: EntityLinker | None = None) -> list[tuple[str, ...]]:
    """Entity ids of each passage of one document, in the order of ``texts``.

    Each passage gets what its title and text name. A family's document also
    tags its general passages with every member: when the title names a thing
    (云帆宽带) and at least two things of its type each have a passage naming
    that member alone among them (500M宽带, 千兆宽带), the passages naming none
    of those members (installation, repairs) speak of the whole family, so a
    turn filtered by one member still finds them. A passage that names a member
    keeps its own tags: the price of one is not the price of the other.
    """
    linker = linker or EntityLinker()
    own = [tag_entities(f"{title}\n{text}", snapshot, linker) for text in texts]
    members = family_members(title, own, snapshot, linker)
    if not members:
        return own
    return [tags if set(tags) & set(members) else tags + tuple(m for m in members if m not in tags)
            for tags in own]


def family_members(title: str, tagged: Sequence[tuple[str, ...]], snapshot: AliasSnapshot,
                   linker: EntityLinker | None = None) -> tuple[str, ...]:
    """The members a family's document treats one passage at a time, or ``()``.

    Members are entities of the type of a thing the title names (not that thing
    itself) that some passage names as the only one of that type; fewer than
    :data:`MIN_MEMBERS` of them is no family (a document about one thing that
    mentions a sibling in passing).
    """
    subjects = set(tag_entities(title, snapshot, linker)) if title.strip() else set()
    kinds = {snapshot.entities[s].type for s in subjects if s in snapshot.entities} - {UNTYPED}
    if not kinds:
        return ()
    alone: dict[str, None] = {}
    for tags in tagged:
        same = [e for e in tags if e not in subjects and e in snapshot.entities
                and snapshot.entities[e].type in kinds]
        if len(same) == 1:
            alone.setdefault(same[0], None)
    return tuple(alone) if len(alone) >= MIN_MEMBERS else ()
