"""Suite parsing and scoring: option_index is scored against the order the server offered."""

import json

import pytest

from common.errors import FormatError
from dialogue.models import Clarification, ClarifyOption, RewriteInfo, TurnResult
from evaluation.suites import parse_suite, score


def _suite(*turns: dict) -> list[str]:
    return [json.dumps({"session": "S1", "turns": list(turns)}, ensure_ascii=False)]


def _result(turn: int, action: str, entities=(), options=()) -> TurnResult:
    clarification = (Clarification(question="哪一个？", mention="畅行卡",
                                   options=[ClarifyOption(id=o, name=o) for o in options])
                     if options else None)
    return TurnResult(session="S1", turn=turn, user="u", action=action, standalone="q", queries=[],
                      entities=list(entities), clarification=clarification,
                      rewrite=RewriteInfo(source="rules", accepted=True))


ORDINAL_SUITE = _suite(
    {"user": "畅行卡的年费是多少？", "expect": {"action": "clarify",
                                          "clarify_options": ["card.std", "card.plat"]}},
    {"user": "第二个", "expect": {"action": "retrieve", "option_index": 1}})


@pytest.mark.parametrize("offered", [("card.std", "card.plat"), ("card.plat", "card.std")])
def test_option_index_follows_the_order_the_server_offered(offered):
    suite = parse_suite(ORDINAL_SUITE)
    second = offered[1]
    good = score(suite, [_result(1, "clarify", options=offered), _result(2, "retrieve", [second])], k=5)
    assert good["overall"]["option_index_ok"] == 1.0
    assert good["overall"]["entity_recall"] == 1.0
    bad = score(suite, [_result(1, "clarify", options=offered),
                        _result(2, "retrieve", [offered[0]])], k=5)
    assert bad["overall"]["option_index_ok"] == 0.0
    assert bad["overall"]["entity_recall"] == 0.0
    assert bad["by_turn"]["2"]["option_index_ok"] == 0.0


def test_option_index_without_a_clarification_before_it_is_a_miss():
    suite = parse_suite(ORDINAL_SUITE)
    summary = score(suite, [_result(1, "retrieve", ["card.std"]), _result(2, "retrieve", ["card.std"])],
                    k=5)
    assert summary["overall"]["option_index_ok"] == 0.0
    assert summary["overall"]["entity_recall"] == 0.0


@pytest.mark.parametrize("value, message", [(-1, "0-based"), ("1", "0-based"), (True, "0-based")])
def test_bad_option_index_names_the_field(value, message):
    lines = _suite({"user": "a"}, {"user": "b", "expect": {"option_index": value}})
    with pytest.raises(FormatError) as err:
        parse_suite(lines, path="suite.jsonl")
    assert "turns[1].expect.option_index" in str(err.value)
    assert message in str(err.value)


def test_option_index_on_the_first_turn_is_refused():
    with pytest.raises(FormatError, match=r"turns\[0\]\.expect\.option_index"):
        parse_suite(_suite({"user": "第一个", "expect": {"option_index": 0}}))


def test_every_shared_suite_parses():
    from pathlib import Path
    root = Path(__file__).resolve().parents[3].parent / "shared" / "data"
    suites = sorted(root.glob("*/suite.jsonl"))
    if not suites:
        pytest.skip("no shared development data beside the checkout")
    for path in suites:
        assert parse_suite(path.read_text(encoding="utf-8").splitlines(), path=str(path))


class _EngineFailingOn:
    """Answers every turn but one, on which it raises (as a crashing stage once did)."""

    def __init__(self, failing: str) -> None:
        self.failing = failing

    def handle(self, kb, session_id, text, *, k):
        if text == self.failing:
            raise ValueError("'region.east' is not in list")
        return TurnResult(session=session_id, turn=1, user=text, action="retrieve", standalone=text,
                          queries=[text], entities=[], rewrite=RewriteInfo(source="rules", accepted=True))


def test_a_turn_that_raises_is_recorded_as_an_error_line_and_the_replay_goes_on():
    from evaluation.suites import run_system

    suite = parse_suite(_suite({"user": "一"}, {"user": "二"}, {"user": "三"}))
    results = run_system(_EngineFailingOn("二"), "kb", suite, k=5)
    assert [r.user for r in results] == ["一", "二", "三"]
    assert [r.action for r in results] == ["retrieve", "no_answer", "retrieve"]
    line = results[1].results_line()
    assert line["session"] == "S1" and line["turn"] == 2
    assert line["error"] == "ValueError: 'region.east' is not in list"
    assert "error" not in results[0].results_line()
    assert score(suite, results, k=5)["overall"]["turns"] == 3
