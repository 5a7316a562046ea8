"""The antecedent gate, without services: a reference with two compatible
antecedents in focus is asked about; one of another kind, or a switch, is not;
a dropped question's options are not picked from later."""

from dialogue.classify import TurnKind
from dialogue.policy import AmbiguityGate, Clarify, DialoguePolicy, PlanQueries, UnderstoodTurn
from dialogue.state import PendingClarification, SessionState, TurnRecord
from dialogue.transition import TurnOutcome, apply_turn
from understanding.linker import EntityLinker
from understanding.mentions import detect_mentions


def state_after(entities, text="华东区和华南区的销售额分别是多少"):
    return SessionState(kb="t", session_id="s", turn_count=1, focus=list(entities),
                        recent=[TurnRecord(index=1, user=text, standalone=text, action="retrieve",
                                           entities=list(entities))])


def decide(text, snapshot, state, policy=None):
    detection = detect_mentions(text, snapshot)
    links = EntityLinker().link(detection, snapshot, focus=state.focus, listed=state.listed)
    return (policy or DialoguePolicy()).decide(UnderstoodTurn(text, detection, links), state, snapshot)


def test_a_pronoun_after_two_of_a_kind_asks_which_with_both(snapshot):
    decision = decide("它的增长率是多少", snapshot, state_after(["region.east", "region.south"]))
    assert isinstance(decision, Clarify)
    assert decision.options == ("region.east", "region.south")
    assert "compatible antecedents" in decision.reasons[0]
    # What the linker had chosen for the pronoun is not taken as resolved.
    assert decision.resolved == ()


def test_a_pronoun_right_after_the_one_name_the_turn_said_is_not_asked_about(snapshot):
    # 华南区，它…: the turn says which of the two it means.
    state = state_after(["region.east", "region.south"])
    decision = decide("华南区，它的增长率是多少", snapshot, state)
    assert isinstance(decision, PlanQueries)
    assert decision.links.resolved == ("region.south",)
    decision_en = decide("华南区: what is its 增长率", snapshot, state)
    assert isinstance(decision_en, PlanQueries)
    assert set(decision_en.links.resolved) == {"region.south"}


def test_the_plain_ambiguity_gate_keeps_the_linkers_choice(snapshot):
    decision = decide("它的增长率是多少", snapshot, state_after(["region.east", "region.south"]),
                      DialoguePolicy(gate=AmbiguityGate()))
    assert isinstance(decision, PlanQueries) and decision.links.resolved == ("region.east",)


def test_a_pronoun_after_things_of_different_kinds_resolves(snapshot):
    decision = decide("它的增长率是多少", snapshot, state_after(["region.east", "prod.a.personal"]))
    assert isinstance(decision, PlanQueries) and decision.links.resolved == ("region.east",)


def test_an_english_pronoun_asks_too(snapshot):
    decision = decide("what is its 增长率", snapshot, state_after(["region.east", "region.south"]))
    assert isinstance(decision, Clarify)


def test_a_dropped_question_leaves_no_options_to_pick_from(snapshot):
    asked = SessionState(kb="t", session_id="s", turn_count=1, listed=["prod.a.enterprise", "prod.a.personal"],
                         pending=PendingClarification(turn=1, question_text="A产品怎么申请",
                                                      mention="A产品",
                                                      options=["prod.a.enterprise", "prod.a.personal"]))
    decision = decide("算了，我直接问：华东区的销售额是多少", snapshot, asked)
    assert isinstance(decision, PlanQueries) and decision.kind is TurnKind.SWITCH
    detection = detect_mentions("算了，我直接问：华东区的销售额是多少", snapshot)
    after = apply_turn(asked, TurnOutcome(2, detection.text, decision, "retrieve", detection.text,
                                          ("region.east",), decision.kind, decision.detection,
                                          decision.links), snapshot)
    assert after.pending is None and "prod.a.personal" not in after.listed
