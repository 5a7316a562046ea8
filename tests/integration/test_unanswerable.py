"""Questions the knowledge base cannot answer although its search finds passages that
look relevant, end to end on real Neo4j, Milvus Lite and SQLite
(retrieval/unanswerable.py, retrieval/dual_path.py):

- whether a named thing has something the kb never writes of (乐行有没有攀岩墙), or how
  many of it (乐行有几个停车位): the passages found are about what the gym does have;
- what will happen next year (金卡明年会涨价吗, will the Gold card cost more next year?)
  when no passage writes of a year after the ones it states;
- the asker's own records (帮我查一下我的金卡还剩几次私教课, check my balance): a kb
  holds documents, not anyone's account.

What the kb does hold is still answered, and so is a question of chat that names no
entity right before what it asks about.

Each behaviour of this family is a case of tests/unit/dialogue/cases/unanswerable.json,
run on the in-memory stores, in both languages where the behaviour exists in both. Here
run end to end: a thing the kb never writes of, judged on Milvus's term statistics, and
a notice of next calendar year, which no fixed case can hold.
"""

from datetime import date

import pytest

from tests.services import load_kb, play

pytestmark = [pytest.mark.neo4j, pytest.mark.milvus]

ONTOLOGY = [
    {"kind": "type", "name": "Gym", "attributes": ["设施", "营业时间", "facilities"]},
    {"kind": "type", "name": "Membership", "attributes": ["价格", "私教课", "price"]},
    {"kind": "entity", "id": "org.lx", "name": "乐行健身", "type": "Gym",
     "aliases": ["乐行", "Lexing Fitness"], "description": "连锁健身房"},
    {"kind": "entity", "id": "plan.gold", "name": "金卡会员", "type": "Membership",
     "aliases": ["金卡", "Gold card"], "description": "年卡，含私教课"},
    {"kind": "entity", "id": "plan.silver", "name": "银卡会员", "type": "Membership",
     "aliases": ["银卡", "Silver card"], "description": "年卡"},
]

CORPUS = [
    {"doc_id": "about", "chunk_id": "about-1", "title": "乐行健身", "entity_ids": ["org.lx"],
     "text": "乐行健身各门店设有游泳池、瑜伽室和器械区，营业时间6:00-22:00。Lexing Fitness clubs "
             "have a pool, a yoga room and a weights area."},
    {"doc_id": "gold", "chunk_id": "gold-1", "title": "金卡会员", "entity_ids": ["plan.gold"],
     "text": "金卡会员价格：每年3,000元，含12次私教课。The Gold card costs RMB 3,000 a year "
             "with 12 personal training sessions."},
    {"doc_id": "silver", "chunk_id": "silver-1", "title": "银卡会员", "entity_ids": ["plan.silver"],
     "text": "银卡会员价格：每年1,800元，不含私教课。"},
    {"doc_id": "gold-2025", "chunk_id": "gold-2025-1", "title": "金卡会员（2025年）",
     "entity_ids": ["plan.gold"],
     "text": "2025年金卡会员价格：每年2,800元。未用完的私教课不能留到下一年。The 2025 Gold card "
             "cost RMB 2,800; unused sessions do not carry over."},
]


@pytest.fixture
def gym_kb(kb, neo4j_store, milvus_index):
    return load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, CORPUS)


def no_answer_trace(result) -> dict:
    return result.trace["retrieval"].get("no_answer", {})


def test_something_a_named_thing_does_not_have_is_no_answer(runtime, gym_kb):
    [climbing] = play(runtime, gym_kb, "乐行有没有攀岩墙？")
    assert climbing.action == "no_answer" and climbing.evidence == []
    assert no_answer_trace(climbing)["unknown_things"] == ["攀岩墙"]

    [code] = play(runtime, gym_kb, "乐行有24H门店吗")
    assert code.action == "no_answer"

    # What it has is answered.
    [yoga] = play(runtime, gym_kb, "乐行有没有瑜伽室？")
    assert yoga.action == "retrieve" and yoga.evidence[0].chunk_id == "about-1"
    assert "unknown_things" not in no_answer_trace(yoga)


def test_a_forecast_the_kb_writes_of_is_answered(runtime, kb, neo4j_store, milvus_index):
    # A notice of next calendar year's price: "now" is this year, not the notice's.
    year = date.today().year + 1
    corpus = [*CORPUS, {"doc_id": "notice", "chunk_id": "notice-1", "title": "调价通知",
                        "entity_ids": ["plan.gold"],
                        "text": f"{year}年起金卡会员价格调整为每年3,200元。"}]
    gym = load_kb(kb, neo4j_store, milvus_index, ONTOLOGY, corpus)
    [later] = play(runtime, gym, "金卡明年会涨价吗")
    assert later.action == "retrieve"
    assert "unknown_future" not in no_answer_trace(later)
    assert "notice-1" in [e.chunk_id for e in later.evidence]
