"""Types from the head a name ends with, when the segmenter reads the head into a
longer last word: things of one kind must share a type, or a turn naming one after
the other adds it instead of switching to it, and a pronoun over two of them is not
asked about."""

import pytest

from kg.suggest import read_corpus, suggest
from tests.unit.test_suggest import line

CORPUS = [
    line("gold", "澜庭金卡", "澜庭金卡会员每年可免费升舱一次，澜庭金卡保级需飞行30个航段。"),
    line("plat", "澜庭白金卡", "澜庭白金卡会员可带一位同伴进贵宾室，澜庭白金卡保级需飞行60个航段。"),
    line("other", "鹤鸣金卡", "鹤鸣金卡是鹤鸣书店的储值卡，鹤鸣金卡充值满500元送50元。"),
    line("faq", "会员常见问题", "问：金卡会员能带同伴吗？答：澜庭金卡不能带。金卡遗失可补办，鹤鸣金卡补办收10元。"),
    line("cabin", "头等舱服务", "头等舱提供平躺座椅，头等舱旅客优先登机。"),
    line("cabin-plus", "超级头等舱服务", "超级头等舱提供独立包间，超级头等舱旅客专车接送。"),
]


@pytest.fixture(scope="module")
def result():
    return suggest(read_corpus(CORPUS))


def type_of(result, name):
    return result.entities[name].type


def test_a_last_word_that_ends_with_another_names_head_takes_its_type(result):
    # 白金卡 is one word to the segmenter; it ends with the 金卡 two other names end with.
    assert type_of(result, "澜庭白金卡") == type_of(result, "澜庭金卡") == "金卡"
    # Two names still say 金卡 as a word: it stays the short form they share, not a kind.
    assert {e.name for e in result.entities.values() if "金卡" in e.aliases} == {"澜庭金卡", "鹤鸣金卡"}
    # 超级头等舱 ends with the whole name 头等舱, which heads no kind: no type from it.
    assert type_of(result, "超级头等舱") == type_of(result, "头等舱") == "Entity"
