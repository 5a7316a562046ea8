"""Clarification analytics without services: what a turn tells, the groups and
the suggestions, and a recorder whose store fails."""

from __future__ import annotations

import logging
from datetime import datetime, timezone

import pytest

from analytics.clarifications import (AnswerCounts, CandidateInfo, ClarificationGroup,
                                ClarificationRecorder, events, seen_in, suggest, summarize)
from dialogue.events import ClarificationAnswered, ClarificationAsked, StagesTimed
from dialogue.models import Clarification, ClarifyOption, RewriteInfo, TurnResult
from kg.aliases import AliasSnapshot
from kg.clarification_log import Answered, Asked, CountRow
from kg.ontology import parse_ontology

ONTOLOGY = """
{"kind": "type", "name": "Product", "attributes": ["价格"], "parent": null}
{"kind": "entity", "id": "prod.a.personal", "name": "A产品（个人版）", "type": "Product", "aliases": ["A产品个人版", "A产品"]}
{"kind": "entity", "id": "prod.a.enterprise", "name": "A产品（企业版）", "type": "Product", "aliases": ["A产品企业版", "A产品"]}
{"kind": "entity", "id": "cloud.home", "name": "星云家庭版", "type": "Product", "aliases": ["星云数据分析平台"]}
{"kind": "entity", "id": "cloud.team", "name": "星云团队版", "type": "Product", "aliases": ["星云数据分析平台"]}
{"kind": "entity", "id": "b.one", "name": "B云盘", "type": "Product"}
{"kind": "entity", "id": "b.two", "name": "B云盘团队版", "type": "Product", "aliases": ["B云盘"]}
"""
AT = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def snapshot() -> AliasSnapshot:
    return AliasSnapshot.from_ontology("t", 1, parse_ontology(ONTOLOGY.splitlines()))


def result(turn: int, *, clarify: tuple[str, list[str]] | None = None, match: str = "exact",
           answer: ClarificationAnswered | None = None) -> TurnResult:
    """A turn as the engine returns it: the clarification it asked, and its events."""
    clarification = None
    told: list = [StagesTimed({"link": 0.1}, 1)]
    if answer is not None:
        told.append(answer)
    if clarify is not None:
        mention, options = clarify
        clarification = Clarification(question="?", mention=mention,
                                      options=[ClarifyOption(id=o, name=o) for o in options])
        told.append(ClarificationAsked(mention, "alias", match, tuple(options)))
    out = TurnResult(session="s", turn=turn, user="u", action="clarify" if clarify else "retrieve",
                     standalone="u", queries=[], entities=[], clarification=clarification,
                     rewrite=RewriteInfo(source="rules", accepted=True))
    out.events.extend(told)
    return out


def test_most_turns_tell_nothing():
    assert seen_in("t", "s", result(3)) is None


def test_a_question_is_recorded_with_its_alias_key_and_sorted_candidates(snapshot):
    seen = seen_in("t", "s", result(2, clarify=("a产品", ["prod.a.personal", "prod.a.enterprise"])),
                   at=AT)
    assert events(seen, snapshot) == [Asked("t", "s", 2, AT, "alias", "a产品", "a产品", "exact",
                                            ("prod.a.enterprise", "prod.a.personal"))]


def test_a_fuzzy_mention_is_recorded_with_the_shared_alias_it_was_taken_for(snapshot):
    seen = seen_in("t", "s", result(1, clarify=("星云数据分析平", ["cloud.home", "cloud.team"]),
                                    match="fuzzy"), at=AT)
    [asked] = events(seen, snapshot)
    assert (asked.mention, asked.alias, asked.match) == ("星云数据分析平", "星云数据分析平台", "fuzzy")


def test_the_answer_goes_to_the_previous_turns_question_before_a_new_question(snapshot):
    seen = seen_in("t", "s", result(5, clarify=("B云盘", ["b.one", "b.two"]), answer=ClarificationAnswered(
        "not_an_answer")), at=AT)
    answered, asked = events(seen, snapshot)
    assert answered == Answered("t", "s", 4, AT, "new_question", (), "")
    assert asked.turn == 5 and asked.candidates == ("b.one", "b.two")
    chosen = seen_in("t", "s", result(6, answer=ClarificationAnswered(
        "chosen", ("b.two",), "ordinal 第二个")), at=AT)
    assert events(chosen, snapshot) == [Answered("t", "s", 5, AT, "chosen", ("b.two",),
                                                 "ordinal 第二个")]


def row(answer: str, chosen: tuple[str, ...], count: int, *, alias: str = "a产品",
        mentions: tuple[str, ...] = ("A产品",), match: str = "exact", kind: str = "alias",
        candidates: tuple[str, ...] = ("prod.a.enterprise", "prod.a.personal")) -> CountRow:
    return CountRow(kind=kind, alias=alias, candidates=candidates, answer=answer, chosen=chosen,
                    count=count, mentions=mentions, matches=(match,), last_asked=None)


def test_a_dominant_answer_suggests_pointing_the_shared_alias_at_it(snapshot):
    [group] = summarize([row("chosen", ("prod.a.personal",), 8), row("chosen", ("prod.a.enterprise",), 1),
                         row("both", ("prod.a.enterprise", "prod.a.personal"), 1),
                         row("open", (), 3)], snapshot)
    assert group.asked == 13
    assert group.answers.model_dump() == {"chosen": 9, "both": 1, "neither": 0,
                                          "new_question": 0, "open": 3}
    assert group.chosen == {"prod.a.personal": 8, "prod.a.enterprise": 1}
    assert [c.name for c in group.candidates] == ["A产品（企业版）", "A产品（个人版）"]
    s = group.suggestion
    assert s.action == "point_alias" and s.entity == "prod.a.personal"
    assert [c.model_dump() for c in s.changes] == [
        {"op": "remove_alias", "entity": "prod.a.enterprise", "alias": "A产品"}]
    assert "8 of 10 answers (80%)" in s.reason.en and "A产品企业版" in s.reason.en
    assert "（80%）选择了A产品（个人版）" in s.reason.zh


def test_below_the_threshold_or_split_answers_keep_the_ambiguity(snapshot):
    few = summarize([row("chosen", ("prod.a.personal",), 4)], snapshot)[0].suggestion
    assert few.action == "wait" and "4 answer(s)" in few.reason.en
    split = summarize([row("chosen", ("prod.a.personal",), 7), row("chosen", ("prod.a.enterprise",), 3)],
                      snapshot)[0].suggestion
    assert split.action == "keep" and "70%" in split.reason.en
    assert split.changes == [] and split.entity is None


def test_mostly_neither_asks_to_review_the_options(snapshot):
    s = summarize([row("neither", (), 4), row("chosen", ("prod.a.personal",), 2)], snapshot)[0].suggestion
    assert s.action == "review"


def test_a_dominant_fuzzy_mention_suggests_adding_it_as_an_alias(snapshot):
    [group] = summarize([row("chosen", ("cloud.team",), 5, alias="星云数据分析平台",
                             mentions=("星云数据分析平",), match="fuzzy",
                             candidates=("cloud.home", "cloud.team"))], snapshot)
    s = group.suggestion
    assert s.action == "add_alias"
    assert [c.model_dump() for c in s.changes] == [
        {"op": "add_alias", "entity": "cloud.team", "alias": "星云数据分析平"}]


def test_an_alias_that_is_another_entitys_name_cannot_be_pointed(snapshot):
    s = summarize([row("chosen", ("b.two",), 5, alias="b云盘", mentions=("B云盘",),
                       candidates=("b.one", "b.two"))], snapshot)[0].suggestion
    assert s.action == "keep" and "rename" in s.reason.en


def test_pronouns_are_not_an_alias_table_matter(snapshot):
    s = summarize([row("chosen", ("prod.a.personal",), 9, kind="pronoun", alias=None,
                       mentions=("它",))], snapshot)[0].suggestion
    assert s.action == "keep" and "pronoun" in s.reason.en


def test_a_settled_alias_says_so():
    ontology = parse_ontology(ONTOLOGY.replace(', "A产品"]', ']', 1).splitlines())
    settled = AliasSnapshot.from_ontology("t", 2, ontology)
    s = summarize([row("chosen", ("prod.a.personal",), 9)], settled)[0].suggestion
    assert s.action == "done" and "A产品（企业版）" in s.reason.en


def test_users_who_drop_the_question_are_pointed_out(snapshot):
    group = ClarificationGroup(
        kind="alias", alias="a产品", mentions=["A产品"], matches=["exact"],
        candidates=[CandidateInfo(id=e, name=e, exists=True) for e in ("prod.a.enterprise",
                                                                      "prod.a.personal")],
        asked=10, answers=AnswerCounts(chosen=3, new_question=6, open=1),
        chosen={"prod.a.personal": 2, "prod.a.enterprise": 1})
    s = suggest(group, snapshot)
    assert s.action == "wait" and "6 of 10 times" in s.reason.en


class _BrokenLog:
    def record_asked(self, event):
        raise RuntimeError("neo4j is down")

    record_answer = record_asked

    def prune(self, before):
        raise RuntimeError("neo4j is down")


def test_a_failing_store_loses_the_record_but_never_raises(snapshot, caplog):
    recorder = ClarificationRecorder(_BrokenLog(), lambda kb: snapshot)
    with caplog.at_level(logging.WARNING, logger="analytics.clarifications"):
        for turn in range(1, 4):
            recorder.observe("t", "s", result(turn, clarify=("A产品", ["prod.a.personal",
                                                                       "prod.a.enterprise"])))
        assert recorder.flush(5)
    recorder.close()
    assert recorder.failed == 3 and recorder.recorded == 0
    assert "a record was lost" in caplog.text


def test_a_full_queue_drops_records_without_waiting(snapshot):
    recorder = ClarificationRecorder(_BrokenLog(), lambda kb: snapshot, max_queue=1)
    recorder._start = lambda: None  # no worker: the queue stays full
    for turn in range(1, 4):
        recorder.observe("t", "s", result(turn, clarify=("A产品", ["prod.a.personal",
                                                                   "prod.a.enterprise"])))
    assert recorder.dropped == 2
