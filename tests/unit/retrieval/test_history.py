"""What a turn that links nothing inherits (retrieval/history.py): how much it says by
itself, the weight of the history ranking, and the per-document fusion."""

from __future__ import annotations

import pytest

from retrieval.history import (Carried, CarryConfig, carry_weight, fuse_by_document,
                               history_query, own_words)
from retrieval.models import Hit
from retrieval.novelty import TermStats

# 价格 and 办理 in most passages, 千兆宽带 in two, 免息期 in one.
PASSAGES = ([f"第{i}号套餐的价格和办理方式说明" for i in range(16)]
            + ["千兆宽带的网速说明", "千兆宽带的价格是每月199元", "信用卡免息期最长56天",
               "信用卡年费说明", "手机APP下载说明"])


@pytest.fixture(scope="module")
def stats() -> TermStats:
    return TermStats.from_texts(PASSAGES)


def hit(chunk: str, score: float) -> Hit:
    return Hit(chunk_id=chunk, doc_id=chunk.split("#")[0], score=score, title="", text="",
               entity_ids=())


def test_rare_words_count_about_one_each_and_common_ones_little(stats):
    assert own_words("那价格呢", stats) < 0.5          # 价格 is in most passages
    assert own_words("免息期最长多少天", stats) > 1.5   # 免息 + 息期: one passage each
    # Full-width, traditional and upper-case forms count like the kb's own spelling.
    assert own_words("app下载", stats) > 0
    assert own_words("ＡＰＰ下载", stats) == pytest.approx(own_words("app下载", stats))
    assert own_words("免息期最長", stats) == pytest.approx(own_words("免息期最长", stats))
    assert own_words("", stats) == 0.0


def test_a_follow_up_takes_the_history_at_full_weight_a_question_of_its_own_does_not(stats):
    config = CarryConfig(follow_up=1.5, self_contained=0.7, own_words=1.75)
    carried = Carried(earlier=("千兆宽带网速多少",))
    trace: dict = {}
    # Says little by itself (价格 is everywhere): a follow-up.
    assert carry_weight("那价格呢", carried, stats, config, trace) == 1.5
    assert trace["follow_up"] is True and trace["refers_back"] is False
    # Rare words of its own: a new question, the history only breaks ties.
    assert carry_weight("信用卡免息期最长多少天", carried, stats, config, {}) == 0.7
    # Whatever its words, a turn that points back (它, 那…呢) is a follow-up.
    pointing = Carried(earlier=("千兆宽带网速多少",), refers_back=True)
    assert carry_weight("它的免息期最长多少天", pointing, stats, config, {}) == 1.5
    # Nothing earlier (a first turn, or right after an explicit topic switch), or switched off.
    assert carry_weight("那价格呢", Carried(), stats, config, {}) == 0.0
    assert carry_weight("那价格呢", carried, stats, CarryConfig(turns=0), {}) == 0.0


def test_the_history_query_puts_the_earlier_turns_first_and_keeps_the_last_few():
    carried = Carried(earlier=("第一问", "第二问", "  "))
    assert history_query("那价格呢", carried, CarryConfig(turns=1)) == "那价格呢"
    assert history_query("那价格呢", Carried(earlier=("第一问", "第二问")),
                         CarryConfig(turns=1)) == "第二问 那价格呢"
    assert history_query("那价格呢", Carried(earlier=("第一问", "第二问")),
                         CarryConfig(turns=2)) == "第一问 第二问 那价格呢"


def test_fusion_adds_up_per_document_and_keeps_the_chunk_both_searches_found():
    own = [hit("card#1", 10.0), hit("plan#2", 9.0), hit("other#1", 8.0)]
    history = [hit("plan#1", 6.0), hit("plan#2", 5.8), hit("card#1", 1.0)]
    fused = fuse_by_document([(own, 1.0), (history, 1.5)], lambda h: h)
    order = [h.chunk_id for h, _ in fused]
    # plan: 0.9 + 1.5 = 2.4 beats card: 1.0 + 0.25; its chunk found by both searches leads.
    assert order[0] == "plan#2"
    assert order.index("card#1") < order.index("other#1")
    assert order.count("plan#2") == 1 and "plan#1" in order
    scores = dict((h.chunk_id, s) for h, s in fused)
    assert scores["plan#2"] == pytest.approx((0.9 + 1.5) / 2.5)
    assert all(0.0 <= s <= 1.0 for s in scores.values())
    # The item kept is the one of the ranking where the chunk scored best.
    assert dict((h.chunk_id, h.score) for h, _ in fused)["plan#2"] == 5.8


def test_fusion_with_a_zero_weight_is_the_own_ranking():
    own = [hit("a#1", 3.0), hit("b#1", 2.0)]
    fused = fuse_by_document([(own, 1.0), ([hit("c#1", 9.0)], 0.0)], lambda h: h)
    assert [h.chunk_id for h, _ in fused] == ["a#1", "b#1"]
