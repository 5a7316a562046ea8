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


HEADS = """
{"kind": "type", "name": "Depot", "attributes": ["发货时间"], "parent": null}
{"kind": "type", "name": "Region", "attributes": ["负责人"], "parent": null}
{"kind": "entity", "id": "depot.north", "name": "北区库", "type": "Depot", "aliases": ["北库"]}
{"kind": "entity", "id": "depot.west", "name": "西山库", "type": "Depot", "aliases": ["西库"]}
{"kind": "entity", "id": "region.west", "name": "西山片区", "type": "Region", "aliases": []}
"""


@pytest.fixture(scope="module")
def depots():
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(HEADS.strip().splitlines()))


@pytest.mark.parametrize("turn", ["那北区的呢", "北区的，不是西山", "不是西山，北区"])
def test_names_sharing_only_their_head_are_siblings_in_an_ellipsis_or_a_correction(depots, turn):
    """北区库 and 西山库 share no two characters in a row, only their head (库): a piece of
    one said as an ellipsis or a short correction still means it."""
    decision = decide(turn, depots, on("depot.west"))
    assert isinstance(decision, PlanQueries) and decision.entities == ("depot.north",)


def test_a_head_shared_across_types_makes_no_sibling(depots):
    """西山片区 holds the piece 西山 but is of another type: after 北区库, 西山的呢 means
    the depot of that name, not the region."""
    decision = decide("西山的呢", depots, on("depot.north"))
    assert isinstance(decision, PlanQueries) and decision.entities == ("depot.west",)
