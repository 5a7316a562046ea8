"""Among a document's passages, the one that states the kind of value the question asks
for comes first (retrieval/rerank.py): a duration for 多久 / how long, a time of day for
几点, on real Milvus Lite."""

from __future__ import annotations

import pytest

from tests.services import GALAXY, GALAXY_CARD, card_passages, load_kb
from retrieval.request import SearchRequest

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

# One guide, two passages about replacing a card: where, and how long it takes.
PASSAGES = [
    ("guide", 0, [GALAXY], "星河卡补卡指南", "星河卡补卡可在手机银行申请，也可到网点办理补卡。"),
    ("guide", 1, [GALAXY], "星河卡补卡指南", "星河卡补卡后，新卡7个工作日内寄出，加急3天。"),
    ("hours", 0, [GALAXY], "星河卡客服", "星河卡客服中心提供挂失和补卡咨询。"),
    ("hours", 1, [GALAXY], "星河卡客服", "星河卡人工客服服务时间为每天8:00至22:00。"),
]


@pytest.fixture
def guide_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, GALAXY_CARD, card_passages(PASSAGES))


def chunk_of(outcome, doc: str) -> str:
    return next(f.hit.chunk_id for f in outcome.found if f.hit.doc_id == doc)


def test_the_passage_stating_a_duration_answers_how_long(runtime, guide_kb):
    outcome = runtime.retriever.search(guide_kb, SearchRequest(["星河卡补卡要多久"], k=5, entity_ids=[GALAXY]))
    assert chunk_of(outcome, "guide") == "guide#1"


def test_the_passage_stating_a_time_of_day_answers_what_time(runtime, guide_kb):
    outcome = runtime.retriever.search(guide_kb, SearchRequest(["星河卡客服几点下班"], k=5, entity_ids=[GALAXY]))
    assert chunk_of(outcome, "hours") == "hours#1"
    # Asked for nothing of the kind, the words decide.
    plain = runtime.retriever.search(guide_kb, SearchRequest(["星河卡补卡在哪里办理"], k=5, entity_ids=[GALAXY]))
    assert chunk_of(plain, "guide") == "guide#0"
