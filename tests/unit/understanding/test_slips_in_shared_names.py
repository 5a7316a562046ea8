"""A homophone slip in a name several entities share links as the name written right
would: every entity of that name is a candidate, and the rest of each one's name said
in the turn tells them apart."""

import pytest

from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology
from understanding.linker import EntityLinker
from understanding.mentions import MentionKind, detect_mentions

ONTOLOGY = """
{"kind": "type", "name": "Desk", "attributes": ["开放时间"], "parent": null}
{"kind": "entity", "id": "desk.north", "name": "北馆借阅服务台", "type": "Desk", "aliases": ["借阅服务台"]}
{"kind": "entity", "id": "desk.south", "name": "南馆借阅服务台", "type": "Desk", "aliases": ["借阅服务台"]}
{"kind": "confusable", "a": "desk.north", "b": "desk.south", "note": "both called 借阅服务台"}
"""


@pytest.fixture(scope="module")
def kb() -> AliasSnapshot:
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.strip().splitlines()))


def test_a_slip_in_a_shared_name_finds_every_entity_of_that_name(kb):
    [mention] = detect_mentions("借悦服务台几点开门", kb).of(MentionKind.ALIAS)
    assert mention.alias == "借阅服务台"
    assert set(mention.entity_ids) == {"desk.north", "desk.south"}


def test_the_rest_of_a_name_said_in_the_turn_settles_the_slip(kb):
    links = EntityLinker().link(detect_mentions("借悦服务台北馆几点开门", kb), kb)
    assert links.resolved == ("desk.north",)
