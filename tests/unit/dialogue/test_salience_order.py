"""The focus order after a turn (dialogue/transition.py: salience_order): what the talk
was about stays ahead of a new name of the same kind, and only of the same kind."""

from dialogue.classify import TurnKind
from dialogue.transition import salience_order

TURN = ("park", "street")  # the turn named the park, and kept the street beside it
FOCUS = ["street"]


def test_a_kb_without_people_keeps_what_was_talked_about_first():
    assert salience_order(TURN, FOCUS, TurnKind.CONTINUATION, kinds={}) == ["street", "park"]
    assert salience_order(TURN, FOCUS, TurnKind.NEW_TOPIC, kinds={}) == ["street", "park"]


def test_a_new_name_of_the_same_kind_goes_behind():
    kinds = {"park": False, "street": False}
    assert salience_order(TURN, FOCUS, TurnKind.CONTINUATION, kinds=kinds) == ["street", "park"]


def test_a_new_name_of_another_or_an_unknown_kind_keeps_its_place():
    # 是马克·韦布 after the film: the director named leads, as the turn said him.
    assert salience_order(("director", "film"), ["film"], TurnKind.CONTINUATION,
                          kinds={"director": True, "film": False}) == ["director", "film"]
    assert salience_order(("director", "film"), ["film"], TurnKind.CONTINUATION,
                          kinds={"director": None, "film": False}) == ["director", "film"]


def test_without_kinds_or_when_the_talk_does_not_go_on_the_turn_order_stands():
    assert salience_order(TURN, FOCUS, TurnKind.CONTINUATION, kinds=None) == ["park", "street"]
    for kind in (TurnKind.CORRECTION, TurnKind.ANSWER, TurnKind.REVISIT, TurnKind.SWITCH, None):
        assert salience_order(TURN, FOCUS, kind, kinds={}) == ["park", "street"]
