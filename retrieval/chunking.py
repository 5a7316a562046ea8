"""Splitting a document's text into passages for retrieval.

A passage should be one or a few whole sentences: BM25 and the entity tags
work on passages, and a passage cut mid-sentence loses the entity or the
number the user asked about. Chunks are exact slices of the input (inner
line breaks and spaces kept, outer whitespace trimmed), so they can be cited
and highlighted in the source, and the same text always gives the same chunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# A sentence ends after 。！？!?；; (plus closing quotes/brackets), after an
# English full stop followed by whitespace (so 3.5 and v2.1 stay whole), or at
# a line break.
_SENTENCE_END = re.compile(r"[。！？!?；;]+[”’\"'）)」』】]*|\.(?=\s)|\n")
# Where an over-long sentence is preferably cut: after a clause mark or a space.
_SOFT_BREAKS = "，,、：: \t\u3000"


def chunk_text(text: str, max_chars: int = 300) -> list[str]:
    """Split ``text`` into chunks of whole sentences, each at most ``max_chars`` long.

    Sentences are packed greedily in order; a sentence longer than
    ``max_chars`` is cut after its last clause mark or space that fits,
    or hard at ``max_chars`` when there is none.

    Returns:
        Non-empty chunks in document order; [] for blank text.

    Raises:
        ValueError: ``max_chars`` is less than 1.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be at least 1, got {max_chars}")
    chunks = []
    start = end = -1
    for piece_start, piece_end in _pieces(text, max_chars):
        if start >= 0 and piece_end - start <= max_chars:
            end = piece_end
            continue
        if start >= 0:
            chunks.append(text[start:end])
        start, end = piece_start, piece_end
    if start >= 0:
        chunks.append(text[start:end])
    return chunks


def _pieces(text: str, max_chars: int) -> Iterator[tuple[int, int]]:
    """Spans of sentences, with over-long sentences cut into spans of at most ``max_chars``."""
    for start, end in _sentences(text):
        while end - start > max_chars:
            window = text[start:start + max_chars]
            cut = max(window.rfind(mark) for mark in _SOFT_BREAKS) + 1 or max_chars
            yield from _trimmed(text, start, start + cut)
            start += cut
            while text[start].isspace():
                start += 1
        yield start, end


def _sentences(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    for match in _SENTENCE_END.finditer(text):
        yield from _trimmed(text, start, match.end())
        start = match.end()
    yield from _trimmed(text, start, len(text))


def _trimmed(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    """The span without surrounding whitespace, if anything is left."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if start < end:
        yield start, end
