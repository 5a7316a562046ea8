"""Novelty instead of exclusion, and the words a turn inherits from earlier ones.

A chunk a session was shown before is not banned: it competes again, and it
comes back only when it answers what is *new* in this turn's question. The new
words are the content tokens (Chinese character bigrams, English word stems:
``common.language.tokens``) of this turn's query that the query of the turn which showed
the chunk did not have — the attribute or question words, not the entity name
the two turns share. The chunk's *gain* is the IDF-weighted share of those new
words it contains; it comes back, marked with the turn that showed it, when the
gain reaches ``NOVELTY_MIN_GAIN`` and no unseen rival holds more of the new
words (:func:`admit`). A chunk whose gain is lower answers nothing new and
stays out.

The IDF comes from the kb's own chunks (:class:`TermStats`, built once per kb
from the stored texts and refreshed when the kb's size changes), so a word that
most passages share (银行, 办理) weighs little and 免息期 or 安卓 weighs a lot.

The same statistics tell how much a turn that links nothing says by itself,
and so how much of the previous turn it inherits (``retrieval/history.py``).
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Literal

from common.language import cues
from common.language.normalize import fold_traditional
from common.language.tokens import tokens
from retrieval.index import VectorIndex
from retrieval.models import Hit

# "more" leaves out everything shown; "revisit" lets shown chunks back freely;
# "new" (every other turn) lets one back only for what it answers that is new.
Intent = Literal["new", "more", "revisit"]

# A shown chunk comes back only within the first this many places of a turn's evidence,
# and only when it holds this IDF-weighted share of the turn's new question words.
# Chosen by measurement (docs/retrieval.md, "Shown evidence"): rank 1 / gain 0.3 lost
# answers an earlier turn had shown lower down; 2 / 0.15 finds them at the cost of
# more marked repeats.
NOVELTY_RANK = 2
NOVELTY_MIN_GAIN = 0.15
# Of the shown chunks that pass, at most this many come back in a turn that resolved an
# entity: on enterprise-dev a second one was never the turn's only answer (docs/retrieval.md).
NOVELTY_MOST = 1

# Stats are rebuilt at most this often (seconds), and only when the kb's size changed.
_STATS_TTL = 300.0
# Above this many chunks the statistics come from the first ones read (a sample).
_STATS_MAX_CHUNKS = 200_000


@dataclass(frozen=True)
class Shown:
    """A chunk the session was shown: on which turn, for which query."""

    chunk_id: str
    doc_id: str
    turn: int
    query: str


class TermStats:
    """Document frequencies of content tokens over a kb's chunks (title + text)."""

    def __init__(self, df: Counter[str], n: int) -> None:
        self._df = df
        self.n = max(n, 1)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> TermStats:
        df: Counter[str] = Counter()
        n = 0
        for text in texts:
            df.update(set(tokens(text)) | units_of_passage(text))
            n += 1
        return cls(df, n)

    def idf(self, term: str) -> float:
        """Smoothed IDF; a term no chunk has gets the highest weight."""
        return math.log((self.n + 1) / (self._df.get(term, 0) + 0.5))

    def df(self, term: str) -> int:
        return self._df.get(term, 0)

    @cached_property
    def writes_latin(self) -> bool:
        """Whether the kb is written mostly in letters (an English kb): most of its
        distinct content tokens are Latin words, not Chinese character pairs."""
        latin = sum(1 for t in self._df if t[:1].isascii())
        return latin * 2 > len(self._df) > 0


class StatsCache:
    """One :class:`TermStats` per kb, read from the index lazily and thread-safely."""

    def __init__(self, index: VectorIndex) -> None:
        self._index = index
        self._lock = threading.Lock()
        self._stats: dict[str, tuple[TermStats, int, float]] = {}

    def get(self, kb: str) -> TermStats:
        now = time.monotonic()
        cached = self._stats.get(kb)
        if cached is not None and now - cached[2] < _STATS_TTL:
            return cached[0]
        with self._lock:
            cached = self._stats.get(kb)
            if cached is not None and now - cached[2] < _STATS_TTL:
                return cached[0]
            size = self._index.count(kb)
            if cached is not None and cached[1] == size:
                self._stats[kb] = (cached[0], size, now)
                return cached[0]
            texts = []
            for i, chunk in enumerate(self._index.iter_chunks(kb)):
                if i >= _STATS_MAX_CHUNKS:
                    break
                texts.append(f"{chunk.title}\n{chunk.text}")
            stats = TermStats.from_texts(texts)
            self._stats[kb] = (stats, size, now)
            return stats


# Characters that carry no topic on their own (question words, particles, pronouns),
# and the numeral 一, which in a question is mostly a measure word's (一下, 一个).
_FUNCTION_CHARS = cues.FUNCTION_CHARS | frozenset("一")
_THOUSANDS_RE = re.compile(r"(?<=\d),(?=\d{3})")
_PIECE_RE = re.compile(r"[a-z0-9]+|[\u3400-\u9fff]+")
# Numbers (2025, 6.5, 120): a version, a year or an amount is often all that is new.
_NUMBER_RE = re.compile(r"(?<![0-9.])[0-9]+(?:\.[0-9]+)?")


def units(text: str) -> set[str]:
    """Content units for matching a question against a passage: single Chinese
    characters (function characters left out: 免掉 still matches 免年费, which
    bigrams miss), English word stems and numbers."""
    out: set[str] = set()
    low = _THOUSANDS_RE.sub("", text.lower())
    for piece in _PIECE_RE.findall(low):
        if piece[0] >= "\u3400":
            out.update(c for c in piece if c not in _FUNCTION_CHARS)
        else:
            out.update(tokens(piece))
    # Numbers too (2024, 6.5, 120): a year, version or amount is often all that is new
    # in a follow-up ("What about the 2024 edition?", 那2024版呢).
    out.update(_NUMBER_RE.findall(low))
    return out


# A number with what it counts right after it (6月, 8.0版, 2024版, 30元).
_KINDS = "".join(sorted(cues.NUMBER_KIND_CHARS))
_BOUND_RE = re.compile(rf"(?<![0-9.])([0-9]+(?:\.[0-9]+)?)\s*([{_KINDS}])") if _KINDS else None


def bound_numbers(text: str) -> dict[str, str]:
    """Numbers written with what they count: ``{"8.0版": "8.0", "6月": "6"}``."""
    if _BOUND_RE is None:
        return {}
    low = _THOUSANDS_RE.sub("", text.lower())
    return {m.group(1) + m.group(2): m.group(1) for m in _BOUND_RE.finditer(low)}


# The unit an amount of money in a passage offers, and a price question asks for.
AMOUNT = "¤"  # not a word any text yields, and no Latin letters (kept for Chinese passages)
# The same for a duration, a time of day and a count (cues.ANSWER_TYPES, in that order).
VALUE_KINDS = ("¤1", "¤2", "¤3")


def asked_units(text: str) -> set[str]:
    """:func:`question_units`, remembered: a turn asks the same few questions of many
    shown chunks and rivals, and the turns after it ask them again."""
    return set(_asked_units(text))


@lru_cache(maxsize=4096)
def _asked_units(text: str) -> frozenset[str]:
    return frozenset(question_units(text))


def question_units(text: str) -> set[str]:
    """A question's content units, a number written with what it counts as the two
    together: "8.0版" asks for the version, which "Android 8.0" does not hold; a price
    asked in general words (价格, how much) asks for an amount of money, not for the
    characters of the word (半价 holds 价 and no price)."""
    # The note the rewrite adds around compared names ((与…相比)) is not asked: its words
    # (相, 比) would favour any passage that compares something.
    text = cues.SCAFFOLD_RE.sub(" ", text)
    kinds = set()
    for marker, (asks, _) in zip(VALUE_KINDS, cues.ANSWER_TYPES, strict=True):
        # How long, at what time, how many: what answers is a value of that kind, not
        # the characters of the cue (下班 asks for the closing time; 下午 is no answer).
        if asks.search(text):
            kinds.add(marker)
            text = asks.sub(" ", text)
    asked = cues.PRICE_QUESTION_RE.search(text)
    out = units(cues.PRICE_QUESTION_RE.sub(" ", text)) | {AMOUNT} if asked else units(text)
    out |= kinds
    for both, number in bound_numbers(text).items():
        out.discard(number)
        out.add(both)
    return out


def passage_units(text: str) -> set[str]:
    """:func:`units_of_passage`, remembered: the passages a kb's turns find again and
    again are read once (bounded; the kb-wide statistics read each passage once and
    do not go through it)."""
    return set(_passage_units(text))


@lru_cache(maxsize=8192)
def _passage_units(text: str) -> frozenset[str]:
    return frozenset(units_of_passage(text))


def units_of_passage(text: str) -> set[str]:
    """A passage's content units, with its numbers both bare and with what they count,
    and whether it states an amount of money."""
    out = units(text) | set(bound_numbers(text))
    if cues.MONEY_RE.search(text):
        out.add(AMOUNT)
    out.update(marker for marker, (_, states) in zip(VALUE_KINDS, cues.ANSWER_TYPES, strict=True)
               if states.search(text))
    return out


def new_terms(query: str, *earlier: str) -> set[str]:
    """Content units of ``query`` that none of the ``earlier`` queries had: the words the
    turn asks that the turn which showed a chunk did not (and, given, that the turn just
    before did not either: what is new in *this* turn, not what an earlier follow-up
    added since)."""
    out = asked_units(query)
    for before in earlier:
        if before:
            out -= asked_units(before) | units(before)
    return out


_LATIN_RE = re.compile(r"[A-Za-z]{2}")


def gain(terms: set[str], hit: Hit, stats: TermStats, have: set[str] | None = None) -> float:
    """IDF-weighted share of ``terms`` found in the hit's title or text, in [0, 1]
    (``have``: the hit's units, when already known)."""
    passage = f"{hit.title}\n{hit.text}"
    if not _LATIN_RE.search(passage):
        # A passage without English cannot hold the English words of a question asked
        # over it in English or mixed: it is judged by the rest (numbers, Chinese words,
        # which an English question keeps: "the 2024 edition"), as coverage does.
        terms = {t for t in terms if not _LATIN_RE.search(t)}
    if not terms:
        return 0.0
    if have is None:
        have = passage_units(passage)
    total = sum(stats.idf(t) for t in terms)
    if total <= 0:
        return 0.0
    return sum(stats.idf(t) for t in terms if t in have) / total


def admit(again: Sequence[tuple[Hit, Shown, str]], rivals: Sequence[Hit], stats: TermStats, *,
          intent: Intent, min_gain: float, entity_ids: Sequence[str] = (),
          previous: Sequence[str] = (), tie_lead: float = 0.0) -> set[str]:
    """Which shown chunks, found again by this turn's searches, come back.

    ``again``: each such hit with the record of the turn that showed it and the question
    the query that found it asks. ``rivals``: the unseen chunks that would take the
    places otherwise (the turn's best unseen, one per document). ``entity_ids``: the
    turn's resolved entities.

    - A new question: a shown chunk comes back when it holds at least ``min_gain`` of
      the words the question asks that the showing turn's did not (its attribute and
      question words, not the entity the two share) and no rival holds more of them.
      When a rival holds as many, the one more specific to the turn's entities wins
      (a passage about several products answers less of a question about one than
      that product's own passage); when it is as specific too, the unseen one wins
      unless the search ranks the shown chunk clearly higher (by ``tie_lead`` of its
      score: ``TIE_LEAD`` on BM25's scale; 0 with fused ranks, whose neighbouring
      scores differ by a percent or two, so the order alone decides). A shown
      passage and a rival of which one has no English are compared on the question's
      other words (:func:`_answers_better`). With entities resolved, a shown chunk tagged with none of them
      does not come back (it answered nothing about them). The new words are those
      neither the showing turn nor the ``previous`` turn asked: what an intermediate
      turn added (保管箱 between "营业吗" and "那边有几个停车位") is not new now.
    - Of several shown chunks that pass, only those that answer the new words about
      as well as the best one (gain × √specificity, within ``BEST_WITHIN``) may take
      the place; the search's order decides among them.
    - A revisit ("刚才那条…再发我一下"): the shown chunks that best match what it
      asks for come back (all of them when they match equally).
    """
    if not again:
        return set()
    have: dict[str, set[str]] = {}

    def units_of(hit: Hit) -> set[str]:
        if hit.chunk_id not in have:
            have[hit.chunk_id] = passage_units(f"{hit.title}\n{hit.text}")
        return have[hit.chunk_id]

    if intent == "revisit":
        return _revisited(again, stats, units_of, set(entity_ids))
    wanted = set(entity_ids)
    passed: dict[str, tuple[float, float]] = {}
    for hit, before, asked in again:
        terms = new_terms(asked, before.query, *previous)
        if unknown_number(terms, stats) or unknown_variant(asked, stats, before.query, *previous):
            continue
        own = gain(terms, hit, stats, units_of(hit))
        if own < min_gain or own <= 0:
            continue
        mine = specificity(hit, wanted)
        if wanted and mine <= 0:
            continue
        if all(_answers_better(hit, r, terms, stats, units_of, wanted, min_gain, tie_lead)
               for r in rivals):
            passed[hit.chunk_id] = max(passed.get(hit.chunk_id, 0.0), own * math.sqrt(mine))
    if not passed:
        return set()
    # Of several shown chunks that pass, the ones that answer the new words best (the
    # share they hold, times how much they are about the turn's entities: a passage on
    # four cards answers less about one than that card's own) compete for the place, the
    # search's order deciding among them; the others would only repeat what was seen.
    top = max(passed.values())
    return {c for c, answers in passed.items() if answers >= top * BEST_WITHIN}


def _revisited(again: Sequence[tuple[Hit, Shown, str]], stats: TermStats, units_of,
               wanted: set[str]) -> set[str]:
    """The shown chunks a revisit ("刚才那条再发我一下", show me that again) brings back.

    A revisit names what it wants back in a word or two (the name, 条件); the question
    that first found the answer said the rest. Each chunk is matched against both: the
    revisit's words and those of the question its showing turn asked (北楼 again, after
    北楼寄存怎么收费, is the storage answer, not any passage naming 北楼). With entities
    resolved, a chunk tagged with none of them was shown about something else and does
    not come back. Of the chunks that match best, the ones most specific to the turn's
    entities (a bundle's passage that also names the broadband is not the broadband's
    price)."""
    if wanted and any(specificity(hit, wanted) > 0 for hit, _, _ in again):
        again = [item for item in again if specificity(item[0], wanted) > 0]
    match = {hit.chunk_id: gain(asked_units(asked) | asked_units(before.query), hit, stats,
                                units_of(hit))
             for hit, before, asked in again}
    best = max(match.values())
    tied = [hit for hit, _, _ in again if match[hit.chunk_id] >= best - _EPS]
    top = max(specificity(hit, wanted) for hit in tied)
    return {hit.chunk_id for hit in tied if specificity(hit, wanted) >= top - _EPS}


# Shown chunks that answer the new words at least this share as well as the best one
# are near enough to it for the search's order to decide.
BEST_WITHIN = 0.9

# A shown chunk that answers the new words exactly as well as an unseen rival, and is as
# specific to the turn's entities, comes back only when the search ranks it this much
# (relative BM25 score, after the rerank) above that rival: between equal answers the
# place goes to what the user has not read, unless the search clearly prefers the shown
# one. Chosen by measurement on enterprise-dev (dev data). With fused ranks (BM25 +
# dense, RRF) the scores of neighbouring places differ by a percent or two: there the
# order alone decides (a lead of 0).
TIE_LEAD = 0.05


def _answers_better(hit: Hit, rival: Hit, terms: set[str], stats: TermStats, units_of,
                    wanted: set[str], min_gain: float, tie_lead: float) -> bool:
    """Whether the shown ``hit`` answers the new ``terms`` better than the unseen ``rival``.

    Both are judged on the same words: when one of the two passages has no English, the
    English words of the question are left out for both (a Chinese passage cannot hold
    them, which says nothing about whether it answers), and on what is left the shown
    chunk must still hold ``min_gain``. More of the words wins; on equal words, the one
    more specific to the turn's entities; on both equal, the search's order, with a
    clear lead (``tie_lead``) needed for the shown one."""
    judged = terms
    if not (_LATIN_RE.search(f"{hit.title}\n{hit.text}") and _LATIN_RE.search(f"{rival.title}\n{rival.text}")):
        judged = {t for t in terms if not _LATIN_RE.search(t)}
    own = gain(judged, hit, stats, units_of(hit))
    if own < min_gain or own <= 0:
        return False
    theirs = gain(judged, rival, stats, units_of(rival))
    if own > theirs + _EPS:
        return True
    if own < theirs - _EPS:
        return False
    mine, other = specificity(hit, wanted), specificity(rival, wanted)
    if mine > other + _EPS:
        return True
    if mine < other - _EPS:
        return False
    return hit.score > rival.score + tie_lead * abs(rival.score)


_EPS = 1e-9


# Why a shown chunk may be shown again rather than no answer (:func:`repeat_reason`), in
# the order they are tried.
HOLDS_NEW_WORDS = "holds words the question newly asks"
ABOUT_THE_ENTITIES = "is about the turn's entities, though in other words than the question's"
REPEAT_REASONS = (HOLDS_NEW_WORDS, ABOUT_THE_ENTITIES)


def repeat_reason(hit: Hit, before: Shown, asked: str, stats: TermStats, *,
                  entity_ids: Sequence[str] = (), names: Mapping[str, Sequence[str]] | None = None,
                  previous: Sequence[str] = ()) -> str | None:
    """Why a shown chunk may answer the question ``asked`` again when nothing unseen does
    (None: it may not). The search decides whether it does: it must be the turn's best
    match and cover the question (``retrieval/search.py``).

    - ``HOLDS_NEW_WORDS``: it holds some of the words ``asked`` has that its showing
      turn's question (and the ``previous`` turn's) did not.
    - ``ABOUT_THE_ENTITIES``: it is about every one of the turn's entities (tagged with
      it, or naming it by one of its ``names``), holds every number the question names
      (a month, a year, a version) and states a value of each kind it asks for (an
      amount, a duration, a time of day, a count). A follow-up about the same
      subjects often asks in its own words what a passage already shown says in
      others (能一起拿吗 of the passage that says 不能同时获得): that the passage is
      about the turn's subjects is then the only sign, and showing it again beats
      answering that there is nothing.

    Neither when the question asks of a version or a variant no chunk of the kb names
    (the answer to it is that there is none, not a passage about another one), nor, for
    being about the entities, when it asks nothing new (the same question again: what
    it was shown is what the kb has).
    """
    terms = new_terms(asked, before.query, *previous)
    if unknown_number(terms, stats) or unknown_variant(asked, stats, before.query, *previous):
        return None
    if gain(terms, hit, stats) > 0:
        return HOLDS_NEW_WORDS
    if terms and entity_ids and _about_all(hit, entity_ids, names or {}) \
            and _states_what_is_asked(hit, asked):
        return ABOUT_THE_ENTITIES
    return None


def _about_all(hit: Hit, entity_ids: Sequence[str], names: Mapping[str, Sequence[str]]) -> bool:
    """Whether the hit is about every entity: tagged with it, or naming it."""
    passage = f"{hit.title}\n{hit.text}".lower()
    return all(entity in hit.entity_ids
               or any(n.strip() and n.lower() in passage for n in names.get(entity, ()))
               for entity in entity_ids)


_KINDS_OF_VALUE = frozenset({AMOUNT, *VALUE_KINDS})


def _states_what_is_asked(hit: Hit, asked: str) -> bool:
    """Whether the hit holds every number ``asked`` names (7月, 2025, 8.0版: a passage
    about March does not answer of July) and states a value of every kind it asks for
    (有幾個車位 asks for a count: a passage that states none does not answer it)."""
    wanted = asked_units(fold_traditional(asked))
    wanted = {t for t in wanted if t in _KINDS_OF_VALUE or t[0].isdigit()}
    return wanted <= passage_units(f"{hit.title}\n{hit.text}")


def unknown_number(terms: set[str], stats: TermStats) -> bool:
    """Whether the new words include a number (a version, a year, a month, with what it
    counts) that no chunk of the kb has: the question is about something the kb does not
    hold (8.0版 when the kb lists 6.5 and 7.0), so no passage shown before answers it.
    Words are not judged so: a paraphrase (下班 for 营业时间) is often in no chunk."""
    return any(t[0].isdigit() and stats.df(t) == 0 for t in terms)


def unknown_variant(asked: str, stats: TermStats, *earlier: str) -> bool:
    """Whether the question names a variant (钻石版, the Diamond edition), not named by the
    ``earlier`` questions, whose name no chunk of the kb has: like a version number the
    kb never lists, it is something the kb does not hold, and no passage shown before
    answers it. A time (最新版) is not a variant's name, nor is a word that places an
    edition before or after another (the new edition, the previous version)."""
    said_before = " ".join(earlier).lower()
    times = [m.span() for m in cues.TIME_RE.finditer(asked)]
    for regex in cues.VARIANT_RES:
        for m in regex.finditer(asked):
            name = m.group(1).lower()
            if set(name) & _FUNCTION_CHARS:
                continue  # 两个版本, 这个版: a word about versions, not a name
            if name in said_before or any(a < m.end() and m.start() < b for a, b in times):
                continue
            if cues.NEWER_CHOICE_RE.fullmatch(name) or cues.OLDER_CHOICE_RE.fullmatch(name):
                continue
            words = tokens(name)
            if words and all(stats.df(w) == 0 for w in words):
                return True
    return False


def unknown_editions(query: str, stats: TermStats) -> list[str]:
    """The editions ``query`` asks about that no chunk of the kb names: a version or a
    year written with its kind (8.0版 when the kb lists 6.5 and 7.0, 2023年 when its fee
    lists are of 2024 and 2025). Nothing in the kb answers a question about them: the
    turn answers ``no_answer`` rather than with the passages about the editions it does
    hold. A number of another kind (3岁, 30元) is a value the question gives, not an
    edition, nor is a year said in two digits (84年出生: a date in passing). (A variant
    named in words, 钻石版, is not judged so: 出版 and 再版 are words of their own.)"""
    return [edition for edition in editions(query) if stats.df(edition) == 0]


def editions(query: str) -> list[str]:
    """The editions ``query`` names (8.0版, 2023年), as the kb's statistics count them."""
    if cues.EDITION_RE is None:
        return []
    return list(dict.fromkeys(cues.EDITION_RE.findall(_THOUSANDS_RE.sub("", query.lower()))))


def specificity(hit: Hit, entity_ids: set[str]) -> float:
    """Share of the hit's entity tags that are among ``entity_ids`` (1.0 when the turn
    resolved none: nothing to be specific to; 0.0 for an untagged hit otherwise)."""
    if not entity_ids:
        return 1.0
    tags = set(hit.entity_ids)
    return len(tags & entity_ids) / len(tags) if tags else 0.0
