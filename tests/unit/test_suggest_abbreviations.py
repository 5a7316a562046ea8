"""Abbreviations users write and the documents use on their own: a last word cut to
its first character (装修贷 of 青藤装修贷款) and a variant word run into the head's
last character (钻石卡 of 晨曦信用卡钻石版). Each must be said on its own in the
passages, not only as the start of the whole word."""

import pytest

from kg.suggest import read_corpus, suggest
from tests.unit.test_suggest import line

CORPUS = [
    line("loan", "青藤装修贷款产品说明",
         "青藤装修贷款最高30万元。装修贷可线上申请，装修贷审批一般3个工作日。"),
    line("car", "青藤汽车贷款产品说明", "青藤汽车贷款最长5年，汽车贷款利率见公告，汽车贷款可提前还。"),
    line("std", "晨曦信用卡标准版", "晨曦信用卡标准版年费100元，刷卡6次免年费。"),
    line("dia", "晨曦信用卡钻石版", "晨曦信用卡钻石版年费2000元。钻石卡持卡人可用机场贵宾厅，钻石卡积分永久有效。"),
]


@pytest.fixture(scope="module")
def result():
    return suggest(read_corpus(CORPUS))


def aliases(result, name):
    return set(result.entities[name].aliases)


def test_a_last_word_cut_to_its_first_character_when_said_alone(result):
    assert "装修贷" in aliases(result, "青藤装修贷款")
    # 汽车贷 is written only as the start of 汽车贷款: not said alone.
    assert "汽车贷" not in aliases(result, "青藤汽车贷款")


def test_a_variant_word_run_into_the_heads_last_character(result):
    assert "钻石卡" in aliases(result, "晨曦信用卡钻石版")
    # 标准卡 is never written: no alias.
    assert "标准卡" not in aliases(result, "晨曦信用卡标准版")
