"""The colloquial forms of "by the way, another question" switch the topic: the
entities talked about before are not carried into the new question."""

import pytest

from dialogue.classify import TurnKind
from dialogue.policy import PlanQueries
from dialogue.state import SessionState
from tests.unit.dialogue.test_policy import decide


@pytest.mark.parametrize("text", ["另外问下，发票怎么开", "另外问一下，发票怎么开", "顺便问下，发票怎么开"])
def test_another_question_switches(snapshot, text):
    state = SessionState(kb="t", session_id="s", focus=["region.east"])
    decision = decide(text, snapshot, state)
    assert isinstance(decision, PlanQueries) and decision.kind is TurnKind.SWITCH
    assert "region.east" not in decision.entities
