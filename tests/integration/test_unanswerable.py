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


def test_how_many_of_a_thing_the_kb_never_writes_of_is_no_answer(runtime, gym_kb):
    [parking] = play(runtime, gym_kb, "乐行有几个停车位")
    assert parking.action == "no_answer" and parking.evidence == []
    assert no_answer_trace(parking)["unknown_things"] == ["停车位"]

    # In traditional characters too; a pronoun for the gym is read as its name.
    _, then = play(runtime, gym_kb, "乐行健身的营业时间是几点", "那裡有幾個車位")
    assert then.action == "no_answer", then.standalone

    # A count of something it does have is searched and answered.
    [pools] = play(runtime, gym_kb, "乐行有几个游泳池")
    assert pools.action == "retrieve" and pools.evidence[0].chunk_id == "about-1"
    assert "unknown_things" not in no_answer_trace(pools)


def test_a_forecast_for_a_year_no_passage_writes_of_is_no_answer(runtime, gym_kb):
    _, later = play(runtime, gym_kb, "金卡多少钱", "明年会涨价吗")
    assert later.action == "no_answer" and later.evidence == []
    assert no_answer_trace(later)["unknown_future"] == ["明年"]

    [english] = play(runtime, gym_kb, "Will the Gold card cost more next year?")
    assert english.action == "no_answer"
    assert no_answer_trace(english)["unknown_future"] == ["next year"]

    # A rule about next year is no forecast: the passages state it.
    [carry] = play(runtime, gym_kb, "金卡没用完的私教课能留到明年吗")
    assert carry.action == "retrieve"
    assert "unknown_future" not in no_answer_trace(carry)


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


def test_a_question_of_chat_naming_nothing_before_it_is_not_judged(runtime, gym_kb):
    [heard] = play(runtime, gym_kb, "你有没有听说过乐行健身的营业时间")
    assert heard.action == "retrieve"
    assert heard.evidence[0].chunk_id == "about-1"

    # Nor a question about an event (拿过奖, 涨过价) or one with a question word.
    for text in ("金卡有没有涨过价", "乐行有什么训练区吗"):
        [event] = play(runtime, gym_kb, text)
        assert "unknown_things" not in no_answer_trace(event), text


def test_the_askers_own_records_are_no_answer(runtime, gym_kb):
    [mine] = play(runtime, gym_kb, "帮我查一下我的金卡还剩几次私教课")
    assert mine.action == "no_answer" and mine.evidence == []
    assert no_answer_trace(mine)["own_records"]

    [english] = play(runtime, gym_kb, "Can you check my balance on the Gold card?")
    assert english.action == "no_answer"

    # The same topic asked of the kb is answered.
    [policy] = play(runtime, gym_kb, "金卡含几次私教课")
    assert policy.action == "retrieve" and policy.evidence[0].chunk_id == "gold-1"
