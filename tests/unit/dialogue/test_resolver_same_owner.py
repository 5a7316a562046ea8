"""same_owner: a name two owners share settles on the one under the owner the dialogue
is about; under one owner, or with nothing talked about, the gate still asks."""

import pytest

from dialogue.policy import Clarify, PlanQueries
from dialogue.resolvers.same_owner import owner
from dialogue.state import SessionState, TurnRecord
from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology
from tests.unit.dialogue.test_policy import decide

ONTOLOGY = """
{"kind": "type", "name": "Org", "attributes": [], "parent": null}
{"kind": "type", "name": "Rule", "attributes": ["限额"], "parent": null}
{"kind": "type", "name": "Pass", "attributes": ["价格"], "parent": null}
{"kind": "entity", "id": "org.ferry", "name": "海鸥渡轮", "type": "Org"}
{"kind": "entity", "id": "org.museum", "name": "临江博物馆", "type": "Org"}
{"kind": "entity", "id": "ferry.club", "name": "海鸥会员俱乐部", "type": "Org", "parent": "org.ferry"}
{"kind": "entity", "id": "ferry.luggage", "name": "渡轮随身行李规定", "type": "Rule", "aliases": ["随身行李"], "parent": "org.ferry"}
{"kind": "entity", "id": "ferry.pass", "name": "海鸥年卡", "type": "Pass", "aliases": ["年卡"], "parent": "ferry.club"}
{"kind": "entity", "id": "museum.pass", "name": "博物馆年卡", "type": "Pass", "aliases": ["年卡"], "parent": "org.museum"}
{"kind": "entity", "id": "museum.hall", "name": "临江博物馆东厅", "type": "Rule", "aliases": ["东厅"], "parent": "org.museum"}
{"kind": "entity", "id": "ferry.pass.kid", "name": "海鸥儿童年卡", "type": "Pass", "aliases": ["儿童卡"], "parent": "ferry.club"}
{"kind": "entity", "id": "ferry.pass.old", "name": "海鸥长者年卡", "type": "Pass", "aliases": ["儿童卡"], "parent": "ferry.club"}
"""


@pytest.fixture(scope="module")
def owners():
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.strip().splitlines()))


def talk(*focus):
    return SessionState(kb="t", session_id="s", focus=list(focus))


def test_the_owner_is_the_top_of_the_parent_chain(owners):
    assert owner("ferry.pass", owners) == "org.ferry"
    assert owner("museum.pass", owners) == "org.museum"
    assert owner("org.ferry", owners) == "org.ferry"


def test_a_shared_name_settles_under_the_owner_the_talk_is_about(owners):
    ferry = decide("那年卡能多带几件", owners, talk("ferry.luggage"))
    assert isinstance(ferry, PlanQueries) and "ferry.pass" in ferry.entities
    assert "museum.pass" not in ferry.entities
    museum = decide("那年卡能多带几件", owners, talk("museum.hall"))
    assert isinstance(museum, PlanQueries) and "museum.pass" in museum.entities
    assert any(step["resolver"] == "same_owner" for step in museum.trace["resolvers"])


def test_with_nothing_talked_about_the_gate_still_asks(owners):
    assert isinstance(decide("年卡能多带几件", owners, talk()), Clarify)


def test_candidates_under_one_owner_are_left_to_the_gate(owners):
    decision = decide("儿童卡多少钱", owners, talk("ferry.luggage"))
    assert isinstance(decision, Clarify)
    assert set(decision.options) == {"ferry.pass.kid", "ferry.pass.old"}


def test_a_talk_under_both_owners_leaves_the_name_to_the_gate(owners):
    state = SessionState(kb="t", session_id="s", focus=["ferry.luggage"],
                         recent=[TurnRecord(index=1, user="东厅几点开", standalone="东厅几点开",
                                            action="retrieve", entities=["museum.hall"])])
    assert isinstance(decide("年卡多少钱", owners, state), Clarify)
