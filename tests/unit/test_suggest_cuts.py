"""A member's short form cut the way the documents cut another member of its kind,
in the same shape: written once on its own is then enough, and an everyday word
may be one when it is made of characters of two words of the name."""

import pytest

from kg.suggest import read_corpus, suggest
from tests.unit.test_suggest import line

SHIP = line("ship", "星港游船客票说明", "星港游船客票每张80元。“船票”当日有效，“船票”遗失不补。")
TRAIN = line("train", "青川火车客票说明", "青川火车客票每张35元，儿童半价。车票改签须在开车前办理。")
BUS = line("bus", "环湖巴士客票说明", "环湖巴士客票每张12元，环湖巴士客票限乘一次。")
CARDS = [
    line("river", "星河青年借记卡说明", "星河青年借记卡免年费。星河卡可在境外取现，星河卡转账免费。"),
    line("dawn", "晨光少儿借记卡说明", "晨光少儿借记卡面向6至16岁儿童。晨光卡每日消费上限500元。"),
]


@pytest.fixture(scope="module")
def result():
    return suggest(read_corpus([SHIP, TRAIN, BUS, *CARDS]))


def aliases(result, name):
    return set(result.entities[name].aliases)


def test_a_cut_one_member_shows_gives_the_others_theirs_written_once(result):
    assert "船票" in aliases(result, "星港游船客票")  # quoted: the cut it teaches
    assert "车票" in aliases(result, "青川火车客票")  # an everyday word, written once
    assert "晨光卡" in aliases(result, "晨光少儿借记卡")  # the first word, the cut head


def test_without_a_member_cut_so_a_form_written_once_is_no_alias():
    uncut = line("ship", "星港游船客票说明", "星港游船客票每张80元，星港游船客票当日有效。")
    result = suggest(read_corpus([uncut, TRAIN, BUS]))
    assert "车票" not in aliases(result, "青川火车客票")


def test_a_cut_form_two_members_make_or_never_written_is_none():
    night = line("night", "青川夜间火车客票说明", "青川夜间火车客票每张50元。")
    result = suggest(read_corpus([SHIP, TRAIN, BUS, night]))
    assert "车票" not in aliases(result, "青川火车客票")
    assert "车票" not in aliases(result, "青川夜间火车客票")
    assert "士票" not in aliases(result, "环湖巴士客票")  # never written
