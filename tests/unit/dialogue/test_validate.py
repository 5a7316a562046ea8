from pathlib import Path

import pytest

from dialogue.prompts import REWRITE_SYSTEM, PromptError
from dialogue.validate import RewriteValidator
from kg.aliases import AliasSnapshot
from kg.ontology import parse_ontology


def check(snapshot, turn, queries, entities=("region.south",), allowed=("region.south", "region.east"),
          context=("华东区7月的销售额是多少",)):
    return RewriteValidator().check(turn, queries, snapshot, entities=list(entities),
                                    allowed=list(allowed), context=list(context))


def test_a_faithful_rewrite_passes_every_check(snapshot):
    v = check(snapshot, "那华南区呢", ["华南区7月的销售额是多少"])
    assert v.accepted and all(v.checks.values())


@pytest.mark.parametrize("queries, failed", [
    (["A产品（个人版）7月的销售额"], "entities_known"),       # an entity nobody mentioned
    (["7月的销售额是多少"], "entities_present"),             # the turn's entity dropped
    (["华南区8月的销售额是多少"], "no_new_numbers"),           # a month out of nowhere
])
def test_an_invented_or_dropped_entity_or_number_is_refused(snapshot, queries, failed):
    v = check(snapshot, "那华南区呢", queries)
    assert not v.accepted and v.checks[failed] is False


def test_dropped_negation_time_or_question_word_is_refused(snapshot):
    assert check(snapshot, "华南区不能申请了吗", ["华南区如何申请"]).checks["negation_kept"] is False
    assert check(snapshot, "华南区2024版的条款", ["华南区的条款"]).checks["time_kept"] is False
    assert check(snapshot, "华南区为什么涨这么多", ["华南区销售额"]).checks["intent_kept"] is False
    assert check(snapshot, "华南区为什么涨这么多", ["华南区销售额为什么上涨"]).accepted


def test_a_relative_time_may_be_written_as_the_time_it_stands_for(snapshot):
    # 上个月 after 7月 is June: "6月" keeps the time and is no invented number; another
    # month is refused, and so is dropping the time.
    ok = check(snapshot, "那华南区跟上个月比呢", ["华南区7月的销售额（与6月相比）"])
    assert ok.accepted and ok.checks["time_kept"] and ok.checks["no_new_numbers"]
    wrong = check(snapshot, "那华南区跟上个月比呢", ["华南区7月的销售额（与5月相比）"])
    assert not wrong.accepted and wrong.checks["time_kept"] is False
    assert check(snapshot, "那华南区跟上个月比呢", ["华南区7月的销售额"]).checks["time_kept"] is False


def test_prompts_refuse_missing_or_unexpected_values():
    assert "华南区" in REWRITE_SYSTEM.render(allowed_entities="华南区")
    with pytest.raises(PromptError, match="missing"):
        REWRITE_SYSTEM.render()
    with pytest.raises(PromptError, match="unexpected"):
        REWRITE_SYSTEM.render(allowed_entities="x", extra="y")


def test_a_negation_inside_a_conversation_cue_need_not_survive(snapshot):
    # 先不管这个 sets the pending question aside; its 不 is not the question's.
    v = check(snapshot, "先不管这个，华南区7月的销售额是多少", ["华南区7月的销售额是多少"])
    assert v.accepted and v.checks["negation_kept"]
    # A negation in the question itself still must.
    assert check(snapshot, "先不管这个，华南区不能申请了吗",
                 ["华南区如何申请"]).checks["negation_kept"] is False


def test_a_name_the_user_wrote_is_not_an_invented_one(snapshot):
    # A产品（个人版） is named inside what the user said, though the turn is not about it.
    v = check(snapshot, "跟A产品（个人版）一起卖的，7月的销售额是多少",
              ["华南区跟A产品（个人版）一起卖的，7月的销售额是多少"])
    assert v.checks["entities_known"]
    # The same rewrite for a turn that never said it invents it.
    v = check(snapshot, "7月的销售额是多少", ["华南区跟A产品（个人版）一起卖的，7月的销售额是多少"])
    assert not v.checks["entities_known"]



@pytest.fixture(scope="module")
def campus() -> AliasSnapshot:
    lines = (Path(__file__).parent / "data" / "campus_ontology.jsonl").read_text(encoding="utf-8")
    return AliasSnapshot.from_ontology("campus", 1, parse_ontology(lines.splitlines()))


def test_an_older_edition_word_is_kept_by_the_edition_it_stands_for(campus):
    # 旧版呢 after the 2024 handbook: the rewrite names the 2023 edition instead.
    def verdict(query, entities):
        return RewriteValidator().check("旧版呢", [query], campus, entities=entities,
                                        allowed=["book.2023", "book.2024"])
    assert verdict("学生手册（2023版）的请假规定", ["book.2023"]).checks["time_kept"]
    assert verdict("学生手册的请假规定", []).checks["time_kept"] is False


def test_a_name_shared_with_the_entity_meant_does_not_name_the_corrected_one(campus):
    # "student handbook" is shared by both editions: beside 学生手册（2024版） it does not
    # bring back the 2023 edition the user corrected away from; that edition's name does.
    def verdict(query):
        return RewriteValidator().check("No, I meant the 2024 edition.", [query], campus,
                                        entities=["book.2024"],
                                        allowed=["book.2023", "book.2024"], excluded=["book.2023"])
    assert verdict("What does 学生手册（2024版） (student handbook) say?").checks["excluded_absent"]
    assert verdict("What does 学生手册（2023版） say?").checks["excluded_absent"] is False
