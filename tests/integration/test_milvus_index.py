"""MilvusIndex against a real Milvus Lite database in a temporary directory."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from common.errors import (
    ConfigurationError,
    InputError,
    InvalidIdError,
    NotFoundError,
    RetryableDependencyError,
)
from retrieval.milvus_index import MilvusIndex
from retrieval.models import Chunk

pytestmark = pytest.mark.milvus

EAST = "region.east"
SOUTH = "region.south"
ACCIDENT = "ins.accident"

CORPUS = [
    Chunk("east#0", "east", "华东区销售报告", "2025年华东区销售额为120亿元，同比增长12%。",
          (EAST,), {"year": 2025}),
    Chunk("east#1", "east", "华东区销售报告", "华东区销售额的增长主要来自上海和杭州的新门店。", (EAST,)),
    Chunk("south#0", "south", "华南区销售报告", "2025年华南区销售额为80亿元，同比下降3%。",
          (SOUTH,), {"year": 2025}),
    Chunk("south#1", "south", "华南区销售报告", "华南区销售额下降主要受深圳门店调整影响。", (SOUTH,)),
    Chunk("mixed#0", "mixed", "区域对比", "华东区与华南区的销售额差距继续扩大。", (EAST, SOUTH)),
    Chunk("policy#0", "policy", "意外险条款（2025版）", "被保险人因意外伤害住院的，按约定给付住院津贴。",
          (ACCIDENT,), {"version": "2025", "valid_from": "2025-01-01"}),
]


@pytest.fixture(scope="module")
def milvus_uri(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("milvus") / "referent.db")


@pytest.fixture(scope="module")
def index(milvus_uri: str) -> Iterator[MilvusIndex]:
    index = MilvusIndex(milvus_uri)
    yield index
    index.close()


def _new_kb(index: MilvusIndex) -> str:
    name = f"t_{uuid.uuid4().hex[:12]}"
    index.ensure_collection(name)
    return name


@pytest.fixture(scope="module")
def corpus_kb(index: MilvusIndex) -> Iterator[str]:
    """The corpus, shared by the tests that only read (creating a collection takes 0.5 s)."""
    name = _new_kb(index)
    index.upsert(name, CORPUS)
    yield name
    index.drop(name)


@pytest.fixture
def kb(index: MilvusIndex) -> Iterator[str]:
    """A fresh, empty kb for a test that writes, dropped afterwards."""
    name = _new_kb(index)
    yield name
    index.drop(name)


@pytest.fixture
def own_corpus_kb(index: MilvusIndex, kb: str) -> str:
    """The corpus in a kb of the test's own, for tests that change it."""
    index.upsert(kb, CORPUS)
    return kb


def test_chinese_query_finds_the_right_region(index: MilvusIndex, corpus_kb: str) -> None:
    east = index.search(corpus_kb, "华东区销售额", limit=5)
    south = index.search(corpus_kb, "华南区销售额", limit=5)

    assert east[0].doc_id == "east"
    assert south[0].doc_id == "south"
    assert [hit.score for hit in east] == sorted((hit.score for hit in east), reverse=True)
    assert east[0].score > 0


def test_title_counts_for_matching(index: MilvusIndex, corpus_kb: str) -> None:
    # 条款 is only in the policy's title, never in any text.
    hits = index.search(corpus_kb, "条款", limit=5)

    assert [hit.doc_id for hit in hits] == ["policy"]
    assert hits[0].text == "被保险人因意外伤害住院的，按约定给付住院津贴。"


def test_hit_carries_the_stored_chunk(index: MilvusIndex, corpus_kb: str) -> None:
    hit = index.search(corpus_kb, "意外伤害住院津贴", limit=1)[0]

    policy = CORPUS[-1]
    assert (hit.chunk_id, hit.doc_id, hit.title, hit.text, hit.entity_ids, hit.metadata) == (
        policy.chunk_id, policy.doc_id, policy.title, policy.text, policy.entity_ids,
        policy.metadata)


def test_entity_filter_keeps_only_tagged_chunks(index: MilvusIndex, corpus_kb: str) -> None:
    hits = index.search(corpus_kb, "华东区销售额", limit=10, entity_ids=[SOUTH],
                        group_by_doc=False)

    assert {hit.chunk_id for hit in hits} == {"south#0", "south#1", "mixed#0"}


def test_entity_filter_matches_any_of_several_ids(index: MilvusIndex, corpus_kb: str) -> None:
    hits = index.search(corpus_kb, "销售额 住院", limit=10, entity_ids=[SOUTH, ACCIDENT])

    assert {hit.doc_id for hit in hits} == {"south", "mixed", "policy"}


def test_excluded_chunks_never_come_back(index: MilvusIndex, corpus_kb: str) -> None:
    hits = index.search(corpus_kb, "华东区销售额", limit=10, group_by_doc=False,
                        exclude_chunk_ids=["east#0", "mixed#0"])

    returned = {hit.chunk_id for hit in hits}
    assert "east#1" in returned
    assert returned.isdisjoint({"east#0", "mixed#0"})


def test_one_chunk_per_document(index: MilvusIndex, corpus_kb: str) -> None:
    ungrouped = index.search(corpus_kb, "华东区销售额", limit=10, group_by_doc=False)
    grouped = index.search(corpus_kb, "华东区销售额", limit=10)

    assert [hit.doc_id for hit in ungrouped].count("east") == 2
    doc_ids = [hit.doc_id for hit in grouped]
    assert len(doc_ids) == len(set(doc_ids))
    # The chunk kept for a document is its best one.
    best_east = next(hit for hit in ungrouped if hit.doc_id == "east")
    assert next(hit for hit in grouped if hit.doc_id == "east") == best_east


def test_upserted_chunks_are_searchable_at_once(index: MilvusIndex, kb: str) -> None:
    index.upsert(kb, CORPUS[:1])

    assert [hit.chunk_id for hit in index.search(kb, "华东区", limit=5)] == ["east#0"]
    assert index.count(kb) == 1


def test_re_upsert_replaces_instead_of_duplicating(index: MilvusIndex,
                                                   own_corpus_kb: str) -> None:
    assert index.upsert(own_corpus_kb, CORPUS) == len(CORPUS)
    changed = Chunk("south#1", "south", "华南区销售报告", "华南区广州门店客流回升。", (SOUTH,))
    index.upsert(own_corpus_kb, [changed])

    assert index.count(own_corpus_kb) == len(CORPUS)
    assert index.get_chunks(own_corpus_kb, ["south#1"]) == [changed]
    assert index.search(own_corpus_kb, "深圳", limit=5, group_by_doc=False) == []
    assert index.search(own_corpus_kb, "广州客流", limit=5)[0].chunk_id == "south#1"


def test_upsert_reports_progress_per_batch(milvus_uri: str, index: MilvusIndex, kb: str) -> None:
    small_batches = MilvusIndex(milvus_uri, batch_rows=2)
    done: list[int] = []
    try:
        written = small_batches.upsert(kb, CORPUS[:5], progress=done.append)
    finally:
        small_batches.close()

    assert written == 5
    assert done == [2, 4, 5]
    assert index.count(kb) == 5


def test_upsert_batches_by_size(milvus_uri: str, index: MilvusIndex, kb: str) -> None:
    byte_bound = MilvusIndex(milvus_uri, batch_bytes=500)
    done: list[int] = []
    try:
        byte_bound.upsert(kb, CORPUS[:3], progress=done.append)
    finally:
        byte_bound.close()

    assert done == [1, 2, 3]  # each row is larger than 500 bytes / 2


def test_bad_chunk_fails_the_upsert_before_anything_is_written(
        index: MilvusIndex, kb: str) -> None:
    bad = Chunk("bad'id", "doc", "标题", "正文")

    with pytest.raises(InvalidIdError):
        index.upsert(kb, [*CORPUS, bad])
    with pytest.raises(InputError, match="appears twice"):
        index.upsert(kb, [CORPUS[0], CORPUS[0]])
    with pytest.raises(InvalidIdError):
        index.upsert(kb, [Chunk("ok", "doc", "标题", "正文", ("not an entity id",))])
    assert index.count(kb) == 0


def test_delete_document_removes_all_its_chunks(index: MilvusIndex,
                                                own_corpus_kb: str) -> None:
    assert index.delete_document(own_corpus_kb, "east") == 2
    assert index.delete_document(own_corpus_kb, "east") == 0

    assert index.count(own_corpus_kb) == len(CORPUS) - 2
    hits = index.search(own_corpus_kb, "华东区销售额", limit=10, group_by_doc=False)
    assert "east" not in {hit.doc_id for hit in hits}


def test_get_chunks_in_asked_order_skipping_unknown(index: MilvusIndex, corpus_kb: str) -> None:
    chunks = index.get_chunks(corpus_kb, ["policy#0", "nope#9", "east#0"])

    assert chunks == [CORPUS[-1], CORPUS[0]]
    assert index.get_chunks(corpus_kb, []) == []


def test_iter_chunks_yields_everything(index: MilvusIndex, corpus_kb: str) -> None:
    chunks = list(index.iter_chunks(corpus_kb, batch=4))

    assert sorted(chunks, key=lambda chunk: chunk.chunk_id) == sorted(
        CORPUS, key=lambda chunk: chunk.chunk_id)


def test_blank_query_returns_nothing(index: MilvusIndex, corpus_kb: str) -> None:
    assert index.search(corpus_kb, "", limit=5) == []
    assert index.search(corpus_kb, "  \n", limit=5) == []


def test_limit_out_of_range_is_rejected(index: MilvusIndex, corpus_kb: str) -> None:
    with pytest.raises(InputError):
        index.search(corpus_kb, "销售额", limit=0)


def test_missing_kb_says_how_to_create_it(index: MilvusIndex) -> None:
    missing = "never_ingested"

    assert not index.has_collection(missing)
    for call in (lambda: index.search(missing, "销售额", limit=5),
                 lambda: index.count(missing),
                 lambda: index.upsert(missing, CORPUS[:1]),
                 lambda: index.delete_document(missing, "east"),
                 lambda: index.get_chunks(missing, ["east#0"]),
                 lambda: list(index.iter_chunks(missing))):
        with pytest.raises(NotFoundError, match=f"referent ingest --kb {missing} FILE"):
            call()
    index.drop(missing)  # dropping what is not there is fine


def test_ensure_collection_is_idempotent(index: MilvusIndex, own_corpus_kb: str) -> None:
    index.ensure_collection(own_corpus_kb)

    assert index.has_collection(own_corpus_kb)
    assert index.count(own_corpus_kb) == len(CORPUS)


def test_drop_removes_the_kb(index: MilvusIndex, own_corpus_kb: str) -> None:
    index.drop(own_corpus_kb)

    assert not index.has_collection(own_corpus_kb)
    with pytest.raises(NotFoundError):
        index.count(own_corpus_kb)


def test_invalid_kb_name_is_rejected(index: MilvusIndex) -> None:
    with pytest.raises(InvalidIdError):
        index.search("a-b; drop", "销售额", limit=5)


@pytest.mark.parametrize("query", ['" or 1==1 or "', 'chunk_id in ["x"]', "') or true --"])
def test_query_text_is_only_ever_search_text(index: MilvusIndex, corpus_kb: str,
                                              query: str) -> None:
    hits = index.search(corpus_kb, query, limit=10, entity_ids=[ACCIDENT])

    assert {hit.doc_id for hit in hits} <= {"policy"}


@pytest.mark.parametrize("entity_id", ['" or 1==1 or "', 'E7"]) or array_contains(entities, "x',
                                       "华东区", ""])
def test_malformed_entity_ids_are_rejected(index: MilvusIndex, corpus_kb: str,
                                           entity_id: str) -> None:
    with pytest.raises(InvalidIdError):
        index.search(corpus_kb, "销售额", limit=5, entity_ids=[entity_id])


@pytest.mark.parametrize("chunk_id", ["x'y", "line\nbreak", "", "x" * 257])
def test_unusable_exclude_ids_are_rejected(index: MilvusIndex, corpus_kb: str,
                                           chunk_id: str) -> None:
    with pytest.raises(InvalidIdError):
        index.search(corpus_kb, "销售额", limit=5, exclude_chunk_ids=[chunk_id])


def test_exclude_ids_are_taken_literally(index: MilvusIndex, corpus_kb: str) -> None:
    everything = index.search(corpus_kb, "销售额", limit=10, group_by_doc=False)

    tricky = ['" or 1==1 or "', 'east#0", "south#0', 'chunk_id in ["x"]', "\\", 'x\\"']
    assert index.search(corpus_kb, "销售额", limit=10, group_by_doc=False,
                        exclude_chunk_ids=tricky) == everything


def test_quotes_and_backslashes_in_ids_round_trip(index: MilvusIndex, kb: str) -> None:
    odd = [Chunk('a"b', 'doc"1', "标题", "华东区销售额", (EAST,)),
           Chunk("c\\d", "文档\\2", "标题", "华东区销售额下降", (EAST,)),
           Chunk('e" or chunk_id != "', "doc 3", "标题", "华东区销售额增长", (EAST,))]
    index.upsert(kb, odd)

    assert index.get_chunks(kb, [chunk.chunk_id for chunk in odd]) == odd
    remaining = index.search(kb, "华东区销售额", limit=10, exclude_chunk_ids=[odd[2].chunk_id])
    assert {hit.chunk_id for hit in remaining} == {odd[0].chunk_id, odd[1].chunk_id}
    assert index.delete_document(kb, "文档\\2") == 1
    assert index.delete_document(kb, 'doc"1') == 1
    assert index.count(kb) == 1


def test_unreachable_server_is_a_retryable_dependency_error() -> None:
    with pytest.raises(RetryableDependencyError, match="could not be reached"):
        MilvusIndex("http://127.0.0.1:1", timeout=2)


def test_unusable_lite_path_names_the_setting(tmp_path: Path) -> None:
    with pytest.raises(ConfigurationError, match="REFERENT_MILVUS__URI"):
        MilvusIndex(str(tmp_path / "missing-dir" / "referent.db"))
