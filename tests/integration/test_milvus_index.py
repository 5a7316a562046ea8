"""What only the Milvus backend has, against a real Milvus Lite database: upsert
batches and the errors of its URI. The contract every ``VectorIndex`` keeps is
tests/contract/test_vector_index_contract.py."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from common.errors import ConfigurationError, RetryableDependencyError
from retrieval.milvus_index import MilvusIndex
from retrieval.models import Chunk
from tests.contract.test_vector_index_contract import CORPUS

pytestmark = pytest.mark.milvus


def test_upsert_reports_progress_per_batch(lite_uri: str, lite_index: MilvusIndex,
                                           lite_kb: str) -> None:
    lite_index.ensure_collection(lite_kb)
    small_batches = MilvusIndex(lite_uri, batch_rows=2)
    done: list[int] = []
    try:
        written = small_batches.upsert(lite_kb, CORPUS[:5], progress=done.append)
    finally:
        small_batches.close()

    assert written == 5
    assert done == [2, 4, 5]
    assert lite_index.count(lite_kb) == 5


def test_upsert_batches_by_size(lite_uri: str, lite_index: MilvusIndex, lite_kb: str) -> None:
    lite_index.ensure_collection(lite_kb)
    byte_bound = MilvusIndex(lite_uri, batch_bytes=500)
    done: list[int] = []
    try:
        byte_bound.upsert(lite_kb, CORPUS[:3], progress=done.append)
    finally:
        byte_bound.close()

    assert done == [1, 2, 3]  # each row is larger than 500 bytes / 2


def test_unreachable_server_is_a_retryable_dependency_error() -> None:
    with pytest.raises(RetryableDependencyError, match="could not be reached"):
        MilvusIndex("http://127.0.0.1:1", timeout=2)


def test_unusable_lite_path_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="REFERENT_MILVUS__URI"):
        MilvusIndex(str(tmp_path / "missing-dir" / "referent.db"))


def test_a_collection_made_before_folding_is_searched_as_typed(lite_uri: str,
                                                              lite_index: MilvusIndex,
                                                              monkeypatch) -> None:
    """A kb ingested before BM25 input was folded keeps its traditional text: a folded
    query would miss it, so such a kb gets the query as typed until it is re-ingested."""
    import retrieval.milvus_index as milvus_index

    name = f"t_{uuid.uuid4().hex[:12]}"
    monkeypatch.setattr(milvus_index, "_FOLD", "none")  # as the older description said nothing
    lite_index.ensure_collection(name)
    monkeypatch.undo()
    older = MilvusIndex(lite_uri)  # reads the description afresh
    try:
        older.upsert(name, [Chunk("fee#0", "fees", "收費標準", "信用卡年費為300元。")])
        assert [h.doc_id for h in older.search(name, "年費多少", limit=5)] == ["fees"]
        assert older.search(name, "年费多少", limit=5) == []
    finally:
        older.drop(name)
        older.close()


def test_a_search_while_this_process_rewrites_the_rows_still_finds_them(lite_index: MilvusIndex,
                                                                        lite_kb: str) -> None:
    """Re-tagging rewrites rows of a kb that turns are searching. Lite applies an upsert as
    a delete then an insert, and a search in between missed the rows (or failed) until
    reads and writes of one kb were kept apart in the index."""
    import threading
    from dataclasses import replace

    lite_index.ensure_collection(lite_kb)
    lite_index.upsert(lite_kb, CORPUS)
    retagged = [replace(c, entity_ids=c.entity_ids[::-1]) for c in CORPUS]
    stop, failures = threading.Event(), []

    def rewrite() -> None:
        while not stop.is_set():
            try:
                lite_index.set_entity_tags(lite_kb, retagged)
            except Exception as exc:  # noqa: BLE001 - reported below
                failures.append(exc)
                return

    writer = threading.Thread(target=rewrite)
    writer.start()
    found = []
    try:
        for _ in range(40):
            hits = lite_index.search(lite_kb, "华东区销售额", limit=10, group_by_doc=False)
            found.append(len({h.chunk_id for h in hits} & {"east#0", "east#1", "mixed#0"}))
    finally:
        stop.set()
        writer.join(30)
    assert not failures
    assert found == [3] * 40
