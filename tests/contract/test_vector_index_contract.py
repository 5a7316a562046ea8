"""One contract for every ``VectorIndex`` backend, run against the in-memory index
and a real Milvus Lite database in a temporary directory: exact entity filters,
exclusions, one hit per document, upsert by id, deletes, checked ids and sizes,
dense vectors. What only Milvus has (upsert batches, its URI) is tested in
tests/integration/test_milvus_index.py."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from common.errors import ConfigurationError, InputError, InvalidIdError, NotFoundError
from retrieval.fusion import rrf_scores
from retrieval.index import VectorIndex
from retrieval.memory_index import InMemoryIndex
from retrieval.models import Chunk, DenseSpec

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
DENSE = DenseSpec("test:fixed", 3)
# One direction per region: east along x, south along y, the comparison in between.
VECTORS = [(1.0, 0.0, 0.0), (0.9, 0.1, 0.0), (0.0, 1.0, 0.0), (0.1, 0.9, 0.0),
           (0.7, 0.7, 0.0), (0.0, 0.0, 1.0)]


@pytest.fixture(scope="module", params=["memory", pytest.param("milvus", marks=pytest.mark.milvus)])
def index(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[VectorIndex]:
    if request.param == "memory":
        made: VectorIndex = InMemoryIndex()
    else:
        from retrieval.milvus_index import MilvusIndex

        made = MilvusIndex(str(tmp_path_factory.mktemp("milvus") / "referent.db"))
    yield made
    made.close()


def _new_kb(index: VectorIndex, dense: DenseSpec | None = None) -> str:
    name = f"t_{uuid.uuid4().hex[:12]}"
    index.ensure_collection(name, dense)
    return name


@pytest.fixture(scope="module")
def corpus_kb(index: VectorIndex) -> Iterator[str]:
    """The corpus, shared by the tests that only read (creating a collection takes 0.5 s)."""
    name = _new_kb(index)
    index.upsert(name, CORPUS)
    yield name
    index.drop(name)


@pytest.fixture
def kb(index: VectorIndex) -> Iterator[str]:
    """A fresh, empty kb for a test that writes, dropped afterwards."""
    name = _new_kb(index)
    yield name
    index.drop(name)


@pytest.fixture
def own_corpus_kb(index: VectorIndex, kb: str) -> str:
    """The corpus in a kb of the test's own, for tests that change it."""
    index.upsert(kb, CORPUS)
    return kb


@pytest.fixture
def dense_kb(index: VectorIndex) -> Iterator[str]:
    """The corpus with a vector per chunk."""
    name = _new_kb(index, DENSE)
    index.upsert(name, CORPUS, vectors=VECTORS)
    yield name
    index.drop(name)


class TestVectorIndexContract:
    def test_chinese_query_finds_the_right_region(self, index, corpus_kb):
        east = index.search(corpus_kb, "华东区销售额", limit=5)
        south = index.search(corpus_kb, "华南区销售额", limit=5)

        assert east[0].doc_id == "east"
        assert south[0].doc_id == "south"
        assert [hit.score for hit in east] == sorted((hit.score for hit in east), reverse=True)
        assert east[0].score > 0

    def test_title_counts_for_matching(self, index, corpus_kb):
        # 条款 is only in the policy's title, never in any text.
        hits = index.search(corpus_kb, "条款", limit=5)

        assert [hit.doc_id for hit in hits] == ["policy"]
        assert hits[0].text == "被保险人因意外伤害住院的，按约定给付住院津贴。"

    def test_hit_carries_the_stored_chunk(self, index, corpus_kb):
        hit = index.search(corpus_kb, "意外伤害住院津贴", limit=1)[0]

        policy = CORPUS[-1]
        assert (hit.chunk_id, hit.doc_id, hit.title, hit.text, hit.entity_ids, hit.metadata) == (
            policy.chunk_id, policy.doc_id, policy.title, policy.text, policy.entity_ids,
            policy.metadata)

    def test_entity_filter_keeps_only_tagged_chunks(self, index, corpus_kb):
        hits = index.search(corpus_kb, "华东区销售额", limit=10, entity_ids=[SOUTH],
                            group_by_doc=False)

        assert {hit.chunk_id for hit in hits} == {"south#0", "south#1", "mixed#0"}

    def test_entity_filter_matches_any_of_several_ids(self, index, corpus_kb):
        hits = index.search(corpus_kb, "销售额 住院", limit=10, entity_ids=[SOUTH, ACCIDENT])

        assert {hit.doc_id for hit in hits} == {"south", "mixed", "policy"}

    def test_excluded_chunks_never_come_back(self, index, corpus_kb):
        hits = index.search(corpus_kb, "华东区销售额", limit=10, group_by_doc=False,
                            exclude_chunk_ids=["east#0", "mixed#0"])

        returned = {hit.chunk_id for hit in hits}
        assert "east#1" in returned
        assert returned.isdisjoint({"east#0", "mixed#0"})

    def test_one_chunk_per_document(self, index, corpus_kb):
        ungrouped = index.search(corpus_kb, "华东区销售额", limit=10, group_by_doc=False)
        grouped = index.search(corpus_kb, "华东区销售额", limit=10)

        assert [hit.doc_id for hit in ungrouped].count("east") == 2
        doc_ids = [hit.doc_id for hit in grouped]
        assert len(doc_ids) == len(set(doc_ids))
        # The chunk kept for a document is its best one.
        best_east = next(hit for hit in ungrouped if hit.doc_id == "east")
        assert next(hit for hit in grouped if hit.doc_id == "east") == best_east

    def test_upserted_chunks_are_searchable_at_once(self, index, kb):
        index.upsert(kb, CORPUS[:1])

        assert [hit.chunk_id for hit in index.search(kb, "华东区", limit=5)] == ["east#0"]
        assert index.count(kb) == 1

    def test_re_upsert_replaces_instead_of_duplicating(self, index, own_corpus_kb):
        assert index.upsert(own_corpus_kb, CORPUS) == len(CORPUS)
        changed = Chunk("south#1", "south", "华南区销售报告", "华南区广州门店客流回升。", (SOUTH,))
        index.upsert(own_corpus_kb, [changed])

        assert index.count(own_corpus_kb) == len(CORPUS)
        assert index.get_chunks(own_corpus_kb, ["south#1"]) == [changed]
        assert index.search(own_corpus_kb, "深圳", limit=5, group_by_doc=False) == []
        assert index.search(own_corpus_kb, "广州客流", limit=5)[0].chunk_id == "south#1"

    def test_bad_chunk_fails_the_upsert_before_anything_is_written(self, index, kb):
        bad = Chunk("bad'id", "doc", "标题", "正文")

        with pytest.raises(InvalidIdError):
            index.upsert(kb, [*CORPUS, bad])
        with pytest.raises(InputError, match="appears twice"):
            index.upsert(kb, [CORPUS[0], CORPUS[0]])
        with pytest.raises(InvalidIdError):
            index.upsert(kb, [Chunk("ok", "doc", "标题", "正文", ("not an entity id",))])
        assert index.count(kb) == 0

    def test_delete_document_removes_all_its_chunks(self, index, own_corpus_kb):
        assert index.delete_document(own_corpus_kb, "east") == 2
        assert index.delete_document(own_corpus_kb, "east") == 0

        assert index.count(own_corpus_kb) == len(CORPUS) - 2
        hits = index.search(own_corpus_kb, "华东区销售额", limit=10, group_by_doc=False)
        assert "east" not in {hit.doc_id for hit in hits}

    def test_get_chunks_in_asked_order_skipping_unknown(self, index, corpus_kb):
        chunks = index.get_chunks(corpus_kb, ["policy#0", "nope#9", "east#0"])

        assert chunks == [CORPUS[-1], CORPUS[0]]
        assert index.get_chunks(corpus_kb, []) == []

    def test_iter_chunks_yields_everything(self, index, corpus_kb):
        chunks = list(index.iter_chunks(corpus_kb, batch=4))

        assert sorted(chunks, key=lambda chunk: chunk.chunk_id) == sorted(
            CORPUS, key=lambda chunk: chunk.chunk_id)

    def test_blank_query_returns_nothing(self, index, corpus_kb):
        assert index.search(corpus_kb, "", limit=5) == []
        assert index.search(corpus_kb, "  \n", limit=5) == []

    def test_limit_out_of_range_is_rejected(self, index, corpus_kb):
        with pytest.raises(InputError):
            index.search(corpus_kb, "销售额", limit=0)

    def test_missing_kb_says_how_to_create_it(self, index):
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

    def test_ensure_collection_is_idempotent(self, index, own_corpus_kb):
        index.ensure_collection(own_corpus_kb)

        assert index.has_collection(own_corpus_kb)
        assert index.count(own_corpus_kb) == len(CORPUS)

    def test_drop_removes_the_kb(self, index, own_corpus_kb):
        index.drop(own_corpus_kb)

        assert not index.has_collection(own_corpus_kb)
        with pytest.raises(NotFoundError):
            index.count(own_corpus_kb)

    def test_invalid_kb_name_is_rejected(self, index):
        with pytest.raises(InvalidIdError):
            index.search("a-b; drop", "销售额", limit=5)

    @pytest.mark.parametrize("query", ['" or 1==1 or "', 'chunk_id in ["x"]', "') or true --"])
    def test_query_text_is_only_ever_search_text(self, index, corpus_kb, query):
        hits = index.search(corpus_kb, query, limit=10, entity_ids=[ACCIDENT])

        assert {hit.doc_id for hit in hits} <= {"policy"}

    @pytest.mark.parametrize("entity_id", ['" or 1==1 or "', 'E7"]) or array_contains(entities, "x',
                                           "华东区", ""])
    def test_malformed_entity_ids_are_rejected(self, index, corpus_kb, entity_id):
        with pytest.raises(InvalidIdError):
            index.search(corpus_kb, "销售额", limit=5, entity_ids=[entity_id])

    @pytest.mark.parametrize("chunk_id", ["x'y", "line\nbreak", "", "x" * 257])
    def test_unusable_exclude_ids_are_rejected(self, index, corpus_kb, chunk_id):
        with pytest.raises(InvalidIdError):
            index.search(corpus_kb, "销售额", limit=5, exclude_chunk_ids=[chunk_id])

    def test_exclude_ids_are_taken_literally(self, index, corpus_kb):
        everything = index.search(corpus_kb, "销售额", limit=10, group_by_doc=False)

        tricky = ['" or 1==1 or "', 'east#0", "south#0', 'chunk_id in ["x"]', "\\", 'x\\"']
        assert index.search(corpus_kb, "销售额", limit=10, group_by_doc=False,
                            exclude_chunk_ids=tricky) == everything

    def test_quotes_and_backslashes_in_ids_round_trip(self, index, kb):
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


    def test_excluded_documents_never_come_back(self, index, corpus_kb):
        hits = index.search(corpus_kb, "华东区销售额", limit=10, group_by_doc=False,
                            exclude_doc_ids=["east", "policy"])

        assert {hit.doc_id for hit in hits} == {"south", "mixed"}

    def test_limit_counts_documents_when_grouping(self, index, corpus_kb):
        hits = index.search(corpus_kb, "华东区销售额", limit=2)

        assert len(hits) == 2 and len({hit.doc_id for hit in hits}) == 2

    def test_chunks_of_documents_and_deleting_some(self, index, own_corpus_kb):
        stored = index.doc_chunk_ids(own_corpus_kb, ["east", "south", "nowhere"])

        assert {doc: sorted(ids) for doc, ids in stored.items()} == {
            "east": ["east#0", "east#1"], "south": ["south#0", "south#1"]}
        assert index.delete_chunks(own_corpus_kb, ["east#1", "south#0", "nope#3"]) == 2
        assert index.doc_chunk_ids(own_corpus_kb, ["east", "south"]) == {
            "east": ["east#0"], "south": ["south#1"]}
        assert index.count(own_corpus_kb) == len(CORPUS) - 2

    def test_re_tagging_changes_what_the_entity_filter_finds(self, index, own_corpus_kb):
        retagged = Chunk("mixed#0", "mixed", "区域对比", "华东区与华南区的销售额差距继续扩大。",
                         (EAST,), auto_tagged=True)

        assert index.set_entity_tags(own_corpus_kb, [retagged]) == 1
        hits = index.search(own_corpus_kb, "销售额", limit=10, entity_ids=[SOUTH])
        assert {hit.doc_id for hit in hits} == {"south"}
        assert list(index.iter_chunks(own_corpus_kb, auto_tagged_only=True)) == [retagged]

    def test_dense_search_ranks_by_cosine_inside_the_filters(self, index, dense_kb):
        assert index.dense_spec(dense_kb) == DENSE
        hits = index.dense_search(dense_kb, [1.0, 0.05, 0.0], limit=3, with_vectors=True)

        assert [hit.chunk_id for hit in hits] == ["east#0", "east#1", "mixed#0"]
        assert hits[0].score == pytest.approx(1.0, abs=0.01) and hits[0].vector == VECTORS[0]
        filtered = index.dense_search(dense_kb, [1.0, 0.0, 0.0], limit=3, entity_ids=[SOUTH],
                                      exclude_chunk_ids=["mixed#0"], group_by_doc=True)
        assert [hit.chunk_id for hit in filtered] == ["south#1"]

    def test_hybrid_search_is_the_rrf_of_both_rankings_inside_the_filters(self, index,
                                                                          dense_kb):
        # On Milvus one request, fused by its RRF ranker: the same fused list, scores and
        # tie order as fusing the two separate rankings in process.
        filters = {"entity_ids": [EAST, SOUTH], "exclude_chunk_ids": ["east#1"]}
        query, vector = "华南区销售额", [1.0, 0.2, 0.0]
        bm25 = index.search(dense_kb, query, limit=3, group_by_doc=False, **filters)
        dense = index.dense_search(dense_kb, vector, limit=3, **filters)
        expected = rrf_scores([bm25, dense], k=60)

        fused = index.hybrid_search(dense_kb, query, vector, limit=3, rrf_k=60,
                                    with_vectors=True, **filters)
        assert len(expected) > 3  # the rankings differ, so the union is larger than either
        assert [h.chunk_id for h in fused] == [h.chunk_id for h in expected]
        assert [h.score for h in fused] == pytest.approx([h.score for h in expected], rel=1e-5)
        stored = {c.chunk_id: v for c, v in zip(CORPUS, VECTORS, strict=True)}
        assert all(h.vector == pytest.approx(stored[h.chunk_id], abs=1e-6) for h in fused)
        blank = index.hybrid_search(dense_kb, " ", vector, limit=2, **filters)
        assert [h.chunk_id for h in blank] == [h.chunk_id for h in dense[:2]]

    def test_re_tagging_keeps_the_vectors(self, index, dense_kb):
        retagged = Chunk("east#0", "east", "华东区销售报告", CORPUS[0].text, (SOUTH,),
                         {"year": 2025}, auto_tagged=True)
        index.set_entity_tags(dense_kb, [retagged])

        [hit] = index.dense_search(dense_kb, VECTORS[0], limit=1, entity_ids=[SOUTH],
                                   with_vectors=True)
        assert hit.chunk_id == "east#0" and hit.vector == VECTORS[0]
        with pytest.raises(NotFoundError, match="no longer stored"):
            index.set_entity_tags(dense_kb, [Chunk("gone#0", "gone", "标题", "正文")])

    def test_a_kb_keeps_the_embedder_it_was_made_for(self, index, dense_kb, corpus_kb):
        with pytest.raises(ConfigurationError, match="test:fixed"):
            index.ensure_collection(dense_kb, DenseSpec("other:model", 3))
        with pytest.raises(ConfigurationError, match="holds dense vectors"):
            index.upsert(dense_kb, CORPUS[:1])
        with pytest.raises(InputError, match="3"):
            index.upsert(dense_kb, CORPUS[:1], vectors=[(1.0, 0.0)])
        with pytest.raises(ConfigurationError, match="no dense vectors"):
            index.dense_search(corpus_kb, [1.0, 0.0, 0.0], limit=1)
        with pytest.raises(ConfigurationError, match="2-dimensional"):
            index.dense_search(dense_kb, [1.0, 0.0], limit=1)

    def test_english_words_are_matched_whole_and_case_blind(self, index, kb):
        index.upsert(kb, [
            Chunk("en#0", "en-policy", "Accident Insurance", "A hospital allowance is paid per day."),
            Chunk("en#1", "en-sales", "Sales report", "Sales in the east region grew by 12%."),
        ])

        assert [hit.doc_id for hit in index.search(kb, "hospital ALLOWANCE", limit=5)] == [
            "en-policy"]
        assert [hit.doc_id for hit in index.search(kb, "east sales", limit=5)][0] == "en-sales"
        assert index.search(kb, "hospitals", limit=5) == []

    def test_traditional_and_simplified_characters_meet(self, index, kb):
        index.upsert(kb, [
            Chunk("roam#0", "roaming", "国际漫游", "国际漫游开通方法：发送短信办理。"),
            Chunk("fee#0", "fees", "收費標準", "信用卡年費為300元，首年免年費。"),
            Chunk("loan#0", "loan", "贷款", "提前还款需提前申请。"),
        ])

        assert index.search(kb, "國際漫遊怎麼開通", limit=5)[0].doc_id == "roaming"
        assert index.search(kb, "年费多少", limit=5)[0].doc_id == "fees"
        # What the caller stored comes back as it was written.
        [fee] = index.get_chunks(kb, ["fee#0"])
        assert fee.title == "收費標準" and fee.text == "信用卡年費為300元，首年免年費。"

    def test_changing_what_was_read_changes_nothing_stored(self, index, own_corpus_kb):
        [chunk] = index.get_chunks(own_corpus_kb, ["policy#0"])
        chunk.metadata["version"] = "1999"
        hit = index.search(own_corpus_kb, "意外伤害住院津贴", limit=1)[0]
        hit.metadata["valid_from"] = "1999-01-01"

        assert index.get_chunks(own_corpus_kb, ["policy#0"]) == [CORPUS[-1]]
        assert index.search(own_corpus_kb, "意外伤害住院津贴", limit=1)[0].metadata == {
            "version": "2025", "valid_from": "2025-01-01"}


class TestIngestStateContract:
    def test_an_ingest_marked_incomplete_stays_so_until_marked_complete(self, index, kb):
        index.ensure_collection(kb)
        assert index.incomplete(kb) is None
        index.mark_incomplete(kb, {"started_at": "2026-12-01T15:00:00+00:00", "file": "c.jsonl"})
        assert index.incomplete(kb)["file"] == "c.jsonl"
        index.mark_complete(kb)
        assert index.incomplete(kb) is None
        index.mark_complete(kb)  # nothing to clear: no error
        assert index.incomplete(kb) is None
