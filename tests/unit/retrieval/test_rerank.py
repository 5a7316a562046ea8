from retrieval.models import Hit
from retrieval.rerank import EntityAwareReranker, time_terms


def hit(cid, text, score, tags=(), title=""):
    return Hit(chunk_id=cid, doc_id=cid.split("#")[0], title=title, text=text,
               entity_ids=tuple(tags), score=score)


def test_time_terms():
    assert time_terms("华东区7月的销售额是多少") == ("7月",)
    assert time_terms("2024版员工手册里年假几天") == ("2024版",)
    assert time_terms("年假几天") == ()


def test_the_month_asked_for_beats_a_higher_bm25_score_for_another_month():
    hits = [hit("june#0", "华东区6月销售额，华东区销售额", 5.0), hit("july#0", "华东区7月销售额", 4.0)]
    ranked = EntityAwareReranker().rerank("华东区7月的销售额是多少", hits)
    assert [h.chunk_id for h in ranked] == ["july#0", "june#0"]


def test_passage_text_counts_more_than_the_title():
    hits = [hit("july#2", "8月计划", 4.0, title="7月月报"), hit("july#0", "7月销售额", 4.0, title="7月月报")]
    assert EntityAwareReranker().rerank("7月销售额", hits)[0].chunk_id == "july#0"


def test_confusable_sibling_only_chunks_go_down():
    rr = EntityAwareReranker({"ins.a": ["ins.b"], "ins.b": ["ins.a"]})
    hits = [hit("b#0", "综合意外险条款", 5.0, ["ins.b"]), hit("a#0", "意外险条款", 4.0, ["ins.a"])]
    assert [h.chunk_id for h in rr.rerank("意外险条款", hits, entity_ids=["ins.a"])] == ["a#0", "b#0"]
    assert rr.rerank("x", []) == []


def test_the_kind_of_value_asked_for_is_told_in_both_languages():
    from common.language.cues import ANSWER_TYPES
    from retrieval.rerank import asked_types, states_type

    duration, clock, count = range(len(ANSWER_TYPES))
    assert asked_types("一般多久能转过去") == (duration,)
    assert asked_types("How long does the transfer take?") == (duration,)
    assert asked_types("杭州分行几点下班") == (clock,)
    assert asked_types("What time does the branch open?") == (clock,)
    assert asked_types("副卡最多能加几张") == (count,)
    assert asked_types("How many secondary SIM cards can I add?") == (count,)
    assert asked_types("年费多少") == () and asked_types("What is the annual fee?") == ()
    assert states_type((duration,), "审批通过后3个工作日内放款")
    assert states_type((duration,), "The transfer takes 2 working days.")
    assert states_type((clock,), "营业时间：周一至周五9:00-17:00")
    assert not states_type((clock,), "下午可办理")  # 下午 is no time of day
    assert states_type((count,), "最多可办理2张副卡") and not states_type((count,), "副卡免年费")
