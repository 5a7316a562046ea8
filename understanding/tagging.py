"""Tagging passages with the canonical entities they mention (for chunks ingested
without ``entity_ids``)."""

from __future__ import annotations

from kg.aliases import AliasSnapshot
from understanding.linker import EntityLinker
from understanding.mentions import MentionKind, detect_mentions


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
