"""A chunk id belongs to one document: ingest never takes a passage away from the
document that holds it, whether that document is on another line of the file or
already stored; the file is refused whole, naming the line and both documents.
Real Neo4j (the kb's aliases) and Milvus Lite."""

from __future__ import annotations

import json

import pytest

from common.errors import FormatError
from kg.aliases import AliasSnapshot
from kg.ontology import Ontology
from retrieval.ingest import ingest_corpus

pytestmark = pytest.mark.milvus


def _line(doc_id: str, text: str, chunk_id: str | None = None) -> str:
    record = {"doc_id": doc_id, "text": text, "entity_ids": []}
    if chunk_id is not None:
        record["chunk_id"] = chunk_id
    return json.dumps(record, ensure_ascii=False)


def _ingest(kb, index, lines):
    return ingest_corpus(kb, lines, index=index, path="c.jsonl",
                         snapshot=AliasSnapshot.from_ontology(kb, 0, Ontology()))


def _state(kb, index) -> dict[str, tuple[str, str]]:
    return {c.chunk_id: (c.doc_id, c.text) for c in index.iter_chunks(kb)}


@pytest.mark.parametrize("taken", ["shared#0", "docA#0"], ids=["given", "numbered"])
def test_a_stored_chunk_of_another_document_is_refused_and_kept(kb, milvus_index, taken):
    first = [_line("docA", "甲文档的段落", "shared#0" if taken == "shared#0" else None),
             _line("docC", "丙文档的段落", "docC#0")]
    _ingest(kb, milvus_index, first)
    before = _state(kb, milvus_index)
    assert before[taken] == ("docA", "甲文档的段落")

    second = [_line("docC", "丙文档改过的段落", "docC#0"),
              _line("docB", "乙文档的段落", taken)]
    with pytest.raises(FormatError) as refused:
        _ingest(kb, milvus_index, second)
    message = str(refused.value)
    assert refused.value.line == 2 and refused.value.field == "chunk_id"
    assert "'docA'" in message and "'docB'" in message and repr(taken) in message, message
    # Nothing of the file was written, not even its valid line, and no ingest is pending.
    assert _state(kb, milvus_index) == before
    assert milvus_index.incomplete(kb) is None
    assert milvus_index.delete_document(kb, "docA") == 1


def test_one_chunk_id_for_two_documents_of_one_file_is_refused(kb, milvus_index):
    lines = [_line("docA", "甲文档的段落", "shared#0"), _line("docB", "乙文档的段落", "shared#0")]
    with pytest.raises(FormatError) as refused:
        _ingest(kb, milvus_index, lines)
    assert refused.value.line == 2
    message = str(refused.value)
    assert "'docA'" in message and "'docB'" in message and "line 1" in message, message
    assert not milvus_index.has_collection(kb) or milvus_index.count(kb) == 0


def test_a_passage_moves_between_documents_when_the_file_carries_both(kb, milvus_index):
    _ingest(kb, milvus_index, [_line("docA", "段落", "shared#0"), _line("docA", "另一段", "a#1")])
    report = _ingest(kb, milvus_index, [_line("docA", "另一段", "a#1"),
                                        _line("docB", "段落", "shared#0")])
    assert report.written == 1 and report.removed == 0
    assert _state(kb, milvus_index) == {"a#1": ("docA", "另一段"), "shared#0": ("docB", "段落")}
