"""A member's short form cut the way the documents cut another member of its kind,
in the same shape: written once on its own is then enough."""

import pytest

from kg.suggest import read_corpus, suggest
from tests.unit.test_suggest import line

STUDY = line("study", "青藤助学贷款产品说明",
             "青藤助学贷款面向在校大学生。学贷：最高2万元，毕业后开始还款。学贷：利率2.9%。")
MOTO = line("moto", "青藤摩托车贷款产品说明",
            "青藤摩托车贷款最长3年，首付不低于20%。车贷审批一般2个工作日。")
FARM = line("farm", "青藤农机贷款产品说明", "青藤农机贷款最高50万元，青藤农机贷款可分期还款。")
CARDS = [
    line("river", "星河青年借记卡说明", "星河青年借记卡免年费。星河卡可在境外取现，星河卡转账免费。"),
    line("dawn", "晨光少儿借记卡说明", "晨光少儿借记卡面向6至16岁儿童。晨光卡每日消费上限500元。"),
]


@pytest.fixture(scope="module")
def result():
    return suggest(read_corpus([STUDY, MOTO, FARM, *CARDS]))


def aliases(result, name):
    return set(result.entities[name].aliases)


def test_a_cut_one_member_shows_gives_the_others_theirs_written_once(result):
    assert "学贷" in aliases(result, "青藤助学贷款")  # a label: the cut it teaches
    assert "车贷" in aliases(result, "青藤摩托车贷款")  # the word's last character, the cut head
    assert "晨光卡" in aliases(result, "晨光少儿借记卡")  # the first word, the cut head


def test_without_a_member_cut_so_a_form_written_once_is_no_alias():
    study = line("study", "青藤助学贷款产品说明", "青藤助学贷款面向在校大学生，毕业后开始还款。")
    result = suggest(read_corpus([study, MOTO, FARM]))
    assert "车贷" not in aliases(result, "青藤摩托车贷款")


def test_a_cut_form_two_members_make_or_never_written_is_none():
    truck = line("truck", "青藤货车贷款产品说明", "青藤货车贷款最长5年。")
    result = suggest(read_corpus([STUDY, MOTO, FARM, truck]))
    assert "车贷" not in aliases(result, "青藤摩托车贷款")
    assert "车贷" not in aliases(result, "青藤货车贷款")
    assert "机贷" not in aliases(result, "青藤农机贷款")  # never written
