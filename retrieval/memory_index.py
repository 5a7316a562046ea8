"""An in-memory ``VectorIndex``, for tests and tiny knowledge bases only.

It keeps every chunk of every kb in a dict and scores them on each search, so
a search costs time linear in the kb: fine for the unit tests (which run the
turn engine in seconds without a Milvus) and for a kb of a few thousand
chunks, not for production. Nothing in the server or the CLI uses it; the
production index is ``retrieval.milvus_index.MilvusIndex``.

It answers like the Milvus backend on everything the contract tests check
(``tests/contract/test_vector_index_contract.py``): the same id and size
checks (``retrieval.index``), exact entity filters (any of the ids), exact
chunk and document exclusions, one hit per document when grouping, upsert by
``chunk_id``, deletes, the embedder a kb was made for, cosine dense search.

Lexical scoring is BM25 (k1 = 1.2, b = 0.75, Milvus's defaults) over
``title + "\\n" + text``, with tokens made here rather than by Milvus's
analyzers, following the kb's analyzer (``retrieval.analyzers``): Chinese,
Japanese and Korean runs give their character bigrams (a lone character gives
itself; jieba's words in Milvus), other text gives its lower-cased words and
numbers, and under the ``english`` analyzer those words lose the English stop
words and are stemmed ("Fees" meets "fee"), as Milvus's English analyzer does.
That finds 华东区销售额 in 华东区7月的销售额 and "accident insurance" in English
text, which is what tests need; its ranking is not Milvus's, so no test may depend on the order of two
near-equal hits.
"""

from __future__ import annotations

import json
import math
import re
import threading
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from common.errors import NotFoundError
from common.ids import check_kb
from common.language import cues
from common.language.normalize import fold_traditional
import snowballstemmer
from retrieval.analyzers import LEGACY_ANALYZER, analyzer_mismatch, check_analyzer
from retrieval.fusion import rrf_scores
from retrieval.index import (check_chunks, check_filters, check_key, check_limit,
                             check_query_vector, check_vectors, dense_mismatch)
from retrieval.models import Chunk, DenseSpec, Hit

_K1 = 1.2
# The Snowball English stemmer, as Milvus's English analyzer (tantivy) applies it.
_ENGLISH_STEMMER = snowballstemmer.stemmer("english")
_B = 0.75
_CJK = r"\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
# A run of CJK ideographs, kana or hangul, or a run of other letters and digits: "2024年"
# is "2024" and "年", as the segmenter reads it (``\w`` alone would hold the CJK after a
# digit in one word, and a question with a year would share no term with any passage).
_TOKEN_RE = re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)")


def tokens(text: str, analyzer: str = LEGACY_ANALYZER) -> list[str]:
    """BM25 terms of ``text``: CJK character bigrams (traditional characters folded to
    simplified, as the Milvus collection's BM25 input is) and lower-cased other words,
    which the ``english`` analyzer stems and rids of stop words.

    >>> tokens("华东区 sales 2025")
    ['华东', '东区', 'sales', '2025']
    >>> tokens("The Fees of 2025", "english")
    ['fee', '2025']
    """
    terms: list[str] = []
    folded = fold_traditional(unicodedata.normalize("NFKC", text).casefold())
    english = analyzer == "english"
    for cjk, word in _TOKEN_RE.findall(folded):
        if len(cjk) > 1:
            terms.extend(cjk[i:i + 2] for i in range(len(cjk) - 1))
        elif cjk or not english:
            terms.append(cjk or word)
        elif word not in cues.STOP_WORDS:
            terms.append(_ENGLISH_STEMMER.stemWord(word))
    return terms


@dataclass(frozen=True)
class _Stored:
    chunk: Chunk
    terms: Counter[str]
    length: int
    vector: tuple[float, ...] | None


@dataclass
class _Kb:
    dense: DenseSpec | None
    chunks: dict[str, _Stored]
    analyzer: str = LEGACY_ANALYZER


class InMemoryIndex:
    """Chunks of every kb in this process's memory: a ``VectorIndex`` for tests.

    Thread-safe (one lock); nothing survives the object. See the module
    docstring for what its BM25 is and is not.
    """

    def __init__(self) -> None:
        self._kbs: dict[str, _Kb] = {}
        self._incomplete: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    # -- collections ---------------------------------------------------------

    def ensure_collection(self, kb: str, dense: DenseSpec | None = None,
                          analyzer: str | None = None) -> None:
        """Create the kb's store unless it exists; an existing one must fit ``dense`` and
        ``analyzer`` (None: whichever it has; ``chinese`` for a new one)."""
        if analyzer is not None:
            check_analyzer(analyzer)
        with self._lock:
            found = self._kbs.get(check_kb(kb))
            if found is None:
                self._kbs[kb] = _Kb(dense, {}, analyzer or LEGACY_ANALYZER)
            elif found.dense != dense:
                raise dense_mismatch(kb, found.dense, dense)
            elif analyzer is not None and found.analyzer != analyzer:
                raise analyzer_mismatch(kb, found.analyzer, analyzer)

    def analyzer(self, kb: str) -> str:
        return self._kb(kb).analyzer

    def dense_spec(self, kb: str) -> DenseSpec | None:
        return self._kb(kb).dense

    def has_collection(self, kb: str) -> bool:
        return check_kb(kb) in self._kbs

    def kbs(self) -> list[str]:
        with self._lock:
            return sorted(self._kbs)

    def load(self, kb: str, timeout: float | None = None) -> None:
        """Nothing to load: the chunks are in memory (raises NotFoundError for no store)."""
        self._kb(kb)

    def drop(self, kb: str) -> None:
        with self._lock:
            self._kbs.pop(check_kb(kb), None)

    def close(self) -> None:
        with self._lock:
            self._kbs.clear()

    # -- ingest state ----------------------------------------------------------

    def mark_incomplete(self, kb: str, info: dict[str, Any]) -> None:
        with self._lock:
            self._incomplete[check_kb(kb)] = dict(info)

    def mark_complete(self, kb: str) -> None:
        with self._lock:
            self._incomplete.pop(check_kb(kb), None)

    def incomplete(self, kb: str) -> dict[str, Any] | None:
        found = self._incomplete.get(check_kb(kb))
        return dict(found) if found is not None else None

    # -- writes --------------------------------------------------------------

    def upsert(self, kb: str, chunks: Sequence[Chunk],
               progress: Callable[[int], None] | None = None,
               vectors: Sequence[Sequence[float]] | None = None) -> int:
        """Insert or replace ``chunks`` by ``chunk_id``, all or nothing (checked first)."""
        check_kb(kb)
        check_chunks(chunks)
        if not chunks:
            return 0
        store = self._kb(kb)
        checked = check_vectors(kb, store.dense, chunks, vectors)
        rows = [_stored(chunk, checked[i] if checked is not None else None, store.analyzer)
                for i, chunk in enumerate(chunks)]
        with self._lock:
            store.chunks.update((row.chunk.chunk_id, row) for row in rows)
        if progress is not None:
            progress(len(rows))
        return len(rows)

    def set_entity_tags(self, kb: str, chunks: Sequence[Chunk]) -> int:
        """Store new ``entity_ids`` for stored chunks, keeping their vectors.

        Raises:
            NotFoundError: the kb has dense vectors and a chunk is no longer stored
                (as the Milvus backend, which must read the vectors back).
        """
        store = self._kb(kb)
        vectors = None
        if chunks and store.dense is not None:
            missing = [c.chunk_id for c in chunks if c.chunk_id not in store.chunks]
            if missing:
                raise NotFoundError(f"chunks {missing[:5]} are no longer stored in {kb!r}; "
                                    "re-tagging only updates stored chunks")
            vectors = [store.chunks[c.chunk_id].vector or () for c in chunks]
        return self.upsert(kb, chunks, vectors=vectors)

    def delete_chunks(self, kb: str, chunk_ids: Sequence[str]) -> int:
        store = self._kb(kb)
        wanted = [check_key(chunk_id, "chunk id") for chunk_id in chunk_ids]
        with self._lock:
            return sum(store.chunks.pop(chunk_id, None) is not None for chunk_id in wanted)

    def delete_document(self, kb: str, doc_id: str) -> int:
        store = self._kb(kb)
        check_key(doc_id, "doc id")
        with self._lock:
            gone = [cid for cid, row in store.chunks.items() if row.chunk.doc_id == doc_id]
            for chunk_id in gone:
                del store.chunks[chunk_id]
        return len(gone)

    # -- reads ---------------------------------------------------------------

    def doc_chunk_ids(self, kb: str, doc_ids: Sequence[str]) -> dict[str, list[str]]:
        wanted = {check_key(doc_id, "doc id") for doc_id in doc_ids}
        found: dict[str, list[str]] = {}
        for row in self._rows(kb):
            if row.chunk.doc_id in wanted:
                found.setdefault(row.chunk.doc_id, []).append(row.chunk.chunk_id)
        return found

    def search(self, kb: str, query: str, *, limit: int, entity_ids: Sequence[str] = (),
               exclude_chunk_ids: Sequence[str] = (), group_by_doc: bool = True,
               exclude_doc_ids: Sequence[str] = (), with_vectors: bool = False) -> list[Hit]:
        """BM25-rank the kb's chunks for ``query`` inside the exact filters; [] for a
        blank query or when no chunk shares a term with it."""
        store = self._kb(kb)
        check_limit(limit)
        allowed = _filter(entity_ids, exclude_chunk_ids, exclude_doc_ids)
        terms = tokens(query, store.analyzer)
        rows = self._rows(kb)
        if not terms or not rows:
            return []
        average = sum(row.length for row in rows) / len(rows)
        idf = {term: _idf(len(rows), sum(1 for row in rows if term in row.terms))
               for term in set(terms)}
        scored = []
        for row in rows:
            if not allowed(row.chunk):
                continue
            score = sum(_bm25(row, term, idf[term], average) for term in terms)
            if score > 0:
                scored.append((score, row))
        return _ranked(scored, limit, group_by_doc, with_vectors and store.dense is not None)

    def dense_search(self, kb: str, vector: Sequence[float], *, limit: int,
                     entity_ids: Sequence[str] = (), exclude_chunk_ids: Sequence[str] = (),
                     exclude_doc_ids: Sequence[str] = (), group_by_doc: bool = False,
                     with_vectors: bool = False) -> list[Hit]:
        """Cosine-rank the kb's chunks for a query vector, with the filters of :meth:`search`."""
        query = check_query_vector(kb, self._kb(kb).dense, vector)
        check_limit(limit)
        allowed = _filter(entity_ids, exclude_chunk_ids, exclude_doc_ids)
        scored = [(_cosine(query, row.vector), row) for row in self._rows(kb)
                  if row.vector is not None and allowed(row.chunk)]
        return _ranked(scored, limit, group_by_doc, with_vectors)

    def hybrid_search(self, kb: str, query: str, vector: Sequence[float], *, limit: int,
                      entity_ids: Sequence[str] = (), exclude_chunk_ids: Sequence[str] = (),
                      exclude_doc_ids: Sequence[str] = (), rrf_k: int = 60,
                      with_vectors: bool = False) -> list[Hit]:
        """Both rankings of :meth:`search` and :meth:`dense_search`, fused by RRF."""
        filters = {"limit": limit, "entity_ids": entity_ids, "group_by_doc": False,
                   "exclude_chunk_ids": exclude_chunk_ids, "exclude_doc_ids": exclude_doc_ids,
                   "with_vectors": with_vectors}
        dense = self.dense_search(kb, vector, **filters)
        return rrf_scores([self.search(kb, query, **filters), dense], k=rrf_k)

    def count(self, kb: str) -> int:
        return len(self._kb(kb).chunks)

    def get_chunks(self, kb: str, chunk_ids: Sequence[str]) -> list[Chunk]:
        store = self._kb(kb)
        wanted = [check_key(chunk_id, "chunk id") for chunk_id in chunk_ids]
        return [_copy(store.chunks[cid].chunk) for cid in wanted if cid in store.chunks]

    def iter_chunks(self, kb: str, batch: int = 1000, *,
                    auto_tagged_only: bool = False) -> Iterator[Chunk]:
        rows = self._rows(kb)  # taken now, so a missing kb fails at the call like Milvus
        return iter([_copy(row.chunk) for row in rows
                     if row.chunk.auto_tagged or not auto_tagged_only])

    # -- helpers -------------------------------------------------------------

    def _kb(self, kb: str) -> _Kb:
        found = self._kbs.get(check_kb(kb))
        if found is None:
            raise NotFoundError(f"knowledge base {kb!r} has no chunks in the in-memory index; "
                                f"run `referent ingest --kb {kb} FILE` first (or "
                                "ensure_collection in a test)")
        return found

    def _rows(self, kb: str) -> list[_Stored]:
        store = self._kb(kb)
        with self._lock:
            return list(store.chunks.values())


def _copy(chunk: Chunk) -> Chunk:
    """The chunk as Milvus gives it back: a tuple of ids, metadata through JSON (so a
    caller changing what it got changes nothing stored)."""
    return replace(chunk, entity_ids=tuple(chunk.entity_ids),
                   metadata=json.loads(json.dumps(chunk.metadata)),
                   auto_tagged=bool(chunk.auto_tagged))


def _stored(chunk: Chunk, vector: list[float] | None, analyzer: str) -> _Stored:
    chunk = _copy(chunk)
    terms = tokens(f"{chunk.title}\n{chunk.text}", analyzer)
    return _Stored(chunk, Counter(terms), len(terms),
                   tuple(vector) if vector is not None else None)


def _filter(entity_ids: Sequence[str], exclude_chunk_ids: Sequence[str],
            exclude_doc_ids: Sequence[str]) -> Callable[[Chunk], bool]:
    ids, chunks, docs = (set(values) for values in
                         check_filters(entity_ids, exclude_chunk_ids, exclude_doc_ids))

    def allowed(chunk: Chunk) -> bool:
        return ((not ids or not ids.isdisjoint(chunk.entity_ids))
                and chunk.chunk_id not in chunks and chunk.doc_id not in docs)
    return allowed


def _idf(n: int, df: int) -> float:
    return math.log(1 + (n - df + 0.5) / (df + 0.5))


def _bm25(row: _Stored, term: str, idf: float, average: float) -> float:
    tf = row.terms.get(term, 0)
    if not tf:
        return 0.0
    return idf * tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * row.length / (average or 1)))


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm if norm else 0.0


def _ranked(scored: list[tuple[float, _Stored]], limit: int, group_by_doc: bool,
            with_vectors: bool) -> list[Hit]:
    """Best first (ties by chunk id, so runs repeat), one per document when grouping."""
    scored.sort(key=lambda pair: (-pair[0], pair[1].chunk.chunk_id))
    hits: list[Hit] = []
    docs: set[str] = set()
    for score, row in scored:
        chunk = row.chunk
        if group_by_doc:
            if chunk.doc_id in docs:
                continue
            docs.add(chunk.doc_id)
        hits.append(Hit(chunk_id=chunk.chunk_id, doc_id=chunk.doc_id, title=chunk.title,
                        text=chunk.text, entity_ids=chunk.entity_ids, score=float(score),
                        metadata=json.loads(json.dumps(chunk.metadata)),
                        vector=row.vector if with_vectors else None))
        if len(hits) == limit:
            break
    return hits
