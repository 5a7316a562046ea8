"""Mention detection: what in a turn's text may refer to something.

Finds, on the original text: alias spans from the snapshot (leftmost-longest,
non-overlapping), pronouns and demonstratives, ordinals (第一个, the latter),
attribute words from the type schemas, time and version expressions, negation
words and ellipsis cues (那…呢, what about…). Chinese and English, mixed too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from kg.aliases import AliasSnapshot


class MentionKind(str, Enum):
    ALIAS = "alias"
    PRONOUN = "pronoun"
    ORDINAL = "ordinal"
    ATTRIBUTE = "attribute"
    TIME = "time"
    NEGATION = "negation"


@dataclass(frozen=True)
class Mention:
    """A span of the turn's text that may refer to something.

    ``entity_ids`` are the alias candidates (ALIAS only); ``value`` is the
    canonical attribute name (ATTRIBUTE) or the ordinal's 0-based index, -1 for
    "the last" (ORDINAL)."""

    kind: MentionKind
    text: str
    start: int
    end: int
    entity_ids: tuple[str, ...] = ()
    value: str | int | None = None


# Longer alternatives first: the regex engine takes the first that matches.
_ZH_PRONOUNS = ["它们", "他们", "她们", "这几个", "这些", "那些", "这款", "那款", "这种", "那种",
                "该产品", "此产品", "这个产品", "那个产品", "这项", "该", "此", "它", "他", "她",
                "这个", "那个"]
_EN_PRONOUNS = ["this product", "that product", "this person", "this one", "that one",
                "these", "those", "they", "them", "their", "its", "it"]
_ZH_ORDINALS = {"第一个": 0, "第二个": 1, "第三个": 2, "第四个": 3, "第1个": 0, "第2个": 1,
                "第3个": 2, "第4个": 3, "前者": 0, "后者": -1, "第一": 0, "第二": 1, "第三": 2,
                "最后一个": -1}
_EN_ORDINALS = {"the first": 0, "the second": 1, "the third": 2, "the former": 0,
                "the latter": -1, "the last": -1, "first one": 0, "second one": 1,
                "first": 0, "second": 1}
_ZH_NEGATIONS = ["不再", "不能", "不会", "不是", "不用", "无法", "没有", "除了", "免除", "不", "没",
                 "未", "非", "无"]
_EN_NEGATIONS = ["no longer", "not", "n't", "never", "except", "without", "no"]

_TIME_RE = re.compile(
    r"(?:\d{4}\s*年(?:\s*\d{1,2}\s*月)?|\d{1,2}\s*月份?|\d{4}\s*版|\d{4}(?=\s*(?:的|年度|版本|版))"
    r"|上半年|下半年|第[一二三四1-4]季度|[Qq][1-4]|上周|本周|这周|下周|上个月|这个月|本月|下个月"
    r"|去年|今年|明年|前年|新版|旧版|最新版|老版|现在|目前"
    r"|\b(?:19|20)\d{2}\b|\b(?:now|currently|last (?:week|month|year)|this (?:week|month|year)"
    r"|next (?:week|month|year)|(?:January|February|March|April|May|June|July|August|September"
    r"|October|November|December))\b)", re.IGNORECASE)


def _alternation(words: list[str], english: bool) -> re.Pattern[str]:
    body = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    return re.compile(rf"\b(?:{body})\b" if english else f"(?:{body})", re.IGNORECASE)


_PRONOUN_ZH_RE = _alternation(_ZH_PRONOUNS, False)
_PRONOUN_EN_RE = _alternation(_EN_PRONOUNS, True)
_ORDINAL_ZH_RE = _alternation(list(_ZH_ORDINALS), False)
_ORDINAL_EN_RE = _alternation(list(_EN_ORDINALS), True)
_NEGATION_ZH_RE = _alternation(_ZH_NEGATIONS, False)
_NEGATION_EN_RE = re.compile(r"\b(?:no longer|not|never|except|without|no)\b|n't", re.IGNORECASE)

_ELLIPSIS_RE = re.compile(
    r"^\s*(?:那么?|还有|那如果是|换成|and|what about|how about)\s*(?P<x>.+?)\s*"
    r"(?:呢|吗|怎么样|如何|会怎样)?\s*[?？。!！]*\s*$"
    r"|^\s*(?P<y>.+?)\s*呢\s*[?？]*\s*$", re.IGNORECASE)

# Pronoun words that are part of ordinary words rather than references.
_NOT_PRONOUN_CONTEXT = re.compile(r"那么|那里|这里|这样|那样|这么|那么|怎么|什么|这边|那边|此外|因此|"
                                  r"该怎么|应该|该如何|该不该|非常|无论|那就|那我|那你|那请|那要")


@dataclass(frozen=True)
class Detection:
    """Every mention found in one turn's text, plus whether it reads as an ellipsis."""

    text: str
    mentions: tuple[Mention, ...]
    ellipsis: bool

    def of(self, kind: MentionKind) -> tuple[Mention, ...]:
        return tuple(m for m in self.mentions if m.kind is kind)


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < end and start < span[1] for start, end in taken)


def detect_mentions(text: str, snapshot: AliasSnapshot | None) -> Detection:
    """Find every mention in ``text``. Aliases and times win over the short
    cue words they contain (这个月 is a time, not 这个)."""
    mentions: list[Mention] = []
    taken: list[tuple[int, int]] = []

    def add(kind: MentionKind, start: int, end: int, **extra) -> None:
        if start < end and not _overlaps((start, end), taken):
            mentions.append(Mention(kind, text[start:end], start, end, **extra))
            taken.append((start, end))

    if snapshot is not None:
        norm = snapshot.normalize_with_offsets(text)
        for n_start, n_end, key in snapshot.alias_matcher.find(norm):
            start, end = norm.span(n_start, n_end)
            add(MentionKind.ALIAS, start, end, entity_ids=snapshot.by_norm[key])
        for n_start, n_end, key in snapshot.attribute_matcher.find(norm):
            start, end = norm.span(n_start, n_end)
            add(MentionKind.ATTRIBUTE, start, end, value=snapshot.attribute_by_norm[key])
    for m in _TIME_RE.finditer(text):
        add(MentionKind.TIME, m.start(), m.end())
    for regex, table in ((_ORDINAL_ZH_RE, _ZH_ORDINALS), (_ORDINAL_EN_RE, _EN_ORDINALS)):
        for m in regex.finditer(text):
            add(MentionKind.ORDINAL, m.start(), m.end(), value=table[m.group(0).lower()])
    blocked = [(m.start(), m.end()) for m in _NOT_PRONOUN_CONTEXT.finditer(text)]
    for regex in (_NEGATION_ZH_RE, _NEGATION_EN_RE):
        for m in regex.finditer(text):
            if not _overlaps((m.start(), m.end()), blocked):
                add(MentionKind.NEGATION, m.start(), m.end())
    for regex in (_PRONOUN_ZH_RE, _PRONOUN_EN_RE):
        for m in regex.finditer(text):
            if not _overlaps((m.start(), m.end()), blocked):
                add(MentionKind.PRONOUN, m.start(), m.end())
    mentions.sort(key=lambda m: m.start)
    return Detection(text=text, mentions=tuple(mentions),
                     ellipsis=bool(_ELLIPSIS_RE.match(text)) and len(text) <= 40)
