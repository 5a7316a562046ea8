"""Names a document lists without a title of their own: the labels of its items.

A passage that lists things labels each one (``万兆宽带：月费199元``, ``Lounge
access: ...``); a passage about one thing labels its aspects (``北门营业厅停车：…``,
``北门营业厅地址：…``). Two kinds of label therefore name a thing:

* the part two labels or more start with, before words that differ
  (北门营业厅 from 北门营业厅地址 and 北门营业厅停车), cut where a word ends, unless it is one
  everyday word (申请 from 申请条件 and 申请流程);
* a whole label that states a figure (a price, a quantity) right after it and
  that the passages also use elsewhere, unless it is made of dictionary words
  only (转账限额: a description) or is mostly said of something before it
  (营业时间 after a branch's name or 的).

What a label leads into is not read: only the label and the figure after it.
"""

from __future__ import annotations

import re
from collections import defaultdict

from common.language import documents as words
from kg.suggest.corpus import Occurrences, Passage
from kg.suggest.segment import common_word, rare_word, words_of

MIN_PREFIX_LABELS = 2
MAX_ASPECT = 8  # characters a label may add to a name it starts with
FIGURE_WINDOW = 24


def collect(passages: list[Passage]) -> dict[str, int]:
    """Every label of the corpus and in how many passages it labels an item."""
    found: dict[str, set[int]] = defaultdict(set)
    for index, p in enumerate(passages):
        for m in words.ITEM_LABEL_RE.finditer(p.text):
            label = words.BRACKET_RE.sub(_without_edition, m.group(1)).strip()
            if (len(label) >= 2 and not words.NOT_A_NAME_RE.search(label) and not words.CLAUSE_RE.search(label)
                    and not words.NOT_A_LABEL_RE.fullmatch(label) and label.count("（") == label.count("）")):
                found[label].add(index)
    return {label: len(where) for label, where in found.items()}


def _without_edition(m: re.Match[str]) -> str:
    """意外险（2025版）理赔流程 labels an aspect of 意外险: the edition goes, other brackets stay."""
    inner = m.group(1).strip()
    return "" if words.EDITION_RE.fullmatch(inner) or words.REVISION_RE.search(inner) else m.group(0)


def names(passages: list[Passage], occurrences: Occurrences, known: set[str]) -> dict[str, int]:
    """Names the labels give (name → how many labels gave it); ``known`` are the names
    found elsewhere (titles, quotes), whose labels name aspects of them."""
    labels = collect(passages)
    found: dict[str, int] = {}
    for prefix, n in _shared_prefixes(labels, known).items():
        found[prefix] = n
    for label, n in labels.items():
        if label not in found and _names_a_thing(label, passages, occurrences, known):
            found[label] = n
    return {name: n for name, n in found.items()
            if 2 <= len(name) and not common_word(name) and not name.endswith(words.NOT_NAME_ENDINGS)}


def _shared_prefixes(labels: dict[str, int], known: set[str]) -> dict[str, int]:
    """北门营业厅 from 北门营业厅地址 and 北门营业厅停车: the part several labels start with, up to a word's end."""
    following: dict[str, set[str]] = defaultdict(set)  # prefix → the words that follow it
    for label in labels:
        parts = words_of(label)
        for n in range(1, len(parts)):
            prefix, rest = "".join(parts[:n]), "".join(parts[n:])
            if len(prefix) >= 2 and 2 <= len(rest) <= MAX_ASPECT and len(parts[n]) >= 2 \
                    and prefix.count("（") == prefix.count("）"):
                following[prefix].add(parts[n])
    # 携号 is not a name when every label goes on with 转网: the words after it must differ.
    return {p: len(after) for p, after in following.items()
            if len(after) >= MIN_PREFIX_LABELS and p not in known
            and not (len(words_of(p)) == 1 and common_word(p))
            and not words.EDITION_RE.fullmatch(p)}


def _names_a_thing(label: str, passages: list[Passage], occurrences: Occurrences, known: set[str]) -> bool:
    if any(label.startswith(k) and label != k for k in known) or _everyday(label):
        return False
    if occurrences.count(label) < 2 or not _figure_follows(label, occurrences):
        return False
    return not _said_of_something(label, occurrences, known)


def _everyday(text: str) -> bool:
    """Made of dictionary words only (转账限额, 首付比例): a description, not a name."""
    return not any(rare_word(p) for p in words_of(text) if len(p) >= 2)


def _figure_follows(label: str, occurrences: Occurrences) -> bool:
    return any(words.PRICE_RE.search(after[:FIGURE_WINDOW])
               for after in occurrences.context_after(label, FIGURE_WINDOW, limit=10))


def _said_of_something(label: str, occurrences: Occurrences, known: set[str]) -> bool:
    """营业时间 mostly follows a name or 的: an aspect of things, not a thing."""
    joined, before, total = occurrences.text, 0, 0
    for at in occurrences.positions(label):
        total += 1
        head = joined[max(0, at - 12):at]
        if head.endswith(tuple(words.LINKING_PARTICLES)) or any(head.endswith(k) for k in known if k):
            before += 1
    return total > 0 and before * 2 >= total
