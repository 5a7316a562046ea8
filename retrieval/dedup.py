"""Near-duplicate passages: the same fact twice in one turn's evidence is one item wasted.

Two passages in one script are near-duplicates when the Jaccard overlap of
their character bigrams is at least a threshold (0.8 by default) and, when
both carry dense vectors, their cosine too (0.95 by default). Across scripts
(a Chinese passage and its English translation share no bigrams) the cosine
decides alone. Within one script it does not:
with the bundled e5, 219 pairs of enterprise-dev's 165 chunks have a cosine of
0.95 or more, and 164 of them share under 20% of their bigrams — the 2024 and
2025 fee tables, the March and April rate notices, the fee and the credit limit
of one card: different facts that one turn may need side by side. Characters, not words, because
Chinese has no spaces; bigrams, because most Chinese words are two
characters and one inserted character (约定 → 按照约定) changes only two of
them: the copy of a 23-character clause with one such edit scores 0.87,
while the June and July lines of one sales report score 0.54.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from retrieval.embedders import cosine
from retrieval.models import Hit

SHINGLE = 2

_LATIN_RE = re.compile(r"[A-Za-z]")
_CJK_RE = re.compile(r"[\u3400-\u9fff]")


def _latin(text: str) -> bool:
    """Whether a passage is written mostly in Latin letters rather than Chinese."""
    return len(_LATIN_RE.findall(text)) > len(_CJK_RE.findall(text))


def shingles(text: str, size: int = SHINGLE) -> frozenset[str]:
    """The set of ``size``-character runs of ``text`` with whitespace removed."""
    compact = "".join(text.split())
    if len(compact) <= size:
        return frozenset({compact}) if compact else frozenset()
    return frozenset(compact[i:i + size] for i in range(len(compact) - size + 1))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


def drop_near_duplicates(hits: Sequence[Hit], *, cosine_at: float = 0.95,
                         shingles_at: float = 0.8,
                         keep: int | None = None) -> tuple[list[Hit], list[tuple[str, str]]]:
    """Keep hits best first, dropping each one too close to a hit already kept.

    Two hits in one script are near-duplicates when their texts' shingle overlap
    reaches ``shingles_at`` and, when both carry vectors, their cosine reaches
    ``cosine_at``; a Chinese and an English hit, when their cosine reaches it. With ``keep``, stops once that many are kept (the
    rest are not looked at, so they are neither kept nor reported dropped).

    Returns:
        The kept hits and ``(dropped_chunk_id, kept_chunk_id)`` pairs for the trace.
    """
    kept: list[Hit] = []
    # Each kept hit's shingles and script (read only beside a vector), worked out once:
    # a hit is compared with every hit kept before it.
    kept_shingles: list[frozenset[str]] = []
    kept_latin: list[bool | None] = []
    dropped: list[tuple[str, str]] = []
    for hit in hits:
        if keep is not None and len(kept) >= keep:
            break
        mine = shingles(hit.text)
        latin = _latin(hit.text) if hit.vector is not None else None
        twin = None
        for other, theirs, other_latin in zip(kept, kept_shingles, kept_latin, strict=True):
            vectors = hit.vector is not None and other.vector is not None
            if vectors and latin != other_latin:
                close = cosine(hit.vector, other.vector) >= cosine_at
            else:
                close = jaccard(mine, theirs) >= shingles_at
                if close and vectors:
                    close = cosine(hit.vector, other.vector) >= cosine_at
            if close:
                twin = other
                break
        if twin is None:
            kept.append(hit)
            kept_shingles.append(mine)
            kept_latin.append(latin)
        else:
            dropped.append((hit.chunk_id, twin.chunk_id))
    return kept, dropped
