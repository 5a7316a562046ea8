"""Corpus ingest (FORMATS.md §2): validate the whole file, chunk, tag, upsert.

A file with one bad line ingests nothing. Lines with ``chunk_id`` are stored as
they are; lines without are chunked into ``<doc_id>#<n>``. Lines without
``entity_ids`` are tagged by alias matching over title + text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from common.errors import FormatError, InvalidIdError
from common.ids import check_entity_id
from common.jsonl import Fields, iter_jsonl
from kg.aliases import AliasSnapshot
from kg.tagging import tag_entities
from retrieval.chunking import chunk_text
from retrieval.index import VectorIndex
from retrieval.models import Chunk

MAX_ID_LEN = 256
_FIELDS = {"doc_id", "chunk_id", "title", "text", "entity_ids", "metadata", "format"}


@dataclass(frozen=True)
class IngestReport:
    documents: int
    chunks: int
    tagged_by_linker: int


def parse_corpus(lines: Iterable[str], snapshot: AliasSnapshot, *, path: str | None = None,
                 chunk_chars: int = 300) -> tuple[list[Chunk], int]:
    """Turn a corpus file into chunks, checking every line first.

    Returns the chunks and how many of them were tagged by the linker.

    Raises:
        FormatError: naming the line and field; nothing is returned.
    """
    chunks: list[Chunk] = []
    seen: dict[str, int] = {}
    tagged = 0
    for number, obj in iter_jsonl(lines, path):
        f = Fields(obj, number, path)
        f.check_format_version()
        f.reject_unknown(_FIELDS)
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
        pieces = [(chunk_id, text)] if chunk_id else [
            (f"{doc_id}#{n}", piece) for n, piece in enumerate(chunk_text(text, chunk_chars))]
        for cid, piece in pieces:
            if cid in seen:
                raise f.error("chunk_id", f"chunk id {cid!r} already used on line {seen[cid]}")
            seen[cid] = number
            if given:
                tags = tuple(entity_ids)
            else:
                tags = tag_entities(f"{title}\n{piece}", snapshot)
                tagged += 1
            chunks.append(Chunk(chunk_id=cid, doc_id=doc_id, title=title, text=piece,
                                entity_ids=tags, metadata=metadata, auto_tagged=not given))
    if not chunks:
        raise FormatError("the file holds no corpus lines", path=path)
    return chunks, tagged


def ingest_corpus(kb: str, lines: Iterable[str], *, index: VectorIndex, snapshot: AliasSnapshot,
                  path: str | None = None, chunk_chars: int = 300,
                  progress: Callable[[int, int], None] | None = None) -> IngestReport:
    """Validate, chunk and tag a corpus file, then upsert it into ``kb``'s collection.

    ``progress(done, total)`` is called after each stored batch.
    """
    chunks, tagged = parse_corpus(lines, snapshot, path=path, chunk_chars=chunk_chars)
    index.ensure_collection(kb)
    total = len(chunks)
    index.upsert(kb, chunks, progress=(lambda done: progress(done, total)) if progress else None)
    return IngestReport(documents=len({c.doc_id for c in chunks}), chunks=total,
                        tagged_by_linker=tagged)
