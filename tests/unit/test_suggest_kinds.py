"""What a suggested type says about its members, so that a short form two things
of different kinds share is resolved by what the turn asks (流量 of a plan, 利率 of
a loan) rather than left to whichever the dialogue was about.

Kinds come from an everyday word the names end with even when the segmenter
keeps it inside a longer last word, and from what a passage defines a name to be;
attributes also from the words the members' documents state figures of; names
that share no head are no kind and get no attributes."""

import pytest

from kg.aliases import AliasSnapshot
from kg.suggest import read_corpus, suggest, to_ontology
from tests.unit.test_suggest import line
from understanding.linker import EntityLinker
from understanding.mentions import detect_mentions

CORPUS = [
    line("bank", "关于青石银行", "青石银行是一家城市商业银行，青石银行客服电话96000。"),
    line("car", "青石汽车贷款产品说明", "青石汽车贷款首付最低20%，青石汽车贷款的年化利率3.9%起，期限最长5年。"),
    line("home", "青石住房贷款产品说明", "青石住房贷款利率按月调整，青石住房贷款期限最长30年，首付最低30%。"),
    line("biz", "青石经营贷款产品说明", "青石经营贷款额度最高200万元，青石经营贷款的年化利率为4.2%起。"),
    line("quick", "速融贷产品说明",
         "速融贷是青石银行的线上个人信用消费贷款，额度最高20万元，年化利率（单利）3.8%起。"
         "速融贷申请条件：年满22周岁。"),
    line("chat", "星河畅聊套餐说明", "星河畅聊套餐面向新用户。月费59元，含国内流量40GB、国内通话300分钟。"),
    line("family", "星河亲情套餐说明", "星河亲情套餐可加两张副卡。月费99元，含共享流量80GB、通话800分钟。"),
    line("student", "星河学生套餐说明", "星河学生套餐限在校学生办理。月费29元，含国内流量20GB。"),
    line("play", "速融畅玩套餐说明", "速融畅玩套餐是星河通信的入门套餐。月费19元，含国内流量5GB。速融畅玩套餐可随时退订。"),
    line("telco", "关于星河通信", "星河通信是一家电信运营商，星河通信客服电话10099。"),
    line("mall", "青石积分商城说明", "青石积分商城营业时间为全天，青石积分商城可兑换礼品。"),
    line("hall", "星河会员中心说明", "星河会员中心营业时间为9点到18点，星河会员中心可办理补卡。"),
    line("faq", "常见问题", "问：速融是什么？答：速融贷和速融畅玩套餐都叫速融，前者是贷款，后者是套餐。"
                           "速融畅玩套餐每月可改一次。速融贷利率见产品说明。"),
]


@pytest.fixture(scope="module")
def result():
    return suggest(read_corpus(CORPUS))


def test_names_ending_in_an_everyday_word_inside_their_last_word_are_one_kind(result):
    # 汽车贷款 and 住房贷款 are one word each to the segmenter, 经营贷款 two.
    types = {result.entities[n].type for n in ("青石汽车贷款", "青石住房贷款", "青石经营贷款")}
    assert types == {"贷款"}


def test_a_name_defined_as_a_kind_takes_it(result):
    # 速融贷 ends with 贷 only; its passage says it is a 消费贷款.
    assert result.entities["速融贷"].type == "贷款"
    assert result.entities["速融畅玩套餐"].type == "套餐"


def test_a_kind_takes_the_words_its_documents_state_figures_of(result):
    plans = result.types["套餐"].attributes
    # 流量 and 通话 follow no plan's name; figures are stated of them.
    assert {"流量", "通话"} <= set(plans)
    loans = result.types["贷款"].attributes
    assert "利率" in loans and "流量" not in loans


def test_names_of_no_kind_get_no_attributes(result):
    # 营业时间 follows both names, which share no head: it says nothing of a kind.
    untyped = result.types.get("Entity")
    assert untyped is None or not untyped.attributes


@pytest.fixture(scope="module")
def snapshot(result):
    return AliasSnapshot.from_ontology("t", 1, to_ontology(result).ontology)


@pytest.mark.parametrize("turn, meant", [("速融的年化利率最低多少", "速融贷"),
                                         ("速融每个月有多少流量", "速融畅玩套餐")])
def test_what_the_turn_asks_picks_the_holder_of_a_shared_short_form(snapshot, turn, meant):
    ids = {e.name: e.id for e in snapshot.entities.values()}
    # The dialogue was about the other one: the asked word still decides.
    other = next(i for n, i in ids.items() if n.startswith("速融") and n != meant)
    links = EntityLinker().link(detect_mentions(turn, snapshot), snapshot, focus=[other])
    assert links.resolved == (ids[meant],)


ENGLISH = [
    line("a", "Harbor Term Deposit", "Harbor Term Deposit pays 2.1% a year. Harbor Term Deposit needs 1,000 dollars."),
    line("b", "Summit Term Deposit", "Summit Term Deposit pays 2.4% a year. Summit Term Deposit locks for 24 months."),
    line("c", "Aurora Saver", "Aurora Saver is a fixed-term deposit that pays 2.6% a year. Aurora Saver opens online."),
]


def test_an_english_definition_gives_the_kind():
    result = suggest(read_corpus(ENGLISH))
    kind = result.entities["Harbor Term Deposit"].type
    assert kind != "Entity" and result.entities["Aurora Saver"].type == kind
