"""Head-word types split by the organisation that owns their members.

A head word alone can join things of different kinds: a hospital's 健康金卡 and an
airline's 金卡 both end in 金卡, two organisations' apps both in App. One type
for both pools their attributes (充值 and 保级 alike), so what a turn asks cannot
tell which one it means. The documents say whose each one is: the organisation
whose name (or the word it leads its names with, 海岚 of 海岚航空) the member's
name starts with, else the one its passages name most. When a type's members
belong to two organisations or more, each organisation's members get a type of
their own, the head word qualified by the organisation's lead word
(``会员卡（晴川）``); members with no clear owner keep the head word. A corpus of
one organisation never splits.

The words that follow a name are too few to tell such types apart (a card's own
document says 金卡：… and then its rules), so a split type's attributes also take
the words its members' own documents (those titled with their name) use and
the other owners' members' documents never use (保级 and 定级 for an
airline tier, 充值 and 余额 for a hospital card), leaving out words many other
documents use too and the words of the members' and organisations' own names.
"""

from __future__ import annotations

from collections import Counter, defaultdict

import re

from common.language import documents as words
from kg.suggest.corpus import Occurrences
from kg.suggest.entities import ORG_TYPE
from kg.suggest.evidence import Evidence, confidence
from kg.suggest.model import SuggestedEntity, Suggestion, SuggestedType
from kg.suggest.segment import words_of

MIN_OWNED_PASSAGES = 2  # passages naming the organisation beside the member
OWNER_SHARE = 0.6  # of the member's passages that name some organisation
MAX_OWN_WORDS = 16  # distinct words added to a split type's attributes
MIN_OWN_USES = 1
MAX_DOC_SHARE = 0.25  # of the other documents: a word they use this much says nothing of a kind
_WORD_RE = re.compile(r"[\u4e00-\u9fff]{2,4}|[A-Za-z]{3,}")


def split_by_owner(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """Qualify each shared head-word type by its members' owners when they differ."""
    leads = organisation_leads(suggestion)
    if len(set(leads.values())) < 2:
        return
    members: dict[str, list[SuggestedEntity]] = defaultdict(list)
    for entity in suggestion.entities.values():
        if entity.type not in (ORG_TYPE, "Entity"):
            members[entity.type].append(entity)
    for head, group in members.items():
        owners = {e.key: owner_of(e, leads, occurrences) for e in group}
        if len({o for o in owners.values() if o}) < 2:
            continue
        for entity in group:
            if owners[entity.key]:
                entity.type = words.OWNED_TYPE_NAME.format(head=head, owner=owners[entity.key])
                suggestion.types.setdefault(entity.type, SuggestedType(entity.type, head=head))
        if all(e.type != head for e in suggestion.entities.values()):
            suggestion.types.pop(head, None)


def owner_of(entity: SuggestedEntity, leads: dict[str, str], occurrences: Occurrences) -> str | None:
    """The lead word of the organisation that owns ``entity``, or None when unclear."""
    marks = sorted(leads, key=len, reverse=True)
    named = next((leads[m] for m in marks if entity.name.startswith(m)), None)
    if named:
        return named
    seen: Counter[str] = Counter()
    for index in occurrences.passages_of(entity.name):
        passage = occurrences.passages[index]
        text = f"{passage.title}\n{passage.text}"
        for lead in {leads[m] for m in marks if m in text}:
            seen[lead] += 1
    if not seen:
        return None
    (best, count), total = seen.most_common(1)[0], sum(seen.values())
    return best if count >= MIN_OWNED_PASSAGES and count >= OWNER_SHARE * total else None


def organisations(suggestion: Suggestion) -> dict[str, SuggestedEntity]:
    """Each organisation by its lead word (the first one named, when two share it)."""
    found: dict[str, SuggestedEntity] = {}
    for org in suggestion.entities.values():
        if org.type == ORG_TYPE:
            found.setdefault(_lead(org), org)
    return found


def _lead(org: SuggestedEntity) -> str:
    first = words_of(org.name)[0]
    return first if len(first) >= 2 and first != org.name else org.name[:2]


def organisation_leads(suggestion: Suggestion) -> dict[str, str]:
    """Each organisation's name, aliases and lead word → its lead word (the first word
    of its name, which its products' names start with: 晴川 of 晴川航空集团)."""
    leads: dict[str, str] = {}
    for org in suggestion.entities.values():
        if org.type != ORG_TYPE:
            continue
        lead = _lead(org)
        for mark in (org.name, *org.aliases, lead):
            if len(mark) >= 2:
                leads.setdefault(mark, lead)
    return leads


def add_distinct_words(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """Add to each split type the words only its members' own documents use."""
    split: dict[str, list[SuggestedType]] = defaultdict(list)
    for t in suggestion.types.values():
        if t.head:
            split[t.head].append(t)
    split_names = {t.name for types_ in split.values() for t in types_}
    names = {n for e in suggestion.entities.values() if e.type == ORG_TYPE or e.type in split_names
             for n in (e.name, *e.aliases)}
    all_docs = {p.doc_id for p in occurrences.passages}
    for siblings in split.values():
        used = {t.name: _own_words(suggestion, t.name, occurrences) for t in siblings}
        for t in siblings:
            words_used, own_docs = used[t.name]
            others = set().union(*(set(w) for n, (w, _) in used.items() if n != t.name))
            elsewhere = max(len(all_docs - own_docs), 1)
            kept = [(w, c) for w, c in words_used.most_common()
                    if c >= MIN_OWN_USES and w not in others and w not in t.attributes
                    and not any(w in n for n in names)
                    and len(occurrences.docs_of(w) - own_docs) <= MAX_DOC_SHARE * elsewhere]
            for word, count in kept[:MAX_OWN_WORDS]:
                t.attributes[word] = Evidence(confidence(0.3 * count), {"uses": count}, [],
                                              "used by its members' own documents only")


def _own_words(suggestion: Suggestion, type_name: str,
               occurrences: Occurrences) -> tuple[Counter[str], set[str]]:
    """Words of the passages titled with a member's name, by how often they occur, and
    the documents those passages belong to."""
    members = [e.name for e in suggestion.entities.values() if e.type == type_name]
    found: Counter[str] = Counter()
    docs: set[str] = set()
    for passage in occurrences.passages:
        if any(name in passage.title for name in members):
            docs.add(passage.doc_id)
            found.update(w for w in words_of(passage.text)
                         if _WORD_RE.fullmatch(w) and w not in words.NOT_ATTRIBUTES)
    return found, docs
