"""Novelty instead of exclusion, and the words a turn inherits from earlier ones.

A chunk a session was shown before is not banned: it competes again, and it
comes back only when it answers what is *new* in this turn's question. The new
words are the content tokens (Chinese character bigrams, English word stems:
``common.language.tokens``) of this turn's query that the query of the turn which showed
the chunk did not have — the attribute or question words, not the entity name
the two turns share. The chunk's *gain* is the IDF-weighted share of those new
words it contains; it comes back, marked with the turn that showed it, when the
gain reaches ``NOVELTY_MIN_GAIN`` and it then outranks the unseen candidates.
A chunk whose gain is lower answers nothing new and stays out.

The IDF comes from the kb's own chunks (:class:`TermStats`, built once per kb
from the stored texts and refreshed when the kb's size changes), so a word that
most passages share (银行, 办理) weighs little and 免息期 or 安卓 weighs a lot.

The same statistics pick the *salient terms* of earlier turns
(:func:`salient_terms`): when a turn links no entity (or the kb has no
ontology), the rarest words of the recent user turns and of the evidence they
found join its query, so a follow-up without a name still searches its topic.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from common.language import cues
from common.language.tokens import tokens
from retrieval.index import VectorIndex
from retrieval.models import Hit

# "more" leaves out everything shown; "revisit" lets shown chunks back freely;
# "new" (every other turn) lets one back only for what it answers that is new.
Intent = Literal["new", "more", "revisit"]

# A shown chunk comes back only within the first this many places of a turn's evidence,
# and only when it holds this IDF-weighted share of the turn's new question words.
NOVELTY_RANK = 1
NOVELTY_MIN_GAIN = 0.3

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
            df.update(set(tokens(text)) | units(text))
            n += 1
        return cls(df, n)

    def idf(self, term: str) -> float:
        """Smoothed IDF; a term no chunk has gets the highest weight."""
        return math.log((self.n + 1) / (self._df.get(term, 0) + 0.5))

    def df(self, term: str) -> int:
        return self._df.get(term, 0)


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


def units(text: str) -> set[str]:
    """Content units for matching a question against a passage: single Chinese
    characters (function characters left out: 免掉 still matches 免年费, which
    bigrams miss), English word stems and numbers of two or more digits."""
    out: set[str] = set()
    for piece in _PIECE_RE.findall(_THOUSANDS_RE.sub("", text.lower())):
        if piece[0] >= "\u3400":
            out.update(c for c in piece if c not in _FUNCTION_CHARS)
        else:
            out.update(tokens(piece))
            # Numbers too (2024, 120): a year, version or amount is often all that is new
            # in a follow-up ("What about the 2024 edition?", 那2024版呢).
            if piece.isdigit() and len(piece) >= 2:
                out.add(piece)
    return out


def new_terms(query: str, earlier_query: str) -> set[str]:
    """Content units of ``query`` that ``earlier_query`` did not have."""
    return units(query) - units(earlier_query)


_LATIN_RE = re.compile(r"[A-Za-z]{2}")


def gain(terms: set[str], hit: Hit, stats: TermStats) -> float:
    """IDF-weighted share of ``terms`` found in the hit's title or text, in [0, 1]."""
    passage = f"{hit.title}\n{hit.text}"
    if not _LATIN_RE.search(passage):
        # A passage without English cannot hold the English words of a question asked
        # over it in English or mixed: it is judged by the rest (numbers, Chinese words,
        # which an English question keeps: "the 2024 edition"), as coverage does.
        terms = {t for t in terms if not _LATIN_RE.search(t)}
    if not terms:
        return 0.0
    have = units(passage)
    total = sum(stats.idf(t) for t in terms)
    if total <= 0:
        return 0.0
    return sum(stats.idf(t) for t in terms if t in have) / total


_CJK_RUN = re.compile(r"[\u3400-\u9fff]+|[A-Za-z][A-Za-z0-9\-]*|\d+")


def salient_terms(texts: Sequence[str], stats: TermStats, *, limit: int = 6,
                  skip: Iterable[str] = ()) -> list[str]:
    """The rarest content words of ``texts``, as searchable strings, rarest first.

    Consecutive salient Chinese bigrams of one text are joined back into the span
    they came from (免息 + 息期 → 免息期), so the keyword search gets a word
    rather than fragments. Tokens in ``skip`` (the current turn's own) are left out.
    """
    skipped = set(skip)
    scored: dict[str, float] = {}
    for text in texts:
        for piece in _CJK_RUN.findall(text):
            toks = tokens(piece)
            if not toks:
                continue
            if piece[0] >= "\u3400":
                # Spans of consecutive bigrams that are salient (rare, not the turn's own).
                keep = [t not in skipped and _salient(t, stats) for t in toks]
                span: list[str] = []
                for tok, ok in zip([*toks, ""], [*keep, False]):
                    if ok:
                        span.append(tok)
                        continue
                    if span:
                        word = span[0] + "".join(b[-1] for b in span[1:])
                        weight = max(stats.idf(b) for b in span)
                        if word in piece:
                            scored[word] = max(scored.get(word, 0.0), weight)
                        span = []
            else:
                for tok in toks:
                    if tok not in skipped and _salient(tok, stats):
                        scored[piece.lower()] = max(scored.get(piece.lower(), 0.0), stats.idf(tok))
    ranked = sorted(scored.items(), key=lambda kv: (-kv[1], kv[0]))
    out: list[str] = []
    for word, _ in ranked:
        if any(word in w for w in out):
            continue
        out.append(word)
        if len(out) == limit:
            break
    return out


def _salient(term: str, stats: TermStats) -> bool:
    # Present in the kb (a word no chunk has cannot help the search) but not common.
    df = stats.df(term)
    return 0 < df <= max(3, stats.n // 20)
