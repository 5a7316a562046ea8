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


def _snapshot(ontology: str) -> AliasSnapshot:
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(ontology.strip().splitlines()))


@pytest.fixture(scope="module")
def kb() -> AliasSnapshot:
    return _snapshot(ONTOLOGY)


def test_a_slip_in_a_shared_name_finds_every_entity_of_that_name(kb):
    [mention] = detect_mentions("借悦服务台几点开门", kb).of(MentionKind.ALIAS)
    assert mention.alias == "借阅服务台"
    assert set(mention.entity_ids) == {"desk.north", "desk.south"}


def test_the_rest_of_a_name_said_in_the_turn_settles_the_slip(kb):
    links = EntityLinker().link(detect_mentions("借悦服务台北馆几点开门", kb), kb)
    assert links.resolved == ("desk.north",)


# A short name shared by two branches' departments, each written after its branch.
BRANCHES = """
{"kind": "type", "name": "Branch", "attributes": ["地址"], "parent": null}
{"kind": "type", "name": "Desk", "attributes": ["下班时间"], "parent": null}
{"kind": "entity", "id": "branch.north", "name": "城北店", "type": "Branch", "aliases": []}
{"kind": "entity", "id": "branch.south", "name": "城南店", "type": "Branch", "aliases": []}
{"kind": "entity", "id": "desk.north.care", "name": "城北店客服部", "type": "Desk", "aliases": ["客服部"]}
{"kind": "entity", "id": "desk.south.care", "name": "城南店客服部", "type": "Desk", "aliases": ["客服部"]}
{"kind": "confusable", "a": "desk.north.care", "b": "desk.south.care", "note": "both called 客服部"}
"""


@pytest.fixture(scope="module")
def branches() -> AliasSnapshot:
    return _snapshot(BRANCHES)


def test_a_slip_in_a_short_name_right_after_another_name_is_found(branches):
    mentions = detect_mentions("城北店客伏部周六开不开", branches).of(MentionKind.ALIAS)
    assert [m.text for m in mentions] == ["城北店", "客伏部"]
    assert mentions[1].alias == "客服部"
    links = EntityLinker().link(detect_mentions("城北店客伏部周六开不开", branches), branches)
    assert "desk.north.care" in links.resolved
    assert "desk.south.care" not in links.resolved


def test_a_short_name_inside_running_text_is_still_not_guessed(branches):
    # Between running words (not after a name, nor before the question), a short
    # homophone of a name is not read as one.
    mentions = detect_mentions("好多客伏部门周六开不开", branches).of(MentionKind.ALIAS)
    assert not mentions
