"""The seam between retrieval and the store that holds a kb's chunks.

``VectorIndex`` is what ingest, search and re-tagging need from a chunk store;
``retrieval.milvus_index.MilvusIndex`` is the Milvus (and Milvus Lite)
backend, ``retrieval.memory_index.InMemoryIndex`` one for tests. Another
backend plugs in by providing these methods and refusing input with the
checks below, so that every backend accepts the same corpus; the contract
tests (``tests/contract/test_vector_index_contract.py``) run against each one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol

from common.errors import ConfigurationError, InputError, InvalidIdError
from common.ids import check_entity_id
from retrieval.models import Chunk, DenseSpec, Hit

# What every backend accepts, so that a kb's corpus fits whichever one stores it. The
# bounds are Milvus's (field sizes of the collection schema, its topk cap of 16384).
MAX_KEY_BYTES = 256
MAX_TITLE_BYTES = 2048
MAX_TEXT_BYTES = 65535
MAX_ENTITIES = 64
MAX_LIMIT = 16384


class VectorIndex(Protocol):
    """A per-kb chunk store with filtered lexical and (optionally) dense search.

    Every method taking ``kb`` raises ``common.errors.InvalidIdError`` for a
    malformed kb name and ``common.errors.NotFoundError`` when the kb has no
    store yet (except ``ensure_collection``, ``has_collection`` and ``drop``).
    Backend failures surface as ``common.errors.DependencyError``.
    """

    def ensure_collection(self, kb: str, dense: DenseSpec | None = None,
                          analyzer: str | None = None) -> None:
        """Create the kb's store if it does not exist and make it searchable; idempotent.

        ``dense`` is the embedder the kb's vectors come from (None: BM25 only); an
        existing store made for another raises ``common.errors.ConfigurationError``.
        ``analyzer`` is how BM25 reads the kb's text (``retrieval.analyzers``; None: the
        existing store's, or ``chinese`` for a new one); an existing store made with
        another raises ``common.errors.ConfigurationError``.
        """
        ...

    def analyzer(self, kb: str) -> str:
        """The BM25 analyzer the kb's store was created with (``retrieval.analyzers``)."""
        ...

    def dense_spec(self, kb: str) -> DenseSpec | None:
        """The embedder the kb's store was created for; None when BM25 only."""
        ...

    def has_collection(self, kb: str) -> bool:
        """Whether the kb has a store (i.e. something was ingested into it)."""
        ...

    def kbs(self) -> list[str]:
        """The kbs that have a store."""
        ...

    def load(self, kb: str, timeout: float | None = None) -> None:
        """Make the kb's store searchable without a wait (load it into memory)."""
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

    def hybrid_search(self, kb: str, query: str, vector: Sequence[float], *, limit: int,
                      entity_ids: Sequence[str] = (), exclude_chunk_ids: Sequence[str] = (),
                      exclude_doc_ids: Sequence[str] = (), rrf_k: int = 60,
                      with_vectors: bool = False) -> list[Hit]:
        """The BM25 ranking of ``query`` and the cosine ranking of ``vector`` (``limit``
        chunks each, ungrouped, inside the filters of :meth:`search`) fused by reciprocal
        rank fusion (``retrieval.fusion.rrf_scores``): every chunk either found, at most
        ``2 * limit``, scored by its RRF sum, best first, ties by chunk id. One request
        where the backend can fuse. A blank ``query`` ranks by the vector alone.

        Raises ``ConfigurationError`` as :meth:`dense_search`.
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


def check_key(value: str, what: str) -> str:
    """Return a chunk or doc id every backend can store and filter on, else raise.

    Allowed: 1-256 UTF-8 bytes of printable characters (space included)
    except ``'``; Chinese is fine. Milvus Lite's storage breaks on a ``'`` in
    a primary key and its filter parser on line breaks
    (``retrieval.milvus_index`` says more), so such ids are refused up front.

    Raises:
        InvalidIdError: naming the id and what is allowed.
    """
    if (not isinstance(value, str) or not value or len(value.encode("utf-8")) > MAX_KEY_BYTES
            or not value.isprintable() or "'" in value):
        raise InvalidIdError(
            f"invalid {what} {value!r}: use 1-{MAX_KEY_BYTES} bytes of printable characters "
            "without ' or line breaks")
    return value


def check_limit(limit: int) -> None:
    """Raise InputError unless ``limit`` is a usable number of hits."""
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError(f"search limit {limit} out of range: use 1-{MAX_LIMIT}")


def check_filters(entity_ids: Sequence[str], exclude_chunk_ids: Sequence[str],
                  exclude_doc_ids: Sequence[str]) -> tuple[list[str], list[str], list[str]]:
    """The filter values of a search, each checked (InvalidIdError on the first bad one)."""
    return ([check_entity_id(entity_id) for entity_id in entity_ids],
            [check_key(chunk_id, "chunk id") for chunk_id in exclude_chunk_ids],
            [check_key(doc_id, "doc id") for doc_id in exclude_doc_ids])


def check_chunks(chunks: Sequence[Chunk]) -> None:
    """Check that every chunk fits the store before anything is written.

    Raises:
        InvalidIdError: a chunk, doc or entity id is malformed.
        InputError: duplicate chunk ids, a field too long, too many entities
            or metadata that is not a JSON object.
    """
    for chunk in chunks:
        chunk_id = check_key(chunk.chunk_id, "chunk id")
        check_key(chunk.doc_id, "doc id")
        if len(chunk.entity_ids) > MAX_ENTITIES:
            raise InputError(f"chunk {chunk_id!r} has {len(chunk.entity_ids)} entity ids; "
                             f"at most {MAX_ENTITIES} are stored")
        for entity_id in chunk.entity_ids:
            check_entity_id(entity_id)
        if len(chunk.title.encode("utf-8")) > MAX_TITLE_BYTES:
            raise InputError(f"chunk {chunk_id!r}: title longer than {MAX_TITLE_BYTES} UTF-8 "
                             "bytes")
        if len(f"{chunk.title}\n{chunk.text}".encode()) > MAX_TEXT_BYTES:
            raise InputError(f"chunk {chunk_id!r}: title and text exceed {MAX_TEXT_BYTES} UTF-8 "
                             "bytes; split the text into smaller chunks")
        if not isinstance(chunk.metadata, dict):
            raise InputError(f"chunk {chunk_id!r}: metadata must be a JSON object")
        try:
            json.dumps(chunk.metadata)
        except (TypeError, ValueError) as exc:
            raise InputError(f"chunk {chunk_id!r}: metadata is not JSON-serialisable: "
                             f"{exc}") from exc
    seen: set[str] = set()
    for chunk in chunks:
        if chunk.chunk_id in seen:
            # Lite 2.5.1 stores both copies of a key repeated within one request.
            raise InputError(f"chunk id {chunk.chunk_id!r} appears twice in one upsert")
        seen.add(chunk.chunk_id)


def check_vectors(kb: str, spec: DenseSpec | None, chunks: Sequence[Chunk],
                  vectors: Sequence[Sequence[float]] | None) -> list[list[float]] | None:
    """The chunks' vectors as floats, after checking they fit the kb's embedder.

    Raises:
        ConfigurationError: vectors for a BM25-only kb, or none for a dense one.
        InputError: not one vector per chunk, or one of another length.
    """
    if spec is None:
        if vectors is not None:
            raise ConfigurationError(
                f"knowledge base {kb!r} was created without dense vectors; unset "
                "REFERENT_EMBED__BACKEND or re-ingest into a fresh kb")
        return None
    if vectors is None:
        raise ConfigurationError(
            f"knowledge base {kb!r} holds dense vectors from {spec.embedder!r}: configure "
            "that embedder (REFERENT_EMBED__*) to ingest into it")
    if len(vectors) != len(chunks):
        raise InputError(f"{len(vectors)} vectors for {len(chunks)} chunks")
    for chunk, vector in zip(chunks, vectors, strict=True):
        if len(vector) != spec.dim:
            raise InputError(f"chunk {chunk.chunk_id!r}: a {len(vector)}-dimensional "
                             f"vector where the kb stores {spec.dim}")
    return [[float(v) for v in vector] for vector in vectors]


def dense_mismatch(kb: str, recorded: DenseSpec | None,
                   configured: DenseSpec | None) -> ConfigurationError:
    """The error for a kb built with one embedder and used with another."""
    def say(spec: DenseSpec | None) -> str:
        return "no embedder (BM25 only)" if spec is None else \
            f"embedder {spec.embedder!r} ({spec.dim} dimensions)"
    return ConfigurationError(
        f"knowledge base {kb!r} was ingested with {say(recorded)}, but {say(configured)} is "
        "configured: set REFERENT_EMBED__BACKEND / __MODEL back to what the kb was built "
        f"with, or re-ingest it into a fresh kb (`referent ingest --kb NEW FILE`)")


def check_query_vector(kb: str, spec: DenseSpec | None, vector: Sequence[float]) -> list[float]:
    """A dense query vector as floats, after checking the kb's vectors fit it.

    Raises:
        ConfigurationError: the kb has no dense vectors, or of another length.
    """
    if spec is None:
        raise ConfigurationError(f"knowledge base {kb!r} has no dense vectors; it was "
                                 "ingested without an embedder")
    if len(vector) != spec.dim:
        raise ConfigurationError(f"a {len(vector)}-dimensional query vector for kb {kb!r}, "
                                 f"whose vectors have {spec.dim} ({spec.embedder})")
    return [float(v) for v in vector]
