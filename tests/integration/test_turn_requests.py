"""The Milvus requests a search makes, as the turn benchmarks count them (real Milvus Lite):
one filtered search when the entity filter holds enough documents, a filtered and an
unfiltered one when it starves."""

import pytest

from benchmarks.turn_profile import RequestLog
from retrieval.models import Chunk
from retrieval.request import SearchRequest
from retrieval.search import Retriever

pytestmark = [pytest.mark.milvus]


def _chunks() -> list[Chunk]:
    # Entity a: five documents; entity b: one.
    chunks = [Chunk(f"a{i}#0", f"a{i}", f"甲产品说明{i}", f"甲产品的价格是{i}00元，办理流程见第{i}条。",
                    ("ent.a",)) for i in range(5)]
    chunks.append(Chunk("b0#0", "b0", "乙产品说明", "乙产品的价格是300元。", ("ent.b",)))
    chunks += [Chunk(f"x{i}#0", f"x{i}", f"其他说明{i}", f"其他服务的价格是{i}元。", ()) for i in range(5)]
    return chunks


def _requests(log: RequestLog, start: int) -> list[tuple[str, str]]:
    return [(kind, path.split(" > ")[-1]) for _, kind, path, _, _ in log.calls[start:]]


def test_a_search_inside_a_filter_that_holds_enough_documents_is_one_request(lite_index, lite_kb):
    lite_index.ensure_collection(lite_kb)
    lite_index.upsert(lite_kb, _chunks())
    retriever = Retriever(lite_index)
    retriever.term_stats(lite_kb)  # built before the first turn, as the server's preload does
    log = RequestLog(lite_index)

    start = len(log.calls)
    held = retriever.search(lite_kb, SearchRequest(("甲产品的价格",), 5, entity_ids=("ent.a",)))
    assert [f.hit.chunk_id[0] for f in held.found] == ["a"] * 5
    assert _requests(log, start) == [("search (filtered)", "search")]
    assert log.spent_since(start) > 0

    start = len(log.calls)
    starved = retriever.search(lite_kb, SearchRequest(("乙产品的价格",), 5, entity_ids=("ent.b",)))
    assert starved.found[0].hit.chunk_id == "b0#0"
    # One document inside the filter: the same search over the whole kb fills the pool.
    assert _requests(log, start) == [("search (filtered)", "search"), ("search", "search")]
    log.label(0, "with entities")
    summary = log.summary({"with entities": 2})
    assert {(r["request"], r["count"], r["per_turn"]) for r in summary} == {
        ("search (filtered)", 2, 1.0), ("search", 1, 0.5)}
    assert all("_query_pool" in r["path"] for r in summary)
