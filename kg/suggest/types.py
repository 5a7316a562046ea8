"""Types and their attributes.

An entity's type is its name's head word: the longest ending (two to four
characters, or one) it shares with other names (砚溪女性信用卡 and 青岚鹭岛联名信用卡
are 信用卡; 悦享家庭套餐 and 青春校园套餐 are 套餐). A trailing variant word
(标准版, 个人版) is not a head. A name whose last word ends with a head inside it
(白金卡, one word to the segmenter, beside names ending in the word 金卡) takes that
type too. A head that is itself a suggested name (信用卡 from 信用卡常见问题) names
the kind, so that entity is dropped in favour of the type.

A type's attributes are what the passages say of its members: the word right
after a member's name (晨星卡年费…, 基础版验光套餐价格为…), kept when it follows two
members or more, plus the words titles add to a name (A产品（个人版）价格). A short
form entities of different types share is not read: what follows it is said of
one of them only, and would give each type the other's attributes. Nor is a
variant word that tells names apart (个人版 after A产品, of A产品（个人版）): it
names one of the things, and a turn saying it (A产品个人版和企业版) means that
thing, not an aspect of it.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterator

from common.language import documents as words
from kg.suggest.corpus import Occurrences
from kg.suggest.entities import ORG_TYPE
from kg.suggest.evidence import Evidence, confidence
from kg.suggest.model import SuggestedEntity, SuggestedType, Suggestion
from kg.suggest.segment import common_word, words_of

DEFAULT_TYPE = "Entity"
MAX_ATTRIBUTES = 12
MIN_KIND_MEMBERS = 3  # a suggested name that heads this many others is a kind
_QUALIFIER_RE = re.compile(r"[（(][^（）()]*[）)]")


def head_core(entity: SuggestedEntity) -> str:
    core = _QUALIFIER_RE.sub("", entity.stem or entity.name).strip()
    trimmed = words.VARIANT_TAIL_RE.sub("", core)
    return trimmed if len(trimmed) >= 2 else core


def assign(suggestion: Suggestion) -> set[str]:
    """Give each entity a type; returns the head words several names share (the kinds)."""
    entities = [e for e in suggestion.entities.values() if e.type != ORG_TYPE]
    tails = {e.key: words_of(head_core(e)) for e in entities}
    endings: Counter[str] = Counter()
    for parts in {tuple(p) for p in tails.values()}:
        for n in range(1, len(parts)):
            endings["".join(parts[-n:])] += 1
    kinds: set[str] = set()
    for entity in entities:
        parts = tails[entity.key]
        head = next(("".join(parts[-n:]) for n in range(len(parts) - 1, 0, -1)
                     if endings["".join(parts[-n:])] >= 2 and _wordlike("".join(parts[-n:]))), None)
        if head:
            entity.type = head
            kinds.add(head)
    # A head counts as a kind by the names that end with it as a word: 白金卡 does not say
    # 金卡 apart, so it leaves 金卡 a short form users write for the other two.
    members = Counter(e.type for e in entities)
    _assign_inner_heads([e for e in entities if e.type == DEFAULT_TYPE], kinds)
    inner = _assign_shared_inner_endings([e for e in entities if e.type == DEFAULT_TYPE])
    members.update(inner)
    kinds |= set(inner)
    kinds = {k for k in kinds if members[k] >= MIN_KIND_MEMBERS}
    for kind in kinds & set(suggestion.entities):
        suggestion.skipped[kind] = "names a kind of thing (the type of several names)"
        del suggestion.entities[kind]
    for entity in suggestion.entities.values():
        suggestion.types.setdefault(entity.type, SuggestedType(entity.type))
    return kinds


def _assign_inner_heads(untyped: list[SuggestedEntity], heads: set[str]) -> None:
    """白金卡 (one word to the segmenter) ends with 金卡, the head two other names end
    with: a name whose last word ends with a head, shorter than that word, takes it as
    its type, as a word of its own would have given it. Only heads the names' words
    gave are joined: the endings of single words alone make no kind."""
    for entity in untyped:
        parts = words_of(head_core(entity))
        if len(parts) < 2:
            continue  # a name of one word (观光舱) is a head, not a member
        last = parts[-1]
        head = next((last[-n:] for n in range(len(last) - 1, 1, -1) if last[-n:] in heads), None)
        if head:
            entity.type = head


def _assign_shared_inner_endings(untyped: list[SuggestedEntity]) -> Counter[str]:
    """汽车贷款 and 住房贷款 are one word each to the segmenter, 组合贷款 two: none gives
    贷款 as the last word of two names, yet all end with it. An everyday word (the
    dictionary counts it often) that ends the last word of three names or more,
    inside it or as all of it, is their kind; a rarer ending (金卡 inside 白金卡) is a
    short form the names share, and one or two names make no kind. Returns the
    kinds made and their member counts."""
    # Each name's last word; a name of one word is a head, not a member.
    lasts = {e.key: parts[-1] if len(parts := words_of(head_core(e))) >= 2 else ""
             for e in untyped}
    holders: dict[str, list[SuggestedEntity]] = defaultdict(list)
    for entity in untyped:
        last = lasts[entity.key]
        for n in range(len(last), 1, -1):
            holders[last[-n:]].append(entity)
    made: Counter[str] = Counter()
    for entity in untyped:
        last = lasts[entity.key]
        head = next((last[-n:] for n in range(len(last), 1, -1)
                     if len(holders[last[-n:]]) >= MIN_KIND_MEMBERS and _wordlike(last[-n:])
                     and common_word(last[-n:])), None)
        if head:
            entity.type = head
            made[head] += 1
    return made


def assign_by_definition(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """A name of no kind whose passages define it as one (速融贷是……消费贷款, "Aurora
    is a family plan") takes that kind: a name's own ending need not say what it is
    (贷 cut from 贷款), while its definition does. Only kinds other names already
    make count, so a definition's last word (业务, 平台) makes no new type."""
    counts = Counter(e.type for e in suggestion.entities.values())
    kinds = sorted((k for k, n in counts.items() if n >= 2 and k not in (DEFAULT_TYPE, ORG_TYPE)),
                   key=len, reverse=True)
    if not kinds:
        return
    for entity in suggestion.entities.values():
        if entity.type != DEFAULT_TYPE:
            continue
        kind = next((k for what in _definitions(entity.name, occurrences)
                     for k in kinds if _squeezed(what).endswith(_squeezed(k))), None)
        if kind:
            entity.type = kind


def _definitions(name: str, occurrences: Occurrences, limit: int = 20) -> Iterator[str]:
    """What the passages say ``name`` is: the phrase after ``name是`` / ``name is a``
    at the start of a sentence, up to the clause's end."""
    pattern = re.compile(rf"(?:^|[。！？!?；;\n]\s*){re.escape(name)}{words.DEFINITION_COPULA}"
                         r"([^，。；,.;!?！？\n]{2,40})")
    held = {i for key in words.DEFINITION_KEYS for i in occurrences.passages_of(name + key)}
    for index in sorted(held)[:limit]:  # an index lookup: few passages say it
        for match in pattern.finditer(occurrences.passages[index].text):
            yield words.DEFINITION_TAIL_RE.split(match.group(1))[0].strip()


def _squeezed(text: str) -> str:
    """Lower case without spaces or hyphens: English heads are joined words (TermDeposit)."""
    return re.sub(r"[\s-]+", "", text).lower()


def _wordlike(ending: str) -> bool:
    return (bool(re.fullmatch(r"[\u4e00-\u9fff]{2,}|[A-Za-z]{2,}", ending)) and not ending.endswith("版"))


def add_attributes(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """Attribute words per type, from what follows its members' names."""
    entity_names = {a for e in suggestion.entities.values() for a in (e.name, *e.aliases)}
    types_of = {k: e.type for k, e in suggestion.entities.items()}
    mixed = {a for a, keys in suggestion.ambiguous_aliases().items() if len({types_of[k] for k in keys}) > 1}
    variants = _variant_words(suggestion)
    followers: dict[tuple[str, str], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for entity in suggestion.entities.values():
        group = followers[_attribute_group(entity)]
        for word in entity.attribute_words:
            group[word].add(entity.key)
        for name in {entity.name, *entity.aliases}:
            if len(name) < 2 or name in mixed:
                continue
            for after in occurrences.context_after(name, 8):
                word = _attribute_word(after)
                if word and word not in entity_names and not word.startswith(variants):
                    group[word].add(entity.key)
    sizes = Counter(_attribute_group(e) for e in suggestion.entities.values())
    for (type_name, core), found in followers.items():
        need = 2 if sizes[(type_name, core)] >= 2 or type_name == DEFAULT_TYPE else 1
        ranked = sorted(found.items(), key=lambda kv: (-len(kv[1]), kv[0]))
        kept = [(w, keys) for w, keys in ranked if len(keys) >= need][:MAX_ATTRIBUTES]
        target = suggestion.types.setdefault(type_name, SuggestedType(type_name))
        for word, keys in kept:
            target.attributes[word] = Evidence(confidence(0.5 * len(keys)), {"members": len(keys)},
                                               [], "follows the names of " + "、".join(sorted(keys)[:4]))


def _attribute_group(entity: SuggestedEntity) -> tuple[str, str]:
    """Whose words are pooled into attributes: a type's members, or, for names that
    share no head (no kind), only the variants of one name (云帆记账（个人版） and
    （团队版））: a word after two unrelated names says nothing of what they are."""
    return (entity.type, head_core(entity) if entity.type == DEFAULT_TYPE else "")


def _variant_words(suggestion: Suggestion) -> tuple[str, ...]:
    """The words that tell the names apart: bracketed qualifiers and variant tails
    (个人版 of A产品（个人版）, 白金版 of 晨星信用卡白金版)."""
    found: set[str] = set()
    for entity in suggestion.entities.values():
        found.update(q for q in _QUALIFIER_RE.findall(entity.name) if not re.search(r"\d", q))
        tail = words.VARIANT_TAIL_RE.search(_QUALIFIER_RE.sub("", entity.name).strip())
        if tail:
            found.add(tail.group(0))
    return tuple(sorted(w.strip("（）() ") for w in found if len(w.strip("（）() ")) >= 2))


def _attribute_word(after: str) -> str | None:
    after = after.lstrip(words.LINKING_PARTICLES)
    m = words.PHRASE_END_RE.search(after)
    phrase = after[: m.start()] if m else after
    if not 2 <= len(phrase) <= 4 or phrase[0] in words.NOT_ATTRIBUTE_STARTS:
        return None
    if phrase in words.NOT_ATTRIBUTES or phrase.endswith(words.GENRE_SUFFIXES):
        return None
    return phrase
