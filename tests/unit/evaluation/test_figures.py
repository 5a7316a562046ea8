"""The docs' figure tables are rendered from `referent eval --summary` files as written."""

import json

import pytest

from dialogue.models import RewriteInfo, TurnResult
from evaluation import figures
from evaluation.suites import parse_suite, score

# Three turns of one session: turn 1 and 3 expect a search, turn 2 a question back.
SUITE = parse_suite([json.dumps({"session": "S1", "turns": [
    {"user": "年假有几天？", "expect": {"action": "retrieve"}},
    {"user": "那个卡年费多少？", "expect": {"action": "clarify"}},
    {"user": "病假呢？", "expect": {"action": "retrieve"}}]}, ensure_ascii=False)])


def _results(*actions: str) -> list[TurnResult]:
    return [TurnResult(session="S1", turn=i, user="u", action=a, standalone="q", queries=[], entities=[],
                       rewrite=RewriteInfo(source="rules", accepted=True))
            for i, a in enumerate(actions, start=1)]


def _write_summary(tmp_path, systems: dict) -> str:
    # The shape `referent eval --summary` writes (api/cli.py).
    path = tmp_path / "demo.summary.json"
    path.write_text(json.dumps({"suite": "data/demo-suite/suite.jsonl", "kb": "demo", "k": 5,
                                "systems": systems}), encoding="utf-8")
    return str(path)


@pytest.fixture
def summary_file(tmp_path):
    # Baselines first in the file: the table still puts Referent first.
    return _write_summary(tmp_path, {
        "raw": score(SUITE, _results("retrieve", "retrieve", "retrieve"), k=5),
        "referent": score(SUITE, _results("retrieve", "clarify", "no_answer"), k=5)})


def test_rows_by_turn_index_with_referent_beside_the_baseline(summary_file, capsys):
    assert figures.main([summary_file, "--metric", "action_accuracy"]) == 0
    out = capsys.readouterr().out
    assert "#### demo-suite" in out  # the suite's folder, not the machine's path
    assert "3 turns (1: 1, 2: 1, 3+: 1); k = 5." in out
    rows = [line for line in out.splitlines() if line.startswith("|")]
    assert rows[0] == "| metric | turn | n | referent | raw |"
    assert rows[2:] == ["| action_accuracy | all | 3 | 0.667 | 0.667 |",
                        "|  | 1 | 1 | 1.000 | 1.000 |",
                        "|  | 2 | 1 | 1.000 | 0.000 |",
                        "|  | 3+ | 1 | 0.000 | 1.000 |"]


def test_a_metric_no_system_has_is_left_out_and_a_missing_one_is_a_dash(summary_file, capsys):
    assert figures.main([summary_file]) == 0
    out = capsys.readouterr().out
    assert "hit@5" not in out  # no turn of the suite has gold evidence
    # Referent asked once and was right; raw never asks, so it has no precision.
    assert "| clarify_precision | all |  | 1.000 | — |" in out


def test_turn_indices_without_turns_get_no_rows(tmp_path, capsys):
    single = parse_suite([json.dumps({"session": "S1", "turns": [
        {"user": "年假有几天？", "expect": {"action": "retrieve"}}]}, ensure_ascii=False)])
    path = _write_summary(tmp_path, {"referent": score(single, _results("retrieve"), k=5)})
    assert figures.main([path, "--metric", "action_accuracy"]) == 0
    out = capsys.readouterr().out
    assert "1 turns (1: 1); k = 5." in out
    assert [line for line in out.splitlines() if line.startswith("|  |")] == ["|  | 1 | 1 | 1.000 |"]


@pytest.mark.parametrize("content, says", [
    ("not json", "cannot read a summary"),
    ('{"suite": "s.jsonl"}', "no 'systems'"),
    ('{"systems": {"referent": {"overall": {}}}}', "'by_turn'"),
])
def test_a_file_that_is_not_a_summary_is_refused_by_name(tmp_path, capsys, content, says):
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    assert figures.main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert str(bad) in err and says in err


def test_an_unknown_metric_is_refused_with_the_known_ones(summary_file, capsys):
    assert figures.main([summary_file, "--metric", "hit_at_10"]) == 2
    err = capsys.readouterr().err
    assert "hit_at_10" in err and "hit_at_k" in err


def test_into_a_page_replaces_only_what_stands_between_the_markers(summary_file, tmp_path):
    page = tmp_path / "evaluation.md"
    page.write_text("# Evaluation\n\nprose naming `<!-- figures -->`\n\n<!-- figures -->\nold tables\n"
                    "<!-- /figures -->\n\n## After\n", encoding="utf-8")
    assert figures.main([summary_file, "--metric", "action_accuracy", "--into", str(page)]) == 0
    text = page.read_text(encoding="utf-8")
    assert "old tables" not in text
    assert text.startswith("# Evaluation\n\nprose naming `<!-- figures -->`\n\n<!-- figures -->\n\n"
                           "#### demo-suite\n")
    assert "| action_accuracy | all | 3 | 0.667 | 0.667 |" in text
    assert text.endswith("\n\n<!-- /figures -->\n\n## After\n")
    # Written again from the same summaries, the page does not change.
    assert figures.main([summary_file, "--metric", "action_accuracy", "--into", str(page)]) == 0
    assert page.read_text(encoding="utf-8") == text


def test_a_page_without_markers_is_left_alone_and_named(summary_file, tmp_path, capsys):
    page = tmp_path / "evaluation.md"
    page.write_text("# Evaluation\n", encoding="utf-8")
    assert figures.main([summary_file, "--into", str(page)]) == 2
    assert page.read_text(encoding="utf-8") == "# Evaluation\n"
    assert str(page) in capsys.readouterr().err
