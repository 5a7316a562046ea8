"""What an entity's description names: the ties that keep a focus entity beside a
name the turn says (kg/aliases.py ``described_with``), and the digits of a date that
are no name made of digits (understanding/mentions.py)."""

import json

from kg.aliases import AliasSnapshot
from understanding.mentions import MentionKind, detect_mentions
from kg.ontology import parse_ontology


def _snapshot(extra_descriptions: int = 0) -> AliasSnapshot:
    lines = [
        {"kind": "type", "name": "Work", "attributes": ["导演"]},
        {"kind": "entity", "id": "film", "name": "雾港", "type": "Work",
         "description": "雾港是2011年上映的剧情片，由林默执导，在青岛拍摄。"},
        {"kind": "entity", "id": "director", "name": "林默", "type": "Work",
         "description": "林默，导演、编剧。"},
        {"kind": "entity", "id": "city", "name": "青岛", "type": "Work", "description": ""},
        {"kind": "entity", "id": "album", "name": "2011", "type": "Work", "description": "专辑"},
    ]
    # Other entities whose descriptions all say 青岛: there it is a common word.
    lines += [{"kind": "entity", "id": f"e{i}", "name": f"别的{i}号", "type": "Work",
               "description": "一个在青岛的地方。"} for i in range(extra_descriptions)]
    return AliasSnapshot.from_ontology(
        "t", 1, parse_ontology([json.dumps(x, ensure_ascii=False) for x in lines]))


def test_a_description_ties_its_entity_to_the_names_it_says_one_way():
    snapshot = _snapshot()
    assert snapshot.described_with("film") == {"director", "city"}
    # The director's description does not name the film: the tie has a direction.
    assert snapshot.described_with("director") == frozenset()
    # A name made of digits (2011) ties nothing; nor does the entity's own name.
    assert "album" not in snapshot.described_with("film")


def test_a_name_found_in_many_descriptions_is_a_common_word_and_ties_nothing():
    snapshot = _snapshot(extra_descriptions=200)
    assert snapshot.described_with("film") == {"director"}


def test_digits_inside_a_date_or_amount_are_no_name_but_alone_they_are():
    snapshot = _snapshot()
    for text in ("2011年上映的", "花了2011万", "时间是2011-06-21", "3.2011"):
        assert not detect_mentions(text, snapshot).of(MentionKind.ALIAS), text
    named = detect_mentions("你听过2011这张专辑吗", snapshot).of(MentionKind.ALIAS)
    assert [m.entity_ids for m in named] == [("album",)]
