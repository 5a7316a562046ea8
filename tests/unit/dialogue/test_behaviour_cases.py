"""Dialogue behaviours as data: each file of cases/ holds an ``about`` (the behaviour
family, and which integration test runs it end to end), an ontology and a corpus (the
records, or ``ontology_file`` and ``corpus_file``: JSON lines relative to the
repository), and conversations whose turns say what is expected: the action, the
entities, the standalone query, the evidence, the links' reasons, the turn's frame.
They run against the in-memory ontology store, index and session store, with the
entity facts the server reads (what the corpus states of each entity).

Expectation keys (all optional, per turn):
  action, action_not, classification (the trace's), classification_not, queries (exact), entities (exact,
  in order), entities_set, entities_first, entities_include, entities_exclude,
  options (the clarification's option ids, as a set), standalone (exact),
  standalone_starts, standalone_has, standalone_lacks, standalone_lacks_pattern (a
  regex), evidence (the chunk ids shown, exact, in order), first_evidence (a chunk id),
  reason_has, reason_lacks (in the links' reasons), no_answer (a subset of the
  retrieval trace's ``no_answer``: why a question is judged unanswerable),
  no_answer_has, no_answer_lacks (a key of it), frame (a subset of the turn's
  TurnFrame as stored: subjects, intent, language, times, attribute, corrected_away,
  question_words).

Every case runs on both decision paths for what the linker leaves open: the shipped
clarify-or-resolve model, as the server runs by default (its lexical set; its chunk
features read the in-memory index), and the linker's fit margin, as a server with
``REFERENT_CLARIFY__MODEL=false`` runs. The links' reasons name the rule that settled a
link, which may differ between the paths: ``reason_has`` and ``reason_lacks`` are checked
on the fit-margin path only.

A case may carry ``known_gap``: why what it states does not hold yet (the mechanism that
fails), on both paths; ``known_gap_clarify_model`` or ``known_gap_fit_margin`` for one
path only. It runs as a strict expected failure, so the day it passes the mark must go.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from dialogue.engine import TurnEngine
from dialogue.memory_store import InMemorySessionStore
from tests.unit.dialogue.conftest import in_memory_engine

CASES = Path(__file__).with_name("cases")
REPO = Path(__file__).resolve().parents[3]
KB = "cases"


def _files() -> list[Path]:
    return sorted(CASES.glob("*.json"))


PATHS = ("clarify_model", "fit_margin")
# Checks that name which rule settled a link: only the fit-margin path's are stated.
_PATH_SPECIFIC = {"clarify_model": frozenset({"reason_has", "reason_lacks"}), "fit_margin": frozenset()}


def _cases() -> list[Any]:
    return [pytest.param(path, case, way, marks=_gap(case, way),
                         id=f"{path.stem}: {case['name']}" + ("" if way == "fit_margin" else " [model]"))
            for path in _files() for case in json.loads(path.read_text(encoding="utf-8"))["cases"]
            for way in PATHS]


def _gap(case: dict[str, Any], way: str) -> list[Any]:
    reason = case.get("known_gap") or case.get(f"known_gap_{way}")
    return [pytest.mark.xfail(strict=True, reason=reason)] if reason else []


_ENGINES: dict[tuple[Path, str], TurnEngine] = {}


def _engine(path: Path, way: str = "clarify_model") -> TurnEngine:
    engine = _ENGINES.get((path, way))
    if engine is None:
        data = json.loads(path.read_text(encoding="utf-8"))
        engine = _ENGINES[(path, way)] = in_memory_engine(
            KB, _lines(data, "ontology"), _lines(data, "corpus"), InMemorySessionStore(),
            facts=True, clarify_model=way == "clarify_model")
    return engine


def _lines(data: dict[str, Any], part: str) -> list[str]:
    if f"{part}_file" in data:
        return (REPO / data[f"{part}_file"]).read_text(encoding="utf-8").splitlines()
    return [json.dumps(x, ensure_ascii=False) for x in data[part]]


def _reasons(result) -> str:
    return " ".join(link["reason"] for link in result.trace.get("links", []))


def _options(result) -> set[str]:
    return {o.id for o in result.clarification.options} if result.clarification else set()


def _no_answer(result) -> dict[str, Any]:
    return (result.trace.get("retrieval") or {}).get("no_answer") or {}


_CHECKS = {
    "action": lambda r, want, frame: r.action == want,
    "action_not": lambda r, want, frame: r.action != want,
    "entities": lambda r, want, frame: r.entities == want,
    "entities_set": lambda r, want, frame: set(r.entities) == set(want),
    "entities_first": lambda r, want, frame: r.entities[:1] == [want],
    "entities_include": lambda r, want, frame: set(want) <= set(r.entities),
    "entities_exclude": lambda r, want, frame: not set(want) & set(r.entities),
    "options": lambda r, want, frame: _options(r) == set(want),
    "queries": lambda r, want, frame: r.queries == want,
    "classification": lambda r, want, frame: r.trace.get("classification") == want,
    "classification_not": lambda r, want, frame: r.trace.get("classification") != want,
    "standalone": lambda r, want, frame: r.standalone == want,
    "standalone_starts": lambda r, want, frame: r.standalone.startswith(want),
    "standalone_has": lambda r, want, frame: all(w in r.standalone for w in want),
    "standalone_lacks": lambda r, want, frame: not any(w in r.standalone for w in want),
    "standalone_lacks_pattern": lambda r, want, frame: re.search(want, r.standalone) is None,
    "evidence": lambda r, want, frame: [e.chunk_id for e in r.evidence] == want,
    "first_evidence": lambda r, want, frame: bool(r.evidence) and r.evidence[0].chunk_id == want,
    "reason_has": lambda r, want, frame: want in _reasons(r),
    "reason_lacks": lambda r, want, frame: want not in _reasons(r),
    "no_answer": lambda r, want, frame: {k: _no_answer(r).get(k) for k in want} == want,
    "no_answer_has": lambda r, want, frame: bool(_no_answer(r).get(want)),
    "no_answer_lacks": lambda r, want, frame: want not in _no_answer(r),
    "frame": lambda r, want, frame: {k: frame.get(k) for k in want} == want,
}


def test_every_case_file_reads_and_uses_only_known_expectations():
    assert _files(), "no case files"
    for path in _files():
        data = json.loads(path.read_text(encoding="utf-8"))
        assert {"about", "cases"} <= set(data), path.name
        assert all(part in data or f"{part}_file" in data for part in ("ontology", "corpus"))
        for case in data["cases"]:
            for turn in case["turns"]:
                assert set(turn.get("expect", {})) <= set(_CHECKS), (path.name, case["name"])


@pytest.mark.parametrize("path, case, way", _cases())
def test_case(path: Path, case: dict[str, Any], way: str):
    engine = _engine(path, way)
    session = f"s-{uuid.uuid4().hex[:10]}"
    for turn in case["turns"]:
        result = engine.handle(KB, session, turn["user"])
        frame = engine._sessions.load(KB, session).recent[-1].frame or {}
        failed = {key: want for key, want in turn.get("expect", {}).items()
                  if key not in _PATH_SPECIFIC[way] and not _CHECKS[key](result, want, frame)}
        assert failed == {}, (turn["user"], result.action, result.entities, sorted(_options(result)),
                              result.standalone, [e.chunk_id for e in result.evidence],
                              _reasons(result), _no_answer(result), frame)
