"""additive_name: a new name followed by "too" keeps the subject talked about beside it,
unless the name is of the focus's own kind or no "too" follows it."""

import pytest

from dialogue.policy import PlanQueries
from dialogue.state import SessionState
from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology
from tests.unit.dialogue.test_policy import decide

ONTOLOGY = """
{"kind": "type", "name": "Service", "attributes": ["价格"], "parent": null}
{"kind": "type", "name": "Pass", "attributes": ["价格"], "parent": null}
{"kind": "entity", "id": "svc.water", "name": "船上热水", "type": "Service", "aliases": ["热水"]}
{"kind": "entity", "id": "svc.locker", "name": "船上储物柜", "type": "Service", "aliases": ["储物柜"]}
{"kind": "entity", "id": "pass.year", "name": "海鸥年卡", "type": "Pass", "aliases": ["年卡会员", "年卡"]}
"""


@pytest.fixture(scope="module")
def kb():
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.strip().splitlines()))


def after(focus):
    return SessionState(kb="t", session_id="s", focus=[focus])


@pytest.mark.parametrize("text", ["年卡会员也要付吗", "那年卡还能免费用吗"])
def test_a_name_followed_by_too_keeps_the_subject(kb, text):
    decision = decide(text, kb, after("svc.water"))
    assert isinstance(decision, PlanQueries)
    assert set(decision.entities) == {"pass.year", "svc.water"}


def test_without_too_the_name_is_the_new_subject(kb):
    decision = decide("年卡会员要付吗", kb, after("svc.water"))
    assert isinstance(decision, PlanQueries) and decision.entities == ("pass.year",)


def test_a_name_of_the_focus_kind_is_not_kept_beside(kb):
    decision = decide("储物柜也要付吗", kb, after("svc.water"))
    assert isinstance(decision, PlanQueries) and decision.entities == ("svc.locker",)
