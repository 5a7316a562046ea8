"""A one-character homophone slip on an alias (房带 for 房贷) links, when exactly one
entity is that close and no confusable twin is within one edit."""

import pytest

from kg.aliases import AliasSnapshot
from kg.fuzzy import SoundAliasIndex, one_edit_apart
from understanding.linker import EntityLinker
from understanding.mentions import detect_mentions
from kg.ontology import parse_ontology

ONTOLOGY = """
{"kind": "type", "name": "Loan", "attributes": ["利率", "违约金", "提前还款"], "parent": null}
{"kind": "type", "name": "Card", "attributes": ["年费"], "parent": null}
{"kind": "entity", "id": "loan.house", "name": "住房贷款", "type": "Loan", "aliases": ["房贷"]}
{"kind": "entity", "id": "loan.car", "name": "汽车贷款", "type": "Loan", "aliases": ["车贷"]}
{"kind": "entity", "id": "card.star", "name": "星卡", "type": "Card"}
{"kind": "entity", "id": "card.new", "name": "新卡", "type": "Card"}
{"kind": "entity", "id": "card.gold", "name": "金卡", "type": "Card"}
{"kind": "entity", "id": "card.jin", "name": "锦卡", "type": "Card"}
{"kind": "confusable", "a": "card.star", "b": "card.new", "note": "one character apart"}
"""


@pytest.fixture(scope="module")
def snapshot() -> AliasSnapshot:
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.splitlines()))


def linked(text: str, snapshot: AliasSnapshot) -> tuple[str, ...]:
    return EntityLinker().link(detect_mentions(text, snapshot), snapshot).resolved


def test_a_homophone_slip_in_a_short_name_links(snapshot):
    assert linked("房带提前还款有违约金吗", snapshot) == ("loan.house",)
    assert linked("车代呢", snapshot) == ("loan.car",)
    [mention] = detect_mentions("车代呢", snapshot).of(detect_mentions("车代呢", snapshot).mentions[0].kind)
    assert mention.similarity < 100 and mention.alias == "车贷"


def test_a_slip_that_does_not_sound_the_same_is_not_guessed(snapshot):
    assert linked("房子提前还款有违约金吗", snapshot) == ()


def test_never_across_a_confusable_pair(snapshot):
    # 心卡 sounds like 新卡, but its confusable twin 星卡 is one character away too.
    assert linked("心卡年费多少", snapshot) == ()


def test_only_when_exactly_one_entity_is_that_close(snapshot):
    # 今卡 sounds like both 金卡 and 锦卡.
    assert linked("今卡年费多少", snapshot) == ()


def test_the_index_finds_one_homophone_substitution_only():
    index = SoundAliasIndex(["房贷", "住房贷款"])
    assert index.lookup("房带") == ["房贷"]
    assert index.lookup("房贷") == []  # itself is an exact match, not a slip
    assert index.lookup("方带") == []  # two characters changed
    assert one_edit_apart("心卡", "星卡") and not one_edit_apart("心卡", "星期卡片")


def test_a_short_slip_inside_running_text_is_not_taken(snapshot):
    # 车带 before 的 reads as a word of the sentence, not a name on its own.
    assert linked("这个车带的质量好吗", snapshot) == ()
    assert linked("车带利率多少", snapshot) == ("loan.car",)
