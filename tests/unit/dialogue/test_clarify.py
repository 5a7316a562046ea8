import pytest

from dialogue.clarify import AnswerKind, build_clarification, read_answer
from dialogue.state import PendingClarification
from understanding.linker import EntityLinker
from understanding.mentions import detect_mentions

OPTIONS = ["prod.a.enterprise", "prod.a.personal"]


def answer(text, snapshot):
    pending = PendingClarification(turn=1, question_text="A产品怎么申请", mention="A产品", options=OPTIONS)
    detection = detect_mentions(text, snapshot)
    links = EntityLinker().link(detection, snapshot)
    return read_answer(detection, links, pending, snapshot)


@pytest.mark.parametrize("text, chosen", [
    ("第一个", "prod.a.enterprise"), ("后者", "prod.a.personal"), ("个人版", "prod.a.personal"),
    ("A产品（企业版）", "prod.a.enterprise"), ("企业版的", "prod.a.enterprise"), ("2", "prod.a.personal"),
    ("the second", "prod.a.personal"),
])
def test_answers_that_choose_one_option(snapshot, text, chosen):
    a = answer(text, snapshot)
    assert a.kind is AnswerKind.CHOSEN
    assert a.entity_ids == (chosen,)


def test_both_neither_and_a_new_question(snapshot):
    assert answer("都要", snapshot).kind is AnswerKind.BOTH
    assert answer("both", snapshot).entity_ids == tuple(OPTIONS)
    assert answer("都不是", snapshot).kind is AnswerKind.NEITHER
    assert answer("华南区的销售额是多少", snapshot).kind is AnswerKind.NOT_AN_ANSWER


def test_question_in_the_users_language_names_what_tells_options_apart(snapshot):
    zh = build_clarification("A产品", OPTIONS, snapshot, "A产品怎么申请")
    assert zh.question.startswith("您说的“A产品”指的是哪一个")
    assert "面向企业" in zh.question and "面向个人" in zh.question
    assert [o.id for o in zh.options] == OPTIONS
    en = build_clarification("A产品", OPTIONS, snapshot, "how do I apply")
    assert en.question.startswith("Which “A产品” do you mean?")

