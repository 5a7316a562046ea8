"""Corpus ingest (docs/formats.md §2): validate the whole file, chunk, tag, embed, upsert.

A file with one bad line ingests nothing. Lines with ``chunk_id`` are stored as
they are; lines without are chunked into ``<doc_id>#<n>``. Lines without
``entity_ids`` are tagged by alias matching over title + text, a document's
passages together (``understanding.tagging.tag_document``).

A chunk id belongs to one document: a file that gives a chunk id to a second
document (on another line of the file, or one the collection already holds under
another doc id) is refused, naming the line and both documents, and nothing is
written; ``referent delete-doc`` frees an id.

Re-ingest is idempotent and incremental: a document in the file replaces the
stored one. Chunks stored exactly as the file has them are not written (nor
embedded) again, changed and new chunks are upserted, and chunks the document
no longer has are deleted, after the new ones are stored. Documents absent
from the file are left alone (``referent delete-doc`` removes one).

While an ingest writes, its kb is marked incomplete (``VectorIndex.mark_incomplete``):
an ingest that is interrupted leaves the mark, turns on the kb say the collection
is incomplete, and running the same ingest again completes it and clears the mark.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import NamedTuple

from common.errors import FormatError, InvalidIdError
from common.formats import check_line
from common.ids import check_entity_id
from common.jsonl import Fields, iter_jsonl
from kg.aliases import AliasSnapshot
from understanding.linker import EntityLinker
from understanding.tagging import tag_document
from retrieval.analyzers import detect_analyzer
from retrieval.chunking import chunk_text
from retrieval.embedders import Embedder
from retrieval.index import VectorIndex
from retrieval.models import Chunk, DenseSpec

MAX_ID_LEN = 256
# Chunks read to choose a new collection's BM25 analyzer: an evenly spaced sample says the
# corpus' language as well as every chunk would, at a fixed cost (all of 1M chunks: about 20 s).
ANALYZER_SAMPLE = 2000
# Chunks embedded and stored per step: bounds memory and keeps the progress bar moving.
STEP = 512
#: The keys a corpus line may have (docs/formats.md §2).
CORPUS_KEYS = frozenset({"doc_id", "chunk_id", "title", "text", "entity_ids", "metadata", "format"})


@dataclass(frozen=True)
class IngestReport:
    """What an ingest did. ``chunks`` are the file's; ``written`` of them were new or
    changed, ``unchanged`` already stored as they are, ``removed`` stale ones deleted."""

    documents: int
    chunks: int
    tagged_by_linker: int
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    seconds: float = 0.0
    # The BM25 analyzer of the kb's collection (retrieval/analyzers.py).
    analyzer: str = ""


class ParsedCorpus(NamedTuple):
    """A corpus file's chunks, how many the linker tagged, and each chunk id's line."""

    chunks: list[Chunk]
    tagged: int
    line_of: dict[str, int]


def parse_corpus(lines: Iterable[str], snapshot: AliasSnapshot, *, path: str | None = None,
                 chunk_chars: int = 300) -> ParsedCorpus:
    """Turn a corpus file into chunks, checking every line first.

    Raises:
        FormatError: naming the line and field; nothing is returned.
    """
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    owner: dict[str, str] = {}
    for number, obj in iter_jsonl(lines, path):
        f = Fields(obj, number, path)
        f.check_format_version()
        f.reject_unknown(CORPUS_KEYS)
        doc_id = f.string("doc_id", max_len=MAX_ID_LEN)
        chunk_id = f.string("chunk_id", required=False, max_len=MAX_ID_LEN)
        title = f.string("title", required=False, allow_empty=True) or ""
        text = f.string("text")
        metadata = f.mapping("metadata")
        given = "entity_ids" in obj and obj["entity_ids"] is not None
        entity_ids = f.string_list("entity_ids")
        for i, eid in enumerate(entity_ids):
            try:
                check_entity_id(eid)
            except InvalidIdError as exc:
                raise f.error(f"entity_ids[{i}]", str(exc)) from exc
            if eid not in snapshot.entities:
                raise f.error(f"entity_ids[{i}]", f"unknown entity {eid!r}: import it with "
                              "`referent ontology import` first, or fix the id")
        check_line("corpus", obj, line=number, path=path)
        pieces = [(chunk_id, text)] if chunk_id else [
            (f"{doc_id}#{n}", piece) for n, piece in enumerate(chunk_text(text, chunk_chars))]
        for cid, piece in pieces:
            if cid in seen:
                raise f.error("chunk_id", _reused(cid, doc_id, owner[cid], f"line {seen[cid]}"))
            seen[cid] = number
            owner[cid] = doc_id
            chunks.append(Chunk(chunk_id=cid, doc_id=doc_id, title=title, text=piece,
                                entity_ids=tuple(entity_ids), metadata=metadata,
                                auto_tagged=not given))
    if not chunks:
        raise FormatError("the file holds no corpus lines", path=path)
    chunks = tag_documents(chunks, snapshot)
    tagged = sum(1 for c in chunks if c.auto_tagged and c.entity_ids)
    return ParsedCorpus(chunks, tagged, seen)


def tag_documents(chunks: list[Chunk], snapshot: AliasSnapshot,
                  linker: EntityLinker | None = None) -> list[Chunk]:
    """``chunks`` with the alias-matched (``auto_tagged``) ones tagged, each document's together.

    A document is its chunks of one doc id and title, read in chunk id order so that a
    re-tagging pass, which reads them in no set order, finds the same tags; given tags
    are left as they are.
    """
    linker = linker or EntityLinker()
    documents: dict[tuple[str, str], list[int]] = {}
    for i, chunk in enumerate(chunks):
        if chunk.auto_tagged:
            documents.setdefault((chunk.doc_id, chunk.title), []).append(i)
    out = list(chunks)
    for (_, title), members in documents.items():
        members.sort(key=lambda i: chunks[i].chunk_id)
        tags = tag_document(title, [chunks[i].text for i in members], snapshot, linker)
        for i, ids in zip(members, tags, strict=True):
            out[i] = replace(chunks[i], entity_ids=ids)
    return out


def _sample(items: list[Chunk], size: int) -> list[Chunk]:
    """At most ``size`` of ``items``, evenly spaced from first to last."""
    if len(items) <= size:
        return items
    step = len(items) / size
    return [items[int(i * step)] for i in range(size)]


def _reused(chunk_id: str, doc_id: str, owner: str, where: str) -> str:
    if owner == doc_id:
        return f"chunk id {chunk_id!r} already used on {where}"
    return (f"chunk id {chunk_id!r} of document {doc_id!r} already belongs to document "
            f"{owner!r} ({where}); a chunk id names one passage of one document: give this "
            "one another id, or leave chunk_id out to number it <doc_id>#<n>")


def _refuse_foreign_chunks(kb: str, parsed: ParsedCorpus, stored_ids: dict[str, list[str]],
                           index: VectorIndex, path: str | None) -> None:
    """Refuse a file whose chunk ids the collection holds under another document.

    Only ids the file's own documents do not already hold are looked up.

    Raises:
        FormatError: naming the first such line and both documents.
    """
    own = {cid for ids in stored_ids.values() for cid in ids}
    unknown = [c.chunk_id for c in parsed.chunks if c.chunk_id not in own]
    if not unknown:
        return
    doc_of = {c.chunk_id: c.doc_id for c in parsed.chunks}
    taken = [(parsed.line_of[s.chunk_id], s) for s in index.get_chunks(kb, unknown)
             if s.doc_id != doc_of[s.chunk_id]]
    if taken:
        line, stored = min(taken, key=lambda t: t[0])
        raise FormatError(_reused(stored.chunk_id, doc_of[stored.chunk_id], stored.doc_id,
                                  f"in the collection of kb {kb!r}"),
                          line=line, field="chunk_id", path=path)


def ingest_corpus(kb: str, lines: Iterable[str], *, index: VectorIndex, snapshot: AliasSnapshot,
                  path: str | None = None, chunk_chars: int = 300,
                  embedder: Embedder | None = None, analyzer: str | None = None,
                  progress: Callable[[int, int], None] | None = None) -> IngestReport:
    """Validate, chunk and tag a corpus file, then store what changed in ``kb``'s collection.

    ``analyzer`` is how BM25 reads the kb's text (``retrieval.analyzers``); None: the
    existing collection's, or for a new one the corpus' language's.

    ``progress(done, total)`` is called after each stored step, ``total`` being the
    number of chunks to write.

    Raises:
        FormatError: a bad line, or a chunk id of another document (nothing is written).
        ConfigurationError: the kb was built with another embedder or analyzer.
        DependencyError: Milvus or the embeddings endpoint failed.
    """
    started = time.perf_counter()
    parsed = parse_corpus(lines, snapshot, path=path, chunk_chars=chunk_chars)
    chunks, tagged = parsed.chunks, parsed.tagged
    dense = DenseSpec(embedder.name, embedder.dim) if embedder is not None else None
    if analyzer is None and not index.has_collection(kb):
        analyzer = detect_analyzer(f"{c.title}\n{c.text}" for c in _sample(chunks, ANALYZER_SAMPLE))
    index.ensure_collection(kb, dense, analyzer)
    doc_ids = list(dict.fromkeys(c.doc_id for c in chunks))
    stored_ids = index.doc_chunk_ids(kb, doc_ids)
    _refuse_foreign_chunks(kb, parsed, stored_ids, index, path)
    index.mark_incomplete(kb, {"started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                               "file": path, "chunks": len(chunks)})
    stored = {c.chunk_id: c for c in index.get_chunks(
        kb, [cid for ids in stored_ids.values() for cid in ids])}
    to_write = [c for c in chunks if stored.get(c.chunk_id) != c]
    total = len(to_write)
    done = 0
    for start in range(0, total, STEP):
        step = to_write[start:start + STEP]
        vectors = (embedder.embed_passages([f"{c.title}\n{c.text}" for c in step])
                   if embedder is not None else None)
        index.upsert(kb, step, vectors=vectors)
        done += len(step)
        if progress:
            progress(done, total)
    if progress and not total:
        progress(0, 0)
    keep = {c.chunk_id for c in chunks}
    stale = [cid for ids in stored_ids.values() for cid in ids if cid not in keep]
    removed = index.delete_chunks(kb, stale) if stale else 0
    index.mark_complete(kb)
    return IngestReport(documents=len(doc_ids), chunks=len(chunks), tagged_by_linker=tagged,
                        written=total, unchanged=len(chunks) - total, removed=removed,
                        seconds=time.perf_counter() - started, analyzer=index.analyzer(kb))
