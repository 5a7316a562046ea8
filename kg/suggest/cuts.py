"""Short forms cut the way the corpus cuts another member of the same kind.

When the documents shorten one member of a kind by cutting the kind's head word
(游船票 for 星港游船客票: 票 of 客票 after the word before it; 车票 for 青川火车客票:
the same after that word's last character), users shorten the other members the
same way, and the documents, which write each member in full, seldom do. So a
member's form made with a cut its kind already shows, in the same shape, needs
one use on its own in the passages, not the two a short form otherwise needs.

Only the cuts Chinese makes count: a head of two characters to either (贷 of 贷款,
票 of 客票), a longer head to its last (卡 of 信用卡); the member the cut is learnt from
must write its form twice as a word (at the segmenter's word boundaries), and the
new form must be written once where a word starts, outside longer names. A form made
of characters of two words (车票 of 火车 and 客票) may be an everyday word, since it
abbreviates the name rather than being a word the name holds; one keeping a whole
word of the name may not. A form is kept only when one member of the kind makes
it, it is no entity's name or alias already, its lead is no organisation's, and
the passages do not use it in many more documents than its owner's.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict

from kg.suggest.aliases import specific
from kg.suggest.corpus import Occurrences
from kg.suggest.entities import ORG_TYPE
from kg.suggest.evidence import Evidence, cite, confidence
from kg.suggest.model import SuggestedEntity, Suggestion
from kg.suggest.segment import common_word, words_at, words_of
from kg.suggest.types import head_core

TEACHER_USES = 2  # word uses of the form a cut is learnt from
_CJK = re.compile(r"^[\u4e00-\u9fff]+$")
_CLAUSE_END = re.compile(r"[，,。；;：:！!？?、（）()《》“”\n\s]")
_FIRST, _LAST, _CHAR = "first word", "last word", "last character"


def add_kind_cuts(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """For each kind whose documents write a member's head word cut short, the same
    cut of its other members, when the passages use it on its own at least once."""
    names = {n for e in suggestion.entities.values() for n in (e.name, *e.aliases)}
    brands = _organisation_leads(suggestion)
    for head, group in _members_by_head(suggestion).items():
        shown = {pair for entity in group for pair in _cuts_shown(entity, head, occurrences)}
        makers: dict[str, list[SuggestedEntity]] = defaultdict(list)
        for entity in group:
            for form, shape in _cut_forms(head_core(entity), head, shown, brands):
                if shape != _CHAR and common_word(form):
                    continue  # a word the name holds, said everywhere: not this thing's name
                makers[form].append(entity)
        for form, owners in makers.items():
            if len(owners) == 1 and form not in names:
                _add_if_used(form, owners[0], [*names, *_uncut(form, head)], occurrences)


def _members_by_head(suggestion: Suggestion) -> dict[str, list[SuggestedEntity]]:
    """The head word of each kind (信用卡, 贷款; a split kind's own head) → its members
    whose name holds it after some other word."""
    heads = {name: t.head or name.split("（")[0] for name, t in suggestion.types.items()}
    members: dict[str, list[SuggestedEntity]] = defaultdict(list)
    for entity in suggestion.entities.values():
        head = heads.get(entity.type)
        if entity.type == ORG_TYPE or entity.stem or not head or not _CJK.match(head) or len(head) < 2:
            continue
        if head_core(entity).find(head) > 0:
            members[head].append(entity)
    return members


def _cuts_of(head: str) -> tuple[str, ...]:
    """How Chinese cuts a head word: one of two characters to either (贷 of 贷款, 票 of
    客票), a longer one to its last (卡 of 信用卡)."""
    return (head[0], head[1]) if len(head) == 2 else (head[-1],)


def _leads(before: str) -> dict[str, str]:
    """The pieces of the words before a head that lead a cut form, by shape."""
    parts = words_of(before)
    if not parts:
        return {}
    leads = {_FIRST: parts[0], _LAST: parts[-1], _CHAR: parts[-1][-1]}
    return {shape: lead for shape, lead in leads.items()
            if len(parts[0 if shape == _FIRST else -1]) >= 2}  # a lone character leads nothing


def _cuts_shown(entity: SuggestedEntity, head: str, occurrences: Occurrences) -> set[tuple[str, str]]:
    """(cut, shape) of the entity's aliases that cut the head, written as words twice
    (星河卡 in 星河卡标准版 counts: the longer form shows the cut too)."""
    core = head_core(entity)
    leads = _leads(core[: core.index(head)])
    found = set()
    for alias in entity.aliases:
        shown = [(cut, shape) for cut in _cuts_of(head)
                 for shape, lead in leads.items() if alias == lead + cut]
        if shown and _word_uses(alias, _uncut(alias, head), occurrences, TEACHER_USES,
                                whole=True) >= TEACHER_USES:
            found.update(shown)
    return found


def _uncut(form: str, head: str) -> list[str]:
    """学贷款 for 学贷: the cut form followed by the rest of its head is the head written whole."""
    return [form + head[1:]] if form.endswith(head[0]) else []


def _cut_forms(core: str, head: str, shown: set[tuple[str, str]], brands: set[str]) -> set[tuple[str, str]]:
    """The forms the cuts shown make of this member (晨光卡 of 晨光少儿借记卡), by shape."""
    leads = _leads(core[: core.index(head)])
    return {(leads[shape] + cut, shape) for cut, shape in shown
            if shape in leads and leads[shape] not in brands and len(leads[shape] + cut) >= 2}


def _add_if_used(form: str, entity: SuggestedEntity, longer: list[str], occurrences: Occurrences) -> None:
    uses = _word_uses(form, longer, occurrences, 8)
    if uses < 1 or not specific(form, [entity], occurrences):
        return
    entity.add_alias(form, Evidence(confidence(0.4 + 0.2 * math.log1p(uses)), {"standalone": uses},
                                    cite(occurrences, form),
                                    "the name's head word cut as the documents cut another of its kind"))


def _word_uses(form: str, longer: list[str], occurrences: Occurrences, enough: int,
               *, whole: bool = False) -> int:
    """Occurrences of ``form`` outside the ``longer`` strings that start where a word
    does; when ``whole``, that also end where a word does, or where the segmenter glued
    their last character to what follows (星河卡可 is 星河 / 卡可 to it)."""
    longer = [(n, shift) for n in longer if n != form for shift in _offsets(n, form)]
    text, found = occurrences.text, 0
    for at in occurrences.positions(form):
        if any(text.startswith(n, at - shift) for n, shift in longer if at >= shift):
            continue
        floor = max(0, at - 12)
        start = max((m.end() for m in _CLAUSE_END.finditer(text, floor, at)), default=floor)
        stop = next((m.start() for m in _CLAUSE_END.finditer(text, at + len(form))), len(text))
        words = words_at(text[start:min(stop, at + len(form) + 12)])
        # Its start where a word starts (车票 in 火车票 is not written on its own); its
        # end is not checked: a cut head of one character is often run into the next
        # word by the segmenter (卡持卡 of 卡持卡人).
        end = at - start + len(form)
        if at - start in words and (not whole or end in words or _glued(words.get(end - 1))):
            found += 1
            if found >= enough:
                break
    return found


def _glued(word: str | None) -> bool:
    """A word the segmenter made of a cut head and what follows it (卡可 of 星河卡可在),
    not an everyday word that starts with the head's character (剧场 after 北京)."""
    return word is not None and len(word) >= 2 and not common_word(word)


def _offsets(name: str, part: str) -> list[int]:
    return [i for i in range(len(name) - len(part) + 1) if name.startswith(part, i)]


def _organisation_leads(suggestion: Suggestion) -> set[str]:
    """Organisations' names and aliases: a brand in front of a thing's name."""
    return {n for e in suggestion.entities.values() if e.type == ORG_TYPE
            for n in (e.name, *e.aliases, head_core(e))}
