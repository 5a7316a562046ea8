"""A number asked with what it counts (8.0版, 6月) is matched with it: the version 8.0
is not the 8.0 of "Android 8.0", and June is not the 6 of "6个工作日"."""

from __future__ import annotations

from retrieval.models import Hit
from retrieval.novelty import AMOUNT, TermStats, asked_units, gain, new_terms, passage_units

PASSAGES = [
    "手机银行7.0版于2025年3月18日发布，支持Android 8.0及以上系统。",
    "2025年6月个人住房贷款利率公告：首套住房执行利率3.00%。",
    "审批通过后6个工作日内放款。",
    "手机银行8.0版将于2026年1月上线。",
]


def hit(text: str) -> Hit:
    return Hit(chunk_id="c", doc_id="d", score=1.0, title="", text=text, entity_ids=())


def test_a_number_is_asked_with_what_it_counts():
    assert "8.0版" in asked_units("8.0版什么时候上线")
    assert "8.0" not in asked_units("8.0版什么时候上线")
    assert "2024" in asked_units("What about the 2024 edition?")
    assert {"8.0", "8.0版"} <= passage_units(PASSAGES[3])


def test_the_version_asked_is_not_the_system_version_a_passage_names():
    stats = TermStats.from_texts(PASSAGES)
    terms = new_terms("手机银行8.0版", "手机银行7.0版")
    assert terms == {"8.0版"}
    assert gain(terms, hit(PASSAGES[0]), stats) == 0.0
    assert gain(terms, hit(PASSAGES[3]), stats) == 1.0


def test_a_month_is_not_a_count_of_days():
    stats = TermStats.from_texts(PASSAGES)
    terms = new_terms("贷款利率6月有变化吗", "贷款利率是多少")
    assert "6月" in terms
    assert gain({"6月"}, hit(PASSAGES[2]), stats) == 0.0
    assert gain({"6月"}, hit(PASSAGES[1]), stats) == 1.0


def test_words_of_the_turn_before_are_not_new():
    from retrieval.novelty import VALUE_KINDS

    # (几个 asks for a count: a passage answers it with a number of something.)
    assert new_terms("保管箱那边有几个停车位", "营业吗", "能租保管箱吗") == {
        "边", "停", "车", "位", VALUE_KINDS[2]}


def test_a_price_asked_in_general_words_asks_for_an_amount_of_money():
    passages = ["千兆宽带单独办理月费119元，包年1,288元。",
                "春季活动：新办家庭版首月月费半价。",
                "Gigabit broadband costs RMB 119 a month."]
    stats = TermStats.from_texts(passages)
    terms = new_terms("千兆宽带价格多少", "千兆宽带网速多少")
    assert AMOUNT in terms and "价" not in terms
    # The price list answers it; the promotion's 半价 shares a character and no price.
    assert gain(terms, hit(passages[0]), stats) == 1.0
    assert gain(terms, hit(passages[1]), stats) == 0.0
    assert AMOUNT in asked_units("How much is gigabit broadband?")
    assert AMOUNT in passage_units(passages[2])


def test_a_version_the_kb_never_names_is_answered_by_no_passage_shown_before():
    from retrieval.novelty import unknown_number

    stats = TermStats.from_texts(PASSAGES[:3])
    # The kb names 7.0版 and 6月, never 9.0版: a question about 9.0版 is about something
    # the kb does not hold. Words are not judged so (a paraphrase is often in no chunk).
    assert unknown_number(new_terms("手机银行9.0版什么时候上线", "手机银行7.0版"), stats)
    assert not unknown_number(new_terms("贷款利率6月有变化吗", "贷款利率是多少"), stats)
    assert not unknown_number(new_terms("营业部几点下班", "营业部在哪"), stats)


def test_the_note_the_rewrite_adds_around_compared_names_is_not_asked():
    # （与2025年4月相比）: the month is asked, the note's own words (与, 相比) are not, in
    # either language.
    asked = asked_units("2025年5月二套利率是多少？（与2025年4月相比）")
    assert "4月" in asked and "相" not in asked and "比" not in asked
    assert asked_units("sales in July (compared with June)") == {"sale", "july", "june"}


def test_a_variant_the_kb_never_names_is_unknown():
    from retrieval.novelty import unknown_variant

    stats = TermStats.from_texts([
        "锦绣卡白金版年费300元。", "Platinum edition: annual fee RMB 800.", "两个版本的区别见下表。"])
    # 钻石版 / the Diamond edition: no passage names it, so nothing shown answers it.
    assert unknown_variant("锦绣卡有没有钻石版？钻石版年费多少", stats, "锦绣卡额度多少")
    assert unknown_variant("What about the Diamond edition?", stats)
    # A variant the kb has, one asked before, a word about versions or a time is not.
    assert not unknown_variant("白金版年费多少", stats)
    assert not unknown_variant("What about the platinum edition?", stats)
    assert not unknown_variant("钻石版呢", stats, "锦绣卡有没有钻石版")
    assert not unknown_variant("两个版本月费差多少", stats)
    assert not unknown_variant("最新版什么时候上线", stats)
    # A word placing an edition after or before another names none: "the new edition"
    # is the later of those the kb holds, not a variant called "new".
    assert not unknown_variant("what changed in the new edition?", stats)
    assert not unknown_variant("What did the previous version say?", stats)
    assert not unknown_variant("is the latest edition cheaper?", stats)


def test_a_question_for_a_time_or_a_duration_is_answered_by_a_passage_stating_one():
    from retrieval.novelty import VALUE_KINDS

    duration, clock, _ = VALUE_KINDS
    stats = TermStats.from_texts(["营业时间：周一至周五9:00-17:00。", "下午可办理大额取现预约。",
                                  "转网一般2个工作日内完成。"])
    # 几点下班 asks for a time of day: the opening hours answer it, the passage that
    # shares 下 (下午) does not.
    terms = new_terms("杭州分行几点下班", "杭州分行在哪")
    assert clock in terms and "下" not in terms and "班" not in terms
    assert gain(terms, hit("营业时间：周一至周五9:00-17:00。"), stats) == 1.0
    assert gain(terms, hit("下午可办理大额取现预约。"), stats) == 0.0
    assert duration in asked_units("How long does the transfer take?")
    assert duration in passage_units("转网一般2个工作日内完成。")
