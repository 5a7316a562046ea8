"""The turn's search (retrieval.search.Retriever) on a real Milvus Lite: filter relaxed to
a boost, per-document cap, near-duplicates, consumed documents, no-answer, the cross-encoder
endpoint (a real local HTTP server speaking /rerank) and hybrid BM25 + dense search with an
OpenAI-compatible embeddings endpoint (likewise)."""

from __future__ import annotations

import time
import uuid
import zlib
from collections.abc import Iterator

import pytest

from common.errors import ConfigurationError
from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology
from retrieval.cross_encoder import HttpCrossEncoder
from retrieval.embedders import OpenAIEmbedder
from retrieval.ingest import ingest_corpus
from retrieval.milvus_index import MilvusIndex
from retrieval.models import Chunk, DenseSpec
from retrieval.request import SearchRequest
from retrieval.search import Retriever, RetrieverConfig, coverage
from tests.http_fakes import TOPICS, embeddings_reply, serve
from tests.services import found_ids

pytestmark = pytest.mark.milvus

EAST, SOUTH, NORTH, ACCIDENT = "region.east", "region.south", "region.north", "ins.accident"

CORPUS = [
    Chunk("east#0", "east", "华东区销售报告", "2025年华东区销售额为120亿元，同比增长12%。", (EAST,)),
    Chunk("east#1", "east", "华东区销售报告", "华东区销售额的增长主要来自上海和杭州的新门店。", (EAST,)),
    Chunk("south#0", "south", "华南区销售报告", "2025年华南区销售额为80亿元，同比下降3%。", (SOUTH,)),
    Chunk("south#1", "south", "华南区销售报告", "华南区销售额下降主要受深圳门店调整影响。", (SOUTH,)),
    Chunk("north#0", "north", "华北区年度经营回顾",
          "华北区全年经营稳健，渠道建设、客户服务、人员培训和库存管理均按计划推进，"
          "门店数量保持稳定，全年销售额五十亿元。", (NORTH,)),
    Chunk("policy#0", "policy", "意外险条款", "被保险人因意外伤害住院的，按约定给付住院津贴。", (ACCIDENT,)),
    Chunk("faq#0", "faq", "常见问题", "被保险人因意外伤害住院的，按照约定给付住院津贴。", (ACCIDENT,)),
    Chunk("return#0", "return", "退货政策", "退货运费由买家承担", ()),
    Chunk("return-en#0", "return-en", "Return policy", "Return shipping is paid by the buyer", ()),
]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MilvusIndex]:
    index = MilvusIndex(str(tmp_path_factory.mktemp("milvus-retriever") / "r.db"))
    yield index
    index.close()


def _kb() -> str:
    return f"t_{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def bm25_kb(index: MilvusIndex) -> Iterator[str]:
    kb = _kb()
    index.ensure_collection(kb)
    index.upsert(kb, CORPUS)
    yield kb
    index.drop(kb)


# -- entity filter, relaxed to a boost ---------------------------------------------------

def test_a_starving_filter_becomes_a_boost_and_the_trace_says_so(index, bm25_kb):
    plain = Retriever(index).search(bm25_kb, SearchRequest(["销售额同比增长"], k=5))
    # Precondition: on BM25 alone the long 华北区 review is not first.
    assert found_ids(plain)[0] != "north#0" and "north#0" in found_ids(plain)

    outcome = Retriever(index).search(bm25_kb, SearchRequest(["销售额同比增长"], k=5, entity_ids=[NORTH]))

    assert found_ids(outcome)[0] == "north#0"
    assert len(found_ids(outcome)) > 1  # the others are still there, below
    q = outcome.trace["queries"][0]
    assert q["entity_filter"] == "relaxed_to_boost" and q["filtered_docs"] == 1


def test_a_filter_with_enough_documents_is_applied(index, bm25_kb):
    strict = Retriever(index, config=RetrieverConfig(min_filtered_hits=1))
    outcome = strict.search(bm25_kb, SearchRequest(["销售额同比增长"], k=5, entity_ids=[NORTH]))

    assert found_ids(outcome) == ["north#0"]
    assert outcome.trace["queries"][0]["entity_filter"] == "applied"


def test_an_entity_whose_passages_are_in_the_other_language_is_found_by_its_names(index):
    """A Chinese question about a course whose page is written in English: none of its
    passages holds a word of the question; its English names find them in the filter."""
    kb = _kb()
    index.ensure_collection(kb)
    index.upsert(kb, [
        Chunk("chn#1", "chn", "Chinese 101", "Chinese 101 is a 4-credit beginner course. "
              "A placement test is held on 3 September.", ("course.chn",)),
        Chunk("ds#1", "ds", "数据结构", "数据结构分班考试在9月5日举行。", ("course.ds",)),
        Chunk("faq#1", "faq", "选课常见问题", "分班考试的时间以各课程通知为准。", ()),
    ])
    names = {"course.chn": ["综合汉语", "Chinese 101", "CHN101"]}
    try:
        outcome = Retriever(index).search(kb, SearchRequest(["综合汉语分班考试是哪天"], k=3,
                                          entity_ids=["course.chn"], names=names))
        assert found_ids(outcome)[0] == "chn#1"
        q = outcome.trace["queries"][0]
        assert q["names_in_filter"] == "综合汉语分班考试是哪天 Chinese 101 CHN101"
        assert q["filtered_docs"] == 1

        # Without the names the question's words find only the other passages.
        unnamed = Retriever(index).search(kb, SearchRequest(["综合汉语分班考试是哪天"], k=3,
                                          entity_ids=["course.chn"]))
        assert "chn#1" not in found_ids(unnamed)
        # An English question about a course whose page is in Chinese, likewise.
        english = Retriever(index).search(
            kb, SearchRequest(["when is the placement test for Data Structures"], k=3,
            entity_ids=["course.ds"], names={"course.ds": ["数据结构", "Data Structures"]}))
        assert found_ids(english)[0] == "ds#1"
    finally:
        index.drop(kb)


# -- one chunk per document, near-duplicates -----------------------------------------------

def test_one_chunk_per_document_unless_configured(index, bm25_kb):
    one = Retriever(index).search(bm25_kb, SearchRequest(["华东区销售额增长"], k=3))
    two = Retriever(index, config=RetrieverConfig(chunks_per_doc=2)).search(
        bm25_kb, SearchRequest(["华东区销售额增长"], k=3))

    assert [f.hit.doc_id for f in one.found].count("east") == 1
    assert [f.hit.doc_id for f in two.found].count("east") == 2


def test_places_left_when_documents_run_out_are_filled_by_further_chunks(index, bm25_kb):
    # More places than matching documents: every document's best chunk comes first, then
    # further chunks of the same documents fill the places rather than leaving them empty.
    outcome = Retriever(index).search(bm25_kb, SearchRequest(["华东区销售额增长"], k=10))
    docs = [f.hit.doc_id for f in outcome.found]
    distinct = len(set(docs))

    assert distinct < 10 and len(docs) > distinct
    assert len(set(docs[:distinct])) == distinct
    assert docs.count("east") >= 2


def test_near_duplicate_passages_of_other_documents_are_dropped(index, bm25_kb):
    outcome = Retriever(index).search(bm25_kb, SearchRequest(["意外伤害住院津贴"], k=5))
    lenient = Retriever(index, config=RetrieverConfig(near_duplicate_shingles=1.0)).search(
        bm25_kb, SearchRequest(["意外伤害住院津贴"], k=5))

    assert {"policy#0", "faq#0"} <= set(found_ids(lenient))
    assert len({"policy#0", "faq#0"} & set(found_ids(outcome))) == 1
    [pair] = outcome.trace["near_duplicates_dropped"]
    assert {pair["dropped"], pair["kept"]} == {"policy#0", "faq#0"}


def test_a_pool_filled_by_one_long_document_is_topped_up_to_k_documents(index):
    kb = _kb()
    long_doc = [Chunk(f"long#{i}", "long", "华东区销售月报", f"华东区销售额第{i}周明细，华东区销售额。")
                for i in range(30)]
    others = [Chunk(f"o{i}#0", f"o{i}", "其他", f"华东区的第{i}个门店。") for i in range(6)]
    index.ensure_collection(kb)
    try:
        index.upsert(kb, long_doc + others)
        outcome = Retriever(index).search(kb, SearchRequest(["华东区销售额"], k=5))
    finally:
        index.drop(kb)

    assert len({f.hit.doc_id for f in outcome.found}) == 5
    assert outcome.found[0].hit.doc_id == "long"
    assert outcome.trace["queries"][0]["topped_up"]


# -- consumed window -------------------------------------------------------------------------

def test_consumed_documents_are_excluded_whole(index, bm25_kb):
    retriever = Retriever(index, config=RetrieverConfig(chunks_per_doc=2))
    by_chunk = retriever.search(bm25_kb, SearchRequest(["华东区销售额增长"], k=10, exclude_chunk_ids=["east#0"]))
    by_doc = retriever.search(bm25_kb, SearchRequest(["华东区销售额增长"], k=10, exclude_doc_ids=["east"]))

    assert "east#1" in found_ids(by_chunk) and "east#0" not in found_ids(by_chunk)
    assert all(f.hit.doc_id != "east" for f in by_doc.found) and by_doc.found
    assert by_doc.trace["excluded_docs"] == 1


# -- no answer -----------------------------------------------------------------------------

def test_weak_evidence_becomes_no_answer(index, bm25_kb):
    retriever = Retriever(index)
    weak = retriever.search(bm25_kb, SearchRequest(["华东区火星基地的氧气供应系统用什么型号的电池"], k=5))
    strong = retriever.search(bm25_kb, SearchRequest(["华东区销售额是多少"], k=5))
    unguarded = retriever.search(bm25_kb, SearchRequest(["华东区火星基地的氧气供应系统用什么型号的电池"], k=5, abstain=False))

    assert weak.no_answer and weak.found == ()
    assert weak.trace["no_answer"]["abstained"] and weak.trace["no_answer"]["withheld"]
    assert weak.strength < retriever.config.no_answer_threshold <= strong.strength
    assert not strong.no_answer and found_ids(strong)[0].startswith("east")
    assert unguarded.found and not unguarded.no_answer


def test_coverage_is_bounded_and_ignores_question_words(index, bm25_kb):
    [hit] = index.search(bm25_kb, "深圳门店", limit=1)
    assert coverage("深圳门店", hit) == 1.0
    assert coverage("深圳门店是什么", hit) == 1.0 - 1 / 4  # 店是 is not found; 是什/什么 do not count
    assert coverage("嗯嗯", hit) == 1.0
    assert coverage("火星", hit) == 0.0


# -- cross-encoder endpoint ----------------------------------------------------------------------

def _prefers(word: str):
    """A /rerank server that scores a passage 5 if it contains ``word``, else 0
    (a TEI answer sorted by score, a Cohere answer in input order)."""
    def handler(path, body):
        assert path == "/rerank"
        texts = body.get("texts") or body.get("documents")
        scored = [{"index": i, "score": 5.0 if word in t else 0.0} for i, t in enumerate(texts)]
        if "documents" in body:
            return 200, {"results": [{"index": s["index"], "relevance_score": s["score"]}
                                     for s in scored]}
        return 200, sorted(scored, key=lambda s: -s["score"])
    return handler


@pytest.mark.parametrize("style", ["tei", "cohere"])
def test_cross_encoder_reorders_the_pool(index, bm25_kb, style):
    base = Retriever(index, config=RetrieverConfig(chunks_per_doc=2)).search(
        bm25_kb, SearchRequest(["华南区销售额"], k=4))
    last = base.found[-1].hit
    assert len(base.found) == 4
    with serve(_prefers(last.text)) as server:
        cross = HttpCrossEncoder(server.url, style=style, model="fake-ce")
        outcome = Retriever(index, config=RetrieverConfig(chunks_per_doc=2),
                            cross_encoder=cross).search(bm25_kb, SearchRequest(["华南区销售额"], k=4))
    assert found_ids(outcome)[0] == last.chunk_id
    assert outcome.trace["queries"][0]["cross_encoder"] == f"{style}:fake-ce"
    body = server.requests[0][1]
    assert body["query"] == "华南区销售额"
    if style == "cohere":
        assert body["model"] == "fake-ce" and len(body["documents"]) == body["top_n"]


@pytest.mark.parametrize("handler, reason", [
    (lambda path, body: (time.sleep(1.0), (200, []))[1], "timed out"),
    (lambda path, body: (200, [{"index": 99, "score": 1.0}]), "index out of range"),
    (lambda path, body: (200, {"scores": [1, 2]}), "list of results"),
    (lambda path, body: (500, "boom"), "HTTP 500"),
])
def test_a_failing_cross_encoder_keeps_the_fused_order(index, bm25_kb, handler, reason):
    base = Retriever(index).search(bm25_kb, SearchRequest(["华南区销售额"], k=4))
    with serve(handler) as server:
        cross = HttpCrossEncoder(server.url, timeout=0.3)
        outcome = Retriever(index, cross_encoder=cross).search(bm25_kb, SearchRequest(["华南区销售额"], k=4))
    assert found_ids(outcome) == found_ids(base)
    note = outcome.trace["queries"][0]["cross_encoder"]
    assert note.startswith("failed, fused order kept") and reason in note


# -- hybrid: BM25 + dense from an OpenAI-compatible endpoint -----------------------------------

# A translation the fake model "knows": the English sentence embeds like the Chinese one.
SAME_AS = {"Return shipping is paid by the buyer": "退货运费由买家承担"}
BUCKETS = 16


def fake_vector(text: str) -> list[float]:
    """Topic axes (shared meaning) plus hashed character-bigram axes (surface form)."""
    for english, chinese in SAME_AS.items():
        text = text.replace(english, chinese).replace("Return policy", "退货政策")
    topics = [float(sum(text.count(w) for w in words)) for words in TOPICS]
    surface = [0.0] * BUCKETS
    for i in range(len(text) - 1):
        surface[zlib.crc32(text[i:i + 2].encode()) % BUCKETS] += 0.05
    return topics + surface + [0.1]


DENSE_DIM = len(TOPICS) + BUCKETS + 1


@pytest.fixture(scope="module")
def embed_server():
    with serve(lambda path, body: embeddings_reply(body, fake_vector)) as server:
        yield server


@pytest.fixture(scope="module")
def snapshot() -> AliasSnapshot:
    lines = [
        '{"kind": "type", "name": "T"}',
        *[f'{{"kind": "entity", "id": "{e}", "name": "{e}", "type": "T"}}'
          for e in (EAST, SOUTH, NORTH, ACCIDENT)],
    ]
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(lines))


def corpus_lines(chunks=CORPUS) -> list[str]:
    import json

    return [json.dumps({"doc_id": c.doc_id, "chunk_id": c.chunk_id, "title": c.title,
                        "text": c.text, "entity_ids": list(c.entity_ids)}, ensure_ascii=False)
            for c in chunks]


@pytest.fixture(scope="module")
def dense_kb(index, embed_server, snapshot) -> Iterator[str]:
    kb = _kb()
    embedder = OpenAIEmbedder(embed_server.url + "/v1", "fake-topic")
    report = ingest_corpus(kb, corpus_lines(), index=index, snapshot=snapshot, embedder=embedder)
    assert report.written == len(CORPUS)
    yield kb
    index.drop(kb)


def dense_retriever(index, url: str, timeout: float = 5.0, model: str = "fake-topic") -> Retriever:
    return Retriever(index, embedder=OpenAIEmbedder(url + "/v1", model, timeout=timeout))


def test_the_collection_records_its_embedder(index, dense_kb):
    assert index.dense_spec(dense_kb) == DenseSpec("openai:fake-topic", DENSE_DIM)


def test_dense_finds_what_bm25_cannot(index, dense_kb, embed_server, bm25_kb):
    # 摔伤 (a fall) shares no word with 意外伤害住院, only meaning.
    bm25 = Retriever(index, config=RetrieverConfig(no_answer_threshold=0)).search(
        bm25_kb, SearchRequest(["摔伤了能赔吗"], k=3))
    hybrid = dense_retriever(index, embed_server.url).search(
        dense_kb, SearchRequest(["摔伤了能赔吗"], k=3, abstain=False))

    assert not {"policy#0", "faq#0"} & set(found_ids(bm25))
    assert {"policy#0", "faq#0"} & set(found_ids(hybrid))
    assert hybrid.trace["fusion"] == "rrf(k=60)"
    assert hybrid.trace["queries"][0]["hybrid"] == "one request"
    assert hybrid.trace["queries"][0]["fused"] > 0


def test_a_hybrid_query_whose_filter_starves_is_relaxed_ranking_by_ranking(index, dense_kb,
                                                                           embed_server):
    outcome = dense_retriever(index, embed_server.url).search(
        dense_kb, SearchRequest(["销售额同比增长"], k=5, entity_ids=[NORTH], abstain=False))

    q = outcome.trace["queries"][0]
    assert q["hybrid"] == "separate requests: the entity filter starves"
    assert q["entity_filter"] == "relaxed_to_boost" and q["dense"] > 0
    assert found_ids(outcome)[0] == "north#0" and len(found_ids(outcome)) > 1


def test_a_hybrid_pool_filled_by_one_long_document_is_topped_up(index, embed_server, snapshot):
    kb = _kb()
    long_doc = [Chunk(f"long#{i}", "long", "华东区销售月报", f"华东区销售额第{i}周明细，华东区销售额。")
                for i in range(40)]
    others = [Chunk(f"o{i}#0", f"o{i}", "其他", f"第{i}个门店的装修安排。") for i in range(6)]
    ingest_corpus(kb, corpus_lines(long_doc + others), index=index, snapshot=snapshot,
                  embedder=OpenAIEmbedder(embed_server.url + "/v1", "fake-topic"))
    try:
        outcome = dense_retriever(index, embed_server.url).search(
            kb, SearchRequest(["华东区销售额"], k=5, abstain=False))
    finally:
        index.drop(kb)

    q = outcome.trace["queries"][0]
    assert q["hybrid"] == "separate requests: a few documents fill the pool" and q["topped_up"]
    assert len({f.hit.doc_id for f in outcome.found}) == 5


def test_a_searchs_queries_are_embedded_in_one_request_and_not_again(index, dense_kb):
    from dialogue.policy.vectors import QueryMemo

    with serve(lambda path, body: embeddings_reply(body, fake_vector)) as server:
        retriever = Retriever(index, embedder=QueryMemo(
            OpenAIEmbedder(server.url + "/v1", "fake-topic")))
        queries = ["华南区销售额", "摔伤了能赔吗", "退货运费谁承担"]
        first = retriever.search(dense_kb, SearchRequest(queries, k=3, abstain=False))
        assert [len(body["input"]) for _, body in server.requests] == [3]
        # The same texts again (a later turn, the dual path): nothing is embedded twice.
        again = retriever.search(dense_kb, SearchRequest(queries[1:], k=3, abstain=False))
        assert len(server.requests) == 1

    assert all(q["fused"] > 0 for q in (*first.trace["queries"], *again.trace["queries"]))


def test_near_duplicates_by_cosine_across_languages(index, dense_kb, embed_server):
    outcome = dense_retriever(index, embed_server.url).search(dense_kb, SearchRequest(["退货运费谁承担"], k=5,
                                                              abstain=False))

    assert len({"return#0", "return-en#0"} & set(found_ids(outcome))) == 1
    assert outcome.trace["near_duplicates_dropped"]


def test_a_failing_embeddings_endpoint_falls_back_to_bm25(index, dense_kb):
    def slow(path, body):
        time.sleep(1.0)
        return embeddings_reply(body, fake_vector)

    with serve(slow) as server:
        outcome = dense_retriever(index, server.url, timeout=0.3).search(
            dense_kb, SearchRequest(["华南区销售额"], k=3))
    with serve(lambda path, body: (200, {"data": "garbage"})) as server:
        garbled = dense_retriever(index, server.url).search(dense_kb, SearchRequest(["华南区销售额"], k=3))

    for result in (outcome, garbled):
        assert found_ids(result)[0].startswith("south")
        assert result.trace["queries"][0]["dense"].startswith("skipped, BM25 only")
    assert "timed out" in outcome.trace["queries"][0]["dense"]


def test_a_mismatched_embedder_is_refused_with_a_clear_error(index, dense_kb, bm25_kb,
                                                             embed_server, snapshot):
    with pytest.raises(ConfigurationError, match="REFERENT_EMBED__BACKEND"):
        Retriever(index).search(dense_kb, SearchRequest(["华南区"], k=3))
    with pytest.raises(ConfigurationError, match="'openai:fake-topic'"):
        dense_retriever(index, embed_server.url, model="other-model").search(dense_kb, SearchRequest(["华南区"], k=3))
    with pytest.raises(ConfigurationError, match="no embedder"):
        dense_retriever(index, embed_server.url).search(bm25_kb, SearchRequest(["华南区"], k=3))
    embedder = OpenAIEmbedder(embed_server.url + "/v1", "fake-topic")
    with pytest.raises(ConfigurationError, match="BM25 only"):
        ingest_corpus(bm25_kb, corpus_lines()[:1], index=index, snapshot=snapshot,
                      embedder=embedder)
    with pytest.raises(ConfigurationError, match="holds dense vectors"):
        index.upsert(dense_kb, CORPUS[:1])


# -- ingest at scale: idempotent, incremental, delete ---------------------------------------

def test_re_ingest_writes_only_what_changed_and_removes_stale_chunks(index, embed_server, snapshot):
    kb = _kb()
    embedder = OpenAIEmbedder(embed_server.url + "/v1", "fake-topic")
    try:
        first = ingest_corpus(kb, corpus_lines(), index=index, snapshot=snapshot, embedder=embedder)
        requests = len(embed_server.requests)
        again = ingest_corpus(kb, corpus_lines(), index=index, snapshot=snapshot, embedder=embedder)
        assert (first.written, again.written, again.unchanged) == (len(CORPUS), 0, len(CORPUS))
        assert len(embed_server.requests) == requests  # nothing re-embedded
        assert index.count(kb) == len(CORPUS)

        changed = [c for c in CORPUS if c.chunk_id != "east#1"]
        changed[0] = Chunk("east#0", "east", "华东区销售报告", "华东区销售额修订为121亿元。", (EAST,))
        third = ingest_corpus(kb, corpus_lines(changed), index=index, snapshot=snapshot,
                              embedder=embedder)
        assert (third.written, third.removed) == (1, 1)
        assert index.count(kb) == len(CORPUS) - 1
        assert index.get_chunks(kb, ["east#0", "east#1"]) == [changed[0]]
        assert index.delete_document(kb, "south") == 2
        assert index.doc_chunk_ids(kb, ["south", "east"]) == {"east": ["east#0"]}
    finally:
        index.drop(kb)
