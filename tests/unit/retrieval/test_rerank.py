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
