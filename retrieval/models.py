"""Values that cross the retrieval boundary: what is stored and what a search returns.

Both are frozen so a hit handed to rerank, context packing or the turn trace
cannot be changed behind the index's back. ``metadata`` stays a plain dict
(the corpus file's free-form ``metadata`` object, docs/formats.md §2); it is
left out of hashing so the dataclasses stay hashable.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Chunk:
    """One retrievable passage of a document, tagged with canonical entity ids.

    Attributes:
        chunk_id: unique within a kb; ``<doc_id>#<n>`` when the server chunked the text.
        doc_id: the document the passage belongs to; one hit per document is returned.
        title: the document title; it counts for BM25 matching too.
        text: the passage itself, as shown to the user.
        entity_ids: canonical entity ids the passage is about (the entity filter's field).
        metadata: free-form document attributes (version, validity dates, ...).
        auto_tagged: ``entity_ids`` were found by alias matching (the corpus line
            gave none), so they are recomputed when the kb's aliases change.
    """

    chunk_id: str
    doc_id: str
    title: str
    text: str
    entity_ids: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)
    auto_tagged: bool = False


@dataclass(frozen=True)
class Hit:
    """A chunk returned by a search, with the score that ranked it (higher is better).

    ``vector`` is the chunk's dense vector when the search was asked for it
    (near-duplicate detection); it takes no part in equality.
    """

    chunk_id: str
    doc_id: str
    title: str
    text: str
    entity_ids: tuple[str, ...]
    score: float
    metadata: dict[str, Any] = field(default_factory=dict, hash=False)
    vector: tuple[float, ...] | None = field(default=None, hash=False, compare=False, repr=False)


@dataclass(frozen=True)
class DenseSpec:
    """The embedder a kb's collection was created for: its vectors only fit that model."""

    embedder: str
    dim: int
