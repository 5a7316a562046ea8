"""The short name a family of two or three entities shares, though the documents
write each member's full name: users say the family's name, and Referent must
ask which member they mean rather than pick one.

Three kinds of family, each read from the members' names alone:

* variants: the name without its variant word (晨星信用卡 for 晨星信用卡标准版 and
  晨星信用卡白金版; 星辰套餐 for its 个人版 and 家庭版);
* a brand word two or three unrelated things start with (悦行 for 悦行贷 and
  悦行流量包), when it is no everyday word, no entity's name and not the
  organisation's own name (a bank's name in front of its cards is its brand, and
  a turn saying it means the bank);
* a name that places or units tell apart (解放路网点 for 江城解放路网点 and
  海城解放路网点; 皮肤科 for 北坪皮肤科 and 南坪皮肤科), when what tells them apart
  also leads other names of the corpus (江城分行, 北坪): it qualifies, it does
  not name.

A form more than three entities share says a kind and is left out, as are forms
that are an entity's own name (that entity keeps it).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable

from common.language import documents as words
from kg.suggest.entities import ORG_TYPE
from kg.suggest.evidence import Evidence
from kg.suggest.model import SuggestedEntity, Suggestion
from kg.suggest.segment import common_word, words_of
from kg.suggest.types import head_core

MAX_FAMILY = 3
_QUALIFIER_CHARS = "（("


def add_family_names(suggestion: Suggestion) -> None:
    """Add each family's shared name to its members, as an ambiguous alias."""
    members = [e for e in suggestion.entities.values() if e.type != ORG_TYPE]
    taken = {e.name for e in suggestion.entities.values()}
    brands = {a for e in suggestion.entities.values() if e.type == ORG_TYPE for a in (e.name, *e.aliases)}
    rules: list[tuple[Callable[[SuggestedEntity], Iterable[str]], str]] = [
        (_variant_stem, "the name its variants share, without their variant word"),
        (_brand_words(members), "the first word two or three names share"),
        (_qualified_heads(suggestion), "the name without the place or unit that tells them apart"),
    ]
    for rule, reason in rules:
        families: dict[str, list[SuggestedEntity]] = defaultdict(list)
        for entity in members:
            for form in sorted(set(rule(entity))):  # sorted: the same file on every run
                families[form].append(entity)
        for form, owners in families.items():
            if _is_family(form, owners, taken, brands):
                evidence = Evidence(0.5, {"holders": len(owners)}, [], reason)
                for owner in owners:
                    owner.add_alias(form, evidence)
    _add_lead_forms(suggestion, taken)


def _add_lead_forms(suggestion: Suggestion, names: set[str]) -> None:
    """观光舱标准票 for 观光舱标准, beside the 标准票 it shares: the thing it is a variant of
    in front of the shared form its title gave, so that a turn naming both (观光舱的标准票,
    观光舱标准票) is not asked which."""
    shared = suggestion.ambiguous_aliases()
    for entity in suggestion.entities.values():
        if not entity.title_name or entity.stem:
            continue
        title = _core_of(entity.title_name)
        for alias in [a for a in entity.aliases if a in shared]:
            at = title.rfind(alias)
            if at >= 2 and title[:at] in names:
                entity.add_alias(title[:at] + alias, Evidence(0.5, {}, [], "the thing it is a variant of, "
                                                              "before the form its title gives the variants"))


def _is_family(form: str, owners: list[SuggestedEntity], taken: set[str], brands: set[str]) -> bool:
    """Two or three things share it, it is no everyday word, no entity's own name, and no
    part of an organisation's name (翠湖 of 翠湖银行 leads its cards: it means the bank)."""
    # The bracketed variants of one name (X（A）, X（B）) already share X; what follows a
    # lead they both have does not tell them apart.
    cores = {_core(e) for e in owners}
    return (2 <= len(cores) <= MAX_FAMILY and len(form) >= 2 and form not in taken
            and not common_word(form) and not any(form in b for b in brands))


def _core(entity: SuggestedEntity) -> str:
    return _core_of(entity.stem or entity.name)


def _variant_stem(entity: SuggestedEntity) -> Iterable[str]:
    core = _core(entity)
    m = words.VARIANT_TAIL_RE.search(core)
    if m and m.start() >= 2 and not entity.stem:
        yield core[: m.start()]


def _brand_words(members: list[SuggestedEntity]) -> Callable[[SuggestedEntity], Iterable[str]]:
    """The first words of names of several words (悦行 of 悦行流量包); a name the segmenter
    reads as one word (悦行贷) is matched by how it starts."""
    leads: dict[str, set[str]] = defaultdict(set)  # its first two characters → the lead
    for entity in members:
        parts = words_of(_core(entity))
        if len(parts) >= 2 and len(parts[0]) >= 2 and not parts[0].isascii():
            leads[parts[0][:2]].add(parts[0])

    def starts(entity: SuggestedEntity) -> Iterable[str]:
        core = _core(entity)
        return [lead for lead in leads.get(core[:2], ()) if core.startswith(lead) and len(core) > len(lead)]

    return starts


def _qualified_heads(suggestion: Suggestion) -> Callable[[SuggestedEntity], Iterable[str]]:
    """解放路网点 for 江城解放路网点, when 江城 also leads a name outside the family (江城分行)."""
    heads_by_lead: dict[str, list[str]] = defaultdict(list)  # a name's start → the heads of its names
    for other in suggestion.entities.values():
        for n in range(1, len(other.name) + 1):
            heads_by_lead[other.name[:n]].append(head_core(other))

    def head(entity: SuggestedEntity) -> Iterable[str]:
        parts = words_of(head_core(entity))
        for n in range(1, len(parts)):
            lead, rest = "".join(parts[:n]), "".join(parts[n:])
            if len(rest) >= 3 and any(not h.endswith(rest) for h in heads_by_lead.get(lead, ())):
                return [rest, *_title_rests(entity, heads_by_lead)]
        return _title_rests(entity, heads_by_lead)

    return head


def _title_rests(entity: SuggestedEntity, heads_by_lead: dict[str, list[str]]) -> list[str]:
    """标准票价 and 标准票 for 观光舱标准, titled 观光舱标准票价…: the thing it is a variant
    of (观光舱, another entity's name) off the title's name, and that rest with its
    last word of two characters cut to the first (票价 → 票, as 贷款 → 贷). Users say
    the variant with the word the title gave it; the entity's own name lost that
    word, and its rest alone (标准) is an everyday word. Every lead that is another
    entity's name is tried (豪华观光舱 as well as 超级), so that all members share it."""
    if not entity.title_name or entity.stem:
        return []
    title = _core_of(entity.title_name)
    rests: list[str] = []
    for n in range(2, len(title) - 2):
        lead, rest = title[:n], title[n:]
        if lead in heads_by_lead.get(lead, ()):
            rests.append(rest)
            if len(words_of(rest)[-1]) == 2:
                rests.append(rest[:-1])
    return rests


def _core_of(name: str) -> str:
    for bracket in _QUALIFIER_CHARS:
        name = name.split(bracket, 1)[0]
    return name.strip()
