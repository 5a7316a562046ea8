"""Aliases: the shorter names users write, each attested by the corpus.

* the name without its bracketed qualifier (A产品 for A产品（个人版）) and with the
  qualifier run in (A产品个人版);
* the name without the organisation's name in front (微信银行 for 青岚银行微信银行),
  and an organisation's name without its head word (青岚 for 青岚银行) when the
  passages say it alone, not only as the brand in front of its products' names;
* an edition's stem and its run-in forms (基础版验光套餐, 基础版验光套餐2025版);
* short forms the passages use on their own: the name with a part left out
  (晨星卡, 晨星标准版 for 晨星信用卡标准版) or a part of it (皮肤科 for 北坪皮肤科),
  abbreviations (装修贷 for 青藤装修贷款, 钻石卡 for 晨曦信用卡钻石版), counted only
  where they do not stand inside a longer name (nor before the rest of a word cut
  short: 装修贷 in 装修贷款); two or three names'
  shared inner words (寄存包裹 of 江北寄存包裹规定 and 江南寄存包裹规定), made from
  the titles' names too when the entities lost an everyday last word of them, and
  then each member's own lead with them (江北寄存包裹);
* a Latin name the passages give beside the Chinese one, either way round
  (Paid annual leave (年假), 意外险（accident insurance）).

An alias several entities get is ambiguous: Referent asks which is meant. A
short form that more than a few entities share says a kind, not a thing (信用卡),
and is left out; so is one that is another entity's own name.

Full-width and traditional forms are not listed: the kb's normalisation
(common/language/normalize.py) already folds them onto these.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict

from common.language import documents as words
from kg.suggest.corpus import Occurrences
from kg.suggest.entities import ORG_TYPE
from kg.suggest.evidence import Evidence, cite, confidence
from kg.suggest.model import SuggestedEntity, Suggestion
from kg.suggest.segment import common_word, words_of

MAX_SHARED = 3  # a short form more entities share names a kind
MIN_STANDALONE = 2
LONG_FORM = 5  # a short form this long, or shared, is specific enough to count once
MAX_WORDS = 6
_QUALIFIER_RE = re.compile(r"[（(]([^（）()]{1,20})[）)]")
_CJK = re.compile(r"[\u4e00-\u9fff]")


def _core(name: str) -> str:
    return _QUALIFIER_RE.sub("", name).strip()


def add_structural(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """Qualifier, organisation-prefix and edition aliases."""
    orgs = [e for e in suggestion.entities.values() if e.type == ORG_TYPE]
    for org in orgs:
        _organisation_short_name(org, occurrences)
    prefixes = sorted({a for o in orgs for a in (o.name, *o.aliases)}, key=len, reverse=True)
    for entity in suggestion.entities.values():
        _qualifier_aliases(entity, occurrences)
        if entity.stem:
            _edition_aliases(entity, occurrences)
        if entity.type != ORG_TYPE:
            _org_prefix_alias(entity, prefixes, occurrences)


def _organisation_short_name(org: SuggestedEntity, occurrences: Occurrences) -> None:
    """青岚 for 青岚银行, when the passages say it alone (青岚的客服电话, 青岚在…). A short
    name the passages write only in front of other names (青岚借记卡, 云岭贵宾休息室) is
    the brand of the organisation's products: as an alias it would pull the turns about
    them (云岭休息室) onto the organisation."""
    for head in words.ORG_HEADS:
        short = org.name[: -len(head)].strip() if org.name.endswith(head) else ""
        if len(short) < 2 or common_word(short):
            continue
        alone = _said_alone(short, org.name, occurrences)
        if alone >= MIN_STANDALONE:
            org.add_alias(short, Evidence(confidence(0.7, 0.2 * alone), {"alone": alone},
                                          cite(occurrences, short), "the name without its head word"))


def _said_alone(short: str, full: str, occurrences: Occurrences) -> int:
    """Uses of ``short`` outside ``full`` that end where a name ends: before a particle,
    punctuation or a non-Chinese character, not before more of a name."""
    text, alone = occurrences.text, 0
    for at in occurrences.positions(short):
        after = text[at + len(short):at + len(short) + 1]
        if not text.startswith(full, at) and (not _CJK.match(after) or after in words.AFTER_NAME):
            alone += 1
    return alone


def _qualifier_aliases(entity: SuggestedEntity, occurrences: Occurrences) -> None:
    m = _QUALIFIER_RE.search(entity.name)
    if not m or entity.stem:
        return
    base = _core(entity.name)
    run_in = entity.name[: m.start()] + m.group(1) + entity.name[m.end():]
    for alias, why in ((base, "the name without its qualifier"), (run_in, "the qualifier run in")):
        if len(alias) >= 2:
            n = occurrences.count(alias)
            entity.add_alias(alias, Evidence(confidence(0.8, 0.2 * math.log1p(n)), {"occurrences": n},
                                             cite(occurrences, alias), why))


def _edition_aliases(entity: SuggestedEntity, occurrences: Occurrences) -> None:
    stem, ed = entity.stem or "", entity.edition or ""
    n = occurrences.count(stem)
    entity.add_alias(stem, Evidence(confidence(0.6, 0.2 * math.log1p(n)), {"occurrences": n},
                                    cite(occurrences, stem), "the name every edition shares"))
    for form in (f"{stem}{ed}版", f"{ed}版{stem}"):
        entity.add_alias(form, Evidence(0.7, {"occurrences": occurrences.count(form)},
                                        cite(occurrences, form), "the edition run in"))


def _org_prefix_alias(entity: SuggestedEntity, prefixes: list[str], occurrences: Occurrences) -> None:
    for prefix in prefixes:
        if entity.name.startswith(prefix) and len(entity.name) - len(prefix) >= 2:
            rest = entity.name[len(prefix):]
            n = occurrences.count(rest)
            entity.add_alias(rest, Evidence(confidence(0.6, 0.3 * math.log1p(n)), {"occurrences": n},
                                            cite(occurrences, rest), "the name without the organisation's"))
            if entity.stem and entity.stem.startswith(prefix):
                entity.add_alias(entity.stem[len(prefix):], Evidence(0.5, {}, [], "the shared stem without the organisation's name"))
            return


def _forms(core: str) -> set[str]:
    """Shorter names made of the name's words in order (晨星标准版, 装修贷款), the same
    with the head word cut to its last character (晨星卡 for 晨星 … 信用卡) or a last word
    of two to its first (装修贷 for 装修贷款), and the variant word run into the head's
    last character (白银卡 for 晨星信用卡白银版)."""
    parts = words_of(core)[:MAX_WORDS]
    latin = core.isascii()
    found = set(_abbreviations(parts)) if not latin else set()
    for mask in range(1, 2 ** len(parts) - 1):
        chosen = [w for i, w in enumerate(parts) if mask >> i & 1]
        found.add((" " if latin else "").join(chosen))
        if not latin:  # one word after the first cut to its last character
            for i in range(1, len(chosen)):
                if len(chosen[i]) >= 2:
                    found.add("".join(chosen[:i]) + chosen[i][-1] + "".join(chosen[i + 1:]))
    return {f for f in found if len(f) >= 2 and f != core and not f.isdigit()
            and (_CJK.search(f) or len(f) >= 3) and f.count("（") == f.count("）")}


def forms_of(name: str) -> set[str]:
    """The short forms the rules may make of ``name`` (晨星卡, 白银卡 of 晨星信用卡白银版)."""
    return _forms(_core(name))


def _abbreviations(parts: tuple[str, ...]) -> list[str]:
    """装修贷 of 装修贷款 (each word before the last kept in turn, the last cut to its first
    character), and 白银卡 of 晨星信用卡白银版 (the variant word without 版, then the
    head's last character): how users shorten a name the documents write in full."""
    found = []
    if len(parts) >= 2 and len(parts[-1]) == 2:
        found += [word + parts[-1][0] for word in parts[:-1] if len(word) >= 2]
    if len(parts) >= 3 and len(parts[-1]) >= 3 and words.VARIANT_TAIL_RE.fullmatch(parts[-1]):
        found.append(parts[-1][:-1] + parts[-2][-1])
    return found


def _uncut(form: str, owners: list[SuggestedEntity]) -> list[str]:
    """装修贷款 for 装修贷: where the documents write the word whole, the cut form is not
    said on its own."""
    lasts = {words_of(core)[-1] for e in owners for core in _cores(e)}
    return [form + last[1:] for last in lasts if len(last) == 2 and form.endswith(last[0])]


def add_short_forms(suggestion: Suggestion, occurrences: Occurrences, kinds: set[str]) -> None:
    """Short forms the passages use on their own, for every entity whose name holds them."""
    entities = list(suggestion.entities.values())
    own_names = {n for e in entities for n in (e.name, e.title_name) if n}
    names = own_names | {a for e in entities for a in e.aliases}
    holders = _holders_of_forms(entities)
    qualifiers: set[str] = set()
    for entity in entities:
        m = _QUALIFIER_RE.search(entity.name)
        if m and not entity.stem and len(m.group(1)) >= 2:  # 个人版 alone, for A产品（个人版）
            holders[m.group(1)].append(entity)
            qualifiers.add(m.group(1))
    containing = _containing(names, holders)
    for form in sorted(holders, key=len, reverse=True):
        owners = holders[form]
        if form in kinds or form in own_names:  # an entity's own name stays its own
            continue
        held = {e.stem or e.name for e in entities if form in e.aliases}
        if held and any(_core(e.stem or e.name).startswith(form) for e in owners):
            continue  # a variant of what the form names already, not another holder
        # An alias one entity has (App) is shared with the other names that end in it.
        if len({e.stem or e.name for e in owners} | held) > MAX_SHARED or form not in occurrences:
            continue
        if common_word(form) or (form not in qualifiers and not _shared_middle(form, owners) and not all(
                any(_keeps_head_or_lead(form, core) for core in _cores(e)) for e in owners)):
            continue
        if _variant_of_several(form, owners, qualifiers):
            continue
        longer = [*containing.get(form, ()), *_uncut(form, owners)]
        alone = occurrences.standalone_count(form, longer, enough=MIN_STANDALONE + 6)
        if alone < (1 if len(owners) > 1 or len(form) >= LONG_FORM else MIN_STANDALONE) or not specific(form, owners, occurrences):
            continue
        evidence = Evidence(confidence(0.25 * alone), {"standalone": alone, "holders": len(owners)},
                            cite(occurrences, form), "a short form the passages use on its own")
        for entity in owners:
            entity.add_alias(form, evidence)
        _add_led_forms(form, owners, names)


def _add_led_forms(form: str, owners: list[SuggestedEntity], names: set[str]) -> None:
    """江北寄存包裹 for 江北寄存包裹规定 once its family shares 寄存包裹: the member's own lead
    word with the shared name says which member is meant, so a turn writing it is not
    asked (editions of one thing still share it)."""
    if len(owners) < 2:
        return
    for entity in owners:
        lead = _lead_of(form, entity)
        if lead and (lead + form not in names or lead + form == entity.title_name):
            entity.add_alias(lead + form, Evidence(0.5, {"holders": len(owners)}, [],
                                                   f"{form}, which its family shares, after its own {lead}"))


def _holders_of_forms(entities: list[SuggestedEntity]) -> dict[str, list[SuggestedEntity]]:
    """Each short form → the entities whose name holds it. A form only a title's longer
    name holds (陪护结算 of 日间陪护结算, where the entity is 日间陪护) counts when two names
    or more hold it: the family's name, not one thing's further nickname."""
    holders: dict[str, list[SuggestedEntity]] = defaultdict(list)
    by_title: dict[str, list[SuggestedEntity]] = defaultdict(list)
    for entity in entities:
        own = _forms(_cores(entity)[0])
        for form in own:
            holders[form].append(entity)
        for form in set().union(*(_forms(core) for core in _cores(entity)[1:])) - own:
            by_title[form].append(entity)
    for form, more in by_title.items():
        if len({e.stem or e.name for e in (*holders.get(form, ()), *more)}) >= 2:
            holders[form].extend(more)
    return holders


def add_contractions(suggestion: Suggestion) -> None:
    """万兆宽带 for 万兆光纤宽带, 星辰日包 for 星辰流量日包: the name with describing words left out
    of its middle (everyday words such as 光纤, 流量), its first and last words kept. Users
    write these without the documents doing so; one is kept only when it is this entity's
    alone and no other name holds it (住房贷款 stays out while 个人住房贷款 is a name)."""
    entities = [e for e in suggestion.entities.values() if e.type != ORG_TYPE and not e.stem]
    names = [a for e in suggestion.entities.values() for a in (e.name, *e.aliases)]
    holders: dict[str, list[SuggestedEntity]] = defaultdict(list)
    for entity in entities:
        for form in _contracted(_core(entity.name)):
            holders[form].append(entity)
    for form, owners in holders.items():
        if len(owners) == 1 and not common_word(form) and not any(form in n for n in names):
            owners[0].add_alias(form, Evidence(0.4, {}, [], "the name without the describing words in its middle"))


def _contracted(core: str) -> set[str]:
    parts = words_of(core)[:MAX_WORDS]
    if len(parts) < 3 or len(parts[-1]) < 2:  # the head must stay a word: not 手机版
        return set()
    droppable = [i for i in range(1, len(parts) - 1) if len(parts[i]) >= 2 and common_word(parts[i])]
    found = set()
    for mask in range(1, 2 ** len(droppable)):
        dropped = {i for n, i in enumerate(droppable) if mask >> n & 1}
        kept = [p for i, p in enumerate(parts) if i not in dropped]
        if len(set(kept)) == len(kept) and not any(p in words.EDGE_WORDS for p in kept):
            form = "".join(kept)
            if len(form) >= 3 and _CJK.search(form):
                found.add(form)
    return found


def add_family_variant_forms(suggestion: Suggestion) -> None:
    """畅行卡标准版 for 畅行信用卡标准版 when 畅行卡 is shared by the family and 标准版 is its own:
    users name one member by the family's short name and the member's variant word. Said
    apart, the shared form would ask which card, though the variant word settles it."""
    owners_of: dict[str, list[SuggestedEntity]] = defaultdict(list)
    for entity in suggestion.entities.values():
        for alias in (entity.name, *entity.aliases):
            owners_of[alias].append(entity)
    for shared, owners in list(owners_of.items()):
        if not 2 <= len(owners) <= MAX_SHARED:
            continue
        for entity in owners:
            for variant in [a for a in entity.aliases if len(owners_of[a]) == 1
                            and words.VARIANT_TAIL_RE.fullmatch(a) and _core(entity.name).endswith(a)]:
                form = shared + variant
                if form not in owners_of:
                    entity.add_alias(form, Evidence(0.5, {"holders": len(owners)}, [],
                                                    f"{shared}, which its family shares, with its own {variant}"))


def _variant_of_several(form: str, owners: list[SuggestedEntity], qualifiers: set[str]) -> bool:
    """个人版 said alone, when A产品 and B云盘 both have one, names a variant, not a thing:
    the dialogue reads it as that variant of the thing in focus, so it is no alias."""
    variant = form in qualifiers or words.VARIANT_TAIL_RE.fullmatch(form) is not None
    return variant and len({_core(e.stem or e.name).removesuffix(form) for e in owners}) > 1


def _containing(names: set[str], forms: dict) -> dict[str, list[str]]:
    """Each short form → the (longer) names that hold it."""
    index: dict[str, list[str]] = defaultdict(list)
    for name in names:
        parts = {name[i:j] for i in range(len(name)) for j in range(i + 2, len(name) + 1)}
        for part in parts:
            if part in forms and part != name:
                index[part].append(name)
    return index


def _cores(entity: SuggestedEntity) -> list[str]:
    """The names short forms are made from: the entity's, and the title's when an
    everyday last word was taken off it (日间陪护结算 for 日间陪护)."""
    cores = [_core(entity.stem or entity.name)]
    if entity.title_name and not entity.stem:
        cores.append(_core(entity.title_name))
    return cores


def _shared_middle(form: str, owners: list[SuggestedEntity]) -> bool:
    """寄存包裹 of 江北寄存包裹规定 and 江南寄存包裹规定: what two or three names share once
    the first words that tell them apart (江北, 江南) and an everyday last word (规定) are
    off. Users name the family so; one thing's inner words alone say too little."""
    leads = [_lead_of(form, entity) for entity in owners]
    return (None not in leads and len(set(leads)) >= 2
            and len({e.stem or e.name for e in owners}) >= 2)


def _lead_of(form: str, entity: SuggestedEntity) -> str | None:
    """The words before ``form`` in one of the entity's names (its title's included)."""
    return next((lead for core in _cores(entity) if (lead := _lead_before(form, core))), None)


def _lead_before(form: str, core: str) -> str | None:
    """The words of ``core`` before ``form``, when ``form`` is its words from the second on,
    up to its end or to an everyday last word; else None."""
    parts = words_of(core)
    ends = [len(parts)] + ([len(parts) - 1] if len(parts) >= 3 and common_word(parts[-1]) else [])
    for i in range(1, len(parts)):
        if len(parts[i]) < 2 or any(len(p) < 2 for p in parts[:i]):
            continue  # 版体检 of 基础版体检套餐 starts inside a word of the name
        if any("".join(parts[i:j]) == form for j in ends if j > i):
            return "".join(parts[:i])
    return None


def _keeps_head_or_lead(form: str, core: str) -> bool:
    """A short form keeps what tells the thing apart: the name's last character
    (皮肤科, 标准版), its whole first word (晨星卡 for 晨星信用卡标准版), or all of it
    but an everyday last word (退换货 for 退换货规则)."""
    if form[-1] == core[-1] or form in _abbreviations(words_of(core)):
        return True
    parts = words_of(core)
    if len(parts) >= 2 and form == core[: -len(parts[-1])] and common_word(parts[-1]):
        return True  # the name without an everyday last word: 退换货 for 退换货规则
    first = parts[0]
    return len(first) >= 2 and form.startswith(first) and (form != first or len(first) >= 3)


def specific(form: str, owners: list[SuggestedEntity], occurrences: Occurrences) -> bool:
    """A word used all over the corpus (住房, 个人) is not a name: the documents holding the
    short form must not be many more than those holding its owners' names."""
    used = len(occurrences.docs_of(form))
    if used <= 2 * len(owners) + 2:  # each owner is in one document at least
        return True
    owned = set().union(*(occurrences.docs_of(n) for e in owners for n in (e.name, *e.aliases)))
    return used <= 2 * len(owned) + 2


def add_edition_forms(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """Every name the editions of one thing share, with the edition run in (2025版收费标准
    for the 2025 edition when its editions share 收费标准), so that a turn naming the
    edition links to it alone."""
    by_stem: dict[str, list[SuggestedEntity]] = defaultdict(list)
    for entity in suggestion.entities.values():
        if entity.stem and entity.edition:
            by_stem[entity.stem].append(entity)
    for group in by_stem.values():
        shared = set.intersection(*(set(e.aliases) for e in group)) if len(group) > 1 else set()
        for entity in group:
            ed = entity.edition
            for alias in shared:
                if ed in alias:
                    continue
                for form in (f.format(ed=ed, alias=alias) for f in words.EDITION_ALIAS_FORMS):
                    entity.add_alias(form, Evidence(0.6, {"occurrences": occurrences.count(form)},
                                                    cite(occurrences, form), f"the edition run into {alias}"))


def add_latin_names(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """Latin names the passages give beside a Chinese name or alias."""
    by_alias: dict[str, list[SuggestedEntity]] = defaultdict(list)
    for entity in suggestion.entities.values():
        for alias in (entity.name, *entity.aliases):
            by_alias[alias].append(entity)
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for p in occurrences.passages:
        for m in words.LATIN_BEFORE_CJK_RE.finditer(p.text):
            seen[(_trim_latin(m.group(1)), m.group(2))] += 1
        for m in words.CJK_BEFORE_LATIN_RE.finditer(p.text):
            seen[(_trim_latin(m.group(2)), m.group(1))] += 1
    for (latin, cjk), n in seen.items():
        owners = by_alias.get(cjk) or by_alias.get(_core(cjk), [])
        if latin and 0 < len(owners) <= MAX_SHARED:  # shared like the name it stands beside
            for owner in owners:
                owner.add_alias(latin, Evidence(confidence(0.8 * n), {"occurrences": n},
                                                cite(occurrences, latin), f"written beside {cjk}"))


def add_bracketed_names(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """Another Chinese name given in brackets right after a name in the passages
    (晴川App关怀版（大字版）, 探亲假（省亲假）) is an alias of what that name names."""
    by_alias: dict[str, list[SuggestedEntity]] = defaultdict(list)
    for entity in suggestion.entities.values():
        for alias in (entity.name, *entity.aliases):
            by_alias[alias].append(entity)
    longest = max((len(a) for a in by_alias), default=0)
    seen: dict[tuple[str, str], int] = defaultdict(int)
    for p in occurrences.passages:
        for m in words.CJK_BRACKETED_NAME_RE.finditer(p.text):
            inner, start = m.group(1), m.start()
            if inner in by_alias or not _names_something(inner):
                continue
            name = next((p.text[start - n:start] for n in range(min(longest, start), 1, -1)
                         if p.text[start - n:start] in by_alias), None)
            if name and p.text[start - len(name):m.end()] not in by_alias:
                seen[(name, inner)] += 1
    for (name, inner), n in seen.items():
        if len(by_alias[name]) <= MAX_SHARED:
            for owner in by_alias[name]:
                owner.add_alias(inner, Evidence(confidence(0.6 * n), {"occurrences": n},
                                                cite(occurrences, f"{name}（{inner}）"), f"given in brackets after {name}"))


def _names_something(inner: str) -> bool:
    """大字版 or 护理假, not （含宽带） or （2025版）: no figure, edition or clause word."""
    return not (re.search(r"\d", inner) or inner[0] in words.NOT_ATTRIBUTE_STARTS
                or inner[0] in words.BRACKET_NOTE_STARTS or common_word(inner)
                or words.CLAUSE_RE.search(inner))


def _trim_latin(text: str) -> str:
    tokens = text.split()
    while tokens and tokens[0].lower() in words.LATIN_STOP:
        tokens.pop(0)
    result = " ".join(tokens)
    return result if len(result) >= 2 and len(tokens) <= 5 else ""
