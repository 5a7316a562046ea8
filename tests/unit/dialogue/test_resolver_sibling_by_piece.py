"""sibling_by_piece: an ellipsis saying a piece of a sibling's name (and its edition)
means that sibling in place of the focus; a piece several siblings share with no
edition to tell them apart, or a piece of the focus's own name, changes nothing."""

import pytest

from dialogue.policy import PlanQueries
from dialogue.state import SessionState
from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology
from tests.unit.dialogue.test_policy import decide

ONTOLOGY = """
{"kind": "type", "name": "Rule", "attributes": ["限额"], "parent": null}
{"kind": "entity", "id": "rule.carry", "name": "渡轮随身行李规定", "type": "Rule", "aliases": ["随身行李", "行李规定"]}
{"kind": "entity", "id": "rule.hold.2024", "name": "渡轮托运行李规定（2024版）", "type": "Rule", "aliases": ["托运行李", "行李规定"]}
{"kind": "entity", "id": "rule.hold.2025", "name": "渡轮托运行李规定（2025版）", "type": "Rule", "aliases": ["托运行李", "行李规定"]}
{"kind": "entity", "id": "rule.pet", "name": "渡轮宠物随行规定", "type": "Rule", "aliases": ["宠物随行"]}
"""


@pytest.fixture(scope="module")
def kb():
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.strip().splitlines()))


def on(focus):
    return SessionState(kb="t", session_id="s", focus=[focus])


def test_a_piece_and_an_edition_name_the_sibling(kb):
    decision = decide("那托运的2025版呢", kb, on("rule.carry"))
    assert isinstance(decision, PlanQueries) and decision.entities == ("rule.hold.2025",)


def test_a_piece_two_siblings_share_with_no_edition_settles_nothing(kb):
    decision = decide("那托运的呢", kb, on("rule.carry"))
    assert isinstance(decision, PlanQueries) and decision.entities == ("rule.carry",)


def test_a_piece_of_the_focus_own_name_keeps_the_focus(kb):
    decision = decide("随身的限额呢", kb, on("rule.carry"))
    assert isinstance(decision, PlanQueries) and decision.entities == ("rule.carry",)
