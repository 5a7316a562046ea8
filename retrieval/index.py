"""The seam between retrieval and the store that holds a kb's chunks.

``VectorIndex`` is what ingest, search and re-tagging need from a chunk store;
``retrieval.milvus_index.MilvusIndex`` is the Milvus (and Milvus Lite)
backend. Another backend plugs in by providing these methods; the contract
tests run against each one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from retrieval.models import Chunk, DenseSpec, Hit


class VectorIndex(Protocol):
    """A per-kb chunk store with filtered lexical and (optionally) dense search.

    Every method taking ``kb`` raises ``common.errors.InvalidIdError`` for a
    malformed kb name and ``common.errors.NotFoundError`` when the kb has no
    store yet (except ``ensure_collection``, ``has_collection`` and ``drop``).
    Backend failures surface as ``common.errors.DependencyError``.
    """

    def ensure_collection(self, kb: str, dense: DenseSpec | None = None) -> None:
        """Create the kb's store if it does not exist and make it searchable; idempotent.

        ``dense`` is the embedder the kb's vectors come from (None: BM25 only); an
        existing store made for another raises ``common.errors.ConfigurationError``.
        """
        ...

    def dense_spec(self, kb: str) -> DenseSpec | None:
        """The embedder the kb's store was created for; None when BM25 only."""
        ...

    def has_collection(self, kb: str) -> bool:
        """Whether the kb has a store (i.e. something was ingested into it)."""
        ...

    def upsert(self, kb: str, chunks: Sequence[Chunk],
               progress: Callable[[int], None] | None = None,
               vectors: Sequence[Sequence[float]] | None = None) -> int:
        """Insert or replace chunks by ``chunk_id``; return how many were written.

        ``vectors``: one per chunk, required exactly when the kb has a ``dense_spec``.

        ``progress(n_done)`` is called after each stored batch so a CLI can
        show progress on large ingests. Written chunks are searchable on return.
        """
        ...

    def mark_incomplete(self, kb: str, info: dict) -> None:
        """Record that an ingest into ``kb`` started (``info``: when, which file); turns
        on the kb say the collection is incomplete until ``mark_complete``."""
        ...

    def mark_complete(self, kb: str) -> None:
        """Clear the kb's incomplete-ingest record, if any."""
        ...

    def incomplete(self, kb: str) -> dict | None:
        """The record of an ingest into ``kb`` that has not finished, or None."""
        ...

    def delete_document(self, kb: str, doc_id: str) -> int:
        """Delete every chunk of one document; return how many were deleted."""
        ...

    def delete_chunks(self, kb: str, chunk_ids: Sequence[str]) -> int:
        """Delete these chunks (unknown ids ignored); return how many were deleted."""
        ...

    def doc_chunk_ids(self, kb: str, doc_ids: Sequence[str]) -> dict[str, list[str]]:
        """The stored chunk ids of each document (documents with none left out)."""
        ...

    def search(self, kb: str, query: str, *, limit: int, entity_ids: Sequence[str] = (),
               exclude_chunk_ids: Sequence[str] = (), group_by_doc: bool = True,
               exclude_doc_ids: Sequence[str] = (), with_vectors: bool = False) -> list[Hit]:
        """BM25-rank chunks for ``query``, best first.

        Args:
            entity_ids: when non-empty, only chunks tagged with at least one of them.
            exclude_chunk_ids: chunks never to return (what the session already consumed).
            exclude_doc_ids: documents never to return (the consumed window at doc granularity).
            group_by_doc: at most one chunk per document, the best one.
            with_vectors: fill ``Hit.vector`` when the kb has dense vectors.
        """
        ...

    def dense_search(self, kb: str, vector: Sequence[float], *, limit: int,
                     entity_ids: Sequence[str] = (), exclude_chunk_ids: Sequence[str] = (),
                     exclude_doc_ids: Sequence[str] = (), group_by_doc: bool = False,
                     with_vectors: bool = False) -> list[Hit]:
        """Cosine-rank chunks for a query vector with the same filters as :meth:`search`.

        Raises ``ConfigurationError`` when the kb has no dense vectors or of another length.
        """
        ...

    def count(self, kb: str) -> int:
        """Number of chunks stored for the kb."""
        ...

    def get_chunks(self, kb: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The stored chunks with these ids, in the order asked; unknown ids are skipped."""
        ...

    def iter_chunks(self, kb: str, batch: int = 1000, *,
                    auto_tagged_only: bool = False) -> Iterator[Chunk]:
        """Every stored chunk of the kb, fetched ``batch`` at a time (for re-tagging);
        with ``auto_tagged_only``, only those tagged by alias matching."""
        ...

    def set_entity_tags(self, kb: str, chunks: Sequence[Chunk]) -> int:
        """Store new ``entity_ids`` of stored chunks, keeping everything else (vectors too)."""
        ...

    def drop(self, kb: str) -> None:
        """Delete the kb's store and everything in it; a missing store is not an error."""
        ...

    def close(self) -> None:
        """Release the connection; the object is unusable afterwards."""
        ...
