"""Who the asker says they are (我是X，…) is a circumstance of the question about the
subject in focus, not a new subject."""

from dialogue.classify import TurnKind, condition_spans
from dialogue.policy import PlanQueries
from dialogue.state import SessionState
from tests.unit.dialogue.test_policy import decide
from tests.unit.dialogue.test_resolver_additive_name import ONTOLOGY, kb  # noqa: F401


def test_the_askers_self_description_goes_on_about_the_subject(kb):
    # A continuation: the subject in focus stays the subject of the standalone.
    state = SessionState(kb="t", session_id="s", focus=["svc.locker"])
    decision = decide("我是年卡会员，能免费用吗", kb, state)
    assert isinstance(decision, PlanQueries) and decision.kind is TurnKind.CONTINUATION
    plain = decide("年卡会员能免费用吗", kb, state)
    assert isinstance(plain, PlanQueries) and plain.kind is TurnKind.NEW_TOPIC


def test_a_correction_or_a_restated_question_is_no_self_description():
    assert condition_spans("我是年卡会员，能带朋友吗")
    assert not condition_spans("我是说年卡会员，能带朋友吗")
    assert not condition_spans("我是问刚才的储物柜，多少钱")


def test_an_english_self_description_is_a_circumstance_too():
    assert condition_spans("I'm a student, can I get a discount?")
    assert condition_spans("I am an annual pass holder. Can I bring a friend?")
    assert not condition_spans("I am asking about the gym.")


def test_people_described_by_what_they_hold_are_a_circumstance(kb):
    assert condition_spans("坐头等舱的人能进吗")
    assert condition_spans("持年卡的客人可以带朋友吗")
    state = SessionState(kb="t", session_id="s", focus=["svc.locker"])
    decision = decide("持年卡的客人能免费用吗", kb, state)
    assert isinstance(decision, PlanQueries) and decision.kind is TurnKind.CONTINUATION
