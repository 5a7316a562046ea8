"""Attributes from the figures a kind's documents state.

The words right after a name (types.py) are few: a document says 悦享家庭套餐面向…
once and then states its figures (月费29元，含国内通用流量10GB、国内通话200分钟)
without the name. What a member's own documents (those titled with its name)
state a figure of is what users ask of the kind: the noun right before a figure
(adjectives, adverbs and links such as 最高 and 为 skipped, a bracketed note such as （单利）
too). A word becomes an attribute of a kind when the own documents of two of its
members or more state a figure of it. Names sharing no head are no kind and get
none: a word stated of two of them says nothing of what they have in common.
"""

from __future__ import annotations

import re
from collections import defaultdict

from common.language import documents as words
from kg.suggest.corpus import Occurrences
from kg.suggest.entities import ORG_TYPE
from kg.suggest.evidence import Evidence, confidence
from kg.suggest.model import Suggestion
from kg.suggest.segment import describes, names_something, words_of
from kg.suggest.types import DEFAULT_TYPE

MAX_FIGURE_WORDS = 8  # added to a type's attributes
MIN_MEMBERS = 2
_WINDOW = 12  # characters before a figure read for the word it is stated of
_NOTE_RE = re.compile(r"[（(][^（）()]{0,12}[）)]")
_FIGURE_END_RE = re.compile(r"[\d%]")
_WORD_RE = re.compile(r"[\u4e00-\u9fff]{2,4}|[A-Za-z]{3,}")


def add_figure_words(suggestion: Suggestion, occurrences: Occurrences) -> None:
    """Add to each kind the words its members' own documents state figures of."""
    taken = {n for e in suggestion.entities.values() for n in (e.name, *e.aliases)}
    for type_name, stated in _stated_by_kind(suggestion, occurrences).items():
        target = suggestion.types.get(type_name)
        if target is None:
            continue
        # A word of the members' own names (住房 of 个人住房贷款) tells them apart.
        own = {w for e in suggestion.entities.values() if e.type == type_name for w in words_of(e.name)}
        ranked = sorted(((w, keys) for w, keys in stated.items()
                         if len(keys) >= MIN_MEMBERS and w not in target.attributes
                         and w not in taken and w not in own),
                        key=lambda kv: (-len(kv[1]), kv[0]))
        for word, keys in ranked[:MAX_FIGURE_WORDS]:
            target.attributes[word] = Evidence(
                confidence(0.4 * len(keys)), {"members": len(keys)}, [],
                "a figure of it is stated in the documents of " + "、".join(sorted(keys)[:4]))


def _stated_by_kind(suggestion: Suggestion, occurrences: Occurrences) -> dict[str, dict[str, set[str]]]:
    """type → word → the members whose own documents state a figure of the word."""
    members = [e for e in suggestion.entities.values()
               if e.type not in (DEFAULT_TYPE, ORG_TYPE)]
    counts: dict[str, int] = defaultdict(int)
    for e in members:
        counts[e.type] += 1
    stated: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for entity in members:
        if counts[entity.type] < MIN_MEMBERS:
            continue
        for index in occurrences.passages_of(entity.name):  # an index lookup, not a scan
            passage = occurrences.passages[index]
            if entity.name in passage.title:
                for word in figure_words(passage.text):
                    stated[entity.type][word].add(entity.key)
    return stated


def figure_words(text: str) -> set[str]:
    """The nouns ``text`` states a figure of (流量 of 国内通用流量10GB, 额度 of 额度最高30万元)."""
    found: set[str] = set()
    previous = 0  # where the figure before ends: 至 of 500元至2000元 is said of no word
    for match in words.PRICE_RE.finditer(text):
        start, previous = max(previous, match.start() - _WINDOW), match.end()
        before = _FIGURE_END_RE.split(_NOTE_RE.sub("", text[start:match.start()]))[-1]
        parts = [w for w in words_of(before) if w.strip()]
        while parts and (describes(parts[-1]) or parts[-1] in words.EDGE_WORDS):
            parts.pop()
        if not parts:
            continue
        word = parts[-1]
        if (_WORD_RE.fullmatch(word) and names_something(word)
                and word not in words.NOT_ATTRIBUTES and not word.startswith(words.NOT_ATTRIBUTE_STARTS)):
            found.add(word)
    return found
