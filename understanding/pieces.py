"""Pointing at an entity by a piece of its name: 尊享那张, 江北那家也能刷卡吗, the enterprise one.

A piece is two Chinese characters in a row or an English word (longer than two letters,
not a filler such as "the" or "card"). Among a few entities (the options of a
clarification, the entities in play), the one whose names alone share a piece with
the user's words is the one meant; when none or several do, nobody is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from common.language import cues
from common.language.normalize import is_cjk
from kg.aliases import AliasSnapshot

_WORD_RE = re.compile(r"[a-z0-9]+")


def latin_words(text: str) -> list[str]:
    """The words of ``text`` written in letters and digits, lower case."""
    return _WORD_RE.findall(text.lower())


def _cjk_pairs(norm: str) -> set[str]:
    return {norm[i:i + 2] for i in range(len(norm) - 1) if is_cjk(norm[i]) and is_cjk(norm[i + 1])}


def name_pieces(snapshot: AliasSnapshot, entity_id: str) -> set[str]:
    """Every piece of the entity's names and aliases."""
    entity = snapshot.entities.get(entity_id)
    out: set[str] = set()
    for alias in (entity.all_aliases if entity else ()):
        out |= _cjk_pairs(snapshot.normalize(alias))
        out.update(w for w in latin_words(alias) if w not in cues.NAME_FILLERS and len(w) > 2)
    return out


def name_heads(snapshot: AliasSnapshot, entity_id: str) -> set[str]:
    """The last Chinese character of each of the entity's names and aliases: the head noun
    of a compound name (华东仓, 华南仓: 仓), which names of one kind often share without
    sharing a piece."""
    entity = snapshot.entities.get(entity_id)
    return {norm[-1] for alias in (entity.all_aliases if entity else ())
            if (norm := snapshot.normalize(alias)) and is_cjk(norm[-1])}


def said_pieces(snapshot: AliasSnapshot, text: str) -> set[str]:
    """The pieces of what the user said."""
    norm = snapshot.normalize(text)
    return ({norm[i:i + 2] for i in range(len(norm) - 1)}
            | {w for w in latin_words(text) if w not in cues.NAME_FILLERS})


def pointed_at(snapshot: AliasSnapshot, text: str, candidates: Sequence[str]) -> str | None:
    """The one candidate whose names share a piece of ``text`` that no other candidate's
    names share; None when no candidate or more than one does."""
    said = said_pieces(snapshot, text)
    own = {eid: name_pieces(snapshot, eid) for eid in dict.fromkeys(candidates)}
    hits = [eid for eid in own
            if said & (own[eid] - set().union(*(p for o, p in own.items() if o != eid)))]
    return hits[0] if len(hits) == 1 else None
