"""The passages a suggestion is drawn from, and where each string occurs in them.

Passages come from a corpus file (docs/formats.md §2) or from what a kb has
ingested. :class:`Occurrences` finds every passage a string occurs in over one
joined text, so counting thousands of candidate names over ten thousand
passages stays a matter of seconds.
"""

from __future__ import annotations

import bisect
import itertools
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from common.errors import FormatError
from common.formats import check_line
from common.jsonl import Fields, iter_jsonl

_SEP = "\u0000"


@dataclass(frozen=True)
class Passage:
    """One passage: its id (``chunk_id``, or the doc id with its position), title and text."""

    passage_id: str
    doc_id: str
    title: str
    text: str


def read_corpus(lines: Iterable[str], *, path: str | None = None) -> list[Passage]:
    """The passages of a corpus file; a bad line is refused with its number and field.

    ``entity_ids`` given in the file are ignored: the suggestion reads words only."""
    passages: list[Passage] = []
    counts: dict[str, int] = {}
    for number, obj in iter_jsonl(lines, path):
        f = Fields(obj, number, path)
        f.check_format_version()
        doc_id = f.string("doc_id")
        chunk_id = f.string("chunk_id", required=False)
        title = f.string("title", required=False, allow_empty=True) or ""
        text = f.string("text")
        check_line("corpus", obj, line=number, path=path)
        n = counts.get(doc_id, 0)
        counts[doc_id] = n + 1
        passages.append(Passage(chunk_id or f"{doc_id}#{n}", doc_id, title, text))
    if not passages:
        raise FormatError("the file holds no corpus lines", path=path)
    return passages


def passages_from_chunks(chunks: Iterable) -> list[Passage]:
    """Passages from stored chunks (``retrieval.models.Chunk``)."""
    return [Passage(c.chunk_id, c.doc_id, c.title, c.text) for c in chunks]


class Occurrences:
    """Which passages (titles and texts) hold a string, and how often it occurs."""

    def __init__(self, passages: list[Passage]) -> None:
        self.passages = passages
        starts: list[int] = []
        parts: list[str] = []
        offset = 0
        for p in passages:
            starts.append(offset)
            piece = f"{p.title}\n{p.text}{_SEP}"
            parts.append(piece)
            offset += len(piece)
        self._starts = starts
        self._joined = "".join(parts)
        self._cache: dict[str, tuple[int, ...]] = {}
        self._bigrams: dict[str, list[int]] | None = None
        self._counts: dict[str, int] = {}
        self._docs: dict[str, frozenset[str]] = {}

    @property
    def text(self) -> str:
        """Every passage's title and text, joined (positions index into it)."""
        return self._joined

    def _bigram_index(self) -> dict[str, list[int]]:
        if self._bigrams is None:
            index: dict[str, list[int]] = defaultdict(list)
            joined = self._joined
            for i, piece in enumerate(map(str.__add__, joined, itertools.islice(joined, 1, None))):
                index[piece].append(i)
            self._bigrams = index
        return self._bigrams

    def positions(self, needle: str) -> Iterator[int]:
        """Where ``needle`` starts, in order, occurrences not overlapping. Looked up from the
        positions of its rarest two-character piece, not by scanning the whole text."""
        if len(needle) < 2:
            yield from self._scan(needle)
            return
        index = self._bigram_index()
        shift, rarest = min(((i, index.get(needle[i:i + 2], ())) for i in range(len(needle) - 1)),
                            key=lambda pair: len(pair[1]))
        joined, end = self._joined, -1
        for at in rarest:
            start = at - shift
            if start >= end and joined.startswith(needle, start):
                yield start
                end = start + len(needle)

    def _scan(self, needle: str) -> Iterator[int]:
        find = self._joined.find
        at = find(needle)
        while at >= 0:
            yield at
            at = find(needle, at + len(needle))

    def __contains__(self, needle: str) -> bool:
        return next(iter(self.positions(needle)), None) is not None

    def passages_of(self, needle: str) -> tuple[int, ...]:
        """Indexes of the passages holding ``needle``, in corpus order."""
        found = self._cache.get(needle)
        if found is None:
            seen: dict[int, None] = {}
            for at in self.positions(needle):
                seen[bisect.bisect_right(self._starts, at) - 1] = None
            found = self._cache[needle] = tuple(seen)
        return found

    def docs_of(self, needle: str) -> frozenset[str]:
        """The ids of the documents holding ``needle``."""
        found = self._docs.get(needle)
        if found is None:
            found = self._docs[needle] = frozenset(self.passages[i].doc_id for i in self.passages_of(needle))
        return found

    def count(self, needle: str) -> int:
        found = self._counts.get(needle)
        if found is None:
            found = self._counts[needle] = sum(1 for _ in self.positions(needle))
        return found

    def standalone_count(self, needle: str, longer: Iterable[str], enough: int | None = None) -> int:
        """Occurrences of ``needle`` that are not inside an occurrence of a longer name
        (counting stops at ``enough``)."""
        shifts = [(name, shift) for name in longer if name != needle
                  for shift in _offsets(name, needle)]
        joined, found = self._joined, 0
        for at in self.positions(needle):
            if not any(joined.startswith(name, at - shift) for name, shift in shifts if at >= shift):
                found += 1
                if enough is not None and found >= enough:
                    break
        return found

    def context_after(self, needle: str, width: int, limit: int = 50) -> Iterator[str]:
        """The ``width`` characters that follow the first ``limit`` occurrences of ``needle``."""
        for at in itertools.islice(self.positions(needle), limit):
            end = at + len(needle)
            yield self._joined[end:end + width].split(_SEP, 1)[0]


def _offsets(name: str, needle: str) -> list[int]:
    found, at = [], name.find(needle)
    while at >= 0:
        found.append(at)
        at = name.find(needle, at + 1)
    return found
