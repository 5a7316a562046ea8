"""Relations and editions the names and passages state.

* PART_OF: a name that is another name followed by more words is a part or a
  kind of it (头等舱标准 of 头等舱, 北坪皮肤科 of 北坪); a name that starts with an
  organisation's name belongs to it, and, in a corpus of several organisations, so
  does a thing whose passages name one of them (owners.py). The ontology file gives
  each entity its PART_OF target as its ``parent``: the dialogue reads a shared short
  name under the owner the conversation is about.
* SUCCEEDS: of two editions, the later one succeeds the earlier; when a passage
  of the later one says from when (自2025年3月1日起), that date is its 生效日期.
"""

from __future__ import annotations


from common.language import documents
from kg.suggest import owners
from kg.suggest.corpus import Occurrences
from kg.suggest.entities import ORG_TYPE
from kg.suggest.evidence import Evidence, cite
from kg.suggest.model import SuggestedRelation, Suggestion



def add_part_of(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """PART_OF from the names, then, for the rest, the organisation that owns them."""
    _part_of_named(suggestion, occurrences)
    _part_of_owner(suggestion, occurrences)


def _part_of_owner(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """A thing whose name holds no other entity's belongs to the organisation its
    passages name (an airline's baggage rules, a hospital's clinic), when the corpus
    has several: a short name two of them share (金卡) is then read under the one the
    conversation is about. In a corpus of one organisation, ownership tells nothing apart."""
    orgs, leads = owners.organisations(suggestion), owners.organisation_leads(suggestion)
    if len(orgs) < 2:
        return
    placed = {r.from_key for r in suggestion.relations if r.type == "PART_OF"}
    for entity in suggestion.entities.values():
        if entity.type == ORG_TYPE or entity.key in placed:
            continue
        org = orgs.get(owners.owner_of(entity, leads, occurrences) or "")
        if org is not None:
            suggestion.relations.append(SuggestedRelation(
                entity.key, "PART_OF", org.key,
                Evidence(0.4, {}, cite(occurrences, entity.name, 1),
                         f"its passages name {org.name}")))


def _part_of_named(suggestion: Suggestion, occurrences: Occurrences) -> None:
    holders: dict[str, list] = {}
    for entity in suggestion.entities.values():
        for alias in {entity.name, *entity.aliases}:
            holders.setdefault(alias, []).append(entity)
    for child in suggestion.entities.values():
        names = [(child.name[:n], parent) for n in range(2, len(child.name))
                 for parent in holders.get(child.name[:n], ())
                 if parent is not child and not (parent.stem and parent.stem == child.stem)
                 and len(holders[child.name[:n]]) == 1]
        if not names:
            continue
        alias, parent = max(names, key=lambda ap: (ap[1].type != ORG_TYPE, len(ap[0])))
        suggestion.relations.append(SuggestedRelation(
            child.key, "PART_OF", parent.key,
            Evidence(0.6 if parent.type != ORG_TYPE else 0.5, {}, cite(occurrences, child.name, 1),
                     f"the name {child.name} starts with {alias}")))


def add_editions(suggestion: Suggestion, occurrences: Occurrences) -> None:
    stems: dict[str, list] = {}
    for entity in suggestion.entities.values():
        if entity.stem:
            stems.setdefault(entity.stem, []).append(entity)
    for group in stems.values():
        group.sort(key=lambda e: tuple(int(p) for p in (e.edition or "0").split(".") if p.isdigit()))
        for older, newer in zip(group, group[1:]):
            since = _valid_from(newer.name, occurrences)
            if since:
                newer.attributes[documents.VALID_FROM] = since
            said = f", in force from {since}" if since else ""
            suggestion.relations.append(SuggestedRelation(
                newer.key, "SUCCEEDS", older.key,
                Evidence(0.8 if since else 0.6, {}, cite(occurrences, newer.name, 2),
                         f"a later edition of {newer.stem}{said}")))


def _valid_from(name: str, occurrences: Occurrences) -> str | None:
    for index in occurrences.passages_of(name):
        text = occurrences.passages[index].text
        at = text.find(name)
        m = documents.SINCE_RE.search(text, max(0, at), at + len(name) + 40) if at >= 0 else None
        if m:
            return m.group(1)
    return None
