"""Milvus backend of ``VectorIndex``: one collection per kb, BM25 over title and text.

Works the same against Milvus Lite (a local ``*.db`` file, the embedded
default) and a Milvus server (``http://host:19530``).

Collection ``<prefix><kb>``, one row per chunk:

    chunk_id   VARCHAR(256)         primary key, so re-ingesting a chunk replaces it
    doc_id     VARCHAR(256)         grouping key: one hit per document
    title      VARCHAR(2048)
    text       VARCHAR(65535)       the passage as returned to callers
    bm25_text  VARCHAR(65535)       ``title + "\\n" + text``, traditional characters folded to
                                    simplified, the kb's analyzer; BM25 input
    sparse     SPARSE_FLOAT_VECTOR  BM25 function output; SPARSE_INVERTED_INDEX, metric BM25
    entities   ARRAY<VARCHAR(128)>  canonical entity ids (at most 64), the entity filter
    auto_tagged BOOL                ``entities`` came from alias matching (re-tagged when
                                    aliases change), not from the corpus file
    metadata   JSON
    dense      FLOAT_VECTOR(dim)    only when the kb was created with an embedder; COSINE

The collection description holds ``{"referent": 2, "embedder": name, "dim": n,
"fold": "t2s", "analyzer": "english"}`` (``embedder`` null for BM25 only): a kb's vectors
fit one model, so a search or an ingest with another embedder configured is refused with
a ConfigurationError instead of returning nonsense. ``analyzer`` names the BM25 analyzer
``bm25_text`` was created with (``retrieval.analyzers``; absent: ``chinese``), which
Milvus also applies to the query. ``fold`` says that ``bm25_text``
holds traditional characters as simplified ones (年費 as 年费), so the BM25 query is
folded the same way and 國際漫遊 finds 国际漫游 (and the reverse); a collection made
before (``"referent": 1``) is searched with the query as typed.

``bm25_text`` exists because a BM25 function reads a single field and a title
match ("意外险条款" in the title, "第三条 ..." in the text) must count, while
``text`` stays exactly what the caller stored. Text-match indexing
(``enable_match``) is off: it serves ``TEXT_MATCH`` filters, which would put
user text into filter expressions. A hybrid query is one ``hybrid_search``
request: BM25 and dense with the same filter, fused by Milvus's RRF ranker.
Lite 2.5.1 ignores ``group_by_field`` there, so grouped searches stay single
rankings (``search``, ``dense_search``), fused by the retriever when it needs them.

Filters. Milvus Lite 2.5.1 has no filter templates: a ``filter_params``
placeholder (``{ents}``) is a lexer error there, which pymilvus retries as an
unknown gRPC failure for minutes. Filters are therefore literals built here
from checked values only: entity ids by ``common.ids.check_entity_id``,
chunk and doc ids by ``retrieval.index.check_key``, quoted by ``_literal``. The Lite parser
decodes only the ``\\\\`` and ``\\"`` escapes (``\\n``, ``\\u4e2d`` stay
literal backslash sequences and raw line breaks are rejected), and Lite's own
storage breaks on a ``'`` in a primary key, so keys with control characters
or ``'`` are refused up front. For the same reason pymilvus's ``get(ids=)``
and ``delete(ids=)``, which paste ids into ``'...'``, are not used.

Freshness: collections are created with Strong consistency, so a search
waits for every earlier write and an upsert is visible to the next search
without a flush (the integration tests check this on Lite 2.5.1).
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import grpc
from pymilvus import AnnSearchRequest, DataType, Function, FunctionType, MilvusClient, RRFRanker
from pymilvus.client.types import Status
from pymilvus.exceptions import (
    ConnectError,
    ConnectionConfigException,
    ConnectionNotExistException,
    ErrorCode,
    MilvusException,
    MilvusUnavailableException,
)

# Milvus Lite has no mvccTs: pymilvus warns on every query iterator that it falls back
# to a client-side timestamp, which is expected there. Set after pymilvus is imported,
# because its import reconfigures its loggers.
logging.getLogger("pymilvus.orm.iterator").setLevel(logging.ERROR)
log = logging.getLogger(__name__)

from common.errors import (
    ConfigurationError,
    DependencyError,
    NotFoundError,
    RetryableDependencyError,
)
from common.ids import KB_RE, check_kb
from common.rwlock import ReadWriteLock
from common.language.normalize import fold_traditional
from retrieval.analyzers import (
    ANALYZER_PARAMS,
    LEGACY_ANALYZER,
    analyzer_mismatch,
    check_analyzer,
)
from retrieval.fusion import by_score, rrf_scores
from retrieval.index import (
    MAX_ENTITIES,
    MAX_KEY_BYTES,
    MAX_TEXT_BYTES,
    MAX_TITLE_BYTES,
    check_chunks,
    check_filters,
    check_key,
    check_limit,
    check_query_vector,
    check_vectors,
    dense_mismatch,
)
from retrieval.models import Chunk, DenseSpec, Hit

MAX_ENTITY_ID_CHARS = 128
_IDS_PER_QUERY = 1000

# The fields a search returns for each hit (benchmarks/turn_profile.py measures their cost).
OUTPUT_FIELDS = ["chunk_id", "doc_id", "title", "text", "entities", "auto_tagged", "metadata"]
_DESCRIPTION_VERSION = 2
_FOLD = "t2s"
_PREFIX_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,190}")
_TRANSIENT_GRPC = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED,
                             grpc.StatusCode.RESOURCE_EXHAUSTED})
_VENDOR_ERRORS = (MilvusException, grpc.RpcError, grpc.FutureTimeoutError)


class MilvusIndex:
    """Chunks of every kb in Milvus, searched with BM25 and exact entity/exclusion filters.

    Args:
        uri: a Milvus Lite file (``var/milvus.db``) or a server URI.
        token: server credentials (``user:password`` or an API key); None for Lite.
        collection_prefix: prepended to the kb name to form the collection name.
        timeout: seconds per Milvus call. It also bounds pymilvus's own retry
            loop, which otherwise keeps retrying a failing call for minutes.
        batch_bytes: upper bound of one upsert request; Lite 2.5.1 slows down
            sharply on large inserts.
        batch_rows: upper bound of rows in one upsert request.

    Raises:
        ConfigurationError: the URI or the prefix is unusable.
        RetryableDependencyError: the server cannot be reached.
    """

    def __init__(self, uri: str, token: str | None = None, collection_prefix: str = "referent_",
                 *, timeout: float = 30.0, batch_bytes: int = 4 * 1024 * 1024,
                 batch_rows: int = 1000) -> None:
        if not _PREFIX_RE.fullmatch(collection_prefix):
            raise ConfigurationError(
                f"invalid Milvus collection prefix {collection_prefix!r}: set "
                "milvus.collection_prefix (REFERENT_MILVUS__COLLECTION_PREFIX) to a letter or '_' "
                "followed by letters, digits or '_'")
        self._prefix = collection_prefix
        self._timeout = timeout
        self._batch_bytes = batch_bytes
        self._batch_rows = batch_rows
        # Lite's FLAT index keeps filtered dense search exact; a server picks its own index.
        self._lite = "://" not in uri
        self._specs: dict[str, DenseSpec | None] = {}
        self._folded: dict[str, bool] = {}
        self._analyzers: dict[str, str] = {}
        # Interrupted-ingest records, per kb: (read at, record or None).
        self._incomplete: dict[str, tuple[float, dict[str, Any] | None]] = {}
        self._refreshing: set[str] = set()
        self._refreshing_lock = threading.Lock()
        # One kept thread reads those records in the background: starting a thread makes
        # the caller wait until it runs, which a turn paid once a second (9 ms at load 11).
        self._background: ThreadPoolExecutor | None = None
        # One readers-writer lock per kb: see _reading.
        self._row_locks: dict[str, ReadWriteLock] = {}
        self._row_locks_guard = threading.Lock()
        # Longer than prefix + any kb name (64 characters at most), so no kb's collection
        # can ever be called this.
        self._state_collection = f"{collection_prefix}ingest_state_{'0' * 52}"
        try:
            self._client = MilvusClient(uri=uri, token=token or "", timeout=timeout)
        except ConnectionConfigException as exc:
            if self._lite and os.path.exists(uri):
                raise ConfigurationError(
                    f"cannot open the Milvus Lite file {uri!r}: another process has it open "
                    "(a `referent serve`, `referent milvus serve`, `referent ingest` or another "
                    "program). Stop that process, or share the file through one server: run "
                    f"`referent milvus serve --db {uri} --port 19530` and set "
                    "REFERENT_MILVUS__URI=http://127.0.0.1:19530 for every process that uses "
                    "it (`referent serve` started without REFERENT_MILVUS__URI runs such a "
                    "server itself, and the CLI finds it)") from exc
            raise ConfigurationError(
                f"cannot open Milvus at {uri!r}: {exc.message}; set milvus.uri "
                "(REFERENT_MILVUS__URI) to an existing directory's *.db file or a server URI"
            ) from exc
        except _VENDOR_ERRORS as exc:
            raise _translate(exc, f"be reached at {uri!r}") from exc

    # -- collections ---------------------------------------------------------

    def ensure_collection(self, kb: str, dense: DenseSpec | None = None,
                          analyzer: str | None = None) -> None:
        """Create the kb's collection (schema, BM25 function, indexes) unless it exists; load it.

        Args:
            dense: the embedder the kb's vectors come from; None for BM25 only.
                An existing collection must have been created with the same one.
            analyzer: how BM25 reads the kb's text (``retrieval.analyzers``); None: the
                existing collection's, or ``chinese`` for a new one. An existing
                collection must have been created with the same one.

        Loading matters on a Milvus server, where a released collection cannot
        be searched; it is a no-op when the collection is already loaded.

        Raises:
            ConfigurationError: the collection exists for another embedder or analyzer.
        """
        name = self._collection(kb)
        if analyzer is not None:
            check_analyzer(analyzer)
        with self._errors("create the collection", kb):
            if self._client.has_collection(name, timeout=self._timeout):
                fields = {f["name"] for f in self._client.describe_collection(
                    name, timeout=self._timeout)["fields"]}
                if "auto_tagged" not in fields:
                    raise ConfigurationError(
                        f"collection {name!r} was made by an older Referent (no auto_tagged "
                        f"field, needed for re-tagging); drop it and ingest the corpus again: "
                        f"`referent ingest --kb {kb} --recreate FILE`")
                self.check_dense(kb, dense)
                if analyzer is not None and self.analyzer(kb) != analyzer:
                    raise analyzer_mismatch(kb, self.analyzer(kb), analyzer)
                self._client.load_collection(name, timeout=self._timeout)
                return
            index_params = self._client.prepare_index_params()
            index_params.add_index(field_name="sparse", index_type="SPARSE_INVERTED_INDEX",
                                   metric_type="BM25")
            if dense is not None:
                index_params.add_index(field_name="dense", metric_type="COSINE",
                                       index_type="FLAT" if self._lite else "AUTOINDEX")
            analyzer = analyzer or LEGACY_ANALYZER
            self._client.create_collection(name, schema=_schema(dense, analyzer),
                                           index_params=index_params,
                                           consistency_level="Strong", timeout=self._timeout)
        self._specs[kb] = dense
        self._folded[kb] = True
        self._analyzers[kb] = analyzer

    def analyzer(self, kb: str) -> str:
        """The BM25 analyzer the kb's collection was created with."""
        if kb not in self._analyzers:
            self._describe(kb)
        return self._analyzers[kb]

    def dense_spec(self, kb: str) -> DenseSpec | None:
        """The embedder the kb's collection was created for; None when it is BM25 only."""
        if kb not in self._specs:
            self._describe(kb)
        return self._specs[kb]

    def _folds(self, kb: str) -> bool:
        """Whether the kb's ``bm25_text`` has traditional characters folded to simplified."""
        if kb not in self._folded:
            self._describe(kb)
        return self._folded[kb]

    def _describe(self, kb: str) -> None:
        name = self._collection(kb)
        with self._errors("describe the collection", kb):
            description = self._client.describe_collection(name, timeout=self._timeout)
        self._specs[kb] = _spec_of(description)
        self._folded[kb] = _recorded(description).get("fold") == _FOLD
        self._analyzers[kb] = _analyzer_of(description)

    def check_dense(self, kb: str, dense: DenseSpec | None) -> None:
        """Raise ConfigurationError unless the kb was created for the embedder ``dense``."""
        recorded = self.dense_spec(kb)
        if recorded != dense:
            raise dense_mismatch(kb, recorded, dense)

    def has_collection(self, kb: str) -> bool:
        """Whether ``kb`` has a collection."""
        name = self._collection(kb)
        with self._errors("look up the collection", kb):
            return self._client.has_collection(name, timeout=self._timeout)

    def kbs(self) -> list[str]:
        """The kbs with a collection under this prefix, in name order."""
        with self._errors("list the collections", None):
            names = self._client.list_collections(timeout=self._timeout)
        found = []
        for name in names:
            kb = name[len(self._prefix):]
            if name.startswith(self._prefix) and name != self._state_collection \
                    and KB_RE.fullmatch(kb):
                found.append(kb)
        return sorted(found)

    def load(self, kb: str, timeout: float | None = None) -> None:
        """Load the kb's collection into memory so searches do not wait for it.

        A Milvus server cannot search a released collection, and Milvus Lite loads a
        collection on its first search: tens of seconds at 100,000 chunks, which would
        be the first user's. ``timeout`` (default: the per-call one) bounds the wait.
        """
        name = self._collection(kb)
        with self._errors("load the collection", kb):
            self._client.load_collection(name, timeout=timeout or self._timeout)

    def drop(self, kb: str) -> None:
        """Drop the kb's collection and all its chunks; nothing happens if there is none."""
        name = self._collection(kb)
        with self._errors("drop the collection", kb):
            if self._client.has_collection(name, timeout=self._timeout):
                self._client.drop_collection(name, timeout=self._timeout)
        self._specs.pop(kb, None)
        self._folded.pop(kb, None)
        self._analyzers.pop(kb, None)
        self.mark_complete(kb)

    # -- ingest state ----------------------------------------------------------

    def mark_incomplete(self, kb: str, info: dict[str, Any]) -> None:
        """Record that an ingest into ``kb`` has started and not finished (``info``: when,
        which file). Turns on the kb say so until :meth:`mark_complete`."""
        name = self._state_collection
        with self._errors("record the ingest state", None):
            if not self._client.has_collection(name, timeout=self._timeout):
                schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False)
                schema.add_field("kb", DataType.VARCHAR, is_primary=True, max_length=64)
                schema.add_field("info", DataType.VARCHAR, max_length=4096)
                schema.add_field("v", DataType.FLOAT_VECTOR, dim=2)  # Milvus needs one
                index_params = self._client.prepare_index_params()
                index_params.add_index(field_name="v", index_type="FLAT", metric_type="L2")
                self._client.create_collection(name, schema=schema, index_params=index_params,
                                               consistency_level="Strong", timeout=self._timeout)
            self._client.load_collection(name, timeout=self._timeout)
            self._client.upsert(name, [{"kb": check_kb(kb), "v": [0.0, 0.0],
                                        "info": json.dumps(info, ensure_ascii=False)[:4000]}],
                                timeout=self._timeout)
        self._incomplete[kb] = (time.monotonic(), info)

    def mark_complete(self, kb: str) -> None:
        """Clear ``kb``'s incomplete-ingest record (nothing happens if there is none)."""
        name = self._state_collection
        with self._errors("record the ingest state", None):
            if self._client.has_collection(name, timeout=self._timeout):
                self._client.delete(name, ids=[check_kb(kb)], timeout=self._timeout)
        self._incomplete[kb] = (time.monotonic(), None)

    def incomplete(self, kb: str, *, max_age: float = 1.0) -> dict[str, Any] | None:
        """The record of an ingest into ``kb`` that started and has not finished (an
        interrupted one), or None. Read at most once per ``max_age`` seconds: a turn asks
        on every call, so once the record is known an older one is returned while a
        background thread reads it again (two Milvus round trips off the turn's path)."""
        cached = self._incomplete.get(kb)
        if cached is not None and time.monotonic() - cached[0] < max_age:
            return cached[1]
        if cached is not None:
            self._refresh_incomplete(kb)
            return cached[1]
        return self._read_incomplete(kb)

    def _refresh_incomplete(self, kb: str) -> None:
        """Read ``kb``'s record in the background, unless a read is already on its way."""
        with self._refreshing_lock:
            if kb in self._refreshing:
                return
            self._refreshing.add(kb)

        def run() -> None:
            try:
                self._read_incomplete(kb)
            except DependencyError as exc:
                log.warning("ingest state of kb %r not refreshed: %s", kb, exc)
            finally:
                with self._refreshing_lock:
                    self._refreshing.discard(kb)

        with self._refreshing_lock:
            if self._background is None:
                self._background = ThreadPoolExecutor(max_workers=1,
                                                      thread_name_prefix="ingest-state")
            self._background.submit(run)

    def _read_incomplete(self, kb: str) -> dict[str, Any] | None:
        """The record, read in one request: a missing state collection (no ingest ever
        recorded one here) answers not-found, rather than being asked about first."""
        name = self._state_collection
        with self._errors("read the ingest state", None):
            try:
                rows = self._client.query(name, ids=[check_kb(kb)], output_fields=["info"],
                                          timeout=self._timeout)
            except MilvusException as exc:
                if exc.code != ErrorCode.COLLECTION_NOT_FOUND:
                    raise
                rows = []
        info = json.loads(rows[0]["info"]) if rows else None
        self._incomplete[kb] = (time.monotonic(), info)
        return info

    def close(self) -> None:
        """Close the client connection (for Lite, release the local database file)."""
        with self._refreshing_lock:
            background, self._background = self._background, None
        if background is not None:
            background.shutdown(wait=True, cancel_futures=True)
        with self._errors("close the connection", None):
            self._client.close()

    # -- writes --------------------------------------------------------------

    def upsert(self, kb: str, chunks: Sequence[Chunk],
               progress: Callable[[int], None] | None = None,
               vectors: Sequence[Sequence[float]] | None = None) -> int:
        """Insert or replace ``chunks`` by ``chunk_id`` in size-bounded batches.

        ``vectors`` (one per chunk) are required when the kb was created with an
        embedder and refused when it was not.

        Every chunk is checked before anything is written, so a bad chunk
        leaves the collection untouched. Re-upserting the same chunks leaves
        the count unchanged. Chunks a document no longer has are not removed:
        call ``delete_document`` first when replacing a document.

        Returns:
            The number of chunks written.

        Raises:
            InvalidIdError: a chunk, doc or entity id is malformed.
            InputError: duplicate chunk ids in ``chunks``, a field too long,
                too many entities or metadata that is not a JSON object.
            NotFoundError: the kb has no collection (call ``ensure_collection``).
        """
        name = self._collection(kb)
        check_chunks(chunks)
        fold = self._folds(kb) if chunks else False
        rows = [_row(chunk, fold) for chunk in chunks]
        if chunks:
            self._attach_vectors(kb, chunks, rows, vectors)
        done = 0
        for batch in _batches(rows, self._batch_bytes, self._batch_rows):
            with self._writing("upsert chunks", kb):
                self._client.upsert(name, batch, timeout=self._timeout)
            done += len(batch)
            if progress is not None:
                progress(done)
        return done

    def set_entity_tags(self, kb: str, chunks: Sequence[Chunk]) -> int:
        """Store new ``entity_ids`` for chunks already stored (re-tagging), keeping
        their dense vectors: Milvus replaces whole rows, so the stored vectors are
        read back and written with them (no embedder needed).

        Raises:
            NotFoundError: a chunk is not stored (it was deleted meanwhile).
        """
        vectors = None
        if chunks and self.dense_spec(kb) is not None:
            wanted = [check_key(c.chunk_id, "chunk id") for c in chunks]
            stored: dict[str, list[float]] = {}
            for start in range(0, len(wanted), _IDS_PER_QUERY):
                expr = f"chunk_id in {_list_literal(wanted[start:start + _IDS_PER_QUERY])}"
                with self._reading("read vectors", kb):
                    rows = self._client.query(self._collection(kb), filter=expr,
                                              output_fields=["chunk_id", "dense"],
                                              timeout=self._timeout)
                stored.update((row["chunk_id"], [float(v) for v in row["dense"]]) for row in rows)
            missing = [cid for cid in wanted if cid not in stored]
            if missing:
                raise NotFoundError(f"chunks {missing[:5]} are no longer stored in {kb!r}; "
                                    "re-tagging only updates stored chunks")
            vectors = [stored[cid] for cid in wanted]
        return self.upsert(kb, chunks, vectors=vectors)

    def _attach_vectors(self, kb: str, chunks: Sequence[Chunk], rows: list[dict[str, Any]],
                        vectors: Sequence[Sequence[float]] | None) -> None:
        checked = check_vectors(kb, self.dense_spec(kb), chunks, vectors)
        if checked is not None:
            for row, vector in zip(rows, checked, strict=True):
                row["dense"] = vector

    def delete_chunks(self, kb: str, chunk_ids: Sequence[str]) -> int:
        """Delete these chunks; ids not stored are ignored. Returns how many were asked
        to go that existed (Lite) or the server's delete count."""
        name = self._collection(kb)
        wanted = [check_key(chunk_id, "chunk id") for chunk_id in chunk_ids]
        deleted = 0
        for start in range(0, len(wanted), _IDS_PER_QUERY):
            expr = f"chunk_id in {_list_literal(wanted[start:start + _IDS_PER_QUERY])}"
            with self._writing("delete chunks", kb):
                result = self._client.delete(name, filter=expr, timeout=self._timeout)
            deleted += len(result) if isinstance(result, list) else int(result.get("delete_count", 0))
        return deleted

    def doc_chunk_ids(self, kb: str, doc_ids: Sequence[str]) -> dict[str, list[str]]:
        """The stored chunk ids of each of these documents (documents with none are left out)."""
        name = self._collection(kb)
        wanted = [check_key(doc_id, "doc id") for doc_id in doc_ids]
        found: dict[str, list[str]] = {}
        for start in range(0, len(wanted), _IDS_PER_QUERY):
            expr = f"doc_id in {_list_literal(wanted[start:start + _IDS_PER_QUERY])}"
            for row in self._rows(kb, name, expr, ["chunk_id", "doc_id"], 1000):
                found.setdefault(row["doc_id"], []).append(row["chunk_id"])
        return found

    def delete_document(self, kb: str, doc_id: str) -> int:
        """Delete all chunks of ``doc_id``; return how many were deleted (0 if none)."""
        name = self._collection(kb)
        expr = f"doc_id == {_literal(check_key(doc_id, 'doc id'))}"
        with self._writing("delete a document", kb):
            result = self._client.delete(name, filter=expr, timeout=self._timeout)
        # Lite returns the deleted primary keys, a server a {"delete_count": n} dict.
        if isinstance(result, list):
            return len(result)
        return int(result.get("delete_count", 0))

    # -- reads ---------------------------------------------------------------

    def search(self, kb: str, query: str, *, limit: int, entity_ids: Sequence[str] = (),
               exclude_chunk_ids: Sequence[str] = (), group_by_doc: bool = True,
               exclude_doc_ids: Sequence[str] = (), with_vectors: bool = False) -> list[Hit]:
        """BM25-rank the kb's chunks for ``query``, best first, with exact filters.

        ``query`` is sent as search data, never into the filter expression.
        Filtering happens inside Milvus before ranking (not on a truncated
        result), so ``limit`` hits come back whenever that many chunks match.

        Args:
            limit: maximum number of hits (1-16384).
            entity_ids: keep only chunks tagged with any of these entity ids.
            exclude_chunk_ids: never return these chunks.
            exclude_doc_ids: never return chunks of these documents.
            with_vectors: fill ``Hit.vector`` (only for kbs with dense vectors).
            group_by_doc: at most one chunk per document, its best one. Milvus
                groups by ``doc_id``; the result is de-duplicated here as well
                because Lite 2.5.1 ignores grouping in hybrid search, which
                BM25 + dense will use.

        Returns:
            Hits with their BM25 scores; [] for a blank query.

        Raises:
            InvalidIdError: an entity or chunk id is malformed.
            InputError: ``limit`` out of range.
            NotFoundError: the kb has no collection.
        """
        if not query.strip():
            self._collection(kb)
            check_limit(limit)
            search_filter(entity_ids, exclude_chunk_ids, exclude_doc_ids)
            return []
        if self._folds(kb):
            query = fold_traditional(query)
        return self._search(kb, [query], "sparse", "BM25", limit=limit, entity_ids=entity_ids,
                            exclude_chunk_ids=exclude_chunk_ids, exclude_doc_ids=exclude_doc_ids,
                            group_by_doc=group_by_doc, with_vectors=with_vectors)

    def dense_search(self, kb: str, vector: Sequence[float], *, limit: int,
                     entity_ids: Sequence[str] = (), exclude_chunk_ids: Sequence[str] = (),
                     exclude_doc_ids: Sequence[str] = (), group_by_doc: bool = False,
                     with_vectors: bool = False) -> list[Hit]:
        """Cosine-rank the kb's chunks for a query vector, with the same exact filters as
        :meth:`search`. Scores are cosine similarities in [-1, 1].

        Raises:
            ConfigurationError: the kb has no dense vectors, or of another length.
        """
        checked = check_query_vector(kb, self.dense_spec(kb), vector)
        return self._search(kb, [checked], "dense", "COSINE", limit=limit,
                            entity_ids=entity_ids, exclude_chunk_ids=exclude_chunk_ids,
                            exclude_doc_ids=exclude_doc_ids, group_by_doc=group_by_doc,
                            with_vectors=with_vectors)

    def hybrid_search(self, kb: str, query: str, vector: Sequence[float], *, limit: int,
                      entity_ids: Sequence[str] = (), exclude_chunk_ids: Sequence[str] = (),
                      exclude_doc_ids: Sequence[str] = (), rrf_k: int = 60,
                      with_vectors: bool = False) -> list[Hit]:
        """BM25 and cosine rankings of ``limit`` chunks each, fused by Milvus's RRF ranker
        in one request (the formula of ``retrieval.fusion``, ranks from 1). The final
        limit is ``2 * limit``, so every chunk either ranking found comes back and ties
        can be ordered by chunk id here, as the in-process fusion orders them.

        Raises:
            ConfigurationError: the kb has no dense vectors, or of another length.
        """
        if not query.strip():
            return rrf_scores([self.dense_search(
                kb, vector, limit=limit, entity_ids=entity_ids, exclude_chunk_ids=exclude_chunk_ids,
                exclude_doc_ids=exclude_doc_ids, with_vectors=with_vectors)], k=rrf_k)
        name = self._collection(kb)
        checked = check_query_vector(kb, self.dense_spec(kb), vector)
        check_limit(2 * limit)
        if self._folds(kb):
            query = fold_traditional(query)
        expr = search_filter(entity_ids, exclude_chunk_ids, exclude_doc_ids) or None
        requests = [AnnSearchRequest(data=[query], anns_field="sparse", limit=limit,
                                     param={"metric_type": "BM25"}, expr=expr),
                    AnnSearchRequest(data=[checked], anns_field="dense", limit=limit,
                                     param={"metric_type": "COSINE"}, expr=expr)]
        fields = OUTPUT_FIELDS + (["dense"] if with_vectors else [])
        with self._reading("search", kb):
            result = self._client.hybrid_search(name, requests, RRFRanker(rrf_k), limit=2 * limit,
                                                output_fields=fields, timeout=self._timeout)
        return by_score([_hit(found["entity"], found["distance"]) for found in result[0]])

    def _search(self, kb: str, data: list[Any], field: str, metric: str, *, limit: int,
                entity_ids: Sequence[str], exclude_chunk_ids: Sequence[str],
                exclude_doc_ids: Sequence[str], group_by_doc: bool,
                with_vectors: bool) -> list[Hit]:
        name = self._collection(kb)
        check_limit(limit)
        expr = search_filter(entity_ids, exclude_chunk_ids, exclude_doc_ids)
        grouping = {"group_by_field": "doc_id"} if group_by_doc else {}
        fields = OUTPUT_FIELDS + (["dense"] if with_vectors and self.dense_spec(kb) else [])
        with self._reading("search", kb):
            result = self._client.search(
                name, data=data, anns_field=field, limit=limit, filter=expr,
                output_fields=fields, search_params={"metric_type": metric},
                timeout=self._timeout, **grouping)
        hits = [_hit(found["entity"], found["distance"]) for found in result[0]]
        return _best_per_doc(hits) if group_by_doc else hits

    def count(self, kb: str) -> int:
        """Number of chunks in the kb's collection."""
        name = self._collection(kb)
        with self._reading("count chunks", kb):
            result = self._client.query(name, filter="", output_fields=["count(*)"],
                                        timeout=self._timeout)
        return int(result[0]["count(*)"])

    def get_chunks(self, kb: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        """The chunks with these ids, in the order asked; ids not stored are skipped."""
        name = self._collection(kb)
        wanted = [check_key(chunk_id, "chunk id") for chunk_id in chunk_ids]
        found: dict[str, Chunk] = {}
        for start in range(0, len(wanted), _IDS_PER_QUERY):
            expr = f"chunk_id in {_list_literal(wanted[start:start + _IDS_PER_QUERY])}"
            with self._reading("read chunks", kb):
                rows = self._client.query(name, filter=expr, output_fields=OUTPUT_FIELDS,
                                          timeout=self._timeout)
            found.update((row["chunk_id"], _chunk(row)) for row in rows)
        return [found[chunk_id] for chunk_id in wanted if chunk_id in found]

    def iter_chunks(self, kb: str, batch: int = 1000, *,
                    auto_tagged_only: bool = False) -> Iterator[Chunk]:
        """Every chunk of the kb, ``batch`` rows per Milvus round trip, in no set order.

        With ``auto_tagged_only``, only chunks whose tags came from alias matching.
        """
        name = self._collection(kb)
        expr = "auto_tagged == true" if auto_tagged_only else ""
        for row in self._rows(kb, name, expr, OUTPUT_FIELDS, batch):
            yield _chunk(row)

    def _rows(self, kb: str, name: str, expr: str, fields: list[str],
              batch: int) -> Iterator[dict[str, Any]]:
        """Every row matching ``expr`` (built from checked literals only), batch by batch."""
        with self._reading("read chunks", kb):
            iterator = self._client.query_iterator(name, batch_size=batch, filter=expr,
                                                   output_fields=fields, timeout=self._timeout)
        try:
            while True:
                with self._reading("read chunks", kb):
                    rows = iterator.next()
                if not rows:
                    return
                yield from rows
        finally:
            iterator.close()

    # -- helpers -------------------------------------------------------------

    def _collection(self, kb: str) -> str:
        return self._prefix + check_kb(kb)

    def _rows_lock(self, kb: str) -> ReadWriteLock:
        with self._row_locks_guard:
            lock = self._row_locks.get(kb)
            if lock is None:
                lock = self._row_locks[kb] = ReadWriteLock(f"the chunks of kb {kb!r}",
                                                           self._timeout)
            return lock

    @contextmanager
    def _reading(self, action: str, kb: str) -> Iterator[None]:
        """A read of the kb's rows, never run while this process writes them.

        Milvus Lite 2.5.1 applies an upsert as a delete and an insert that a search
        running in between can see apart: the replaced rows are missing from its
        results, or the search fails ("Invalid sparse row: negative value"). Re-tagging
        after an alias edit rewrites rows of a kb that is being searched, so within one
        process a read waits for a write of the same kb to finish (a write waits for the
        reads under way, and reads that arrive while it waits queue behind it). Writes
        by another process through a shared Milvus are not covered."""
        with self._rows_lock(kb).reading(), self._errors(action, kb):
            yield

    @contextmanager
    def _writing(self, action: str, kb: str) -> Iterator[None]:
        """A write of the kb's rows (upsert, delete): see ``_reading``."""
        with self._rows_lock(kb).writing(), self._errors(action, kb):
            yield

    @contextmanager
    def _errors(self, action: str, kb: str | None) -> Iterator[None]:
        """Translate pymilvus/gRPC errors raised inside the block into Referent's tree."""
        try:
            yield
        except _VENDOR_ERRORS as exc:
            if kb is not None and getattr(exc, "code", None) == ErrorCode.COLLECTION_NOT_FOUND:
                raise NotFoundError(
                    f"knowledge base {kb!r} has no chunks in Milvus (collection "
                    f"{self._collection(kb)!r}); run `referent ingest --kb {kb} FILE` first"
                ) from exc
            where = f" for kb {kb!r}" if kb is not None else ""
            raise _translate(exc, f"{action}{where}") from exc


def _translate(exc: BaseException, action: str) -> DependencyError:
    """A DependencyError for a vendor exception; retryable when a later call may succeed."""
    message = exc.message if isinstance(exc, MilvusException) else str(exc) or type(exc).__name__
    if _is_transient(exc):
        return RetryableDependencyError(f"Milvus could not {action} (transient, retry): {message}",
                                        service="milvus")
    return DependencyError(f"Milvus could not {action}: {message}", service="milvus")


def _is_transient(exc: BaseException) -> bool:
    if isinstance(exc, (grpc.FutureTimeoutError, ConnectError, MilvusUnavailableException,
                        ConnectionNotExistException)):
        return True
    if isinstance(exc, grpc.RpcError):
        code = exc.code() if callable(getattr(exc, "code", None)) else None
        return code in _TRANSIENT_GRPC
    # A MilvusException's code is a gRPC status after pymilvus gave up retrying,
    # else a Milvus error code.
    code = exc.code if isinstance(exc, MilvusException) else None
    return code in _TRANSIENT_GRPC or code in (ErrorCode.RATE_LIMIT, Status.CONNECT_FAILED)


def _recorded(description: dict[str, Any]) -> dict[str, Any]:
    """What Referent wrote in a collection's description ({} for one made elsewhere)."""
    try:
        recorded = json.loads(description.get("description") or "{}")
    except ValueError:
        return {}
    return recorded if isinstance(recorded, dict) else {}


def _spec_of(description: dict[str, Any]) -> DenseSpec | None:
    """The DenseSpec recorded in a collection's description (None: BM25 only)."""
    recorded = _recorded(description)
    embedder = recorded.get("embedder")
    if embedder:
        return DenseSpec(str(embedder), int(recorded["dim"]))
    # A collection made elsewhere: trust its schema over its description.
    for field in description.get("fields", []):
        if field.get("name") == "dense":
            return DenseSpec("unknown", int(field.get("params", {}).get("dim", 0)))
    return None


def _analyzer_of(description: dict[str, Any]) -> str:
    """The analyzer recorded in a collection's description (``chinese`` for a collection
    made before the choice existed, or elsewhere)."""
    recorded = _recorded(description).get("analyzer")
    return recorded if recorded in ANALYZER_PARAMS else LEGACY_ANALYZER


def _schema(dense: DenseSpec | None = None, analyzer: str = LEGACY_ANALYZER) -> Any:
    description = json.dumps({"referent": _DESCRIPTION_VERSION,
                              "embedder": dense.embedder if dense else None,
                              "dim": dense.dim if dense else None, "fold": _FOLD,
                              "analyzer": analyzer})
    schema = MilvusClient.create_schema(auto_id=False, enable_dynamic_field=False,
                                        description=description)
    schema.add_field("chunk_id", DataType.VARCHAR, is_primary=True, max_length=MAX_KEY_BYTES)
    schema.add_field("doc_id", DataType.VARCHAR, max_length=MAX_KEY_BYTES)
    schema.add_field("title", DataType.VARCHAR, max_length=MAX_TITLE_BYTES)
    schema.add_field("text", DataType.VARCHAR, max_length=MAX_TEXT_BYTES)
    schema.add_field("bm25_text", DataType.VARCHAR, max_length=MAX_TEXT_BYTES,
                     enable_analyzer=True, analyzer_params=ANALYZER_PARAMS[analyzer])
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_field("entities", DataType.ARRAY, element_type=DataType.VARCHAR,
                     max_capacity=MAX_ENTITIES, max_length=MAX_ENTITY_ID_CHARS)
    schema.add_field("auto_tagged", DataType.BOOL)
    schema.add_field("metadata", DataType.JSON)
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25,
                                 input_field_names=["bm25_text"], output_field_names=["sparse"]))
    if dense is not None:
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dense.dim)
    return schema


def _literal(value: str) -> str:
    """A double-quoted Milvus string literal for a value already checked by ``check_key``."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _list_literal(values: Iterable[str]) -> str:
    return "[" + ", ".join(_literal(value) for value in values) + "]"


def search_filter(entity_ids: Sequence[str], exclude_chunk_ids: Sequence[str],
                   exclude_doc_ids: Sequence[str] = ()) -> str:
    """The filter expression of a search: literals of checked ids only, never user text."""
    ids, excluded, docs = check_filters(entity_ids, exclude_chunk_ids, exclude_doc_ids)
    clauses = []
    if ids:
        clauses.append(f"array_contains_any(entities, {_list_literal(ids)})")
    if excluded:
        clauses.append(f"chunk_id not in {_list_literal(excluded)}")
    if docs:
        clauses.append(f"doc_id not in {_list_literal(docs)}")
    return " and ".join(clauses)


def _row(chunk: Chunk, fold: bool) -> dict[str, Any]:
    """The Milvus row for ``chunk`` (already checked by ``check_chunks``); ``fold``:
    the BM25 input with traditional characters as simplified."""
    bm25_text = f"{chunk.title}\n{chunk.text}"
    return {"chunk_id": chunk.chunk_id, "doc_id": chunk.doc_id, "title": chunk.title,
            "text": chunk.text, "bm25_text": fold_traditional(bm25_text) if fold else bm25_text,
            "entities": list(chunk.entity_ids), "auto_tagged": bool(chunk.auto_tagged),
            "metadata": chunk.metadata}


def _batches(rows: list[dict[str, Any]], max_bytes: int,
             max_rows: int) -> Iterator[list[dict[str, Any]]]:
    """Consecutive runs of rows within ``max_rows`` and ``max_bytes`` (a lone huge row excepted)."""
    batch: list[dict[str, Any]] = []
    size = 0
    for row in rows:
        row_bytes = len(json.dumps(row, ensure_ascii=False).encode("utf-8"))
        if batch and (size + row_bytes > max_bytes or len(batch) >= max_rows):
            yield batch
            batch, size = [], 0
        batch.append(row)
        size += row_bytes
    if batch:
        yield batch


def _chunk(row: dict[str, Any]) -> Chunk:
    return Chunk(chunk_id=row["chunk_id"], doc_id=row["doc_id"], title=row["title"],
                 text=row["text"], entity_ids=tuple(row["entities"]),
                 metadata=row["metadata"] or {}, auto_tagged=bool(row.get("auto_tagged")))


def _hit(entity: dict[str, Any], score: float) -> Hit:
    dense = entity.get("dense")
    return Hit(chunk_id=entity["chunk_id"], doc_id=entity["doc_id"], title=entity["title"],
               text=entity["text"], entity_ids=tuple(entity["entities"]), score=float(score),
               metadata=entity["metadata"] or {},
               vector=tuple(map(float, dense)) if dense is not None else None)


def _best_per_doc(hits: list[Hit]) -> list[Hit]:
    """Keep the first (best) hit of each document."""
    seen: set[str] = set()
    best = []
    for hit in hits:
        if hit.doc_id not in seen:
            seen.add(hit.doc_id)
            best.append(hit)
    return best
