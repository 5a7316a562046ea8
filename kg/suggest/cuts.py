"""Short forms cut the way the corpus cuts another member of the same kind.

When the documents shorten one member of a kind by cutting the kind's head word
(车贷 for 个人汽车贷款: 贷 of 贷款, after the last character of the word before it;
畅行卡 for the 畅行 credit cards: 卡 of 信用卡, after their first word), users
shorten the other members the same way, and the documents, which write each
member in full, seldom do. So a member's form made with a cut its kind already
shows needs one use on its own in the passages, not the two a short form
otherwise needs; and it may be an everyday word (房贷 for 个人住房贷款), since it
abbreviates this name rather than being a word the name contains.

A form is kept only when one member of the kind makes it, it is no entity's
name or alias already, its lead is no organisation's (a bank's name before its
cards' cut head names the bank's cards, not one), and the passages do not use
it mainly in many more documents than its owner's.
"""

from __future__ import annotations

import math
from collections import defaultdict

from kg.suggest.aliases import specific
from kg.suggest.corpus import Occurrences
from kg.suggest.entities import ORG_TYPE
from kg.suggest.evidence import Evidence, cite, confidence
from kg.suggest.model import SuggestedEntity, Suggestion
from kg.suggest.segment import words_of
from kg.suggest.types import head_core

_CJK_MIN, _CJK_MAX = "\u4e00", "\u9fff"


def add_kind_cuts(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """For each kind whose documents write a member's head word cut short, the same
    cut of its other members, when the passages use it on its own at least once."""
    members = _members_by_head(suggestion)
    names = {n for e in suggestion.entities.values() for n in (e.name, *e.aliases)}
    brands = _organisation_leads(suggestion)
    for head, group in members.items():
        cuts = {cut for entity in group for cut in _cuts_shown(entity, head, occurrences)}
        if not cuts:
            continue
        makers: dict[str, list[SuggestedEntity]] = defaultdict(list)
        for entity in group:
            for form in _cut_forms(head_core(entity), head, cuts, brands):
                makers[form].append(entity)
        for form, owners in makers.items():
            if len(owners) == 1 and form not in names:
                _add_if_used(form, owners[0], head, names, occurrences)


def _members_by_head(suggestion: Suggestion) -> dict[str, list[SuggestedEntity]]:
    """The head word of each kind (信用卡, 贷款; a split kind's own head) → its members
    whose name holds it."""
    heads = {name: t.head or name.split("（")[0] for name, t in suggestion.types.items()}
    members: dict[str, list[SuggestedEntity]] = defaultdict(list)
    for entity in suggestion.entities.values():
        head = heads.get(entity.type)
        if entity.type == ORG_TYPE or entity.stem or not head or len(head) < 2:
            continue
        if head in head_core(entity):
            members[head].append(entity)
    return members


def _cuts_shown(entity: SuggestedEntity, head: str, occurrences: Occurrences) -> set[str]:
    """The cut heads (贷 of 贷款, 卡 of 信用卡) the entity's written aliases end with, each
    after characters of the name that come before the head (车 of 汽车, 畅行)."""
    core = head_core(entity)
    before = core[: core.index(head)]
    found = set()
    for alias in entity.aliases:
        if head in alias or not _is_cjk(alias) or not occurrences.count(alias):
            continue
        for cut in _cuts_of(head):
            lead = alias[: -len(cut)]
            if alias.endswith(cut) and lead and _in_order(lead, before):
                found.add(cut)
    return found


def _cuts_of(head: str) -> list[str]:
    """The shorter pieces a head word is cut to: its start or its end (贷, 卡, 用卡)."""
    return [head[:n] for n in range(1, len(head))] + [head[-n:] for n in range(1, len(head))]


def _cut_forms(core: str, head: str, cuts: set[str], brands: set[str]) -> set[str]:
    """房贷, 住房贷, 个人贷 of 个人住房贷款 for the cut 贷: the first word before the head,
    the last one, or the last one's last character, then the cut head."""
    before = core[: core.index(head)]
    parts = words_of(before) if before else ()
    if not parts:
        return set()
    leads = {parts[0], parts[-1], parts[-1][-1]} - brands
    return {lead + cut for lead in leads for cut in cuts if len(lead + cut) >= 2 and _is_cjk(lead)}


def _add_if_used(form: str, entity: SuggestedEntity, head: str, names: set[str],
                 occurrences: Occurrences) -> None:
    longer = [n for n in names if form in n and n != form]
    longer += [form + head[i:] for i in range(1, len(head)) if form.endswith(head[:i])]
    alone = occurrences.standalone_count(form, longer, enough=8)
    if alone < 1 or not specific(form, [entity], occurrences):
        return
    entity.add_alias(form, Evidence(confidence(0.4 + 0.2 * math.log1p(alone)), {"standalone": alone},
                                    cite(occurrences, form),
                                    "the name's head word cut as the documents cut another of its kind"))


def _organisation_leads(suggestion: Suggestion) -> set[str]:
    """Organisations' names and aliases: a brand in front of a thing's name."""
    return {n for e in suggestion.entities.values() if e.type == ORG_TYPE
            for n in (e.name, *e.aliases, head_core(e))}


def _in_order(chars: str, text: str) -> bool:
    it = iter(text)
    return all(c in it for c in chars)


def _is_cjk(text: str) -> bool:
    return all(_CJK_MIN <= c <= _CJK_MAX for c in text)
