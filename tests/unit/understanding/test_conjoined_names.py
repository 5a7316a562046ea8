"""A word joined to a name that shares part of the name, written once: 滨江和萧山营业部,
A产品个人版和企业版, the basic and full cover. The word alone names the other entity."""

import pytest

from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology
from understanding.mentions import MentionKind, detect_mentions

ONTOLOGY = """
{"kind": "type", "name": "Outlet", "attributes": ["营业时间"]}
{"kind": "type", "name": "Plan", "attributes": ["价格"]}
{"kind": "type", "name": "Cover", "attributes": ["excess"]}
{"kind": "type", "name": "Place", "attributes": []}
{"kind": "entity", "id": "o.east", "name": "滨江营业部", "type": "Outlet", "aliases": ["滨江网点"]}
{"kind": "entity", "id": "o.west", "name": "萧山营业部", "type": "Outlet", "aliases": ["萧山网点"]}
{"kind": "entity", "id": "p.personal", "name": "A产品个人版", "type": "Plan", "aliases": ["个人版"]}
{"kind": "entity", "id": "p.business", "name": "A产品企业版", "type": "Plan"}
{"kind": "entity", "id": "c.basic", "name": "Basic Cover", "type": "Cover"}
{"kind": "entity", "id": "c.full", "name": "Full Cover", "type": "Cover"}
{"kind": "entity", "id": "place.east", "name": "滨江", "type": "Place"}
{"kind": "entity", "id": "place.lake", "name": "湖滨营业部大楼", "type": "Place"}
"""


@pytest.fixture(scope="module")
def snapshot() -> AliasSnapshot:
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.splitlines()))


def names(text, snapshot):
    return [(m.text, m.entity_ids) for m in detect_mentions(text, snapshot).of(MentionKind.ALIAS)]


def test_a_word_before_a_name_that_shares_its_head(snapshot):
    # 滨江 alone is a district; joined to an outlet's name it is the other outlet.
    assert names("滨江和萧山营业部哪个周日开门", snapshot) == [
        ("滨江", ("o.east",)), ("萧山营业部", ("o.west",))]
    assert names("我想问滨江、萧山网点几点关门", snapshot) == [
        ("滨江", ("o.east",)), ("萧山网点", ("o.west",))]


def test_a_word_after_a_name_that_shares_its_lead(snapshot):
    assert names("A产品个人版和企业版有什么区别", snapshot) == [
        ("A产品个人版", ("p.personal",)), ("企业版", ("p.business",))]


def test_english_words_joined_before_a_shared_head(snapshot):
    assert names("Is the basic or full cover cheaper?", snapshot) == [
        ("basic", ("c.basic",)), ("full cover", ("c.full",))]


def test_nothing_when_the_joined_word_with_the_part_names_nothing_of_the_kind(snapshot):
    # 湖滨 + 营业部 names nothing; 滨江 joined to no outlet's name stays the district.
    assert names("湖滨和萧山营业部哪个近", snapshot) == [("萧山营业部", ("o.west",))]
    assert names("滨江和湖滨哪个近", snapshot) == [("滨江", ("place.east",))]
    # Not joined: a word beside the name says nothing of another outlet.
    assert names("去滨江萧山营业部", snapshot)[-1] == ("萧山营业部", ("o.west",))
    assert len(names("去滨江萧山营业部", snapshot)) == 2  # the place, then the outlet


def test_one_character_is_no_shared_part():
    snap = AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.splitlines() + [
        '{"kind": "entity", "id": "p.dam", "name": "十三陵水库", "type": "Place"}',
        '{"kind": "entity", "id": "p.bridge", "name": "十七孔桥", "type": "Place"}']))
    # 十 + 七孔桥 is a name, but 七孔桥 shares no more than one character with 十三陵水库.
    assert names("我知道有十三陵水库、七孔桥", snap) == [("十三陵水库", ("p.dam",))]
